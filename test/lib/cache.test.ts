import { describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createMemoryCache, createProductCache, type CacheStore } from '../../src/lib/cache.js';
import { createJsonMemo } from '../../src/lib/json-memo.js';
import { createResultCache } from '../../src/lib/result-cache.js';
import { cacheStoreConformance } from './cache-conformance.js';

cacheStoreConformance('memory', (now) => createMemoryCache({ now }));

describe('createMemoryCache', () => {
  it('evicts the least recently used entry past maxEntries', () => {
    const store = createMemoryCache({ maxEntries: 2 });
    store.set('a', 1, 0);
    store.set('b', 2, 0);
    store.get('a');
    store.set('c', 3, 0);
    expect([store.get('a'), store.get('b'), store.get('c')]).toEqual([1, undefined, 3]);
  });

  it('sets no room aside until the first write (each product has a cache; most stay empty)', () => {
    // lru-cache allocates typed arrays of maxEntries slots when made: 8 MB and more at 1,000,000.
    const before = process.memoryUsage().arrayBuffers;
    const stores = Array.from({ length: 20 }, () => createMemoryCache({ maxEntries: 1_000_000 }));
    const memos = Array.from({ length: 20 }, () => createJsonMemo(1_000_000));
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(4 * 1024 * 1024);
    // Empty, they read as empty; the first write makes the room, and the entry is there.
    expect([stores[0].get('a'), stores[0].entries, stores[0].bytes, memos[0].size]).toEqual([undefined, 0, 0, 0]);
    stores[0].delete('a');
    stores[0].set('a', 1, 0);
    expect([stores[0].get('a'), stores[0].entries, stores[0].bytes]).toEqual([1, 1, 1]);
    expect(memos[0].repeated('k', { n: 1 }, 'source')).toBeUndefined();
    expect([memos[0].repeated('k', { n: 1 }, 'source'), memos[0].json('j', { n: 2 }, 'source'), memos[0].size]).toEqual(['{"n":1}', '{"n":2}', 2]);
  });

  it('grows as it fills, up to maxEntries: every entry kept, the recency order and what is left of each TTL carried over', () => {
    // Not 0: lru-cache reads a start of 0 as no start (a real clock never reads 0).
    let now = 10_000;
    const store = createMemoryCache({ maxEntries: 1000, now: () => now });
    // A small cache's first lru-cache holds 256: fill it, then outgrow it twice (256, 1000).
    for (let i = 0; i < 254; i++) store.set(`k${i}`, i, 0);
    store.set('long', 'L', 1000);
    store.set('short', 'S', 100);
    now = 10_600; // 'short' has expired: it is not carried over
    store.get('k0'); // now the most recently used of the first ones
    for (let i = 254; i < 998; i++) store.set(`k${i}`, i, 0);
    expect(store.entries).toBe(999);
    // Full at maxEntries, the least recently used go first: k1 and k2, not k0.
    for (const key of ['x', 'y', 'z']) store.set(key, key, 0);
    expect([store.entries, store.get('k1'), store.get('k2'), store.get('k3'), store.get('k0'), store.get('short')]).toEqual([
      1000,
      undefined,
      undefined,
      3,
      0,
      undefined,
    ]);
    const missing = Array.from({ length: 995 }, (_, i) => `k${i + 3}`).filter((key) => store.get(key) === undefined);
    expect(missing).toEqual([]);
    // 'long' expires when it would have without the moves: lru-cache keeps an entry through its
    // last millisecond (stale once its age is past the TTL).
    now = 11_000;
    expect(store.get('long')).toBe('L');
    now = 11_001;
    expect(store.get('long')).toBeUndefined();
  });

  it('answers synchronously', () => {
    const store = createMemoryCache();
    store.set('a', { x: 1 }, 0);
    expect(store.get('a')).toEqual({ x: 1 });
  });

  it.each([0, -1, 1.5])('refuses maxEntries %s with invalid_option', (maxEntries) => {
    let thrown: unknown;
    try {
      createMemoryCache({ maxEntries });
    } catch (error) {
      thrown = error;
    }
    expect(isSeclookupError(thrown, 'invalid_option')).toBe(true);
  });
});

describe('createMemoryCache: the byte budget', () => {
  /** A result-cache entry (`{ result, json }`) whose JSON has `length` characters. */
  const entry = (length: number) => ({ result: { pad: '' }, json: `{"pad":"${'p'.repeat(length - 10)}"}` });

  it('keeps many large results under maxBytes, counting each twice its JSON; the least recently used go first', () => {
    const store = createMemoryCache({ maxEntries: 1_000, maxBytes: 100_000 });
    const results = createResultCache(createProductCache<never>(store, { namespace: 'whois' }), (result: { text: string }) => ({ ...result }));
    for (let i = 0; i < 50; i++) {
      results.lookup(`d${i}.com`, () => ({ result: { text: `${i}`.padEnd(9_990, 'x') } }));
      expect(store.bytes).toBeLessThanOrEqual(100_000);
    }
    const json = JSON.stringify({ text: '0'.padEnd(9_990, 'x') });
    expect(json.length).toBe(10_001);
    // 100,000 / (2 × 10,001): four entries, the last four.
    expect(store.entries).toBe(4);
    expect(store.bytes).toBe(4 * 2 * 10_001);
    expect(['d45.com', 'd46.com', 'd49.com'].map((key) => store.get(`whois:${key}`) !== undefined)).toEqual([false, true, true]);
  });

  it('keeps no entry larger than the whole budget, and forgets what its key held', () => {
    const store = createMemoryCache({ maxEntries: 10, maxBytes: 1_000 });
    store.set('k', entry(100), 0);
    expect(store.bytes).toBe(200);
    store.set('k', entry(501), 0);
    expect([store.get('k'), store.entries, store.bytes]).toEqual([undefined, 0, 0]);
  });

  it('counts a value that is not a result entry as 1: such caches are bounded by count alone', () => {
    const store = createMemoryCache({ maxEntries: 3, maxBytes: 1_000 });
    for (const key of ['a', 'b', 'c', 'd']) store.set(key, { answers: ['x'.repeat(5_000)] }, 0);
    expect([store.entries, store.bytes]).toEqual([3, 3]);
  });

  it('defaults to 4 KiB per entry allowed, at least 1 MiB', () => {
    // One JSON string shared by every entry (held once): each counts 4,096,000.
    const large = { result: {}, json: 'j'.repeat(2_048_000) };
    const store = createMemoryCache(); // 10,000 entries: 40,960,000
    for (let i = 0; i < 20; i++) store.set(`k${i}`, large, 0);
    expect([store.entries, store.bytes]).toEqual([10, 40_960_000]);
    const small = createMemoryCache({ maxEntries: 2 }); // at least 1 MiB
    small.set('a', entry(400 * 1024), 0);
    expect([small.entries, small.bytes]).toEqual([1, 800 * 1024]);
  });

  it('refuses more entries than it can set aside cheaply, null values and misspelled options, with invalid_option (not a RangeError, not silence)', () => {
    for (const options of [
      { maxEntries: 1e12 },
      { maxEntries: 2 ** 32 },
      { maxEntries: 1_000_001 },
      { maxEntries: null },
      { maxBytes: null },
      { maxEntry: 5 },
    ]) {
      expect(() => createMemoryCache(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'invalid_option' }),
      );
    }
    expect(() => createMemoryCache({ maxEntries: 1e12 })).toThrow(/cache maxEntries must be a whole number from 1 to 1000000 \(got 1000000000000\)/);
    expect(() => createMemoryCache({ maxEntry: 5 } as never)).toThrow('cache.maxEntry is not an option (its options: maxEntries, maxBytes, now)');
    expect(createMemoryCache({ maxEntries: 1_000_000 }).entries).toBe(0);
  });

  it.each([0, -1, 1.5])('refuses maxBytes %s with invalid_option', (maxBytes) => {
    let thrown: unknown;
    try {
      createMemoryCache({ maxBytes });
    } catch (error) {
      thrown = error;
    }
    expect(isSeclookupError(thrown, 'invalid_option')).toBe(true);
  });
});

describe('createProductCache', () => {
  it('prefixes keys with the namespace and applies its TTL', () => {
    const seen: [string, unknown, number][] = [];
    const store: CacheStore = { get: (key) => (key === 'geo:1.1.1.1' ? 'hit' : undefined), set: (k, v, t) => void seen.push([k, v, t]), delete: () => {} };
    const cache = createProductCache<string>(store, { namespace: 'geo', ttlMs: 5_000 });
    expect(cache.get('1.1.1.1')).toBe('hit');
    cache.set('8.8.8.8', 'v');
    expect(seen).toEqual([['geo:8.8.8.8', 'v', 5_000]]);
  });

  it('reads a throwing store as a miss and drops a failed write, reporting both', () => {
    const errors: unknown[] = [];
    const store: CacheStore = {
      get: () => {
        throw new Error('down');
      },
      set: () => {
        throw new Error('down');
      },
      delete: () => {},
    };
    const cache = createProductCache<string>(store, { onError: (error) => errors.push(error) });
    expect(cache.get('x')).toBeUndefined();
    expect(() => cache.set('x', 'v')).not.toThrow();
    expect(errors.map((e) => isSeclookupError(e, 'store_failed'))).toEqual([true, true]);
  });

  it('deletes under the namespace; a failing delete is reported, never thrown', async () => {
    const store = createMemoryCache();
    const cache = createProductCache<string>(store, { namespace: 'scamrisk' });
    cache.set('crypto:0xabc', 'v');
    cache.delete!('crypto:0xabc');
    expect(store.get('scamrisk:crypto:0xabc')).toBeUndefined();
    const errors: unknown[] = [];
    const failing = createProductCache<string>(
      { get: () => undefined, set: () => {}, delete: () => Promise.reject(new Error('down')) },
      { onError: (error) => errors.push(error) },
    );
    expect(() => failing.delete!('x')).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors.map((e) => isSeclookupError(e, 'store_failed'))).toEqual([true]);
  });

  it('reads a store that never answers as a miss once the deadline has passed, and reports it', async () => {
    const errors: unknown[] = [];
    const hanging: CacheStore = { get: () => new Promise(() => {}), set: () => {}, delete: () => {} };
    const cache = createProductCache<string>(hanging, { timeoutMs: 40, onError: (error) => errors.push(error) });
    expect(await cache.get('x')).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'store_failed', cause: { code: 'timeout', message: 'the cache store did not answer within 40 ms' } });
  });

  it('reads an entry the caller does not accept (another shape) as a miss, and reports it; sync and async alike', async () => {
    const errors: unknown[] = [];
    const isText = (value: unknown) => typeof value === 'string';
    const sync = createProductCache<string>(createMemoryCache(), { onError: (error) => errors.push(error) });
    sync.set('a', 'text');
    sync.set('b', [0, { something: 'else' }] as unknown as string);
    expect([sync.get('a', isText), sync.get('b', isText), sync.get('b')]).toEqual(['text', undefined, [0, { something: 'else' }]]);
    const memory = createMemoryCache();
    const async = createProductCache<string>({ ...memory, get: async (key) => memory.get(key) }, { onError: (error) => errors.push(error) });
    memory.set('b', 5, 0);
    expect(await async.get('b', isText)).toBeUndefined();
    expect(errors.map((error) => (error as { cause?: Error }).cause?.message)).toEqual([
      'an entry of another shape (written by another version?)',
      'an entry of another shape (written by another version?)',
    ]);
  });
});
