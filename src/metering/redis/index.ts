/**
 * `seclookup/redis`: the stores several seclookup instances share through one Redis (a Meter, a
 * CacheStore and a SingleUseStore), and the connection helper they use. This subpath is the
 * only one that loads ioredis, an optional peer dependency: install it beside seclookup.
 * See the README, "Several instances: Redis".
 */
export {
  createRedisClient,
  redisClientOptions,
  redisClusterOptions,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
} from './client.js';
export type { RedisClient, RedisConnectionOptions } from './client.js';
export { createRedisMeter, DEFAULT_COMMIT_DELAY_MS, DEFAULT_KEY_CACHE_MS, DEFAULT_USAGE_RETENTION_DAYS } from './meter.js';
export type { RedisMeterOptions } from './meter.js';
export { createRedisCache } from './cache.js';
export type { RedisCacheOptions, RedisCacheStore } from './cache.js';
export { createRedisSingleUseStore } from './single-use.js';
export { redisEvictionRisk } from './eviction.js';
export type { RedisSingleUseOptions } from './single-use.js';
export type { Meter, MeterAdmin, MeterHotPath, SettingsStore } from '../types.js';
export type { CacheStore } from '../../lib/cache.js';
export type { SingleUseStore } from '../single-use.js';
