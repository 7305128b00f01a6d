/**
 * Does a Redis evict keys? The meter's rate windows and quotas and the single-use store's used
 * captcha ids carry expiries, so any policy but `noeviction` can drop a live one under memory
 * pressure: over-admitting a rate, or accepting a captcha token twice. `serve --redis` asks at
 * start and warns; it cannot refuse, as a managed Redis may hide its configuration.
 */
import type { Cluster, Redis } from 'ioredis';
import { closeConnection, openConnection, whenReady, type RedisClient, type RedisConnectionOptions } from './client.js';

/**
 * A sentence naming the node and its setting when a Redis (every master of a Cluster) has a
 * `maxmemory` and a `maxmemory-policy` other than `noeviction`; null when none evicts, or when
 * it cannot be told (CONFIG disabled, as on some managed services, or Redis unreachable).
 */
export async function redisEvictionRisk(urlOrClient: string | RedisClient, options: RedisConnectionOptions = {}): Promise<string | null> {
  const connection = openConnection(urlOrClient, options);
  try {
    await whenReady(connection);
    const { client } = connection;
    const nodes: Redis[] = 'nodes' in client && typeof client.nodes === 'function' ? (client as Cluster).nodes('master') : [client as Redis];
    for (const node of nodes) {
      const [, policy] = (await node.config('GET', 'maxmemory-policy')) as string[];
      const [, maxmemory] = (await node.config('GET', 'maxmemory')) as string[];
      if (policy !== undefined && policy !== 'noeviction' && Number(maxmemory) > 0) {
        return `Redis at ${node.options.host}:${node.options.port} evicts keys when full (maxmemory-policy ${policy}, maxmemory ${maxmemory} bytes): rate windows, quotas and used captcha tokens could be dropped early; set maxmemory-policy noeviction`;
      }
    }
    return null;
  } catch {
    return null;
  } finally {
    await closeConnection(connection);
  }
}
