/**
 * Which store `keys`, `plans` and `sitekeys` change, and what they say about it: `--db` and
 * `--redis` together are refused; an explicit `--db` wins over `$SECLOOKUP_REDIS` (a loopback
 * listener counts the connections that would have gone to Redis); the output names the store
 * written; `keys revoke` says when running servers refuse the key, on a real redis-server too.
 */
import { existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_KEY_CACHE_MS } from '../../src/metering/redis/index.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
let redis: RedisServer;
let redisDb = 0;

/** A TCP listener standing in for a Redis nobody should reach: it counts every connection made to it. */
interface Listener {
  url: string;
  connections: number;
  close(): Promise<void>;
}

async function listen(): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  const listener = { url: '', connections: 0, close: async () => {} };
  const server = net.createServer((socket) => {
    listener.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  listener.url = `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}/0`;
  listener.close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return listener;
}

let listener: Listener;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  await listener?.close();
});
afterAll(async () => {
  await redis?.close();
  temp.cleanup();
});

interface CreatedJson {
  subscription_id: string;
  secret_key_id: string;
  public_key_id: string;
}

describe('keys, plans and sitekeys: one store, the flag over the environment', () => {
  it('keys create --db F with $SECLOOKUP_REDIS set writes to F, says so, and makes no Redis connection', async () => {
    listener = await listen();
    const db = join(temp.make(), 'keys.db');
    const env = { SECLOOKUP_REDIS: listener.url };
    const created = await runCli(['keys', 'create', '--product', 'useragent', '--db', db], { env });
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(created.stdout.split('\n')[0]).toMatch(/^Created a useragent key pair on plan "starter" \(subscription \d+\) in (.+)\.$/);
    expect(created.stdout.split('\n')[0]).toContain(` in ${db}.`);

    const site = await runCliJson<CreatedJson>(['sitekeys', 'create', '--domain', 'example.com', '--json', '--db', db], { env });
    const plans = await runCli(['plans', 'set', 'starter', '--product', 'tls', '--rate-limit', '30', '--db', db], { env });
    expect(plans.stdout.split('\n')[0]).toBe(`Updated plan "starter" for tls in ${db}:`);
    const keys = await runCliJson<{ product: string; subscription_id: string }[]>(['keys', 'list', '--json', '--db', db], { env });
    expect(keys.map((k) => k.product)).toEqual(['useragent', 'useragent', 'captcha', 'captcha']);
    expect(keys[2].subscription_id).toBe(site.subscription_id);
    expect(listener.connections).toBe(0);
  });

  it.each([
    [['keys', 'list'], 'keys'],
    [['keys', 'create', '--product', 'useragent'], 'keys'],
    [['keys', 'revoke', '1'], 'keys'],
    [['plans', 'list'], 'plans'],
    [['plans', 'set', 'starter', '--all-products', '--rate-limit', '5'], 'plans'],
    [['sitekeys', 'list'], 'sitekeys'],
    [['sitekeys', 'create', '--domain', 'example.com'], 'sitekeys'],
    [['sitekeys', 'rotate-signing-key'], 'sitekeys'],
  ])('%j with both --db and --redis exits 2 and opens neither store', async (args, help) => {
    listener = await listen();
    const db = join(temp.make(), 'both.db');
    const result = await runCli([...args, '--db', db, '--redis', listener.url]);
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toContain('give --db FILE or --redis URL, not both');
    expect(result.stderr).toContain(`seclookup ${help} --help`);
    expect(existsSync(db)).toBe(false);
    expect(listener.connections).toBe(0);
  });
});

describe('what the commands say about the store they changed', () => {
  it('keys create names the Redis written, its password masked; keys revoke says when servers refuse the key on each store', async () => {
    // A user of its own, so the URL carries a password to mask.
    await redis.command('ACL', 'SETUSER', 'operator', 'on', '>pw-admin-store', '~*', '&*', '+@all');
    const url = redis.url(++redisDb).replace('redis://', 'redis://operator:pw-admin-store@');
    const masked = url.replace('pw-admin-store', '***');
    const created = await runCli(['keys', 'create', '--product', 'useragent', '--redis', url]);
    expect(created.code).toBe(0);
    expect(created.stdout.split('\n')[0]).toMatch(
      new RegExp(`^Created a useragent key pair on plan "starter" \\(subscription \\d+\\) in ${escapeRegExp(masked)}\\.$`),
    );
    expect(created.stdout).not.toContain('pw-admin-store');

    const onRedis = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'useragent', '--json', '--redis', url]);
    const revokedOnRedis = await runCli(['keys', 'revoke', onRedis.secret_key_id, '--redis', url]);
    expect(revokedOnRedis.code).toBe(0);
    expect(revokedOnRedis.stdout).toMatch(
      new RegExp(
        `^Revoked key ${onRedis.secret_key_id} \\(useragent secret, ua_sec_[\\w-]+\\.\\.\\.\\)\\. It stops working within ${DEFAULT_KEY_CACHE_MS / 1000} s \\(each server on this Redis keeps a key and its plan in memory that long\\)\\.\\n$`,
      ),
    );

    const db = join(temp.make(), 'keys.db');
    const onFile = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'useragent', '--json', '--db', db]);
    const revokedOnFile = await runCli(['keys', 'revoke', onFile.secret_key_id, '--db', db]);
    expect(revokedOnFile.stdout).toMatch(
      new RegExp(`^Revoked key ${onFile.secret_key_id} \\(useragent secret, ua_sec_[\\w-]+\\.\\.\\.\\)\\. It stops working at once\\.\\n$`),
    );
  });

  it('the helps of keys, plans and sitekeys give the Redis key cache time, not "at once" alone', async () => {
    const within = `within ${DEFAULT_KEY_CACHE_MS / 1000} s on Redis`;
    for (const command of ['keys', 'plans', 'sitekeys']) {
      const help = (await runCli([command, '--help'])).stdout.replace(/\s+/g, ' ');
      expect(help, command).toContain(within);
      expect(help, command).toContain('--db and --redis together are refused');
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
