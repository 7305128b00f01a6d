/**
 * A Redis that refuses the connection says why: a real redis-server with a password
 * (`requirepass`), reached without one and with a wrong one. Before, every such failure read
 * "redis is unreachable", sending the operator after the network; and the CLI's key and plan
 * commands crashed with a stack on any Redis failure. No message repeats the password. A URL
 * naming a database read every refusal as "no database N", and closed its connection for good.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import type { ConsumeRequest } from '../../src/metering/types.js';
import { startRedisCluster } from '../servers/redis-cluster.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { runCli } from '../cli/harness.js';

const PASSWORD = 'correct-horse-battery';
const NOAUTH = 'redis wants a password (NOAUTH): give it in the URL, redis://:PASSWORD@host:port';
const WRONGPASS = "redis refused the URL's user or password (WRONGPASS)";
const request: ConsumeRequest = {
  keyId: 'k1',
  subscriptionId: 's1',
  product: 'useragent',
  rateLimitPerMinute: 10,
  monthlyQuota: 100,
  reserveQuota: false,
  now: Date.UTC(2025, 0, 15),
};

let redis: RedisServer;
let port: number;

beforeAll(async () => {
  redis = await startRedisServer();
  port = redis.port;
  expect(await redis.command('CONFIG', 'SET', 'requirepass', PASSWORD)).toBe('+OK\r\n');
});
afterAll(async () => {
  await redis?.close();
});

describe('the Redis stores, refused by Redis', () => {
  it('without the password: store_failed saying Redis wants one and where it goes', async () => {
    const meter = createRedisMeter(`redis://127.0.0.1:${port}/0`, { commandTimeoutMs: 500, maxReconnectDelayMs: 50 });
    try {
      await expect(meter.consume(request)).rejects.toMatchObject({ code: 'store_failed', message: `redis connect: ${NOAUTH}` });
    } finally {
      await meter.close();
    }
  });

  it('with a wrong password: store_failed saying the user or password was refused, never repeating it', async () => {
    const meter = createRedisMeter(`redis://:not-the-${PASSWORD}@127.0.0.1:${port}/0`, { commandTimeoutMs: 500, maxReconnectDelayMs: 50 });
    try {
      const failure = await Promise.resolve()
        .then(() => meter.consume(request))
        .then(
          () => null,
          (error: Error) => error,
        );
      expect(failure).toMatchObject({ code: 'store_failed', message: `redis connect: ${WRONGPASS}` });
      expect(failure?.cause).toBeUndefined();
    } finally {
      await meter.close();
    }
  });

  it('with a wrong password and a database (/1): WRONGPASS, not "no database 1"', async () => {
    const meter = createRedisMeter(`redis://:not-the-${PASSWORD}@127.0.0.1:${port}/1`, { commandTimeoutMs: 500, maxReconnectDelayMs: 50 });
    try {
      await expect(meter.consume(request)).rejects.toMatchObject({ code: 'store_failed', message: `redis connect: ${WRONGPASS}` });
    } finally {
      await meter.close();
    }
  });

  it('with the right password and a database Redis does not have (/99): "no database 99"', async () => {
    const meter = createRedisMeter(`redis://:${PASSWORD}@127.0.0.1:${port}/99`, { commandTimeoutMs: 500, maxReconnectDelayMs: 50 });
    try {
      await expect(meter.consume(request)).rejects.toMatchObject({ code: 'store_failed', message: expect.stringContaining('redis has no database 99') });
    } finally {
      await meter.close();
    }
  });

  it('refused with a database (/1), then given the password it sends: it connects, with no restart', async () => {
    const next = `next-${PASSWORD}`;
    const meter = createRedisMeter(`redis://:${next}@127.0.0.1:${port}/1`, { commandTimeoutMs: 500, maxReconnectDelayMs: 50 });
    const admin = new Redis({ port, host: '127.0.0.1', password: PASSWORD });
    try {
      await expect(meter.consume(request)).rejects.toMatchObject({ code: 'store_failed' });
      await admin.config('SET', 'requirepass', next);
      await vi.waitFor(async () => expect(await meter.consume(request)).toMatchObject({ allowed: true }), { timeout: 10_000, interval: 50 });
    } finally {
      await admin.config('SET', 'requirepass', PASSWORD);
      admin.disconnect();
      await meter.close();
    }
  });

  it('with the password in the URL: it works', async () => {
    const meter = createRedisMeter(`redis://:${PASSWORD}@127.0.0.1:${port}/0`, { commandTimeoutMs: 500 });
    try {
      expect(await meter.consume(request)).toMatchObject({ allowed: true });
    } finally {
      await meter.close();
    }
  });
});

describe('a Redis Cluster, refused by its nodes', () => {
  it('says why, as one Redis does: ioredis wraps the nodes\' refusal in "Failed to refresh slots cache"', async () => {
    const cluster = await startRedisCluster({ masters: 3, replicas: 0 });
    try {
      for (const node of cluster.ports) expect(await cluster.command(node, 'CONFIG', 'SET', 'requirepass', PASSWORD)).toBe('+OK\r\n');
      const told: string[] = [];
      const options = { commandTimeoutMs: 500, maxReconnectDelayMs: 50, onError: (error: Error) => told.push(error.message) };
      const withoutPassword = createRedisMeter(cluster.url(), options);
      const seeds = cluster.url().slice('redis+cluster://'.length);
      const wrongPassword = createRedisMeter(`redis+cluster://:not-the-${PASSWORD}@${seeds}`, options);
      try {
        await expect(withoutPassword.consume(request)).rejects.toMatchObject({ code: 'store_failed', message: `redis connect: ${NOAUTH}` });
        await expect(wrongPassword.consume(request)).rejects.toMatchObject({ code: 'store_failed', message: `redis connect: ${WRONGPASS}` });
        expect(told).toContain(`redis connection: ${NOAUTH}`);
        expect(told.join('\n')).not.toContain(PASSWORD);
      } finally {
        await Promise.all([withoutPassword.close(), wrongPassword.close()]);
      }
    } finally {
      await cluster.close();
    }
  }, 60_000);
});

describe('the CLI, refused by Redis or not reaching it', () => {
  it('serve, keys, plans and sitekeys fail in one line naming the store, its password redacted', async () => {
    for (const [url, shown, reason] of [
      [`redis://127.0.0.1:${port}/0`, `redis://127.0.0.1:${port}/0`, NOAUTH],
      [`redis://:not-the-${PASSWORD}@127.0.0.1:${port}/0`, `redis://:***@127.0.0.1:${port}/0`, WRONGPASS],
      // The socket's error: nothing listens on port 1.
      ['redis://:s3cret@127.0.0.1:1/0', 'redis://:***@127.0.0.1:1/0', 'redis is unreachable (ECONNREFUSED; reconnecting)'],
    ]) {
      for (const args of [
        ['keys', 'list'],
        ['keys', 'create', '--product', 'geoip'],
        ['plans', 'list'],
        ['sitekeys', 'list'],
        ['serve', '--port', '0'],
      ]) {
        const result = await runCli([...args, '--redis', url]);
        const said = `${args.join(' ')} on ${shown}`;
        expect(result.code, said).toBe(1);
        expect(result.stderr.trim().split('\n').at(-1), said).toBe(`seclookup: cannot use the meter store (${shown}): redis connect: ${reason}`);
        expect(result.stderr, said).not.toMatch(/s3cret|not-the-|\n\s+at /);
      }
    }
  });
});
