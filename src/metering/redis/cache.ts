/**
 * A CacheStore on Redis, so every instance shares one cache: values are JSON with their expiry
 * time beside them (checked on read against `now`, so a given clock drives expiry exactly as
 * in the memory store), and a Redis expiry (PX) that removes them for good. Every entry has
 * one: an entry kept "until evicted" lives `maxTtlMs` in Redis, since a Redis that also holds
 * the meter must not evict (serve --redis), and one that never expired would fill it.
 */
import { createHash } from 'node:crypto';
import { SeclookupError, invalidOption } from '../../errors.js';
import type { CacheStore } from '../../lib/cache.js';
import { closeConnection, openConnection, toStoreError, whenReady, type RedisClient, type RedisConnectionOptions } from './client.js';

export interface RedisCacheOptions extends RedisConnectionOptions {
  /** Prefix of every Redis key of the cache. @default 'seclookup:cache:' */
  prefix?: string;
  /** Clock in ms since the epoch for expiry (tests pass a fake one). @default Date.now */
  now?: () => number;
  /**
   * Longest an entry stays in Redis, also for entries a product keeps until evicted (ttl 0,
   * which a memory LRU bounds by count, but Redis could not without evicting).
   * @default 86400000 (a day)
   */
  maxTtlMs?: number;
}

const DAY_MS = 86_400_000;

/** A CacheStore whose connection can be closed. */
export interface RedisCacheStore extends CacheStore {
  /** Close the connection if the store opened it (a client you passed stays open). */
  close(): Promise<void>;
}

/**
 * @example
 * const cache = createRedisCache('redis://127.0.0.1:6379/1');
 * const lookup = createLookup({ cache });
 */
export function createRedisCache(urlOrClient: string | RedisClient, options: RedisCacheOptions = {}): RedisCacheStore {
  const prefix = options.prefix ?? 'seclookup:cache:';
  if (typeof prefix !== 'string') throw invalidOption('the Redis key prefix must be a string');
  const now = options.now ?? Date.now;
  const maxTtlMs = options.maxTtlMs ?? DAY_MS;
  if (!Number.isSafeInteger(maxTtlMs) || maxTtlMs < 1)
    throw invalidOption(`maxTtlMs must be a positive whole number of milliseconds (got ${String(maxTtlMs)})`);
  const connection = openConnection(urlOrClient, options);
  const { client } = connection;
  let closed = false;

  async function redis<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (closed) throw new SeclookupError('store_failed', 'the cache store is closed');
    try {
      if (client.status !== 'ready') await whenReady(connection);
      return await work();
    } catch (error) {
      throw toStoreError(error, what, connection.commandTimeoutMs);
    }
  }

  return {
    async get(key) {
      const stored = await redis('cache read', () => client.get(redisKeyOf(prefix, key)));
      if (stored === null) return undefined;
      let entry: [number, unknown];
      try {
        entry = JSON.parse(stored) as [number, unknown];
      } catch {
        throw new SeclookupError('store_failed', 'redis cache read: the entry is not JSON');
      }
      const [expiresAt, value] = entry;
      return expiresAt !== 0 && now() > expiresAt ? undefined : value;
    },
    async set(key, value, ttlMs) {
      if (!Number.isFinite(ttlMs) || ttlMs < 0) throw invalidOption(`cache ttlMs must be 0 or more (got ${String(ttlMs)})`);
      const ttl = Math.ceil(ttlMs);
      const stored = JSON.stringify([ttl > 0 ? now() + ttl : 0, value]);
      await redis('cache write', () => client.set(redisKeyOf(prefix, key), stored, 'PX', ttl > 0 ? Math.min(ttl, maxTtlMs) : maxTtlMs));
    },
    async delete(key) {
      await redis('cache delete', () => client.del(redisKeyOf(prefix, key)));
    },
    async close() {
      if (closed) return;
      closed = true;
      await closeConnection(connection);
    },
  };
}

/**
 * A cache key as a Redis key: the prefix, the key's namespace as it is (`useragent:`), then a
 * hash of the whole key. Hashed, a caller's input never picks a Cluster slot with a `{tag}` (a
 * User-Agent of `{admin}` would pile entries onto the master of every key and plan), nor the
 * length of a Redis key.
 */
function redisKeyOf(prefix: string, key: string): string {
  const namespace = /^[A-Za-z0-9_-]{1,32}:/.exec(key)?.[0] ?? '';
  return prefix + namespace + createHash('sha256').update(key).digest('base64url');
}
