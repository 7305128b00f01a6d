/**
 * The result cache every caching engine uses around its own lookup: a hit hands back a copy of
 * the stored result (with its JSON, for the API to splice in) and `cached: true`; a miss runs
 * the lookup, remembers its result for as long as the lookup says, and answers `cached: false`.
 * Synchronous whenever the store and the lookup are, so hot paths stay promise-free.
 */
import type { ProductCache } from './cache.js';
import { isPromise, type LookupOutcome, type MaybePromise } from './outcome.js';

/** What is stored per key: the result, its JSON made once, and when its data was retrieved (ms). */
export interface CachedResult<Result> {
  result: Result;
  /** Also what a memory store's byte budget counts the entry by (cache.ts entrySize). */
  json: string;
  fetchedAt?: number;
  /** When it stops being fresh (ms since the epoch), when the lookup said how long to keep it. */
  expiresAt?: number;
}

/** What a lookup hands the cache on a miss. */
export interface Computed<Result> {
  result: Result;
  /** When the data behind the result was retrieved (ms since the epoch), for `fetched_at`. */
  fetchedAt?: number;
  /** How long to keep the result: the cache's own TTL when absent, not at all when 0 or less. */
  ttlMs?: number;
  /** `JSON.stringify(result)`, when the lookup can make it cheaper (constant parts spliced in); made here when absent. */
  json?: string;
}

export interface ResultCache<Result> {
  /** The cached outcome for `key`, or `compute()`'s, remembered. */
  lookup(key: string, compute: () => MaybePromise<Computed<Result>>): MaybePromise<LookupOutcome<Result>>;
}

/**
 * @param cache the product's cache, or null to compute every time.
 * @param copy a deep copy of a result: the stored object never leaves the engine, so callers
 *   cannot corrupt it.
 * @param now the engine's clock, for `expiresAt` (when the lookup gives `ttlMs`).
 */
export function createResultCache<Result>(
  cache: ProductCache<CachedResult<Result>> | null,
  copy: (result: Result) => Result,
  now: () => number = Date.now,
): ResultCache<Result> {
  const outcome = (entry: CachedResult<Result>, cached: boolean): LookupOutcome<Result> => new CachedOutcome(entry, cached, copy);

  function remember(key: string, computed: Computed<Result>): LookupOutcome<Result> {
    const entry: CachedResult<Result> = { result: computed.result, json: computed.json ?? JSON.stringify(computed.result), fetchedAt: computed.fetchedAt };
    if (computed.ttlMs !== undefined) entry.expiresAt = now() + Math.max(0, computed.ttlMs);
    if (computed.ttlMs === undefined || computed.ttlMs > 0) cache?.set(key, entry, computed.ttlMs);
    return outcome(entry, false);
  }

  function miss(key: string, compute: () => MaybePromise<Computed<Result>>): MaybePromise<LookupOutcome<Result>> {
    const computed = compute();
    return isPromise(computed) ? computed.then((done) => remember(key, done)) : remember(key, computed);
  }

  return {
    lookup(key, compute) {
      const hit = cache?.get(key, isCachedResult);
      if (isPromise(hit)) return hit.then((found) => (found ? outcome(found, true) : miss(key, compute)));
      return hit ? outcome(hit, true) : miss(key, compute);
    },
  };
}

/** An entry this code wrote: a shared store may hold another version's, which reads as a miss. */
function isCachedResult(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { result, json } = value as Partial<CachedResult<unknown>>;
  return typeof json === 'string' && typeof result === 'object' && result !== null;
}

/**
 * A cached result as a LookupOutcome. The copy is made on first read of `result`: the HTTP
 * API answers from `json` alone, so a cached HTTP lookup never pays for a deep copy it would
 * not use. A class, so that getter lives on the prototype: an object literal with a getter
 * costs V8 about 2 µs to build, more than the rest of a cache hit.
 */
class CachedOutcome<Result> implements LookupOutcome<Result> {
  readonly cached: boolean;
  readonly json: string;
  readonly fetchedAt?: Date;
  readonly expiresAt?: number;
  #entry: CachedResult<Result>;
  #copy: (result: Result) => Result;
  #copied: Result | undefined;

  constructor(entry: CachedResult<Result>, cached: boolean, copy: (result: Result) => Result) {
    this.cached = cached;
    this.json = entry.json;
    if (entry.fetchedAt !== undefined) this.fetchedAt = new Date(entry.fetchedAt);
    if (entry.expiresAt !== undefined) this.expiresAt = entry.expiresAt;
    this.#entry = entry;
    this.#copy = copy;
  }

  get result(): Result {
    return (this.#copied ??= this.#copy(this.#entry.result));
  }
}
