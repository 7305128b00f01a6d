/**
 * The single-use store on Redis: captcha nonces and proof ids consumed once across every
 * instance. One script per call (GET, then SET ... PX) decides atomically inside Redis, so two
 * instances racing for one id cannot both win.
 */
import { createHash } from 'node:crypto';
import { SeclookupError, invalidOption } from '../../errors.js';
import { checkSingleUseId, type SingleUseStore } from '../single-use.js';
import { closeConnection, loadScripts, openConnection, runScript, toStoreError, whenReady, type RedisClient, type RedisConnectionOptions } from './client.js';
import { CONSUME_ONCE } from './scripts.js';

/** How far instances' clocks may disagree before a used id could be used again on a slower one. */
const CLOCK_SKEW_SLACK_MS = 5 * 60_000;

export interface RedisSingleUseOptions extends RedisConnectionOptions {
  /** Prefix of every Redis key of the store. @default 'seclookup:single-use:' */
  prefix?: string;
}

/**
 * `consume(id, expiresAt, now, owner?)` is true for the first use of `id` while it is live (and
 * for a retry with the first use's owner). The entry holds `expiresAt` and expires in Redis 5
 * minutes after it (by the consuming instance's clock); liveness is judged by the caller's
 * clock, as in the memory and SQLite stores. Run Redis with `maxmemory-policy noeviction`: an
 * evicted entry could be used twice.
 *
 * @example
 * const tokens = createRedisSingleUseStore('redis://127.0.0.1:6379/0');
 */
export function createRedisSingleUseStore(urlOrClient: string | RedisClient, options: RedisSingleUseOptions = {}): SingleUseStore {
  const prefix = options.prefix ?? 'seclookup:single-use:';
  if (typeof prefix !== 'string') throw invalidOption('the Redis key prefix must be a string');
  const connection = openConnection(urlOrClient, options);
  const { client } = connection;
  let closed = false;
  let loaded = false;

  async function consumeOnce(id: string, expiresAt: number, now: number, owner: string | undefined): Promise<boolean> {
    try {
      if (client.status !== 'ready') await whenReady(connection);
      if (!loaded) {
        await loadScripts(client, [CONSUME_ONCE]);
        loaded = true;
      }
      // Redis drops the entry some minutes after its expiry by this instance's clock: another
      // instance whose clock is behind still finds it while the id is live by its own clock.
      const ttl = expiresAt > now ? Math.ceil(expiresAt - now) + CLOCK_SKEW_SLACK_MS : 0;
      return (await runScript(client, CONSUME_ONCE, [prefix + id], [Math.round(expiresAt), now, ttl, owner === undefined ? '' : ownerDigits(owner)])) === 1;
    } catch (error) {
      throw toStoreError(error, 'single-use consume', connection.commandTimeoutMs);
    }
  }

  return {
    consume(id, expiresAt, now, owner) {
      if (closed) return Promise.reject(new SeclookupError('store_failed', 'the single-use store is closed'));
      checkSingleUseId(id, expiresAt, owner);
      return consumeOnce(id, expiresAt, now, owner);
    },
    async close() {
      if (closed) return;
      closed = true;
      await closeConnection(connection);
    },
  };
}

/** An owner as decimal digits (the entry's value is a number): 128 bits of its SHA-256. */
function ownerDigits(owner: string): string {
  return BigInt(`0x${createHash('sha256').update(owner).digest('hex').slice(0, 32)}`).toString();
}
