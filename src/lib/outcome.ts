/**
 * Types every product engine shares. They live below the products so that every import
 * points down: engines, the registry, `createLookup` and the API all read them from here.
 */

/** A value now, or a promise of it: engines answer synchronously when nothing is slow. */
export type MaybePromise<T> = T | Promise<T>;

/** A result plus what the API needs to fill `cached` and `fetched_at`. */
export interface LookupOutcome<Result> {
  result: Result;
  /** True when the result was served from the cache (SPEC: `cached`). */
  cached: boolean;
  /** When the underlying data was retrieved; products that carry `fetched_at` set it. */
  fetchedAt?: Date;
  /**
   * `JSON.stringify(result)`, from engines that keep it alongside a cached result, so the
   * API can answer without serializing the same result again on every request.
   */
  json?: string;
  /**
   * An answer that is not a JSON result: the API sends `body` as it is, with `contentType`,
   * instead of the success envelope. Only routes beyond a product's lookup set it (pwbreach's
   * `range/:prefix` answers the public range API's text format); errors stay JSON envelopes.
   */
  text?: { body: string; contentType: string };
  /**
   * When the result stops being fresh (ms since the epoch), from engines whose results expire
   * with their data (DNS TTLs, a registry answer's lifetime); absent when unknown. A product
   * built on another's results (domainrep) keeps its own no longer than this.
   */
  expiresAt?: number;
}

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | null)?.then === 'function';
}

/** `next` of the value: at once for a value, after it for a promise (no microtask when nothing waits). */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value);
}
