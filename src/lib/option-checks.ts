/**
 * Cheap checks of configuration values (types and ranges, no I/O), shared by the checks
 * `createLookup` runs at construction and the engines run again when they are built. Each
 * mistake is a TypeError with `code: 'invalid_option'` (errors.ts `invalidOption`) naming the
 * option as `label`.
 */
import { invalidOption } from '../errors.js';
import { checkMs } from './deadline.js';

/**
 * The largest private LRU a `cacheSize` (or `dns.cache.maxEntries`) may ask for. lru-cache
 * allocates every slot up front (about 50 bytes each: 50 MB at this size, before any entry),
 * and entries weigh 0.5 to 40 KB; far larger sizes fail with a RangeError from deep inside.
 * For more, give `createLookup` a shared `cache` store.
 */
export const MAX_CACHE_ENTRIES = 1_000_000;

/** A value as an error message shows it: `"x"`, `5`, `null`, `an array`, `a function`. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}...` : value);
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  return 'an object';
}

/** A TypeError `invalid_option` that keeps the error it was made from. */
export function invalidOptionFrom(message: string, cause: unknown): TypeError & { code: 'invalid_option' } {
  return Object.assign(invalidOption(message), { cause });
}

/** True for an object that is not null, an array or a function: an options object. */
export function isOptionsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An options object, or `invalid_option`: `<label> must be <what> (got ...)`. */
export function checkOptionsObject(value: unknown, label: string, what = 'an object'): Record<string, unknown> {
  if (!isOptionsObject(value)) throw invalidOption(`${label} must be ${what} (got ${describeValue(value)})`);
  return value;
}

/** Refuses a name `value` has that is not in `known` (a typo): `<label>.<name> is not an option (options: ...)`. */
export function checkKnownNames(value: Record<string, unknown>, known: readonly string[], label: string): void {
  const unknown = Object.keys(value).find((name) => !known.includes(name));
  if (unknown !== undefined) throw invalidOption(`${label}.${unknown} is not an option (its options: ${known.join(', ')})`);
}

/** The name of `known` a misspelled `name` most likely meant (case aside, or at most 2 edits away), for "did you mean". */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    if (distance <= 2 && distance < candidate.length / 2 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance (names are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/** Absent, or a function. */
export function checkOptionalFunction(value: unknown, label: string): void {
  if (value !== undefined && typeof value !== 'function') throw invalidOption(`${label} must be a function (got ${describeValue(value)})`);
}

/** Absent, or true or false. */
export function checkOptionalBoolean(value: unknown, label: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw invalidOption(`${label} must be true or false (got ${describeValue(value)})`);
}

/** Absent, or a non-empty string (a path, a name). */
export function checkOptionalString(value: unknown, label: string, what = 'a non-empty string'): void {
  if (value !== undefined && (typeof value !== 'string' || value === '')) throw invalidOption(`${label} must be ${what} (got ${describeValue(value)})`);
}

/**
 * A cache size the product's own check accepted, held to {@link MAX_CACHE_ENTRIES}: `invalid_option`
 * beyond it, rather than lru-cache's `RangeError: Invalid array length`.
 */
export function checkCacheSizeLimit(size: number, label: string): number {
  if (size > MAX_CACHE_ENTRIES)
    throw invalidOption(
      `${label} must be at most ${MAX_CACHE_ENTRIES} entries (got ${String(size)}); for a larger cache, give createLookup a shared cache store (createRedisCache, or a CacheStore of your own)`,
    );
  return size;
}

/** Absent, or a whole number from 0 to {@link MAX_CACHE_ENTRIES}. */
export function checkOptionalCacheSize(value: unknown, label: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalidOption(`${label} must be a whole number >= 0 (got ${describeValue(value)})`);
  checkCacheSizeLimit(value, label);
}

/** Absent, or a positive whole number of milliseconds (lib/deadline.ts `checkMs`). */
export function checkOptionalMs(value: unknown, label: string): void {
  if (value !== undefined) checkMs(value as number, label);
}

/**
 * Absent, or a `TimeoutOptions` object (`{ connectMs?, totalMs? }`, each a positive whole number
 * of ms). lib/deadline.ts `resolveTimeouts` reads the fields of whatever it is given, so a string
 * or a misspelled field would otherwise pass as the defaults.
 */
export function checkTimeoutOptions(value: unknown, label: string): void {
  if (value === undefined) return;
  const timeouts = checkOptionsObject(value, label, '{ connectMs?, totalMs? } in milliseconds');
  checkKnownNames(timeouts, ['connectMs', 'totalMs'], label);
  checkOptionalMs(timeouts.connectMs, `${label}.connectMs`);
  checkOptionalMs(timeouts.totalMs, `${label}.totalMs`);
}
