/**
 * The CLI on a Redis Cluster, as an operator runs it: `--redis redis+cluster://...` seed URLs
 * for `plans`, `keys` and two `seclookup serve` processes on a real three-master cluster. A
 * burst split across both instances is exact; a bad cluster URL is a usage error that does not
 * repeat the password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { CLI_PATH, cliEnv, createTempDirs, runCli, runCliJson } from '../cli/harness.js';
import { startRedisCluster, type RedisCluster } from '../servers/redis-cluster.js';

const temp = createTempDirs();
let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster({ replicas: 0 });
}, 30_000);
const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
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
    const key = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'useragent', '--plan', 'r40', '--json', '--redis', url]);
    const [a, b] = await Promise.all([0, 1].map(() => serve(['--redis', cluster.url()])));
    expect(a.stderr).toContain('(redis redis+cluster://127.0.0.1:');
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => get(`${(i % 2 ? a : b).baseUrl}/v1/useragent/lookup?ua=${UA}`, key.secret_key)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    const meter = createRedisMeter(url);
    try {
      expect((await meter.usage()).map((row) => row.lookups)).toEqual([40]);
    } finally {
      await meter.close();
    }
  }, 60_000);

  it('a malformed cluster URL is a usage error naming the form, never the password', async () => {
    const result = await runCli(['keys', 'list', '--redis', 'redis+cluster://user:hunter2@127.0.0.1:7000,bad host:1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('each Redis Cluster seed node must be host:port');
    expect(result.stderr).not.toContain('hunter2');
  });
});
