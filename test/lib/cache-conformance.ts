/**
 * One conformance suite for every CacheStore: the in-process LRU today, a shared store later.
 * `make(now)` builds an empty store whose expiry runs on the given clock.
 */
import { describe, expect, it } from 'vitest';
import type { CacheStore } from '../../src/lib/cache.js';

export function cacheStoreConformance(name: string, make: (now: () => number) => CacheStore): void {
  describe(`CacheStore conformance: ${name}`, () => {
    let clock = 1_000;
    const now = () => clock;

    it('answers undefined for a key never set', async () => {
      expect(await make(now).get('nope')).toBeUndefined();
    });

    it('round-trips JSON values of every shape', async () => {
      const store = make(now);
      const values: Record<string, unknown> = {
        string: 'text with "quotes" and ünïcode',
        number: 42.5,
        zero: 0,
        boolean: false,
        null: null,
        array: [1, 'two', { three: 3 }],
        object: { result: { browser: { name: 'Chrome' } }, json: '{"a":1}', nested: [[]] },
      };
      for (const [key, value] of Object.entries(values)) await store.set(key, value, 0);
      for (const [key, value] of Object.entries(values)) expect(await store.get(key)).toEqual(value);
    });

    it('replaces a value and forgets a deleted key', async () => {
      const store = make(now);
      await store.set('k', 'first', 0);
      await store.set('k', 'second', 0);
      expect(await store.get('k')).toBe('second');
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
    });

    it('expires an entry after its TTL, and keeps one without a TTL', async () => {
      const store = make(now);
      await store.set('short', 'v', 1_000);
      await store.set('forever', 'v', 0);
      clock += 999;
      expect(await store.get('short')).toBe('v');
      clock += 2;
      expect(await store.get('short')).toBeUndefined();
      clock += 10_000_000;
      expect(await store.get('forever')).toBe('v');
    });

    it('keeps keys that differ only by prefix apart', async () => {
      const store = make(now);
      await store.set('useragent:x', 1, 0);
      await store.set('webhookip:x', 2, 0);
      expect([await store.get('useragent:x'), await store.get('webhookip:x')]).toEqual([1, 2]);
    });
  });
}
