/**
 * A CacheStore on Redis, so every instance shares one cache: values are JSON with their expiry
 * time beside them (checked on read against `now`, so a given clock drives expiry exactly as
 * in the memory store), and a Redis expiry (PX) that removes them for good.
 */
import { SeclookupError, invalidOption } from '../../errors.js';
import type { CacheStore } from '../../lib/cache.js';
import { closeConnection, openConnection, toStoreError, whenReady, type RedisClient, type RedisConnectionOptions } from './client.js';

export interface RedisCacheOptions extends RedisConnectionOptions {
  /** Prefix of every Redis key of the cache. @default 'seclookup:cache:' */
  prefix?: string;
  /** Clock in ms since the epoch for expiry (tests pass a fake one). @default Date.now */
  now?: () => number;
}

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
      const stored = await redis('cache read', () => client.get(prefix + key));
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
      await redis('cache write', () => (ttl > 0 ? client.set(prefix + key, stored, 'PX', ttl) : client.set(prefix + key, stored)));
    },
    async delete(key) {
      await redis('cache delete', () => client.del(prefix + key));
    },
    async close() {
      if (closed) return;
      closed = true;
      await closeConnection(connection);
    },
  };
}
