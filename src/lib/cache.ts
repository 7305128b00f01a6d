/**
 * The one cache abstraction every engine that caches uses, so `cached: true` means the same
 * thing on every product: the result came from this cache, keyed by product and normalized
 * input. Stores are async-capable so a shared store (Redis, later) can stand in for the
 * in-process LRU; the memory store answers synchronously, which keeps hot paths promise-free.
 */
import { createGrowingLru } from './growing-lru.js';
import { SeclookupError, invalidOption } from '../errors.js';
import { checkMs, createDeadlineGroup } from './deadline.js';
import { isPromise, type MaybePromise } from './outcome.js';
import { checkKnownNames, MAX_CACHE_ENTRIES } from './option-checks.js';

/**
 * A key/value store with per-entry expiry. Values must be JSON-serialisable (a shared store
 * serialises them) and are treated as immutable once stored: a memory store hands back the
 * very object it was given, so neither side may change it afterwards.
 */
export interface CacheStore {
  /** The value under `key`, or undefined when absent or expired. */
  get(key: string): MaybePromise<unknown>;
  /** Store `value` under `key` for `ttlMs` milliseconds; 0 keeps it until evicted. */
  set(key: string, value: unknown, ttlMs: number): MaybePromise<void>;
  delete(key: string): MaybePromise<void>;
}

export interface MemoryCacheOptions {
  /** Entries kept; the least recently used goes first. @default 10000 (each about 1 KB for a typical result) */
  maxEntries?: number;
  /**
   * Bytes the entries may take, by entrySize; the least recently used go first, and an entry
   * larger than the whole budget is not kept. The count alone does not bound memory where one
   * result can be large (whois copies text from an upstream's answer).
   * @default 4 KiB per entry of maxEntries, at least 1 MiB (40 MiB at 10,000)
   */
  maxBytes?: number;
  /** Clock in ms for expiry (tests pass a fake one). @default performance.now */
  now?: () => number;
}

/** An in-process store that says what it holds, for tests and diagnostics. */
export interface MemoryCache extends CacheStore {
  /** Entries held. */
  readonly entries: number;
  /** Their sizes summed (entrySize): never above `maxBytes`. */
  readonly bytes: number;
}

/** Default byte budget per entry allowed: four times a typical result, so the count is what binds for typical ones. */
const BYTES_PER_ENTRY = 4 * 1024;
/** Least default byte budget: a small cache still holds a large result. */
const MIN_DEFAULT_BYTES = 1024 * 1024;

/**
 * What an entry counts against `maxBytes`: a result cache's entry (`{ result, json }`, see
 * result-cache.ts) twice its JSON's length, for the JSON and the result object that holds the
 * same text; any other value 1, bounded by the count alone (its size is not known without
 * serialising it, and the stores that keep such values bound them otherwise).
 */
export function entrySize(value: unknown): number {
  const json = typeof value === 'object' && value !== null ? (value as { json?: unknown }).json : undefined;
  return typeof json === 'string' ? Math.max(1, 2 * json.length) : 1;
}

/**
 * An in-process LRU store (lru-cache) with per-entry TTLs, bounded by count and by bytes.
 * Synchronous; no serialisation.
 *
 * @example
 * const cache = createMemoryCache({ maxEntries: 50_000, maxBytes: 256 * 1024 * 1024 });
 */
export function createMemoryCache(options: MemoryCacheOptions = {}): MemoryCache {
  checkKnownNames(options as Record<string, unknown>, ['maxEntries', 'maxBytes', 'now'], 'cache');
  const maxEntries = options.maxEntries === undefined ? 10_000 : options.maxEntries;
  // lru-cache sets aside every slot when it is made (10,000,000 took 227 MB empty): the same cap as a product's own cache.
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1 || maxEntries > MAX_CACHE_ENTRIES) {
    throw invalidOption(
      `cache maxEntries must be a whole number from 1 to ${MAX_CACHE_ENTRIES} (got ${String(options.maxEntries)}); for more, share a Redis cache (createRedisCache)`,
    );
  }
  const maxBytes = options.maxBytes === undefined ? Math.max(MIN_DEFAULT_BYTES, maxEntries * BYTES_PER_ENTRY) : options.maxBytes;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw invalidOption(`cache maxBytes must be a positive integer (got ${String(options.maxBytes)})`);
  }
  // Made at the first write and grown as it fills (growing-lru.ts): lru-cache sets aside every
  // slot up front, and most caches of a process hold little or nothing (each product has one).
  const lru = createGrowingLru<{ value: unknown }>(maxEntries, {
    maxSize: maxBytes,
    sizeCalculation: (entry) => entrySize(entry.value),
    // Entries without a TTL never turn on lru-cache's TTL bookkeeping, so caches of pure
    // functions (useragent) pay nothing for it.
    // With a given clock, read it on every check (lru-cache otherwise memoises now() for 1 ms).
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
  });
  return {
    get: (key) => lru.get(key)?.value,
    set: (key, value, ttlMs) => lru.set(key, { value }, ttlMs),
    delete: (key) => lru.delete(key),
    get entries() {
      return lru.size;
    },
    get bytes() {
      return lru.calculatedSize;
    },
  };
}

/** One product's view of a store: keys are its normalized inputs. */
export interface ProductCache<Value> {
  /**
   * The cached value for a normalized input, or undefined. A failing store reads as a miss, and
   * so does one that has not answered within the cache's deadline, or a value `accept` refuses
   * (an entry of another shape: another version's, on a shared store); each is reported.
   */
  get(input: string, accept?: (value: unknown) => boolean): MaybePromise<Value | undefined>;
  /** Remember a value (for `ttlMs`, else the cache's TTL); a failing store is reported to `onError` and otherwise ignored. */
  set(input: string, value: Value, ttlMs?: number): void;
  /** Forget a value (data behind it changed: scamrisk after a report); a failing store is reported and ignored. */
  delete?(input: string): void;
}

export interface ProductCacheOptions {
  /** Key prefix, for a store shared by several products (`useragent:`); none for a private store. */
  namespace?: string;
  /** Lifetime of an entry in ms; 0 keeps it until evicted. @default 0 */
  ttlMs?: number;
  /** Told when the store fails; the lookup still answers, uncached (an error it throws is ignored). @default none */
  onError?: (error: unknown) => void;
  /** How long a read of an asynchronous store may take before it counts as a failed one (a miss). @default 1000 */
  timeoutMs?: number;
}

/** Deadline of a cache read, unless told: a cache slower than this is no help to a lookup. */
const DEFAULT_CACHE_TIMEOUT_MS = 1_000;

/**
 * A product's cache over a store. A cache is an optimisation: when the store fails, a read is
 * a miss and a write is dropped, so a lookup never fails because its cache did.
 */
export function createProductCache<Value>(store: CacheStore, options: ProductCacheOptions = {}): ProductCache<Value> {
  const prefix = options.namespace ? `${options.namespace}:` : '';
  const ttlMs = options.ttlMs ?? 0;
  const report = (error: unknown) => {
    try {
      options.onError?.(new SeclookupError('store_failed', 'cache store failed', { cause: error }));
    } catch {
      // A reporter's own failure must never fail a lookup, nor (after an async write) crash the process.
    }
  };
  const miss = (error: unknown) => {
    report(error);
    return undefined;
  };
  // One sweep for every read in flight, not a timer per read (deadline.ts).
  const bounded = createDeadlineGroup(checkMs(options.timeoutMs ?? DEFAULT_CACHE_TIMEOUT_MS, 'cache timeoutMs'), 'the cache store');
  const checked = (value: unknown, accept: ((value: unknown) => boolean) | undefined): Value | undefined =>
    value === undefined || accept === undefined || accept(value)
      ? (value as Value | undefined)
      : miss(new TypeError('an entry of another shape (written by another version?)'));
  return {
    get(input, accept) {
      try {
        const value = store.get(prefix + input);
        return isPromise(value) ? bounded(value).then((found) => checked(found, accept), miss) : checked(value, accept);
      } catch (error) {
        return miss(error);
      }
    },
    set(input, value, entryTtlMs = ttlMs) {
      try {
        const done = store.set(prefix + input, value, entryTtlMs);
        if (isPromise(done)) done.catch(report);
      } catch (error) {
        report(error);
      }
    },
    delete(input) {
      try {
        const done = store.delete(prefix + input);
        if (isPromise(done)) done.catch(report);
      } catch (error) {
        report(error);
      }
    },
  };
}
