/**
 * `createLookup({ cache })` over a shared store that misbehaves in the two ways a store's own
 * errors do not cover: it holds an entry of another shape (another version's, during a rolling
 * upgrade on one Redis), or it never answers. Either way a lookup answers, uncached, and
 * `onCacheError` is told (docs/library.md: "lookups then run uncached, never fail because of it").
 */
import { describe, expect, it } from 'vitest';
import { isSeclookupError } from '../src/errors.js';
import { type CacheStore, createMemoryCache } from '../src/lib/cache.js';
import { packageVersion } from '../src/lib/datasets.js';
import { createLookup } from '../src/lookup.js';

const UA = 'curl/8.5.0';
/** This version's key for UA's useragent entry. */
const KEY = `useragent:${packageVersion()}:${UA}`;

describe('createLookup over a shared cache store', () => {
  it('reads an entry of another shape as a miss, tells onCacheError, and stores its own in its place', async () => {
    const store = createMemoryCache();
    store.set(KEY, [0, { something: 'else' }], 0);
    const failures: unknown[] = [];
    const lookup = createLookup({ cache: store, onCacheError: (error) => failures.push(error) });
    const first = await lookup.detailed.useragent(UA);
    expect(first.cached).toBe(false);
    expect(first.result).toMatchObject({ user_agent: UA, is_bot: true });
    expect(failures).toHaveLength(1);
    expect(isSeclookupError(failures[0], 'store_failed')).toBe(true);
    const second = await lookup.detailed.useragent(UA);
    expect([second.cached, second.result.user_agent]).toEqual([true, UA]);
    expect(failures).toHaveLength(1);
  });

  it("never reads another version's entries, whatever their shape: each version keys its own", async () => {
    const store = createMemoryCache();
    // An entry of the right shape, as the version before keyed it (no version) and as another version keys it.
    const answer = (await createLookup().detailed.useragent(UA)).result;
    const stale = { ...answer, browser: { name: 'Stale', version: '0', major: '0' } };
    store.set(`useragent:${UA}`, [0, stale], 0);
    store.set(`useragent:0.0.1:${UA}`, [0, stale], 0);
    const failures: unknown[] = [];
    const lookup = createLookup({ cache: store, onCacheError: (error) => failures.push(error) });
    const first = await lookup.detailed.useragent(UA);
    expect([first.cached, first.result.browser]).toEqual([false, answer.browser]);
    expect(failures).toEqual([]);
    expect(store.get(KEY)).toBeDefined();
    expect((store.get(`useragent:${UA}`) as unknown[])[1]).toEqual(stale);
  });

  it('answers when the store never does, once the cache deadline (1 s) has passed, and tells onCacheError', async () => {
    const failures: unknown[] = [];
    const silent: CacheStore = { get: () => new Promise(() => {}), set: () => {}, delete: () => {} };
    const lookup = createLookup({ cache: silent, onCacheError: (error) => failures.push(error) });
    const outcome = await lookup.detailed.useragent(UA);
    expect(outcome.cached).toBe(false);
    expect(outcome.result).toMatchObject({ user_agent: UA });
    expect(failures).toEqual([expect.objectContaining({ code: 'store_failed', cause: expect.objectContaining({ code: 'timeout' }) })]);
  });

  it('answers, and never leaves an unhandled rejection, when onCacheError itself throws', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const rethrow = (error: unknown) => {
        throw error;
      };
      // A synchronous store that fails: the read is a miss, not the lookup's failure.
      const broken: CacheStore = {
        get: () => {
          throw new Error('store down');
        },
        set: () => {},
        delete: () => {},
      };
      const sync = createLookup({ cache: broken, onCacheError: rethrow });
      await expect(sync.useragent(UA)).resolves.toMatchObject({ user_agent: UA });
      // An asynchronous store whose write rejects after the lookup has answered.
      const rejecting: CacheStore = { get: async () => undefined, set: () => Promise.reject(new Error('store down')), delete: async () => {} };
      const async = createLookup({ cache: rejecting, onCacheError: rethrow });
      await expect(async.useragent(UA)).resolves.toMatchObject({ user_agent: UA });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
