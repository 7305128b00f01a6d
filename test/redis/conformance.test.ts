/**
 * The stores' conformance suites, unchanged, against a real redis-server: the Redis Meter, cache
 * and single-use store must behave as the memory and SQLite ones do.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createRedisCache, createRedisMeter, createRedisSingleUseStore, redisClientOptions } from '../../src/metering/redis/index.js';
import { cacheStoreConformance } from '../lib/cache-conformance.js';
import { describeSingleUseStore } from '../metering/single-use-conformance.js';
import { describeMeterConformance } from '../metering/conformance/index.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';

let server: RedisServer;
/** One shared client for the cache suite, whose stores have no cleanup hook. */
let shared: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  shared = new Redis(server.url(1), redisClientOptions());
});
afterAll(async () => {
  shared?.disconnect();
  await server?.close();
});

// Each test starts on an empty Redis with a meter of its own connection (closed by cleanup).
describeMeterConformance('redis', async (options) => {
  await server.flush();
  const meter = createRedisMeter(server.url(), options);
  return { meter, cleanup: () => meter.close() };
});

// Stores on the shared client, each under a prefix of its own, in db 1.
let cacheStores = 0;
cacheStoreConformance('redis', (now) => createRedisCache(shared, { now, prefix: `cache-test-${++cacheStores}:` }));

describeSingleUseStore(
  'redis',
  async () => {
    await server.flush();
    return createRedisSingleUseStore(server.url(2));
  },
  () => createRedisSingleUseStore(server.url(2)),
);
