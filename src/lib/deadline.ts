/**
 * Deadlines: one options shape for every outbound operation (DNS, TCP, TLS, HTTP) and for
 * store calls, and one way to put a bound on a promise. Nothing seclookup waits for may wait
 * forever.
 */
import { SeclookupError, invalidOption } from '../errors.js';

/** Time limits of one outbound operation, in milliseconds. */
export interface TimeoutOptions {
  /** Establishing the connection (for TLS, the handshake included). */
  connectMs?: number;
  /** The whole operation, connecting included. */
  totalMs?: number;
}

/** Defaults for outbound calls unless a product documents its own. */
export const DEFAULT_TIMEOUTS: Readonly<Required<TimeoutOptions>> = Object.freeze({ connectMs: 3_000, totalMs: 10_000 });

/**
 * Fill in and check a TimeoutOptions: positive whole milliseconds, and a connect limit no
 * longer than the total (it is cut to the total). Mistakes throw SeclookupError
 * `invalid_option` naming `label`.
 */
export function resolveTimeouts(
  options: TimeoutOptions | undefined,
  defaults: Required<TimeoutOptions> = DEFAULT_TIMEOUTS,
  label = 'timeouts',
): Required<TimeoutOptions> {
  const totalMs = checkMs(options?.totalMs ?? defaults.totalMs, `${label}.totalMs`);
  const connectMs = checkMs(options?.connectMs ?? Math.min(defaults.connectMs, totalMs), `${label}.connectMs`);
  return { connectMs: Math.min(connectMs, totalMs), totalMs };
}

/**
 * The longest delay Node's timers keep (2^31 - 1 ms, about 24.8 days): a longer one fires
 * after 1 ms, so a timeout of 2^31 would fail every call at once.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A positive whole number of milliseconds no longer than MAX_TIMER_MS, or SeclookupError `invalid_option`. */
export function checkMs(value: number, label: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw invalidOption(`${label} must be a positive whole number of milliseconds (got ${String(value)})`);
  if (value > MAX_TIMER_MS) throw invalidOption(`${label} must be at most ${MAX_TIMER_MS} milliseconds, about 24.8 days (got ${String(value)})`);
  return value;
}

/**
 * `work`, or a SeclookupError `timeout` once `ms` have passed, whichever comes first. The work
 * itself is not cancelled (use an AbortSignal for that); `onLate` receives its result if it
 * settles after the deadline, so a late success can be undone (a meter reservation refunded).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string, onLate?: (value: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      reject(new SeclookupError('timeout', `${what} did not answer within ${ms} ms`));
    }, ms);
  });
  work.then(
    (value) => {
      if (late) onLate?.(value);
    },
    () => {},
  );
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** A deadline applied to many calls of one kind: see {@link createDeadlineGroup}. */
export type Bounded = <T>(work: Promise<T>, onLate?: (value: T) => void) => Promise<T>;

/** One call in flight under a deadline group. */
interface PendingCall {
  /** The sweep count when the call started. */
  startedAt: number;
  expire(): void;
}

/**
 * {@link withDeadline} for a hot path (every meter call of every request): instead of a timer
 * and a race per call, one unref'd sweep every `ms / 4` (at most 250 ms) fails the calls that
 * have been pending for four sweeps or more, so a call fails between `ms` and `ms * 1.25` after
 * it started. A call costs one promise and a set entry; the sweep runs only while calls are
 * pending.
 */
export function createDeadlineGroup(ms: number, what: string): Bounded {
  checkMs(ms, `${what} timeout`);
  const SWEEPS = 4;
  const sweepEvery = Math.max(1, Math.min(250, Math.floor(ms / SWEEPS)));
  const sweepsNeeded = Math.ceil(ms / sweepEvery);
  const pending = new Set<PendingCall>();
  let sweeps = 0;
  let sweeper: NodeJS.Timeout | null = null;

  function sweep(): void {
    sweeps++;
    for (const call of pending) if (sweeps - call.startedAt > sweepsNeeded) call.expire();
    if (pending.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
  }

  return <T>(work: Promise<T>, onLate?: (value: T) => void) =>
    new Promise<T>((resolve, reject) => {
      let late = false;
      const call: PendingCall = {
        startedAt: sweeps,
        expire() {
          late = true;
          pending.delete(call);
          reject(new SeclookupError('timeout', `${what} did not answer within ${ms} ms`));
        },
      };
      pending.add(call);
      if (!sweeper) {
        sweeper = setInterval(sweep, sweepEvery);
        sweeper.unref();
      }
      work.then(
        (value) => {
          if (late) return onLate?.(value);
          pending.delete(call);
          resolve(value);
        },
        (error: unknown) => {
          if (late) return;
          pending.delete(call);
          reject(error);
        },
      );
    });
}
