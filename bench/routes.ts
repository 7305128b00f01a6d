/**
 * `npm run bench -- routes`: every product route through `seclookup serve` as an operator runs
 * it (the built CLI, SQLite meter, JSON request log to a file, CONNECTIONS connections, warm
 * caches), each against a bare `http.createServer` in its own process answering the very same
 * bytes (bench/servers/bare-bytes.mjs): with two headers (the goal, >= 0.6x) and with every
 * header serve sends (the moonshot, >= 0.8x). Network products answer from loopback DNS, TLS
 * and RDAP servers in this process, asked once and then from the product cache. Then:
 *
 * - a batch row: inputs per second of POST /v1/geoip/batch (BATCH_SIZE inputs) against single
 *   lookups of the same route (>= 3x);
 * - the Node, Express and Fastify adapters (bench/servers/http-server.mjs, SQLite meter) against
 *   their own bare framework answering the same bytes;
 * - a CPU budget: CPU microseconds per request of each server process (utime + stime from
 *   /proc/<pid>/stat, as process.cpuUsage counts them, over every measured request), for bare
 *   Node, serve's HTTP path without a product (healthz; the status route: key and meter) and
 *   each route, beside each engine's own cost measured in this process (prepare + lookup +
 *   the envelope's serialisation);
 * - RSS of serve at idle after start, after the rows, and after RSS_INPUTS distinct inputs
 *   across the local products (sent as batches): bounded caches stay bounded.
 *
 * Servers are measured in alternating rounds and each keeps its best round. The whole suite
 * runs in about four and a half minutes (ROUND_SECONDS and ROUNDS below; BENCH_ROUND_SECONDS and
 * BENCH_ROUNDS override).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rdapAnswer, startRdapServer } from '../test/servers/rdap-server.js';
import { startDnsServer, type Zone } from '../test/servers/dns-server.js';
import { DKIM_KEYS } from '../test/servers/email-zone.js';
import { mintCertificate, startTlsServer } from '../test/servers/tls-server.js';
import { issueKeys } from '../src/metering/keys.js';
import { createPowPuzzle, solvePow, type PowParams } from '../src/products/captcha/puzzles/pow.js';
import type { Puzzle } from '../src/products/captcha/puzzles/types.js';
import { POW_DIFFICULTY } from '../src/products/captcha/risk-policy.js';
import { challengeBody } from '../src/products/captcha/service.js';
import { newSigningKey } from '../src/products/captcha/signing.js';
import { createSqliteMeter } from '../src/metering/sqlite/meter.js';
import { createLookup, type LookupOptions } from '../src/lookup.js';
import { isPromise } from '../src/lib/outcome.js';
import { successBody } from '../src/lib/envelope.js';
import type { ProductId } from '../src/products/catalog.js';
import { ratioRow, reportSections, type BenchRow } from './harness.js';
import { autocannon, stopAll, type CannonResult } from './load.js';
import { haveValgrind, instructionsPerRequest, startCounting, underCallgrind } from './instructions.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const BARE_SCRIPT = fileURLToPath(new URL('./servers/bare-bytes.mjs', import.meta.url));
const ADAPTER_SCRIPT = fileURLToPath(new URL('./servers/http-server.mjs', import.meta.url));
const CONNECTIONS = 32;
/**
 * Node flags for serve's process only, for experiments (BENCH_SERVE_NODE_FLAGS, space-separated),
 * such as `--no-memory-reducer` to compare with V8's idle-time collections (docs/benchmarks.md).
 */
const SERVE_NODE_FLAGS = (process.env.BENCH_SERVE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
// Three rounds each (BENCH_ROUNDS overrides). Five did not steady the ratios: bare Node's best
// round rises with more rounds (it is partly client-bound), serve's barely.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 1);
// Long enough for V8 to optimise the route's path (serve has far more code to warm than a bare server).
const WARMUP_SECONDS = 0.5;
const GOAL = 0.6;
const MOONSHOT = 0.8;
const BATCH_SIZE = 100;
const BATCH_GOAL = 3;
/** Distinct inputs sent before the last RSS reading, spread over the local products. */
const RSS_INPUTS = Number(process.env.BENCH_RSS_INPUTS ?? 1_000_000);
const RSS_BATCH = 1_000;
/**
 * Only the route rows whose name holds one of these texts, comma-separated
 * (BENCH_ROUTES=captcha/challenge, or healthz,captcha/), for a quick A/B of a few routes: the
 * batch row, the RSS figures and the adapters are left out.
 */
const ONLY = process.env.BENCH_ROUTES ?? '';
const ONLY_TEXTS = ONLY.split(',').filter(Boolean);
const measured = (route: RouteCase) => ONLY_TEXTS.length === 0 || ONLY_TEXTS.some((text) => route.name.includes(text));
/**
 * BENCH_COUNT=instructions: instructions per request under valgrind's callgrind
 * (bench/instructions.ts) instead of requests a second, for serve and both bare servers, route by
 * route; about two minutes a route. Only that table is written: no throughput rows, CPU budget, batch
 * row, RSS or adapters.
 */
const COUNT_INSTRUCTIONS = process.env.BENCH_COUNT === 'instructions';
/** Requests in each counted window, windows per server and route, and warm-up requests before them. */
const COUNT_REQUESTS = 3_000;
const COUNT_WINDOWS = 3;
const COUNT_WARMUP = 4_000;

const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PASSWORD = 'qwerty';
const SHA1 = createHash('sha1').update(PASSWORD).digest('hex').toUpperCase();
const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';

/** One measured route: how to ask it, and what its engine alone costs. */
interface RouteCase {
  name: string;
  product: ProductId | null;
  method: 'GET' | 'POST';
  url: string;
  body?: string;
  contentType?: string;
  /** Which key goes in Authorization: the product's secret key (default), none, or captcha's. */
  auth?: 'none' | 'captcha-public-query';
  /** In-process engine cost: prepare + lookup + serialisation of this input. */
  engine?: { product: ProductId; input: unknown[] };
  /** A route with no lookup engine: its own work once key, meter and input have answered, in-process. */
  ownWork?: () => string;
}

/** A challenge as the route issues it to the bench's page (the pow at low risk): puzzle, signed token, body. */
function challengeWork(): () => string {
  const key = newSigningKey();
  const keys = { current: key, byId: new Map([[key.kid, key]]) };
  const puzzle = createPowPuzzle({ difficulty: POW_DIFFICULTY.low }) as Puzzle<object>;
  return () => challengeBody(keys, { siteKey: '1', hostname: 'localhost', puzzle, risk: 15, issuedAt: Date.now(), requestId: 'req_0' });
}

function cases(tlsPort: number): RouteCase[] {
  const ip = (product: ProductId): RouteCase => ({
    name: `GET /v1/${product}/lookup?ip=8.8.8.8`,
    product,
    method: 'GET',
    url: `/v1/${product}/lookup?ip=8.8.8.8`,
    engine: { product, input: ['8.8.8.8'] },
  });
  return [
    { name: 'GET /healthz (no key, no meter)', product: null, method: 'GET', url: '/healthz', auth: 'none' },
    { name: 'GET /v1/useragent/status (key and meter, no product)', product: 'useragent', method: 'GET', url: '/v1/useragent/status' },
    {
      name: 'GET /v1/useragent/lookup?ua= (warm UA cache)',
      product: 'useragent',
      method: 'GET',
      url: `/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`,
      engine: { product: 'useragent', input: [UA] },
    },
    {
      name: 'POST /v1/useragent/lookup, form body ua=',
      product: 'useragent',
      method: 'POST',
      url: '/v1/useragent/lookup',
      body: new URLSearchParams({ ua: UA }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    },
    ip('webhookip'),
    ip('geoip'),
    ip('asn'),
    ip('timezone'),
    ip('riskscore'),
    { ...ip('dnsbl'), name: 'GET /v1/dnsbl/lookup?ip=8.8.8.8 (loopback DNS, cached)' },
    {
      name: 'GET /v1/emailval/lookup?email= (loopback DNS, cached)',
      product: 'emailval',
      method: 'GET',
      url: '/v1/emailval/lookup?email=someone%40example.com',
      engine: { product: 'emailval', input: ['someone@example.com'] },
    },
    {
      name: 'GET /v1/emailauth/lookup?domain= (loopback DNS, cached)',
      product: 'emailauth',
      method: 'GET',
      url: '/v1/emailauth/lookup?domain=example.com',
      engine: { product: 'emailauth', input: ['example.com'] },
    },
    {
      name: 'GET /v1/pwbreach/lookup?sha1=',
      product: 'pwbreach',
      method: 'GET',
      url: `/v1/pwbreach/lookup?sha1=${SHA1}`,
      engine: { product: 'pwbreach', input: [{ sha1: SHA1 }] },
    },
    {
      name: 'POST /v1/pwbreach/lookup {"password"} (JSON body)',
      product: 'pwbreach',
      method: 'POST',
      url: '/v1/pwbreach/lookup',
      body: JSON.stringify({ password: PASSWORD }),
      contentType: 'application/json',
    },
    {
      name: 'GET /v1/scamrisk/assess?type=crypto&value=0x...',
      product: 'scamrisk',
      method: 'GET',
      url: `/v1/scamrisk/assess?type=crypto&value=${ETH}`,
      engine: { product: 'scamrisk', input: [{ type: 'crypto', value: ETH }] },
    },
    {
      name: 'GET /v1/tls/lookup?host= (loopback TLS, cached)',
      product: 'tls',
      method: 'GET',
      url: `/v1/tls/lookup?host=bench.tls.test&port=${tlsPort}`,
      engine: { product: 'tls', input: ['bench.tls.test', { port: String(tlsPort) }] },
    },
    {
      name: 'GET /v1/whois/lookup?domain= (loopback RDAP, cached)',
      product: 'whois',
      method: 'GET',
      url: '/v1/whois/lookup?domain=example.com',
      engine: { product: 'whois', input: ['example.com'] },
    },
    {
      name: 'GET /v1/domainrep/lookup?domain= (loopback DNS and RDAP, cached)',
      product: 'domainrep',
      method: 'GET',
      url: '/v1/domainrep/lookup?domain=example.com',
      engine: { product: 'domainrep', input: ['example.com'] },
    },
    {
      name: 'GET /v1/captcha/challenge?sitekey= (issue a challenge)',
      product: 'captcha',
      method: 'GET',
      url: '/v1/captcha/challenge',
      auth: 'captcha-public-query',
      ownWork: challengeWork(),
    },
    {
      name: 'POST /v1/captcha/siteverify (a forged proof: decoded, its MAC computed and refused, 4xx)',
      product: 'captcha',
      method: 'POST',
      url: '/v1/captcha/siteverify',
      contentType: 'application/json',
    },
  ];
}

interface Target {
  /** A 4xx the route answers on purpose (a forged captcha proof); else every answer must be 2xx. */
  expect4xx?: boolean;
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  pid: number;
}

/** utime + stime of a process in microseconds (Linux /proc; clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** Requests a second answered 2xx, and the server's CPU per request; throws on anything else. */
async function load(target: Target, seconds: number, cpu?: { micros: number; requests: number }): Promise<number> {
  const before = cpuMicros(target.pid);
  const result = await autocannon({
    url: target.url,
    connections: CONNECTIONS,
    duration: seconds,
    method: target.method,
    headers: target.headers,
    body: target.body,
  });
  const spent = cpuMicros(target.pid) - before;
  const answered = answeredAsExpected(target, result);
  if (cpu) {
    cpu.micros += spent;
    cpu.requests += answered;
  }
  return answered / result.duration;
}

/** How many requests answered as the target expects (2xx, or 4xx for a forged proof); throws on any other answer. */
function answeredAsExpected(target: Target, result: CannonResult): number {
  const answered = target.expect4xx ? result['4xx'] : result['2xx'];
  const wrong = target.expect4xx ? result['2xx'] + result.non2xx - result['4xx'] : result.non2xx;
  if (wrong || result.errors || result.timeouts) {
    throw new Error(`${target.method} ${target.url}: ${wrong} unexpected statuses, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return answered;
}

/** Send exactly `requests` requests to the target (a server under callgrind is slow: a minute's timeout). */
async function sendCount(target: Target, requests: number): Promise<void> {
  const result = await autocannon({
    url: target.url,
    connections: CONNECTIONS,
    amount: requests,
    timeout: 60,
    method: target.method,
    headers: target.headers,
    body: target.body,
  });
  const answered = answeredAsExpected(target, result);
  if (answered !== requests) throw new Error(`${target.method} ${target.url}: ${answered} of ${requests} requests answered`);
}

/** A node process (under callgrind when `counted` names its dumps), resolved with the first line it prints. */
function spawnLine(
  args: string[],
  children: ChildProcess[],
  stdout: 'pipe' | number = 'pipe',
  counted?: { dir: string; name: string },
): Promise<{ child: ChildProcess; line: string }> {
  const command = counted ? underCallgrind(counted.dir, counted.name, args) : { command: process.execPath, args };
  const child = spawn(command.command, command.args, { stdio: ['ignore', stdout, 'pipe'] });
  children.push(child);
  let errors = '';
  let output = '';
  // Under valgrind a start takes tens of times longer.
  const startMs = counted ? 300_000 : 20_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start in ${startMs / 1000} s: ${errors}`)), startMs);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${errors}`)));
    const stream = stdout === 'pipe' ? child.stdout! : child.stderr!;
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk));
    stream.on('data', (chunk: Buffer) => {
      output += chunk;
      const line = stdout === 'pipe' ? (output.includes('\n') ? output.split('\n')[0] : undefined) : /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1];
      if (!line) return;
      clearTimeout(timer);
      resolve({ child, line });
    });
  });
}

const EMAIL_ZONE = (rdapHost: string): Zone => ({
  'example.com': [
    { type: 'A', address: '192.0.2.10' },
    { type: 'MX', exchange: 'mail.example.com', priority: 10 },
    { type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' },
  ],
  'mail.example.com': [{ type: 'A', address: '192.0.2.25' }],
  '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
  'selector1._domainkey.example.com': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }],
  'bench.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  [rdapHost]: [{ type: 'A', address: '127.0.0.1' }],
});

/** Each engine's own cost in this process, µs per call (prepare + lookup + serialising its result). */
async function engineCosts(routeCases: RouteCase[], options: LookupOptions): Promise<Map<string, number>> {
  const lookup = createLookup(options);
  const costs = new Map<string, number>();
  for (const route of routeCases) {
    let once: () => unknown;
    if (route.ownWork) once = route.ownWork;
    else if (route.engine) {
      const { product, input } = route.engine;
      const engine = lookup.engine(product as never) as {
        prepare(...args: unknown[]): unknown;
        lookup(query: unknown): unknown;
      };
      once = async () => {
        let outcome = engine.lookup(engine.prepare(...input)) as { json?: string; result?: object; text?: unknown };
        if (isPromise(outcome)) outcome = (await outcome) as typeof outcome;
        return outcome.text ? '' : successBody(outcome.json ? {} : outcome.result!, { requestId: 'req_0' }, outcome.json);
      };
    } else continue;
    for (let i = 0; i < 200; i++) await once();
    const calls = 5_000;
    const started = process.cpuUsage();
    for (let i = 0; i < calls; i++) await once();
    const spent = process.cpuUsage(started);
    costs.set(route.name, (spent.user + spent.system) / calls);
  }
  await lookup.close?.();
  return costs;
}

export async function run(): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  if (COUNT_INSTRUCTIONS && !haveValgrind()) throw new Error('BENCH_COUNT=instructions needs valgrind (apt-get install valgrind)');
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-bench-routes-'));
  const rdap = await startRdapServer({ 'example.com': rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json') });
  const rdapHost = 'rdap.registry.test';
  const dns = await startDnsServer({ zone: EMAIL_ZONE(rdapHost), defaultTtl: 3600, negativeTtl: 3600 });
  const cert = mintCertificate({ subject: 'bench.tls.test', dnsNames: ['bench.tls.test'] });
  const tlsServer = await startTlsServer({ certificate: cert });
  const rows: BenchRow[] = [];
  try {
    const routeCases = cases(tlsServer.port);
    const engineOptions = [
      '--dns',
      dns.address,
      '--allow-private-targets',
      '127.0.0.0/8',
      '--whois-rdap-servers',
      `com=http://${rdapHost}:${new URL(rdap.url).port}/rdap/`,
    ];
    const lookupOptions: LookupOptions = {
      dns: { servers: [dns.address] },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { com: `http://${rdapHost}:${new URL(rdap.url).port}/rdap/` } },
    } as LookupOptions;

    // Keys: an unlimited plan (no bench reaches a limit), one subscription per product, a captcha site key.
    const db = join(dir, 'serve.db');
    const meter = createSqliteMeter(db);
    await meter.setPlan({ slug: 'bench', product: '*', rateLimitPerMinute: 1_000_000_000, monthlyQuota: null });
    const keys = new Map<ProductId, string>();
    for (const product of new Set(routeCases.map((c) => c.product).filter((p): p is ProductId => p !== null && p !== 'captcha'))) {
      keys.set(product, (await issueKeys(meter, { product, plan: 'bench' })).secretKey);
    }
    await meter.close();
    const site = JSON.parse(
      execFileSync(process.execPath, [CLI, 'sitekeys', 'create', '--domain', 'localhost', '--plan', 'bench', '--json', '--db', db], { encoding: 'utf8' }),
    ) as { site_key: string; secret_key: string };

    const logFile = join(dir, 'requests.log');
    const log = openSync(logFile, 'w');
    const serveArgs = [CLI, 'serve', '--port', '0', '--db', db, '--batch-limit', String(RSS_BATCH), '--body-limit', String(1 << 20), ...engineOptions];
    const counted = (name: string) => (COUNT_INSTRUCTIONS ? { dir, name } : undefined);
    const { child: serve, line: origin } = await spawnLine([...SERVE_NODE_FLAGS, ...serveArgs], children, log, counted('serve'));
    closeSync(log);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idleRss = rssMiB(serve.pid!);

    // Ask each route once: the answer (and the caches it warms) is what the bare server repeats.
    const targets: Target[] = [];
    const answers: { method: string; url: string; status: number; body: string; headers: Record<string, string> }[] = [];
    const forgedProof = forge(await captchaProof(origin, site));
    for (const route of routeCases) {
      const headers: Record<string, string> = {};
      let url = route.url;
      let body = route.body;
      if (route.product && route.auth === undefined && route.product !== 'captcha') headers.authorization = `Bearer ${keys.get(route.product)}`;
      if (route.auth === 'captcha-public-query') {
        url += `?sitekey=${site.site_key}&hostname=localhost`;
        headers.origin = 'http://localhost';
      }
      const forged = route.url === '/v1/captcha/siteverify';
      if (forged) body = JSON.stringify({ secret: site.secret_key, response: forgedProof });
      if (route.contentType) headers['content-type'] = route.contentType;
      const response = await fetch(origin + url, { method: route.method, headers, body });
      const text = await response.text();
      if (forged ? response.status < 400 || response.status >= 500 : !response.ok) throw new Error(`${route.method} ${url}: ${response.status} ${text}`);
      answers.push({ method: route.method, url, status: response.status, body: text, headers: Object.fromEntries(response.headers) });
      targets.push({ url: origin + url, method: route.method, headers, body, pid: serve.pid!, expect4xx: forged });
    }

    const answersFile = join(dir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answers));
    const { child: bare, line: ports } = await spawnLine([BARE_SCRIPT, answersFile], children, 'pipe', counted('bare'));
    const { two, same } = JSON.parse(ports) as { two: number; same: number };
    const bareTarget = (target: Target, port: number): Target => ({
      ...target,
      url: target.url.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${port}`),
      pid: bare.pid!,
    });

    if (COUNT_INSTRUCTIONS) {
      const counts: string[] = [];
      for (const [i, route] of routeCases.entries()) {
        if (!measured(route)) continue;
        counts.push(
          await countedRoute(route.name, { ours: targets[i], two: bareTarget(targets[i], two), same: bareTarget(targets[i], same) }, dir, counts.length === 0),
        );
      }
      reportSections.push(instructionsSection(counts));
      return rows;
    }
    const costs = await engineCosts(routeCases, lookupOptions);
    const budget: string[] = [];
    const cpuOf = (cpu: { micros: number; requests: number }) => (cpu.requests ? cpu.micros / cpu.requests : Number.NaN);
    const uncached: string[] = [];
    for (const [i, route] of routeCases.entries()) {
      if (!measured(route)) continue;
      const asked = dns.total();
      const ours = targets[i];
      const bareTwo = bareTarget(ours, two);
      const bareSame = bareTarget(ours, same);
      // The bare servers are warm after the first route; serve's route warms its own path.
      for (const target of budget.length === 0 ? [ours, bareTwo, bareSame] : [ours]) await load(target, WARMUP_SECONDS);
      const best = { ours: 0, two: 0, same: 0 };
      const cpu = { ours: { micros: 0, requests: 0 }, two: { micros: 0, requests: 0 }, same: { micros: 0, requests: 0 } };
      for (let round = 0; round < ROUNDS; round++) {
        best.two = Math.max(best.two, await load(bareTwo, ROUND_SECONDS, cpu.two));
        best.ours = Math.max(best.ours, await load(ours, ROUND_SECONDS, cpu.ours));
        best.same = Math.max(best.same, await load(bareSame, ROUND_SECONDS, cpu.same));
      }
      const ratioTwo = best.ours / best.two;
      const ratioSame = best.ours / best.same;
      rows.push(
        ratioRow(
          {
            suite: 'routes',
            case: `serve: ${route.name}; vs the same bytes with serve's headers: ${ratioSame.toFixed(2)}x${ratioSame >= MOONSHOT ? ' (moonshot reached)' : ''}`,
            baseline: 'bare node, same bytes, 2 headers',
            opsPerSec: best.ours,
            baselineOpsPerSec: best.two,
            target: `>= ${GOAL.toFixed(2)}x${ratioTwo >= MOONSHOT ? ' (0.8x reached)' : ''}`,
          },
          GOAL,
        ),
      );
      if (dns.total() !== asked) uncached.push(`${route.name}: ${dns.total() - asked} DNS questions`);
      const engineCost = costs.get(route.name);
      budget.push(
        `| ${route.name} | ${cpuOf(cpu.two).toFixed(1)} | ${cpuOf(cpu.same).toFixed(1)} | ${cpuOf(cpu.ours).toFixed(1)} | ${engineCost === undefined ? '-' : engineCost.toFixed(1)} |`,
      );
    }
    if (uncached.length) throw new Error(`routes measured as cached asked the DNS server again: ${uncached.join('; ')}`);
    const afterRoutesRss = rssMiB(serve.pid!);

    if (ONLY) {
      reportSections.push(budgetSection(budget));
      return rows;
    }
    rows.push(...(await batchRow(origin, keys.get('geoip')!, serve.pid!)));
    const rss = await distinctInputs(origin, keys, serve.pid!);

    await stopAll([serve], 10_000);
    // SIGTERM flushes the log: every answered request has its line, or the rows measured a log that was dropped.
    const { lines: logged, holds: leaked } = scanLog(logFile, PASSWORD);
    if (logged < 1_000) throw new Error(`seclookup serve logged only ${logged} lines`);
    if (leaked) throw new Error('the request log holds a password');

    // serve's useragent answer: the adapters answer the same bytes but for the request id.
    rows.push(...(await adapterRows(children, dir, answers[routeCases.findIndex((c) => c.url.startsWith('/v1/useragent/lookup?'))].body)));

    reportSections.push(
      [
        budgetSection(budget),
        '',
        '## Memory (RSS of `seclookup serve`)',
        '',
        '| when | RSS MiB |',
        '|---|---:|',
        `| idle after start | ${idleRss.toFixed(0)} |`,
        `| after the route rows (warm caches) | ${afterRoutesRss.toFixed(0)} |`,
        ...rss.map(([what, mib]) => `| ${what} | ${mib.toFixed(0)} |`),
      ].join('\n'),
    );
    return rows;
  } finally {
    await stopAll(children, 10_000);
    await Promise.all([dns.close(), rdap.close(), tlsServer.close()]);
    process.removeListener('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One row of the instructions table: serve and both bare servers on one route, each warmed on
 * the route first (collection starts after the first route's warm-up).
 */
async function countedRoute(name: string, targets: { ours: Target; two: Target; same: Target }, dir: string, first: boolean): Promise<string> {
  const servers = [
    { target: targets.ours, name: 'serve' },
    { target: targets.two, name: 'bare' },
    { target: targets.same, name: 'bare' },
  ];
  const counts: number[] = [];
  for (const { target, name: dumps } of servers) {
    await sendCount(target, COUNT_WARMUP);
    if (first) await startCounting(target.pid);
    counts.push(await instructionsPerRequest(target.pid, dir, dumps, COUNT_REQUESTS, COUNT_WINDOWS, (requests) => sendCount(target, requests)));
  }
  const [ours, two, same] = counts;
  const thousands = (count: number) => (count / 1000).toFixed(1);
  return `| ${name} | ${thousands(two)} | ${thousands(same)} | ${thousands(ours)} | ${thousands(ours - same)} | ${(two / ours).toFixed(2)} |`;
}

/** The instructions table (BENCH_COUNT=instructions). */
function instructionsSection(rows: string[]): string {
  return [
    `## Instructions per request (callgrind, thousands, ${CONNECTIONS} connections)`,
    '',
    `User-space instructions of each server process, every thread, per request: the fewest over ${COUNT_WINDOWS} windows of ${COUNT_REQUESTS.toLocaleString('en-US')} requests after ${COUNT_WARMUP.toLocaleString('en-US')} to warm up. The kernel's work is not counted, and under valgrind OpenSSL hashes without the CPU's SHA extensions (the captcha rows count several times the instructions their HMAC takes outside it); time runs about fifty times slower, so work done once a millisecond or from a timer (the key cache's check, the meter's delayed commits) counts more than it costs. Compare a route with itself across builds. See docs/benchmarks.md.`,
    '',
    "| route | bare, 2 headers | bare, serve's headers | serve | serve less bare (same headers) | bare / serve |",
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

/** The CPU budget table: µs of server CPU per request, route by route. */
function budgetSection(budget: string[]): string {
  return [
    `## CPU budget (µs of server CPU per request, ${CONNECTIONS} connections)`,
    '',
    'Bare: a `http.createServer` answering the same bytes. serve: `seclookup serve`, SQLite meter, JSON request log to a file. Engine: the product engine alone in the bench process (prepare + lookup + serialising the result), warm; for the captcha challenge, the work of the route itself (a fresh puzzle, its HMAC-signed token and the body). healthz is serve without key or meter; status adds the key, the meter (rate only) and the limit headers; a lookup adds the quota reservation, its lease, the engine and the envelope.' +
      (SERVE_NODE_FLAGS.length > 0 ? ` serve ran with \`node ${SERVE_NODE_FLAGS.join(' ')}\` (BENCH_SERVE_NODE_FLAGS).` : ''),
    '',
    "| route | bare, 2 headers | bare, serve's headers | serve | engine alone |",
    '|---|---:|---:|---:|---:|',
    ...budget,
  ].join('\n');
}

/** A captcha proof as a page gets it (challenge, solved, verified), then redeemed once by siteverify: spent. */
async function captchaProof(origin: string, site: { site_key: string; secret_key: string }): Promise<string> {
  const page = { origin: 'http://localhost', 'content-type': 'application/json' };
  const challenge = (await (await fetch(`${origin}/v1/captcha/challenge?sitekey=${site.site_key}&hostname=localhost`, { headers: page })).json()) as {
    challenge: string;
    params: PowParams;
  };
  const token = `${challenge.challenge}.${solvePow(challenge.params)}`;
  const verify = { sitekey: site.site_key, hostname: 'localhost', token, trace: [], telemetry: { pointer_moves: 12, focus: true, elapsed_ms: 2400 } };
  const verified = (await (await fetch(`${origin}/v1/captcha/verify`, { method: 'POST', headers: page, body: JSON.stringify(verify) })).json()) as {
    proof?: string;
  };
  if (!verified.proof) throw new Error(`captcha verify gave no proof: ${JSON.stringify(verified)}`);
  const first = await fetch(`${origin}/v1/captcha/siteverify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ secret: site.secret_key, response: verified.proof }),
  });
  if (!first.ok) throw new Error(`captcha siteverify refused a fresh proof: ${await first.text()}`);
  return verified.proof;
}

/** The log's line count, and whether `secret` appears in it, read in chunks (a run logs several hundred MB). */
function scanLog(path: string, secret: string): { lines: number; holds: boolean } {
  const fd = openSync(path, 'r');
  const chunk = Buffer.alloc(1 << 20);
  const needle = Buffer.from(secret);
  let lines = 0;
  let holds = false;
  // The last bytes of the previous chunk, so a secret split across two chunks is still found.
  let tail = Buffer.alloc(0);
  try {
    for (let read = readSync(fd, chunk); read > 0; read = readSync(fd, chunk)) {
      const bytes = chunk.subarray(0, read);
      for (let at = bytes.indexOf(10); at >= 0; at = bytes.indexOf(10, at + 1)) lines++;
      holds ||= Buffer.concat([tail, bytes]).includes(needle);
      tail = Buffer.from(bytes.subarray(Math.max(0, read - needle.length + 1)));
    }
  } finally {
    closeSync(fd);
  }
  return { lines, holds };
}

/**
 * The proof with one character of its signature changed: it parses, and siteverify computes its
 * MAC before refusing it (a replayed spent proof would be refused from the service's memo of
 * spent proofs, which measures only a map lookup).
 */
function forge(proof: string): string {
  const at = proof.indexOf('.') + 1;
  return proof.slice(0, at) + (proof[at] === 'A' ? 'B' : 'A') + proof.slice(at + 1);
}

/** Inputs per second of POST /v1/geoip/batch (BATCH_SIZE distinct IPs) against single GET lookups. */
async function batchRow(origin: string, key: string, pid: number): Promise<BenchRow[]> {
  const ips = Array.from({ length: BATCH_SIZE }, (_, i) => `8.8.${i >> 8}.${(i & 255) + 1}`);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const batch: Target = { url: `${origin}/v1/geoip/batch`, method: 'POST', headers, body: JSON.stringify({ inputs: ips }), pid };
  const single: Target = { url: `${origin}/v1/geoip/lookup?ip=8.8.4.4`, method: 'GET', headers: { authorization: headers.authorization }, pid };
  await load(batch, WARMUP_SECONDS);
  let batches = 0;
  let singles = 0;
  for (let round = 0; round < ROUNDS; round++) {
    singles = Math.max(singles, await load(single, ROUND_SECONDS));
    batches = Math.max(batches, await load(batch, ROUND_SECONDS));
  }
  return [
    ratioRow(
      {
        suite: 'routes',
        case: `serve: POST /v1/geoip/batch, ${BATCH_SIZE} IPs a request: inputs per second`,
        baseline: 'single GET /v1/geoip/lookup, lookups per second',
        opsPerSec: batches * BATCH_SIZE,
        baselineOpsPerSec: singles,
        target: `>= ${BATCH_GOAL}x`,
      },
      BATCH_GOAL,
    ),
  ];
}

/**
 * RSS after RSS_INPUTS distinct inputs, spread over the local products with batches: User-Agents,
 * IPs (geoip, asn, timezone, webhookip) and SHA-1 hashes (pwbreach). Every cache is bounded, so
 * RSS levels off rather than growing with the inputs.
 */
async function distinctInputs(origin: string, keys: Map<ProductId, string>, pid: number): Promise<[string, number][]> {
  const products: { product: ProductId; input: (n: number) => string }[] = [
    { product: 'useragent', input: (n) => `${UA} bench/${n}` },
    { product: 'geoip', input: (n) => `${11 + ((n >>> 24) % 80)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` },
    { product: 'asn', input: (n) => `${11 + ((n >>> 24) % 80)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` },
    { product: 'timezone', input: (n) => `${11 + ((n >>> 24) % 80)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` },
    { product: 'webhookip', input: (n) => `${11 + ((n >>> 24) % 80)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` },
    { product: 'pwbreach', input: (n) => createHash('sha1').update(`bench-${n}`).digest('hex') },
  ];
  const readings: [string, number][] = [];
  const perProduct = Math.ceil(RSS_INPUTS / products.length / RSS_BATCH);
  let sent = 0;
  const started = Date.now();
  const IN_FLIGHT = 8;
  for (const { product, input } of products) {
    let next = 0;
    const worker = async () => {
      while (next < perProduct) {
        const b = next++;
        const inputs = Array.from({ length: RSS_BATCH }, (_, k) => input(b * RSS_BATCH + k + 1_000));
        const response = await fetch(`${origin}/v1/${product}/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.get(product)}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs }),
        });
        if (!response.ok) throw new Error(`${product} batch: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
        sent += RSS_BATCH;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    readings.push([`after ${sent.toLocaleString('en-US')} distinct inputs (…${product})`, rssMiB(pid)]);
  }
  readings.push([`(${sent.toLocaleString('en-US')} inputs took ${((Date.now() - started) / 1000).toFixed(0)} s)`, rssMiB(pid)]);
  return readings;
}

/** The adapters on the useragent lookup (SQLite meter) against their bare framework answering the same bytes. */
async function adapterRows(children: ChildProcess[], dir: string, sampleBody: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const adapter of ['node', 'express', 'fastify'] as const) {
    const start = async (mode: 'bare' | 'seclookup', bodyFile?: string) => {
      const { child, line } = await spawnLine([ADAPTER_SCRIPT, adapter, mode, 'sqlite', ...(bodyFile ? [bodyFile] : [])], children);
      const { port, key } = JSON.parse(line) as { port: number; key: string | null };
      const target: Target = {
        url: `http://127.0.0.1:${port}/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`,
        method: 'GET',
        headers: key ? { authorization: `Bearer ${key}` } : {},
        pid: child.pid!,
      };
      return { child, target };
    };
    // The bare framework answers a useragent body of the same length and shape, written first.
    const bodyFile = join(dir, 'adapter-body.json');
    writeFileSync(bodyFile, sampleBody);
    const [ours, bare] = await Promise.all([start('seclookup'), start('bare', bodyFile)]);
    const sample = await (await fetch(ours.target.url, { headers: ours.target.headers })).text();
    if (sample.length !== sampleBody.length) throw new Error(`the ${adapter} adapter answered ${sample.length} bytes, the bare one ${sampleBody.length}`);
    await load(ours.target, WARMUP_SECONDS);
    await load(bare.target, WARMUP_SECONDS);
    const best = { ours: 0, bare: 0 };
    const cpu = { ours: { micros: 0, requests: 0 }, bare: { micros: 0, requests: 0 } };
    for (let round = 0; round < ROUNDS; round++) {
      best.bare = Math.max(best.bare, await load(bare.target, ROUND_SECONDS, cpu.bare));
      best.ours = Math.max(best.ours, await load(ours.target, ROUND_SECONDS, cpu.ours));
    }
    const micros = (c: { micros: number; requests: number }) => (c.micros / c.requests).toFixed(1);
    rows.push(
      ratioRow(
        {
          suite: 'routes',
          case: `${adapter} adapter: GET /v1/useragent/lookup, warm UA cache, SQLite meter, ${CONNECTIONS} connections (CPU µs/request: ${micros(cpu.ours)} vs ${micros(cpu.bare)})`,
          baseline: `bare ${adapter}, same bytes`,
          opsPerSec: best.ours,
          baselineOpsPerSec: best.bare,
          target: `>= ${GOAL.toFixed(2)}x`,
        },
        GOAL,
      ),
    );
    await stopAll([ours.child, bare.child], 10_000);
  }
  return rows;
}
