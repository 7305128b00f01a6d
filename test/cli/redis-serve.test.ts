/**
 * Several instances on one Redis, as an operator runs them: a real redis-server on loopback,
 * keys and plans made with the CLI against it, two `seclookup serve --redis` processes sharing
 * it. Limits, quotas and captcha tokens hold exactly across both; a revoked key is refused by
 * both within the key cache's bound; Redis stopped mid-load gives the configured answer with no
 * hang or crash, and counting is exact again once it is back, with no restart of seclookup.
 * Instances started together on an empty store (Redis, or one SQLite file) make one set of
 * starter keys between them, shown by the one that made it.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { announceKeys, BOOTSTRAP_CLAIM_GRACE_MS } from '../../src/cli/serve.js';
import { withIo } from '../../src/cli/io.js';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { running, startServe, type ServeRun } from './serve-process.js';

const temp = createTempDirs();
let redis: RedisServer;
let db = 0;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
  // A test that failed while Redis was stopped must not leave it down for the next one.
  if (redis.pid === undefined) await redis.start();
});
afterAll(async () => {
  await redis?.close();
  temp.cleanup();
});

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** The operator secret both instances share (captcha's signing keys are wrapped under it). */
const SHARED_SECRET = { SECLOOKUP_SECRET: 'redis-serve-operator-secret-0123456789abcdef' };

/** A fresh Redis database for one test, and two serve instances on it. */
async function twoInstances(extra: string[] = []): Promise<{ url: string; a: string; b: string; serves: ServeRun[] }> {
  const url = redis.url(++db);
  // One after the other: both run in this process, and one loading its engines (a second or more
  // of synchronous work) would hold up the other's Redis commands past their 1 s timeout.
  const started: Awaited<ReturnType<typeof startServe>>[] = [];
  for (let i = 0; i < 2; i++) started.push(await startServe(join(temp.make(), 'local.db'), { args: ['--redis', url, ...extra], env: SHARED_SECRET }));
  return { url, a: started[0].baseUrl, b: started[1].baseUrl, serves: started.map((s) => s.serve) };
}

/** The status, and the rate window it was counted in (X-RateLimit-Reset, a Unix time). */
async function getWithWindow(url: string, key: string): Promise<{ status: number; reset: string | null }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return { status: response.status, reset: response.headers.get('x-ratelimit-reset') };
}

async function get(url: string, key: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

const lookup = (base: string) => `${base}/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`;

describe('seclookup serve --redis: two instances, one Redis', () => {
  it('a burst of 400 requests split across both against a limit of 120: exactly 120 succeed in each minute window that refused any', async () => {
    const { url, a, b } = await twoInstances();
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--json', '--redis', url]);
    const answers = await Promise.all(Array.from({ length: 400 }, (_, i) => getWithWindow(lookup(i % 2 ? a : b), key.secret_key)));
    expect(answers.every(({ status }) => status === 200 || status === 429)).toBe(true);
    // The windows are calendar minutes, which a slow burst can straddle (the rest of the burst then
    // meets a fresh window): each window, named by its X-RateLimit-Reset, is judged on its own.
    const windows = new Map<string | null, { admitted: number; refused: number }>();
    for (const { status, reset } of answers) {
      const counts = windows.get(reset) ?? { admitted: 0, refused: 0 };
      if (status === 200) counts.admitted++;
      else counts.refused++;
      windows.set(reset, counts);
    }
    expect(windows.size).toBeLessThanOrEqual(2);
    for (const [reset, { admitted, refused }] of windows) {
      expect(reset).toMatch(/^\d+$/);
      // Never over the limit, and never a refusal before the limit was reached.
      expect(admitted).toBeLessThanOrEqual(120);
      if (refused > 0) expect(admitted).toBe(120);
    }
    expect(answers.filter(({ status }) => status === 200).length).toBeGreaterThanOrEqual(120);
  });

  it('a monthly quota of 50 across both: exactly 50 lookups succeed; status shows none left', async () => {
    const { url, a, b } = await twoInstances();
    expect((await runCli(['plans', 'set', 'q50', '--all-products', '--rate-limit', '1000', '--monthly-quota', '50', '--redis', url])).code).toBe(0);
    const key = await runCliJson<{ secret_key: string; public_key: string }>([
      'keys',
      'create',
      '--product',
      'useragent',
      '--plan',
      'q50',
      '--json',
      '--redis',
      url,
    ]);
    const statuses = await Promise.all(Array.from({ length: 90 }, (_, i) => get(lookup(i % 2 ? a : b), key.secret_key)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    const status = await fetch(`${b}/v1/useragent/status`, { headers: { authorization: `Bearer ${key.public_key}` } }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    expect(status).toMatchObject({ monthly_quota: 50, quota_remaining: 0 });
  });

  it('100 parallel siteverify calls for one captcha proof spread over both: exactly one success', async () => {
    const { url, a, b } = await twoInstances();
    const site = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--redis', url]);
    const challenge = await fetch(`${a}/v1/captcha/challenge?sitekey=${site.site_key}&hostname=shop.example.com`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    // Solved on the other instance: the signing keys are shared too.
    const verified = await fetch(`${b}/v1/captcha/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sitekey: site.site_key,
        hostname: 'shop.example.com',
        token: `${challenge.challenge}.${solvePow(challenge.params as PowParams)}`,
      }),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
    expect(verified.success).toBe(true);
    // The starter plan allows 60 requests a minute per site key: room for 100 with a plan of its own.
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${i % 2 ? a : b}/v1/captcha/siteverify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ secret: site.secret_key, response: verified.proof }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> })),
      ),
    );
    const ok = replies.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(
      replies.filter((r) => r.body.error_code === 'token_already_used').length + replies.filter((r) => r.body.error_code === 'rate_limit_exceeded').length,
    ).toBe(99);
    expect(replies.filter((r) => r.body.error_code === 'token_already_used').length).toBeGreaterThan(0);
  });

  it('a key revoked with the CLI is refused by both instances within the key cache bound (1 s)', async () => {
    const { url, a, b } = await twoInstances();
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--json', '--redis', url]);
    expect(await get(lookup(a), key.secret_key)).toBe(200);
    expect(await get(lookup(b), key.secret_key)).toBe(200);
    expect((await runCli(['keys', 'revoke', key.secret_key, '--redis', url])).code).toBe(0);
    const revokedAt = Date.now();
    let refusedBoth = 0;
    while (refusedBoth === 0 && Date.now() - revokedAt < 5_000) {
      const [x, y] = await Promise.all([get(lookup(a), key.secret_key), get(lookup(b), key.secret_key)]);
      if (x === 401 && y === 401) refusedBoth = Date.now() - revokedAt;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refusedBoth).toBeGreaterThan(0);
    // The bound is 1 s of key cache; allow for process scheduling on a loaded machine.
    expect(refusedBoth).toBeLessThan(2_500);
  });

  it('Redis stopped mid-load: 500 internal_error within the command timeout, no crash; after it restarts, exact counting again with no restart of seclookup', async () => {
    const { url, a, b, serves } = await twoInstances();
    await runCli(['plans', 'set', 'r10', '--all-products', '--rate-limit', '10', '--monthly-quota', '1000', '--redis', url]);
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--plan', 'r10', '--json', '--redis', url]);
    expect(await get(lookup(a), key.secret_key)).toBe(200);
    // Load from 8 clients while Redis goes away under it.
    const answers: { status: number; ms: number; sentAt: number }[] = [];
    let stopping = false;
    let stoppedAt = Infinity;
    const sentAfterStop = () => answers.filter((x) => x.sentAt > stoppedAt).length;
    const client = async (n: number) => {
      while (sentAfterStop() < 40) {
        const sentAt = Date.now();
        const status = await get(lookup(n % 2 ? a : b), key.secret_key);
        answers.push({ status, ms: Date.now() - sentAt, sentAt });
        if (answers.length >= 40 && !stopping) {
          stopping = true;
          await redis.stop();
          stoppedAt = Date.now();
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, n) => client(n)));
    // Before: 200 then 429 (limit 10); once Redis is gone: 500 internal_error (--on-store-error deny), never a hang.
    expect(answers.every((x) => [200, 429, 500].includes(x.status))).toBe(true);
    expect(answers.filter((x) => x.status === 200).length).toBeLessThanOrEqual(10);
    const afterStop = answers.filter((x) => x.sentAt > stoppedAt);
    expect(afterStop.length).toBeGreaterThanOrEqual(40);
    expect(afterStop.every((x) => x.status === 500)).toBe(true);
    expect(Math.max(...answers.map((x) => x.ms))).toBeLessThan(5_000);
    expect(serves.every((s) => s.exitCode === null)).toBe(true);

    await redis.start(); // empty: nothing was persisted, so the keys are gone with it
    const fresh = await waitFor(async () => {
      const made = await runCli(['keys', 'create', '--product', 'useragent', '--plan', 'starter', '--json', '--redis', url]);
      return made.code === 0 ? (JSON.parse(made.stdout) as { secret_key: string }) : null;
    });
    await runCli(['plans', 'set', 'r10', '--all-products', '--rate-limit', '10', '--monthly-quota', '1000', '--redis', url]);
    const again = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--plan', 'r10', '--json', '--redis', url]);
    // Both instances back on Redis (each reconnects on its own), then the burst.
    const statuses = await waitFor(async () => {
      const probes = await Promise.all([get(lookup(a), fresh.secret_key), get(lookup(b), fresh.secret_key)]);
      return probes.every((probe) => probe === 200) ? Promise.all(Array.from({ length: 30 }, (_, i) => get(lookup(i % 2 ? a : b), again.secret_key))) : null;
    });
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
  });

  it('without an operator secret there is no default on Redis: serve says captcha is off, and captcha answers 500 server_error', async () => {
    const url = redis.url(++db);
    const { serve, baseUrl } = await startServe(join(temp.make(), 'local.db'), { args: ['--redis', url] });
    expect(serve.stderr).toContain('captcha is off: no operator secret');
    const site = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--redis', url]);
    const reply = await fetch(`${baseUrl}/v1/captcha/challenge?sitekey=${site.site_key}&hostname=shop.example.com`);
    expect([reply.status, ((await reply.json()) as Record<string, unknown>).error_code]).toEqual([500, 'server_error']);
    expect(await redis.command('HGET', 'seclookup:{admin}:settings', 'captcha.signing_keys')).toBe('$-1\r\n');
    const rotate = await runCli(['sitekeys', 'rotate-signing-key', '--redis', url]);
    expect([rotate.code, rotate.stderr]).toEqual([1, expect.stringContaining('operator secret')]);
  });

  it('exits 1 at start, naming the store, when its Redis cannot be reached (no hang on the open connection)', async () => {
    const started = Date.now();
    const result = await runCli(['serve', '--port', '0', '--redis', 'redis://127.0.0.1:1/0', '--db', join(temp.make(), 'x.db')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot use the meter store (redis://127.0.0.1:1/0)');
    expect(Date.now() - started).toBeLessThan(15_000);
    // The store is tried before the datasets load: with a data folder that has none, the store is what it names.
    const noData = await runCli(['serve', '--port', '0', '--redis', 'redis://127.0.0.1:1/0', '--data-dir', temp.make(), '--db', join(temp.make(), 'x.db')]);
    expect([noData.code, noData.stderr]).toEqual([1, expect.stringContaining('cannot use the meter store (redis://127.0.0.1:1/0)')]);
    expect(noData.stderr).not.toContain('dataset');
    const typo = await runCli(['keys', 'list', '--redis', 'http://127.0.0.1:6379']);
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringContaining('--redis must be a redis:// or rediss:// URL')]);
    // ?options would be ioredis's connection options, a password among them: refused, not quoted.
    const options = await runCli(['keys', 'list', '--redis', 'redis://127.0.0.1:6379/0?password=pw-secret']);
    expect([options.code, options.stderr]).toEqual([2, expect.stringContaining('--redis: the Redis URL takes no ?options')]);
    expect(options.stderr).not.toContain('pw-secret');
  });

  it('warns at start when its Redis evicts keys when full (maxmemory with a policy other than noeviction), and not otherwise', async () => {
    const url = redis.url(++db);
    const start = async () => {
      const { serve } = await startServe(join(temp.make(), 'local.db'), { args: ['--redis', url], env: SHARED_SECRET });
      const stderr = serve.stderr;
      await serve.stop('SIGTERM');
      return stderr;
    };
    // The test server's defaults: no maxmemory, noeviction.
    expect(await start()).not.toContain('evicts keys');
    await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    // A policy without a maxmemory never evicts: no warning either.
    expect(await start()).not.toContain('evicts keys');
    await redis.command('CONFIG', 'SET', 'maxmemory', '1073741824');
    try {
      expect(await start()).toContain(
        `seclookup: warning: Redis at 127.0.0.1:${redis.port} evicts keys when full (maxmemory-policy allkeys-lru, maxmemory 1073741824 bytes): rate windows, quotas and used captcha tokens could be dropped early; set maxmemory-policy noeviction`,
      );
    } finally {
      await redis.command('CONFIG', 'SET', 'maxmemory', '0');
      await redis.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('--on-store-error allow serves lookups unmetered while Redis is down', async () => {
    const { url, a } = await twoInstances(['--on-store-error', 'allow']);
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--json', '--redis', url]);
    expect(await get(lookup(a), key.secret_key)).toBe(200);
    await redis.stop();
    try {
      expect(await get(lookup(a), key.secret_key)).toBe(200);
    } finally {
      await redis.start();
    }
  });
});

async function waitFor<T>(probe: () => Promise<T | null>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting for Redis to come back');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One instance's start on `meter`, as serve makes it once listening: its stderr. */
async function firstStartOf(meter: Meter, now: () => number = Date.now): Promise<string> {
  let stderr = '';
  const io = { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) }, env: {}, cwd: temp.make() };
  await withIo(io, () => announceKeys(meter, 'the store', now));
  return stderr;
}

/** The rows of the one-time starter table in `stderr`: product, secret key, public key. */
function starterRows(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /^\w+\s+\w+_sec_[\w-]+\s+\w+_pub_[\w-]+$/.test(line));
}

/** What the starts said, and what the store holds afterwards. */
async function outcome(meter: Meter, said: string[]) {
  const keys = await meter.listKeys();
  return {
    keys: keys.length,
    secretKeys: keys.filter((key) => key.kind === 'secret').length,
    tables: said.filter((stderr) => stderr.includes('First start: created a "starter" key pair')).length,
    rows: said.map((stderr) => starterRows(stderr).length).sort(),
  };
}

const PAIRS = PRODUCT_IDS.length;

/** Three connections to one fresh store, as three instances started together have. */
const FRESH_STORES: Record<string, () => Meter[]> = {
  Redis: () => {
    const url = redis.url(++db);
    return [1, 2, 3].map(() => createRedisMeter(url));
  },
  'one SQLite file': () => {
    const file = join(temp.make(), 'shared.db');
    return [1, 2, 3].map(() => createSqliteMeter(file));
  },
};

describe('the first start, several instances started together on an empty store', () => {
  for (const [store, open] of Object.entries(FRESH_STORES)) {
    it(`${store}: one set of starter keys (${PAIRS} pairs), printed by one of three; the others count them`, async () => {
      const meters = open();
      try {
        // Connected and read first, as serve reads the store long before it announces the keys.
        await Promise.all(meters.map((meter) => meter.listPlans()));
        const said = await Promise.all(meters.map((meter) => firstStartOf(meter)));
        expect(await outcome(meters[0], said)).toEqual({ keys: 2 * PAIRS, secretKeys: PAIRS, tables: 1, rows: [0, 0, PAIRS] });
        for (const stderr of said.filter((text) => starterRows(text).length === 0)) expect(stderr).toMatch(/^\d+ keys in the store \(\d+ active\)/m);
        // A later start: a count, no new keys.
        expect(await firstStartOf(meters[1])).toBe(`${2 * PAIRS} keys in the store (${2 * PAIRS} active); use \`seclookup keys list\` to see them\n`);
      } finally {
        await Promise.all(meters.map((meter) => meter.close()));
      }
    });
  }

  it('Redis: a first start that stopped after its claim, before any key: within the grace no start makes them; after it, one of two does', async () => {
    const [meter, ...later] = FRESH_STORES.Redis();
    // The first instance claims the first start, then dies making its first key.
    const dying: Meter = { ...meter, createSubscription: () => Promise.reject(new Error('killed')) };
    try {
      await expect(firstStartOf(dying)).rejects.toThrow('killed');
      const claimedAt = Date.now();
      const soon = await firstStartOf(later[0], () => claimedAt + BOOTSTRAP_CLAIM_GRACE_MS - 1_000);
      expect(soon).toBe(
        'Another instance is creating the starter keys now: they are printed once, on its stderr.\n0 keys in the store (0 active); use `seclookup keys list` to see them\n',
      );
      const past = () => claimedAt + BOOTSTRAP_CLAIM_GRACE_MS + 1_000;
      const said = await Promise.all(later.map((instance) => firstStartOf(instance, past)));
      expect(await outcome(meter, said)).toEqual({ keys: 2 * PAIRS, secretKeys: PAIRS, tables: 1, rows: [0, PAIRS] });
      expect((await firstStartOf(meter, past)).startsWith(`${2 * PAIRS} keys in the store`)).toBe(true);
    } finally {
      await Promise.all([meter, ...later].map((instance) => instance.close()));
    }
  });

  it('a claim whose time does not read (written by hand, or by a foreign tool) is taken over, once, as an old one is', async () => {
    const [meter, ...later] = FRESH_STORES['one SQLite file']();
    try {
      await meter.setSetting('bootstrap', 'issuing since yesterday-ish 1234');
      const said = await Promise.all(later.map((instance) => firstStartOf(instance)));
      expect(await outcome(meter, said)).toEqual({ keys: 2 * PAIRS, secretKeys: PAIRS, tables: 1, rows: [0, PAIRS] });
    } finally {
      await Promise.all([meter, ...later].map((instance) => instance.close()));
    }
  });
});
