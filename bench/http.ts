/**
 * The HTTP hot path per adapter: an authenticated useragent lookup (warm UA cache) against a
 * bare hello-JSON handler on the same framework, once with the SQLite meter (the `serve`
 * default) and once with the in-memory meter, so the meter's share of the cost is visible.
 * Each server runs in its own child process (bench/servers/http-server.mjs, on the built
 * dist/), loaded by autocannon from this process; bare and seclookup are measured alternately
 * and each keeps its best round.
 *
 * The last rows measure `seclookup serve` itself as an operator runs it: the built CLI
 * (`dist/cli.js serve`) with its JSON request log going to a file, once more with
 * `--log-level warn` (no request lines), once with `--metrics` (log on), answering a cached emailauth lookup, and answering a
 * pwbreach POST lookup (a JSON body with a password) and a geoip lookup of 8.8.8.8 (location from
 * the DB-IP file, connection from the asn data) and a local riskscore lookup, against the same
 * bare Node server.
 *
 * Two loads: 100 connections keep the server saturated, so the ratio compares throughput
 * capacity (the goal). 10 connections, on a 2-core machine shared with the load generator,
 * leave even the bare server partly idle: that ratio measures round-trip latency, where the
 * SQLite meter's group commit (answers leave at the end of the event-loop turn) costs most.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSqliteMeter } from '../src/metering/sqlite/meter.js';
import { startDnsServer, type Zone } from '../test/servers/dns-server.js';
import { DKIM_KEYS } from '../test/servers/email-zone.js';
import { ratioRow, type BenchRow } from './harness.js';
import { autocannon, stopAll } from './load.js';

const ADAPTERS = ['node', 'express', 'fastify'] as const;
type Adapter = (typeof ADAPTERS)[number];
type Mode = 'bare' | 'bare-post' | 'seclookup';
type MeterKind = 'sqlite' | 'memory';

const SERVER_SCRIPT = fileURLToPath(new URL('./servers/http-server.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PATH = `/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`;
/** Connections per load; the goal is judged at the saturating one. */
const LOADS = [
  { connections: 100, goal: true },
  { connections: 10, goal: false },
] as const;
const WARMUP_SECONDS = 1;
/** Measured seconds per server, split into alternating rounds. */
const ROUNDS = 3;
const ROUND_SECONDS = 2.5;
const MIN_RATIO = 0.6;

interface Target {
  url: string;
  headers: Record<string, string>;
  /** A POST body (JSON); GET when absent. */
  body?: string;
  /** Requests answered 2xx over every load so far. */
  answered: number;
}

/** The lookup a `seclookup serve` target answers: a GET path, or a POST with a JSON body. */
interface ServeLookup {
  product: string;
  path: string;
  body?: string;
}

/** Start one bench server; resolves once it prints its port. Registers the child for cleanup first. */
function startServer(adapter: Adapter, mode: Mode, children: ChildProcess[], meter: MeterKind = 'sqlite'): Promise<Target> {
  const child = spawn(process.execPath, [SERVER_SCRIPT, adapter, mode, meter], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${adapter}/${mode} server did not start in 15 s: ${errors}`)), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${adapter}/${mode} server exited (${code}): ${errors}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (!output.includes('\n')) return;
      clearTimeout(timer);
      const { port, key } = JSON.parse(output.split('\n')[0]) as { port: number; key: string | null };
      resolve({ url: `http://127.0.0.1:${port}${PATH}`, headers: key ? { authorization: `Bearer ${key}` } : {}, answered: 0 });
    });
  });
}

/**
 * Start `seclookup serve` on a fresh database in `dir`, its stdout (the JSON log) going to
 * `dir/requests.log`, the way an operator runs it. The key comes from the CLI too: an unlimited
 * plan, as in http-server.mjs, so the bench never reaches a limit.
 */
function startServe(
  dir: string,
  extraArgs: string[],
  children: ChildProcess[],
  lookup: ServeLookup = { product: 'useragent', path: PATH },
  redisUrl?: string,
): Promise<Target & { logFile: string }> {
  const db = join(dir, 'serve.db');
  const logFile = join(dir, 'requests.log');
  const store = redisUrl ? ['--redis', redisUrl] : ['--db', db];
  const cli = (args: string[]) => execFileSync(process.execPath, [CLI, ...args, ...store], { encoding: 'utf8' });
  // `plans set` changes an existing database only: the file is made first, as serve would make it.
  if (!redisUrl) void createSqliteMeter(db).close();
  cli(['plans', 'set', 'bench', '--all-products', '--rate-limit', '1000000000', '--monthly-quota', 'unlimited']);
  const { secret_key: key } = JSON.parse(cli(['keys', 'create', '--product', lookup.product, '--plan', 'bench', '--json'])) as { secret_key: string };
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--db', db, ...(redisUrl ? ['--redis', redisUrl] : []), ...extraArgs], {
    stdio: ['ignore', log, 'pipe'],
  });
  closeSync(log);
  children.push(child);
  let errors = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`seclookup serve did not start in 15 s: ${errors}`)), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`seclookup serve exited (${code}): ${errors}`));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      errors += chunk;
      const listening = /listening on (http:\/\/[\d.]+:\d+)/.exec(errors);
      if (!listening) return;
      clearTimeout(timer);
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (lookup.body !== undefined) headers['content-type'] = 'application/json';
      resolve({ url: `${listening[1]}${lookup.path}`, headers, body: lookup.body, answered: 0, logFile });
    });
  });
}

/** Requests per second answered 2xx; throws if anything else came back. */
async function load(target: Target, connections: number, seconds: number): Promise<number> {
  const request = target.body === undefined ? {} : { method: 'POST', body: target.body };
  const result = await autocannon({ url: target.url, connections, duration: seconds, headers: target.headers, ...request });
  if (result.non2xx || result.errors || result.timeouts) {
    throw new Error(`${target.url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  target.answered += result['2xx'];
  return result['2xx'] / result.duration;
}

async function benchAdapter(adapter: Adapter): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  // A crash of this process must not leave servers behind either.
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  try {
    const [bare, sqlite, memory] = await Promise.all([
      startServer(adapter, 'bare', children),
      startServer(adapter, 'seclookup', children, 'sqlite'),
      startServer(adapter, 'seclookup', children, 'memory'),
    ]);
    const rows: BenchRow[] = [];
    for (const { connections, goal } of LOADS) {
      for (const target of [bare, sqlite, memory]) await load(target, connections, WARMUP_SECONDS);
      const best = { bare: 0, sqlite: 0, memory: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        best.bare = Math.max(best.bare, await load(bare, connections, ROUND_SECONDS));
        best.sqlite = Math.max(best.sqlite, await load(sqlite, connections, ROUND_SECONDS));
        best.memory = Math.max(best.memory, await load(memory, connections, ROUND_SECONDS));
      }
      for (const meter of ['sqlite', 'memory'] as const) {
        rows.push(
          ratioRow(
            {
              suite: 'http',
              case: `${adapter}: GET /v1/useragent/lookup, warm UA cache, ${meter} meter, ${connections} connections`,
              baseline: `bare ${adapter} hello JSON`,
              opsPerSec: best[meter],
              baselineOpsPerSec: best.bare,
              target: goal ? `>= ${MIN_RATIO.toFixed(2)}x` : '(info: latency-bound)',
            },
            goal ? MIN_RATIO : 0,
          ),
        );
      }
    }
    return rows;
  } finally {
    await stopAll(children);
    process.removeListener('exit', killOnExit);
  }
}

/**
 * `seclookup serve` with its request log to a file, and without request lines, against bare
 * Node; and serve answering a cached emailauth lookup (SPF, DMARC and nine DKIM selectors,
 * from a loopback DNS server that is asked once, then from the product cache), log on.
 */
async function benchServe(): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  const root = mkdtempSync(join(tmpdir(), 'seclookup-bench-serve-'));
  const dir = (name: string) => {
    mkdirSync(join(root, name));
    return join(root, name);
  };
  // Long TTLs: the rows run for over a minute, longer than the test server's 60 s negative TTL.
  const dns = await startDnsServer({ zone: EMAILAUTH_ZONE, defaultTtl: 3600, negativeTtl: 3600 });
  try {
    const [bare, barePost, withLog, withoutLog, withMetrics, emailauth, pwbreach, geoip, riskscore] = await Promise.all([
      startServer('node', 'bare', children),
      startServer('node', 'bare-post', children),
      startServe(dir('logged'), [], children),
      startServe(dir('quiet'), ['--log-level', 'warn'], children),
      startServe(dir('metrics'), ['--metrics'], children),
      startServe(dir('emailauth'), ['--dns', dns.address], children, { product: 'emailauth', path: '/v1/emailauth/lookup?domain=example.com' }),
      startServe(dir('pwbreach'), [], children, { product: 'pwbreach', path: '/v1/pwbreach/lookup', body: JSON.stringify({ password: PWBREACH_PASSWORD }) }),
      startServe(dir('geoip'), [], children, { product: 'geoip', path: '/v1/geoip/lookup?ip=8.8.8.8' }),
      startServe(dir('riskscore'), [], children, { product: 'riskscore', path: '/v1/riskscore/lookup?ip=8.8.8.8' }),
    ]);
    // The bare POST server gets the pwbreach request: same body, same headers.
    Object.assign(barePost, { url: barePost.url.replace(/\/v1\/.*$/, '/v1/pwbreach/lookup'), headers: pwbreach.headers, body: pwbreach.body });
    const targets = { bare, barePost, withLog, withoutLog, withMetrics, emailauth, pwbreach, geoip, riskscore };
    const { connections } = LOADS[0];
    for (const target of Object.values(targets)) await load(target, connections, WARMUP_SECONDS);
    const best = { bare: 0, barePost: 0, withLog: 0, withoutLog: 0, withMetrics: 0, emailauth: 0, pwbreach: 0, geoip: 0, riskscore: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(best) as (keyof typeof best)[]) best[name] = Math.max(best[name], await load(targets[name], connections, ROUND_SECONDS));
    }
    // Every lookup after the first came from the cache: one DNS question per name, ever.
    if (dns.total() > 12) throw new Error(`the cached emailauth bench asked the DNS server ${dns.total()} times`);
    // The metrics counted every answered lookup (or the row measured metrics that were not kept).
    const scrape = await (await fetch(`${new URL(withMetrics.url).origin}/metrics`)).text();
    const counted = Number(/^seclookup_http_requests_total\{product="useragent",route="\/v1\/useragent\/lookup",status="200"\} (\d+)$/m.exec(scrape)?.[1] ?? 0);
    if (counted < withMetrics.answered) throw new Error(`seclookup serve --metrics counted ${counted} lookups but answered ${withMetrics.answered}`);
    // SIGTERM flushes the log: every answered request must have its line, or the row measured a log that was dropped.
    await stopAll(children);
    const lines = readFileSync(withLog.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"route":"/v1/useragent/lookup"')).length;
    if (lines < withLog.answered) throw new Error(`seclookup serve logged ${lines} lookups but answered ${withLog.answered}`);
    // The pwbreach log has its lines, and neither the password nor its hash.
    const pwbreachLog = readFileSync(pwbreach.logFile, 'utf8');
    const pwbreachLines = pwbreachLog.split('\n').filter((line) => line.includes('"route":"/v1/pwbreach/lookup","product":"pwbreach","status":200')).length;
    if (pwbreachLines < pwbreach.answered) throw new Error(`seclookup serve logged ${pwbreachLines} pwbreach lookups but answered ${pwbreach.answered}`);
    if (pwbreachLog.includes(PWBREACH_PASSWORD) || pwbreachLog.toUpperCase().includes(PWBREACH_SHA1.slice(5)))
      throw new Error('the pwbreach request log holds the password or its hash');
    const row = (what: string, opsPerSec: number, goal: boolean, baseline = { name: 'bare node hello JSON', opsPerSec: best.bare }) =>
      ratioRow(
        {
          suite: 'http',
          case: `seclookup serve (CLI, SQLite): ${what}, ${connections} connections`,
          baseline: baseline.name,
          opsPerSec,
          baselineOpsPerSec: baseline.opsPerSec,
          target: goal ? `>= ${MIN_RATIO.toFixed(2)}x` : '(info)',
        },
        goal ? MIN_RATIO : 0,
      );
    return [
      row('GET /v1/useragent/lookup, warm UA cache, JSON request log to a file', best.withLog, true),
      row('GET /v1/useragent/lookup, warm UA cache, --log-level warn (no request lines)', best.withoutLog, false),
      row('GET /v1/useragent/lookup, warm UA cache, JSON request log to a file and --metrics (Prometheus, /metrics)', best.withMetrics, true),
      row('the same with --metrics', best.withMetrics, false, { name: 'the same serve without --metrics (request log on)', opsPerSec: best.withLog }),
      row('GET /v1/emailauth/lookup, cached result, JSON request log to a file', best.emailauth, true),
      row('GET /v1/geoip/lookup?ip=8.8.8.8 (DB-IP City Lite and the asn data, in memory), JSON request log to a file', best.geoip, true),
      row('GET /v1/riskscore/lookup?ip=8.8.8.8 (local provider: every open list, geoip and asn), JSON request log to a file', best.riskscore, true),
      row(`POST /v1/pwbreach/lookup {"password": ...} (JSON body, SHA-1, bundled sample in memory), JSON request log to a file`, best.pwbreach, true),
      row(`the same pwbreach POST lookups`, best.pwbreach, false, { name: 'bare node reading and parsing the same JSON POST body', opsPerSec: best.barePost }),
    ];
  } finally {
    await stopAll(children);
    await dns.close();
    process.removeListener('exit', killOnExit);
    rmSync(root, { recursive: true, force: true });
  }
}

/** A password in the bundled sample (breached), which must never reach the request log. */
const PWBREACH_PASSWORD = 'qwerty';
const PWBREACH_SHA1 = createHash('sha1').update(PWBREACH_PASSWORD).digest('hex').toUpperCase();

/** example.com with SPF, DMARC and one DKIM selector: a full score, 11 questions when cold. */
const EMAILAUTH_ZONE: Zone = {
  'example.com': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' }],
  '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
  'selector1._domainkey.example.com': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }],
};

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const adapter of ADAPTERS) rows.push(...(await benchAdapter(adapter)));
  rows.push(...(await benchServe()));
  return rows;
}

/**
 * `seclookup serve --redis` as several instances run it: one instance on Redis, and two on the
 * same Redis loaded together (half the connections each, their answers summed), against one
 * instance on its SQLite file, all answering the warm useragent lookup with the request log on.
 * On this 2-core machine the two instances, Redis and the load generator share the cores, so the
 * two-instance row shows the cost of sharing state, not the scaling a machine per instance gives.
 */
export async function runServeRedis(): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  const root = mkdtempSync(join(tmpdir(), 'seclookup-bench-redis-'));
  const dir = (name: string) => {
    mkdirSync(join(root, name));
    return join(root, name);
  };
  const { startRedisServer } = await import('../test/servers/redis-server.js');
  const redis = await startRedisServer();
  try {
    const sqlite = await startServe(dir('sqlite'), [], children);
    const one = await startServe(dir('redis-one'), [], children, undefined, redis.url(1));
    const pairA = await startServe(dir('redis-a'), [], children, undefined, redis.url(2));
    const pairB = await startServe(dir('redis-b'), [], children, undefined, redis.url(2));
    const { connections } = LOADS[0];
    const pair = async (seconds: number) =>
      (await Promise.all([load(pairA, connections / 2, seconds), load(pairB, connections / 2, seconds)])).reduce((a, b) => a + b, 0);
    for (const target of [sqlite, one]) await load(target, connections, WARMUP_SECONDS);
    await pair(WARMUP_SECONDS);
    const best = { sqlite: 0, one: 0, two: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      best.sqlite = Math.max(best.sqlite, await load(sqlite, connections, ROUND_SECONDS));
      best.one = Math.max(best.one, await load(one, connections, ROUND_SECONDS));
      best.two = Math.max(best.two, await pair(ROUND_SECONDS));
    }
    const row = (what: string, opsPerSec: number) =>
      ratioRow(
        {
          suite: 'http',
          case: `seclookup serve --redis: ${what}, GET /v1/useragent/lookup, request log on, ${connections} connections`,
          baseline: 'one seclookup serve on its SQLite file',
          opsPerSec,
          baselineOpsPerSec: best.sqlite,
          target: '(info)',
        },
        0,
      );
    return [row('one instance', best.one), row('two instances on one Redis (load split, answers summed)', best.two)];
  } finally {
    await stopAll(children);
    await redis.close();
    process.removeListener('exit', killOnExit);
    rmSync(root, { recursive: true, force: true });
  }
}

/** The `seclookup serve` rows alone (`npm run bench -- serve`). */
export const runServe = benchServe;
