/**
 * The CLI on a Redis Cluster, as an operator runs it: `--redis redis+cluster://...` seed URLs
 * for `plans`, `keys` and two `seclookup serve` processes on a real three-master cluster (no
 * replicas; every node with an append-only file). A burst split across both instances is
 * exact; a master killed and started again fails only its own slots meanwhile, and counting is
 * exact once it is back, with no restart of seclookup; a bad cluster URL is a usage error that
 * does not repeat the password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { Redis } from 'ioredis';
import { createRedisMeter, redisEvictionRisk } from '../../src/metering/redis/index.js';
import { CLI_PATH, cliEnv, createTempDirs, runCli, runCliJson } from '../cli/harness.js';
import { startRedisCluster, type RedisCluster } from '../servers/redis-cluster.js';

const temp = createTempDirs();
let cluster: RedisCluster;

const running: ChildProcess[] = [];
/** Two `serve --redis redis+cluster://...` processes, shared by the tests. */
let a: { baseUrl: string; stderr: string };
let b: { baseUrl: string; stderr: string };

beforeAll(async () => {
  cluster = await startRedisCluster({ replicas: 0, appendOnly: true });
  [a, b] = await Promise.all([0, 1].map(() => serve(['--redis', cluster.url()])));
}, 120_000);
afterEach(async () => {
  // A test that failed while a node was down must not leave it down for the next one.
  for (const port of cluster.ports) await cluster.start(port);
});

/**
 * `seclookup serve` on a free port; resolves with its base URL and what it printed. Loading
 * every engine can take a while on a busy machine: no deadline but the test's.
 */
function serve(args: string[]): Promise<{ baseUrl: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', join(temp.make(), 'local.db'), ...args], { env: cliEnv() });
  running.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (listening) resolve({ baseUrl: listening[1], stderr });
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}
afterAll(async () => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
  await cluster?.close();
  temp.cleanup();
});

const UA = encodeURIComponent('Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0');

async function get(url: string, key: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  return response.status;
}

describe('seclookup on a Redis Cluster (--redis redis+cluster://h1:p1,h2:p2)', () => {
  it('plans and keys made with the CLI; two serve instances: 40 of 100 admitted at a 40/minute limit, usage 40', async () => {
    // One seed node is enough: the client learns the others from it.
    const url = `redis+cluster://127.0.0.1:${cluster.ports[1]}`;
    expect((await runCli(['plans', 'set', 'r40', '--all-products', '--rate-limit', '40', '--monthly-quota', '1000', '--redis', url])).code).toBe(0);
    const key = await runCliJson<{ secret_key: string; subscription_id: string }>([
      'keys',
      'create',
      '--product',
      'useragent',
      '--plan',
      'r40',
      '--json',
      '--redis',
      url,
    ]);
    expect(a.stderr).toContain('(redis redis+cluster://127.0.0.1:');
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => get(`${(i % 2 ? a : b).baseUrl}/v1/useragent/lookup?ua=${UA}`, key.secret_key)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    const meter = createRedisMeter(url);
    try {
      // The serve processes send their last commits within commitDelayMs (5 ms) of the answers.
      const lookups = async () => (await meter.usage()).filter((row) => row.subscriptionId === key.subscription_id).map((row) => row.lookups);
      await settled(async () => (await lookups())[0] === 40);
      expect(await lookups()).toEqual([40]);
    } finally {
      await meter.close();
    }
  }, 60_000);

  it('a master killed and started again (no replica): only its slots answer 500 meanwhile; then counting is exact, with no restart of serve', async () => {
    const url = cluster.url();
    const admin = createRedisMeter(url);
    const subs: { id: string; key: string; master: number }[] = [];
    try {
      await admin.setPlan({ slug: 'q30', product: '*', rateLimitPerMinute: 10_000, monthlyQuota: 30 });
      for (let i = 0; i < 6; i++) {
        const issued = await issueKeys(admin, { product: 'useragent', plan: 'q30' });
        subs.push({ id: issued.subscriptionId, key: issued.secretKey, master: await cluster.masterOf(`seclookup:{sub:${issued.subscriptionId}}:quota`) });
      }
    } finally {
      await admin.close();
    }
    const adminMaster = await cluster.masterOf('seclookup:{admin}:keys');
    const victim = subs.map((s) => s.master).find((port) => port !== adminMaster);
    expect(victim).toBeDefined();
    const lookup = (sub: (typeof subs)[number], i: number) => get(`${(i % 2 ? a : b).baseUrl}/v1/useragent/lookup?ua=${UA}`, sub.key);
    const round = (n: number) =>
      Promise.all(subs.map(async (sub) => ({ sub, statuses: await Promise.all(Array.from({ length: n }, (_, i) => lookup(sub, i))) })));
    const admitted = new Map(subs.map((sub) => [sub.id, 0]));
    const count = (results: Awaited<ReturnType<typeof round>>) => {
      for (const { sub, statuses } of results) admitted.set(sub.id, admitted.get(sub.id)! + statuses.filter((s) => s === 200).length);
    };

    count(await round(10));
    await cluster.kill(victim!);
    const down = await round(10);
    count(down);
    for (const { sub, statuses } of down) expect(statuses, `subscription ${sub.id}`).toEqual(Array(10).fill(sub.master === victim ? 500 : 200));

    const restarted = performance.now();
    await cluster.start(victim!);
    await cluster.waitUntilOk();
    // Back from its append-only file: the same serve processes count on where they were.
    const deadline = Date.now() + 20_000;
    let last: Awaited<ReturnType<typeof round>>;
    do {
      last = await round(1);
      count(last);
    } while (last.some(({ statuses }) => statuses[0] === 500) && Date.now() < deadline);
    const recoveredMs = Math.round(performance.now() - restarted);
    count(await round(40));
    expect(Object.fromEntries(admitted)).toEqual(Object.fromEntries(subs.map((sub) => [sub.id, 30])));
    const meter = createRedisMeter(url);
    try {
      const usage = async () => new Map((await meter.usage()).map((row) => [row.subscriptionId, row.lookups]));
      await settled(async () => [...(await usage()).values()].reduce((a, b) => a + b, 0) >= subs.length * 30);
      const billed = await usage();
      for (const sub of subs) expect(billed.get(sub.id), `billed ${sub.id}`).toBe(30);
    } finally {
      await meter.close();
    }
    console.log(
      `cluster master restart: ${subs.filter((s) => s.master === victim).length} of 6 subscriptions on the killed master answered 500 while it was down, the others 200; served again ${recoveredMs} ms after the restart began; each admitted 30 of 30, billed 30`,
    );
  }, 120_000);

  it("an evicting master is found among the cluster's (the warning serve prints at start)", async () => {
    expect(await redisEvictionRisk(cluster.url())).toBeNull();
    const node = new Redis({ host: '127.0.0.1', port: cluster.ports[2] });
    try {
      await node.config('SET', 'maxmemory', '1073741824');
      await node.config('SET', 'maxmemory-policy', 'volatile-lru');
      expect(await redisEvictionRisk(cluster.url())).toMatch(
        new RegExp(`^Redis at 127\\.0\\.0\\.1:${cluster.ports[2]} evicts keys when full \\(maxmemory-policy volatile-lru, maxmemory 1073741824 bytes\\)`),
      );
    } finally {
      await node.config('SET', 'maxmemory', '0');
      await node.config('SET', 'maxmemory-policy', 'noeviction');
      await node.quit();
    }
  });

  it('a malformed cluster URL is a usage error naming the form, never the password', async () => {
    const result = await runCli(['keys', 'list', '--redis', 'redis+cluster://user:hunter2@127.0.0.1:7000,bad host:1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('each Redis Cluster seed node must be host:port');
    expect(result.stderr).not.toContain('hunter2');
  });
});

/** Wait up to 2 s for `done`: the serve processes' last commits land within their commitDelayMs. */
async function settled(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
