/**
 * An lru-cache that grows to its bound as it fills. lru-cache sets aside every slot when it is
 * made (about 3 ms at 10,000 slots, 25 ms at 100,000), and most caches of a process hold a few
 * entries or none: each product has its own, a one-shot `seclookup lookup` writes one, a test's
 * engine a handful. This one is made at its first write with 256 slots. When those are full,
 * the entries move to a cache four times as large, in the same order and with what is left of
 * each TTL, up to `max`. Past `max`, the least recently used entry goes, as before.
 */
import { LRUCache } from 'lru-cache';

export interface GrowingLru<V extends object> {
  get(key: string): V | undefined;
  /** Keep `value`, for `ttlMs` when it is above 0 (else until evicted). */
  set(key: string, value: V, ttlMs?: number): void;
  delete(key: string): void;
  /** Entries held. */
  readonly size: number;
  /** Their sizes summed (`sizeCalculation`), 0 without one. */
  readonly calculatedSize: number;
}

/** Slots of a cache's first lru-cache, and the factor it grows by. */
const FIRST_SLOTS = 256;
const GROWTH = 4;

export function createGrowingLru<V extends object>(max: number, options: Omit<LRUCache.Options<string, V, unknown>, 'max'> = {}): GrowingLru<V> {
  let lru: LRUCache<string, V> | undefined;
  let slots = 0;
  const make = () => new LRUCache<string, V>({ ...options, max: slots } as LRUCache.Options<string, V, unknown>);

  /** The cache to write `key` to: made now, or moved to a larger one when full below `max`. */
  function writable(key: string): LRUCache<string, V> {
    if (lru === undefined) {
      slots = Math.min(max, FIRST_SLOTS);
      lru = make();
    } else if (lru.size >= slots && slots < max && !lru.has(key)) {
      slots = Math.min(max, slots * GROWTH);
      const grown = make();
      // Least recently used first, so the order carries over. An entry at the end of its TTL is
      // not moved: a remaining TTL of 0 would mean none, and it would never expire.
      for (const k of lru.rkeys()) {
        const ttl = lru.getRemainingTTL(k);
        if (!(ttl > 0)) continue;
        grown.set(k, lru.peek(k, { allowStale: true })!, ttl === Number.POSITIVE_INFINITY ? undefined : { ttl });
      }
      lru = grown;
    }
    return lru;
  }

  return {
    get: (key) => lru?.get(key),
    set: (key, value, ttlMs) => {
      writable(key).set(key, value, ttlMs !== undefined && ttlMs > 0 ? { ttl: ttlMs } : undefined);
    },
    delete: (key) => {
      lru?.delete(key);
    },
    get size() {
      return lru?.size ?? 0;
    },
    get calculatedSize() {
      return lru?.calculatedSize ?? 0;
    },
  };
}
