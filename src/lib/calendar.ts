/** UTC time buckets shared by every meter store, so they all count the same windows. */

const MINUTE_MS = 60_000;

/** The index of the one-minute rate window containing `now` (ms since epoch). */
export function rateWindow(now: number): number {
  return Math.floor(now / MINUTE_MS);
}

/** Unix time in seconds at which the rate window containing `now` ends. */
export function rateWindowResetAt(now: number): number {
  return (rateWindow(now) + 1) * 60;
}

/** The UTC calendar month of `now`, `YYYY-MM`. */
export function quotaPeriod(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** The UTC day of `now`, `YYYY-MM-DD`. */
export function usageDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Unix time in seconds at which the UTC month containing `now` ends. */
export function quotaPeriodResetAt(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}
