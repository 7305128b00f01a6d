/**
 * The stores' conformance suites, unchanged, against a real Redis Cluster (three masters, a
 * replica each) on loopback: the Redis Meter, cache and single-use store behave on a Cluster as
 * on one Redis. The meter and single-use store connect from a `redis+cluster://` seed URL; the
 * cache suite runs on an ioredis Cluster built by the caller with `redisClusterOptions()`.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedisCache, createRedisMeter, createRedisSingleUseStore, redisClusterOptions } from '../../src/metering/redis/index.js';
import { cacheStoreConformance } from '../lib/cache-conformance.js';
import { describeSingleUseStore } from '../metering/single-use-conformance.js';
import { describeMeterConformance } from '../metering/conformance/index.js';
import { startRedisCluster, type RedisCluster } from '../servers/redis-cluster.js';

let cluster: RedisCluster;
/** One shared Cluster client for the cache suite, whose stores have no cleanup hook. */
let shared: Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
  shared = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    redisClusterOptions(),
  );
}, 30_000);
afterAll(async () => {
  shared?.disconnect();
  await cluster?.close();
});

it('the cluster is three masters with a replica each, every slot served', async () => {
  const nodes = await cluster.nodes();
  expect(nodes.filter((node) => node.role === 'master')).toHaveLength(3);
  expect(nodes.filter((node) => node.role === 'replica')).toHaveLength(3);
  // The suites' first subscriptions' counters (and the admin records) spread over all three masters.
  const keys = ['seclookup:{admin}:plans', ...[1, 2, 3, 4, 5, 6].map((id) => `seclookup:{sub:${id}}:quota`)];
  const owners = new Set(await Promise.all(keys.map((key) => cluster.masterOf(key))));
  expect(owners.size).toBe(3);
});

// Each test starts on an empty cluster with a meter of its own connection (closed by cleanup).
describeMeterConformance('redis cluster', async (options) => {
  await cluster.flush();
  const meter = createRedisMeter(cluster.url(), options);
  return { meter, cleanup: () => meter.close() };
});

let cacheStores = 0;
cacheStoreConformance('redis cluster', (now) => createRedisCache(shared, { now, prefix: `cache-test-${++cacheStores}:` }));

describeSingleUseStore(
  'redis cluster',
  async () => {
    await cluster.flush();
    return createRedisSingleUseStore(cluster.url(), { prefix: 'single-use-test:' });
  },
  () => createRedisSingleUseStore(cluster.url(), { prefix: 'single-use-test:' }),
);
