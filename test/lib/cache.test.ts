import { describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createMemoryCache, createProductCache, type CacheStore } from '../../src/lib/cache.js';
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
