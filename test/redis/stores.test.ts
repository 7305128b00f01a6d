/**
 * The Redis cache and single-use store beyond their conformance suites: entries expire in Redis
 * too, two connections see one store, and a Redis failure is a store_failed (a miss for the
 * product cache), never a hang.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProductCache } from '../../src/lib/cache.js';
import { createRedisCache, createRedisClient, createRedisSingleUseStore, redisClientOptions } from '../../src/metering/redis/index.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';

let server: RedisServer;
let inspect: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  inspect = new Redis(server.url(), { ...redisClientOptions(), enableOfflineQueue: true });
  inspect.on('error', () => undefined);
});
afterAll(async () => {
  inspect?.disconnect();
  await server?.close();
});
beforeEach(async () => {
  server.resume();
  await server.flush();
});

describe('createRedisCache', () => {
  it('is shared by two connections, and gives every entry a Redis expiry: its TTL, or a day for one kept until evicted', async () => {
    const [a, b] = [createRedisCache(server.url()), createRedisCache(server.url())];
    try {
      await a.set('useragent:x', { browser: 'Chrome' }, 60_000);
      await a.set('useragent:forever', [1, 2], 0);
      await a.set('useragent:a week', [3], 7 * 86_400_000);
      expect(await b.get('useragent:x')).toEqual({ browser: 'Chrome' });
      expect(await b.get('useragent:forever')).toEqual([1, 2]);
      const keys = (await inspect.keys('seclookup:cache:*')).sort();
      expect(keys).toHaveLength(3);
      for (const key of keys) expect(key).toMatch(/^seclookup:cache:useragent:[A-Za-z0-9_-]{43}$/);
      const ttls = (await Promise.all(keys.map((key) => inspect.pttl(key)))).sort((x, y) => x - y);
      expect(ttls[0]).toBeGreaterThan(59_000);
      expect(ttls[0]).toBeLessThanOrEqual(60_000);
      expect(ttls[1]).toBeGreaterThan(86_399_000);
      expect(ttls[2]).toBeLessThanOrEqual(86_400_000);
      await b.delete('useragent:x');
      expect(await a.get('useragent:x')).toBeUndefined();
      expect(await inspect.keys('seclookup:cache:*')).toHaveLength(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    expect(() => createRedisCache(server.url(), { maxTtlMs: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it("a caller's input never names the Redis key: no {hash tag} from it (a Cluster slot), no length from it", async () => {
    const store = createRedisCache(server.url(), { maxTtlMs: 5_000 });
    try {
      const inputs = ['{admin}', `x{admin}${'y'.repeat(20_000)}`, ':{admin}:'];
      for (const input of inputs) await store.set(`useragent:${input}`, input.length, 0);
      for (const input of inputs) expect(await store.get(`useragent:${input}`)).toBe(input.length);
      for (const key of await inspect.keys('seclookup:cache:*')) {
        expect(key).not.toContain('{');
        expect(key.length).toBeLessThan(80);
        expect(await inspect.pttl(key)).toBeLessThanOrEqual(5_000);
      }
    } finally {
      await store.close();
    }
  });

  it('a hung Redis: reads fail with store_failed after the command timeout, and the product cache answers a miss', async () => {
    const store = createRedisCache(server.url(), { commandTimeoutMs: 200 });
    const errors: unknown[] = [];
    const cache = createProductCache<string>(store, { namespace: 'useragent', onError: (error) => errors.push(error) });
    try {
      cache.set('ua', 'parsed');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await cache.get('ua')).toBe('parsed');
      server.pause();
      const started = performance.now();
      await expect(store.get('useragent:ua')).rejects.toMatchObject({ code: 'store_failed', message: 'redis cache read: timed out after 200 ms' });
      expect(await cache.get('ua')).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(errors).toEqual([expect.objectContaining({ code: 'store_failed' })]);
    } finally {
      server.resume();
      await store.close();
    }
  });
});

describe('createRedisSingleUseStore', () => {
  it('stores the id under its prefix with a Redis expiry 5 minutes after expiresAt (clock skew between instances)', async () => {
    const store = createRedisSingleUseStore(server.url());
    try {
      const now = Date.UTC(2025, 0, 1);
      expect(await store.consume('proof-1', now + 300_000, now)).toBe(true);
      const ttl = await inspect.pttl('seclookup:single-use:proof-1');
      expect(ttl).toBeGreaterThan(599_000);
      expect(ttl).toBeLessThanOrEqual(600_000);
      expect(await store.consume('proof-1', now + 300_000, now + 1)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('an instance whose clock is ahead does not let Redis drop an id another instance still sees live', async () => {
    const [ahead, behind] = [createRedisSingleUseStore(server.url()), createRedisSingleUseStore(server.url())];
    try {
      const skew = 2_000;
      const expiresAt = Date.now() + skew + 200;
      // Claimed on the instance 2 s ahead, 200 ms before the expiry by its clock.
      expect(await ahead.consume('skewed', expiresAt, Date.now() + skew)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Live for 1.9 s more by the other instance's clock: still used there.
      expect(await behind.consume('skewed', expiresAt, Date.now())).toBe(false);
    } finally {
      await Promise.all([ahead.close(), behind.close()]);
    }
  });

  it('100 parallel consumers over two connections: exactly one wins', async () => {
    const [a, b] = [createRedisSingleUseStore(server.url()), createRedisSingleUseStore(server.url())];
    try {
      const now = Date.now();
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).consume('proof-race', now + 60_000, now)));
      expect(results.filter(Boolean)).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('Redis down: store_failed at once, and the same store works after Redis is back', async () => {
    const store = createRedisSingleUseStore(server.url(), { maxReconnectDelayMs: 50 });
    try {
      const now = Date.now();
      expect(await store.consume('a', now + 60_000, now)).toBe(true);
      await server.stop();
      const started = performance.now();
      await expect(store.consume('b', now + 60_000, now)).rejects.toMatchObject({ code: 'store_failed' });
      expect(performance.now() - started).toBeLessThan(1_000);
      await server.start();
      const deadline = Date.now() + 5_000;
      let result: boolean | undefined;
      while (result === undefined) {
        try {
          result = await store.consume('b', now + 60_000, now);
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
      expect(result).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe('createRedisClient', () => {
  it('returns a client it is given unchanged, and refuses a URL that is not redis:// without repeating it', () => {
    const client = new Redis(server.url(), { lazyConnect: true });
    expect(createRedisClient(client)).toBe(client);
    client.disconnect();
    expect(() => createRedisClient('mysql://user:pw-secret@host/0')).toThrow(
      expect.objectContaining({ code: 'invalid_option', message: expect.not.stringContaining('pw-secret') }),
    );
    expect(() => createRedisClient('redis://127.0.0.1:6379/zero')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    expect(() => createRedisClient('redis://127.0.0.1:6379/0', { commandTimeoutMs: 0 })).toThrow(/commandTimeoutMs/);
    expect(() => createRedisClient({} as Redis)).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('opens the URL as written: TLS for rediss:// in any letter case, the database, credentials; no ?options', async () => {
    const opened = (url: string) => {
      const client = createRedisClient(url) as Redis;
      client.disconnect();
      return client.options;
    };
    for (const url of ['REDISS://u:p%40ss@127.0.0.1:1/3', 'Rediss://u:p%40ss@127.0.0.1:1/3', 'rediss://u:p%40ss@127.0.0.1:1/3'])
      expect(opened(url)).toMatchObject({ tls: {}, host: '127.0.0.1', port: 1, username: 'u', password: 'p@ss', db: 3 });
    expect(opened('REDIS://[::1]/0')).toMatchObject({ host: '::1', port: 6379, db: 0 });
    expect(opened('REDIS://[::1]/0').tls).toBeUndefined();
    for (const url of [
      'redis://127.0.0.1:1/0?password=pw-secret',
      'redis://127.0.0.1:1/0?tls=false',
      'redis://127.0.0.1:1/0#x',
      'redis://:pw?x@127.0.0.1:1/0',
    ]) {
      expect(() => createRedisClient(url)).toThrow(
        expect.objectContaining({ code: 'invalid_option', message: expect.stringMatching(/no \?options/) && expect.not.stringContaining('pw') }),
      );
    }
  });

  it('a database Redis does not have: every call fails naming it (ioredis would go on in database 0)', async () => {
    const errors: unknown[] = [];
    const store = createRedisSingleUseStore(server.url(99), { onError: (error) => errors.push(error) });
    const zero = createRedisSingleUseStore(server.url(0));
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(store.consume('db-99', Date.now() + 60_000, Date.now())).rejects.toMatchObject({
          code: 'store_failed',
          message: expect.stringContaining('redis has no database 99'),
        });
      }
      // Nothing was written to database 0 in its place.
      expect(await zero.consume('db-99', Date.now() + 60_000, Date.now())).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([store.close(), zero.close()]);
    }
  });

  it('opens a connection with the fail-fast settings', async () => {
    const client = createRedisClient(server.url(), { commandTimeoutMs: 1234 }) as Redis;
    try {
      expect(client.options).toMatchObject({ enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, commandTimeout: 1234 });
      const retry = client.options.retryStrategy!;
      expect([1, 2, 3, 10, 1_000].map((attempt) => retry(attempt))).toEqual([50, 100, 200, 2_000, 2_000]);
    } finally {
      client.disconnect();
    }
  });
});
