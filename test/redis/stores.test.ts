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
  it('is shared by two connections, and gives an entry with a TTL a Redis expiry', async () => {
    const [a, b] = [createRedisCache(server.url()), createRedisCache(server.url())];
    try {
      await a.set('useragent:x', { browser: 'Chrome' }, 60_000);
      await a.set('forever', [1, 2], 0);
      expect(await b.get('useragent:x')).toEqual({ browser: 'Chrome' });
      expect(await inspect.pttl('seclookup:cache:useragent:x')).toBeGreaterThan(59_000);
      expect(await inspect.pttl('seclookup:cache:forever')).toBe(-1);
      await b.delete('useragent:x');
      expect(await a.get('useragent:x')).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
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
  it('stores the id under its prefix with a Redis expiry of expiresAt - now', async () => {
    const store = createRedisSingleUseStore(server.url());
    try {
      const now = Date.UTC(2025, 0, 1);
      expect(await store.consume('proof-1', now + 300_000, now)).toBe(true);
      const ttl = await inspect.pttl('seclookup:single-use:proof-1');
      expect(ttl).toBeGreaterThan(299_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
      expect(await store.consume('proof-1', now + 300_000, now + 1)).toBe(false);
    } finally {
      await store.close();
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
