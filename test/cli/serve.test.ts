import { closeSync, copyFileSync, existsSync, openSync, renameSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { PRODUCT_IDS, PRODUCTS } from '../../src/products/catalog.js';
import { startDnsServer, type Zone } from '../servers/dns-server.js';
import { collect, openSocket, rawGet } from '../adapters/raw-http.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { ServeProcess, running, startServe, type ServeExit, type ServeRun } from './serve-process.js';
import { DKIM_KEYS } from '../servers/email-zone.js';

const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

const temp = createTempDirs();
let db: string;

beforeAll(() => {
  db = join(temp.make(), 'serve.db');
  // A fresh clone has no compiled indexes yet (riskscore's lists, asn's CSV): the first start
  // compiles them, seconds of CPU while the suite starts everything else. Built here, in the
  // hook's time, the first child below reads them instead of compiling inside its 10 s start.
  createLookup().load();
}, 60_000);
afterEach(async () => {
  // A failed test must not leave a server behind.
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

async function getJson(url: string, key?: string): Promise<{ status: number; body: Record<string, unknown>; requestId: string | null }> {
  const response = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, requestId: response.headers.get('x-request-id') };
}

/**
 * POST a JSON body in two parts; `between` runs after the first part has reached the server.
 * Resolves with the status, the Connection header and the parsed body.
 */
function postInTwoParts(
  url: string,
  key: string,
  body: string,
  between: () => Promise<void>,
): Promise<{ status: number; connection: string | undefined; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    req.flushHeaders();
    sleep(300)
      .then(between)
      .then(() => req.end(body.slice(half)), reject);
  });
}

describe('seclookup serve', () => {
  let starter: Map<string, { secret: string; public: string }>;

  it('prints a starter key pair for every product once on stderr, serves lookups and logs each request as a JSON line on stdout', async () => {
    // The binary itself: its stdout is the JSON log and nothing else.
    const { serve, baseUrl } = await ServeProcess.start(db);
    starter = await serve.waitFor(() => serve.starterKeys().size === PRODUCT_IDS.length && serve.starterKeys());
    expect([...starter.keys()].sort()).toEqual([...PRODUCT_IDS].sort());
    for (const [product, keys] of starter) {
      expect(keys.secret.startsWith(PRODUCTS[product as keyof typeof PRODUCTS].secretPrefix)).toBe(true);
      expect(keys.public.startsWith(PRODUCTS[product as keyof typeof PRODUCTS].publicPrefix)).toBe(true);
    }
    expect(serve.stderr).toContain('shown only this once');
    expect(starter.get('scamrisk')!.public).toMatch(/^sa_pub_/);

    const health = await getJson(`${baseUrl}/healthz`);
    expect(health).toMatchObject({ status: 200, body: { success: true } });

    const uaKey = starter.get('useragent')!.secret;
    const lookup = await getJson(`${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(CHROME_UA)}`, uaKey);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toMatchObject({ success: true, browser: { name: 'Chrome' }, is_bot: false });

    // Lines are buffered and written in the background, at the latest a second later.
    const logged = await serve.waitFor(() => serve.requestLines().find((line) => line.request_id === lookup.requestId));
    expect(Object.keys(logged)).toEqual(['level', 'time', 'request_id', 'method', 'route', 'product', 'status', 'error_code', 'latency_ms', 'client_ip']);
    expect(logged).toMatchObject({
      level: 'info',
      method: 'GET',
      route: '/v1/useragent/lookup',
      product: 'useragent',
      status: 200,
      error_code: null,
      client_ip: '127.0.0.1',
    });
    expect(typeof logged.latency_ms).toBe('number');
    expect(new Date(logged.time as string).toISOString()).toBe(logged.time);
    const logLine = serve.stdoutLines.find((line) => line.includes(lookup.requestId!))!;
    expect(logLine).not.toContain(uaKey);
    expect(logLine).not.toContain('Chrome');

    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    // stdout is the JSON log only: every line parses (logLines throws otherwise), no key in it.
    expect(serve.logLines().map((line) => line.request_id)).toEqual([health.requestId, lookup.requestId]);
    expect(serve.stdoutLines.join('\n')).not.toMatch(/_sec_|_pub_/);
  });

  it('on a restart prints no keys, only how many there are', async () => {
    const { serve, baseUrl } = await startServe(db);
    const health = await getJson(`${baseUrl}/healthz`);
    await serve.waitFor(() => serve.requestLines().some((line) => line.request_id === health.requestId));
    expect(serve.starterKeys().size).toBe(0);
    expect(serve.stderr).not.toMatch(/_sec_|_pub_/);
    expect(serve.stdoutLines.join('\n')).not.toMatch(/_sec_|_pub_/);
    // The command that lists this store's keys: a bare `seclookup keys list` reads ./seclookup.db instead.
    expect(serve.stderr).toContain(`30 keys in ${db} (30 active); use \`seclookup keys list --db ${db}\` to see them`);
    // captcha's starter pair is a site key with no domains yet (its module's starterKeys), not a plain key pair.
    const challenge = await getJson(`${baseUrl}/v1/captcha/challenge?sitekey=${starter.get('captcha')!.public}&hostname=shop.example.com`);
    expect(challenge.body).toMatchObject({ error_code: 'domain_not_configured' });
    expect(await serve.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('honours keys created and revoked with the CLI while it runs', async () => {
    const { serve, baseUrl } = await startServe(db);
    const created = await runCliJson<{ secret_key: string; secret_key_id: string }>(['keys', 'create', '--product', 'useragent', '--json', '--db', db]);
    const url = `${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(FIREFOX_UA)}`;

    const before = await getJson(url, created.secret_key);
    expect(before).toMatchObject({ status: 200, body: { success: true, browser: { name: 'Firefox' } } });

    const revoked = await runCli(['keys', 'revoke', created.secret_key, '--db', db]);
    expect(revoked.code).toBe(0);

    const after = await getJson(url, created.secret_key);
    expect(after).toMatchObject({ status: 401, body: { success: false, error_code: 'invalid_api_key' } });
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it.each([
    ['deleted', (path: string) => rmSync(path)],
    // A backup restored with mv: another file at the same name.
    ['replaced', (path: string) => renameSync(`${path}.restored`, path)],
  ])(
    'stops (exit 1, saying why) when its database file is %s under it: SQLite would go on billing to the old file (found by a reviewer)',
    async (what, change) => {
      const path = join(temp.make(), 'watched.db');
      const { serve, baseUrl } = await startServe(path, { env: { SECLOOKUP_FILE_WATCH_MS: '50' } });
      expect((await getJson(`${baseUrl}/healthz`)).status).toBe(200);
      if (what === 'replaced') copyFileSync(path, `${path}.restored`);
      change(path);
      expect(await serve.exited).toEqual({ code: 1, signal: null });
      running.delete(serve);
      expect(serve.stderr).toContain(`the database ${path} was deleted or replaced while serve ran`);
      expect(serve.stderr).toContain('seclookup stopped');
    },
  );

  it.each(['-wal', '-shm'])(
    "stops (exit 1, naming the file) when the database's %s file is deleted under it: its commits would go where no other process reads them, and a keys revoke would go unseen",
    async (suffix) => {
      const path = join(temp.make(), 'watched.db');
      const { serve, baseUrl } = await startServe(path, { env: { SECLOOKUP_FILE_WATCH_MS: '50' } });
      expect((await getJson(`${baseUrl}/healthz`)).status).toBe(200);
      rmSync(path + suffix);
      expect(await serve.exited).toEqual({ code: 1, signal: null });
      running.delete(serve);
      expect(serve.stderr).toContain(`seclookup: ${path}${suffix}, the database's ${suffix.slice(1)} file, was deleted or replaced while serve ran`);
      expect(serve.stderr).toContain('seclookup stopped');
    },
  );

  it('keeps answering while another process holds the database write lock, and answers the lookups that waited once it is released', async () => {
    const { serve, baseUrl } = await startServe(db);
    // The sqlite3 shell in a transaction, say: SQLite's busy handler would stop serve's event loop meanwhile.
    const holder = new Database(db);
    holder.exec('BEGIN IMMEDIATE');
    try {
      let settled = false;
      const lookup = getJson(`${baseUrl}/v1/geoip/lookup?ip=8.8.8.8`, starter.get('geoip')!.secret).finally(() => {
        settled = true;
      });
      // Long enough for the lookup's meter write to meet the lock.
      await sleep(100);
      expect(await getJson(`${baseUrl}/healthz`)).toMatchObject({ status: 200, body: { success: true } });
      expect(settled).toBe(false);
      holder.exec('COMMIT');
      expect(await lookup).toMatchObject({ status: 200, body: { success: true, ip: '8.8.8.8' } });
    } finally {
      if (holder.inTransaction) holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('on SIGTERM finishes the in-flight request, closes the database and exits 0', async () => {
    // A real SIGTERM to the process's pid.
    const { serve, baseUrl } = await ServeProcess.start(db);
    // Leave an idle keep-alive connection open: it must not hold up the shutdown.
    const warmup = await getJson(`${baseUrl}/v1/useragent/status`, starter.get('useragent')!.secret);
    expect(warmup.status).toBe(200);

    const response = await postInTwoParts(`${baseUrl}/v1/useragent/lookup`, starter.get('useragent')!.secret, JSON.stringify({ ua: FIREFOX_UA }), async () => {
      serve.kill('SIGTERM');
      await serve.waitFor(() => serve.stderr.includes('SIGTERM received'));
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, browser: { name: 'Firefox' } });
    expect(response.connection).toBe('close');
    expect(serve.stderr).toContain('SIGTERM received: finishing 1 in-flight request(s)');

    expect(await serve.exited).toEqual({ code: 0, signal: null });
    running.delete(serve);
    expect(serve.stderr).toContain('database closed');
    // A clean close checkpoints the WAL and removes it.
    expect(existsSync(`${db}-wal`)).toBe(false);

    // Reopen: both lookups of the starter useragent key were counted (the GET in the first
    // test and the POST that was in flight); the status call is not billed.
    const keys = await runCliJson<{ id: string; subscription_id: string; prefix: string }[]>(['keys', 'list', '--json', '--db', db]);
    const subscription = keys.find((k) => starter.get('useragent')!.secret.startsWith(k.prefix))!.subscription_id;
    const meter = createSqliteMeter(db);
    try {
      const usage = (await meter.usage()).filter((row) => row.subscriptionId === subscription);
      expect(usage.map((row) => [row.product, row.lookups])).toEqual([['useragent', 2]]);
      const quota = await meter.quota(subscription, 10_000, Date.now());
      expect(quota.remaining).toBe(10_000 - 2);
    } finally {
      await meter.close();
    }
  });
});

/** Poll an async probe until it returns something truthy; fail after 10 s. */
/**
 * 600 GET /healthz, 30 at a time, every one 200: a request line is about 226 bytes, so more than
 * two 48 KiB writes of log lines, and the timer's write of the rest.
 */
async function answerHealthz(baseUrl: string): Promise<void> {
  for (let batch = 0; batch < 20; batch++) {
    const answers = await Promise.all(Array.from({ length: 30 }, () => getJson(`${baseUrl}/healthz`)));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
  }
}

/** How serve exited, or a text saying it still ran after `ms` (the test then fails on it, not on its own timeout). */
function exitWithin(serve: ServeRun, ms: number): Promise<ServeExit | string> {
  return Promise.race([serve.exited, sleep(ms).then(() => `still running after ${ms / 1000} s`)]);
}

async function eventually<T>(probe: () => Promise<T | null | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function subscriptionOf(dbPath: string, secretKey: string): Promise<string> {
  const keys = await runCliJson<{ subscription_id: string; prefix: string }[]>(['keys', 'list', '--json', '--db', dbPath]);
  return keys.find((k) => secretKey.startsWith(k.prefix))!.subscription_id;
}

/** Monthly quota left for a subscription on the starter plan (10,000 lookups), read from the database in this process. */
async function remainingQuota(dbPath: string, subscription: string): Promise<number> {
  const meter = createSqliteMeter(dbPath);
  try {
    return (await meter.quota(subscription, 10_000, Date.now())).remaining!;
  } finally {
    await meter.close();
  }
}

interface ClientReport {
  answers: number;
  /** Answers after SIGTERM was sent. */
  answersAfterSignal: number;
  /** Answers whose body was shorter than their Content-Length or not JSON. */
  incomplete: number;
  lastConnectionHeader: string | undefined;
  sockets: number;
  errors: string[];
}

/** One GET on `agent`: rejects on any socket error, never on a short body (that is counted instead). */
function getOnce(url: string, agent: Agent, sockets: Set<unknown>): Promise<{ status: number; connection: string | undefined; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let complete = Buffer.byteLength(text) === Number(res.headers['content-length']);
        try {
          JSON.parse(text);
        } catch {
          complete = false;
        }
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, complete });
      });
      res.on('error', reject);
    });
    req.on('socket', (socket) => sockets.add(socket));
    req.on('error', reject);
    req.end();
  });
}

/**
 * A busy keep-alive client: GETs `url` back to back on one connection (the next request is
 * written as soon as an answer has been read) until an answer says `Connection: close`, an
 * error, or 20 s. A well-behaved client sends nothing more on a connection after that answer.
 */
async function keepAliveClient(url: string, signalSent: () => boolean): Promise<ClientReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  const report: ClientReport = { answers: 0, answersAfterSignal: 0, incomplete: 0, lastConnectionHeader: undefined, sockets: 0, errors: [] };
  const stopAt = Date.now() + 20_000;
  try {
    while (Date.now() < stopAt) {
      const answer = await getOnce(url, agent, sockets);
      report.answers++;
      if (signalSent()) report.answersAfterSignal++;
      if (answer.status !== 200 || !answer.complete) report.incomplete++;
      report.lastConnectionHeader = answer.connection;
      if (answer.connection === 'close') break;
    }
  } catch (error) {
    report.errors.push((error as NodeJS.ErrnoException).code ?? String(error));
  } finally {
    report.sockets = sockets.size;
    agent.destroy();
  }
  return report;
}

describe('seclookup serve: log and shutdown', () => {
  it('writes exactly one request line per answered request before it exits on SIGTERM', async () => {
    const { serve, baseUrl } = await startServe(join(temp.make(), 'lines.db'));
    const requestIds: string[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => getJson(`${baseUrl}/healthz`)));
      for (const answer of answers) requestIds.push(answer.requestId!);
    }
    expect(new Set(requestIds).size).toBe(300);

    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const logged = serve.requestLines();
    expect(logged).toHaveLength(300);
    expect(logged.map((line) => line.request_id).sort()).toEqual([...requestIds].sort());
    expect(logged.every((line) => line.level === 'info' && line.route === '/healthz' && line.status === 200)).toBe(true);
  });

  it('with its log on a full disk (stdout on /dev/full): answers, says so once on stderr, and on SIGTERM exits 0', async () => {
    const full = openSync('/dev/full', 'w');
    const { serve, baseUrl } = await ServeProcess.start(join(temp.make(), 'full.db'), { stdout: full });
    closeSync(full);
    await answerHealthz(baseUrl);
    await serve.waitFor(() => serve.stderr.includes('cannot write the log'));
    serve.kill('SIGTERM');
    // It hung here for ever: at exit pino flushed the unwritable lines synchronously, retrying ENOSPC every 100 ms.
    expect(await exitWithin(serve, 15_000)).toEqual({ code: 0, signal: null });
    running.delete(serve);
    expect(serve.stderr.match(/cannot write the log/g)).toEqual(['cannot write the log']);
    expect(serve.stderr).toContain('seclookup: cannot write the log: ENOSPC: no space left on device');
    expect(serve.stderr).toContain('seclookup stopped: database closed');
  });

  // One process for both, off a terminal as a service manager runs it (each start costs the suite ~2.5 CPU-s).
  it('off a terminal (nohup, a service manager, a container), SIGHUP is ignored; with its log reader gone (EPIPE, as `seclookup serve | head` after its lines) it answers on, says so once, counts the lines, and exits 0 on SIGTERM', async () => {
    // Its stdio are pipes: no terminal to have closed. Node's default would have killed it.
    const { serve, baseUrl } = await ServeProcess.start(join(temp.make(), 'hangup.db'));
    serve.kill('SIGHUP');
    await serve.waitFor(() => serve.stderr.includes('SIGHUP ignored'));
    expect(serve.stderr).toContain('SIGHUP ignored: serve is not on a terminal and has nothing to reload (SIGTERM stops it)');
    expect((await getJson(`${baseUrl}/healthz`)).status).toBe(200);
    expect(serve.exitCode).toBeNull();

    serve.child.stdout!.destroy();
    await answerHealthz(baseUrl);
    serve.kill('SIGTERM');
    expect(await exitWithin(serve, 15_000)).toEqual({ code: 0, signal: null });
    running.delete(serve);
    // Nobody reads the log: not a write failure, but said once (before, the log ended without a word).
    expect(serve.stderr).not.toContain('cannot write the log');
    expect(serve.stderr.match(/the log's reader went away/g)).toHaveLength(1);
    expect(serve.stderr).toMatch(/seclookup: \d+ log line\(s\) were dropped \(the log's destination was behind, or its reader gone\)/);
    expect(serve.stderr).toContain('seclookup stopped: database closed');
  });

  it('--log-level warn leaves the request lines out; an unknown level is a usage error', async () => {
    const { serve, baseUrl } = await startServe(db, { args: ['--log-level', 'warn'] });
    const health = await getJson(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(serve.stdoutLines).toEqual([]);

    const bad = await runCli(['serve', '--log-level', 'loud', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--log-level must be one of trace, debug, info, warn, error, fatal, silent (got "loud")');

    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/--log-level LEVEL\s+least severe log line written \(default: info;[^)]*\): trace\|debug\|info\|warn\|error\|fatal\|silent\n/);
  });

  it('a lookup cut at the shutdown deadline gives its quota back before the database closes, and serve exits 0', async () => {
    // A lookup holds its quota unit while it waits for DNS: point serve at a server that never answers.
    const silentDns = await startDnsServer({ behaviour: 'silent' });
    try {
      const dbPath = join(temp.make(), 'deadline.db');
      const { serve, baseUrl } = await startServe(dbPath, { args: ['--dns', silentDns.address], env: { SECLOOKUP_SHUTDOWN_DEADLINE_MS: '300' } });
      const key = (await serve.waitFor(() => serve.starterKeys().get('emailauth'))).secret;
      const subscription = await subscriptionOf(dbPath, key);
      const before = await remainingQuota(dbPath, subscription);

      let clientError: NodeJS.ErrnoException | undefined;
      const lookup = request(`${baseUrl}/v1/emailauth/lookup?domain=example.com`, { headers: { authorization: `Bearer ${key}` } });
      lookup.on('error', (error) => (clientError = error));
      lookup.end();
      // The unit is reserved once the input has passed its checks: wait until the database shows it.
      await eventually(async () => (await remainingQuota(dbPath, subscription)) === before - 1, 'the reservation');
      await eventually(async () => silentDns.total() > 0, 'the DNS query');

      serve.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      running.delete(serve);
      expect(serve.stderr).toContain('SIGTERM received: finishing 1 in-flight request(s)');
      expect(serve.stderr).toContain('requests still open after 0.3 s: closing their connections');
      expect(serve.stderr).toContain('database closed');
      await eventually(async () => clientError, 'the client to see its connection cut');
      expect(await remainingQuota(dbPath, subscription)).toBe(before);
    } finally {
      await silentDns.close();
    }
  });

  it('during the drain, answers requests arriving on open keep-alive connections with Connection: close instead of resetting them', async () => {
    const { serve, baseUrl } = await startServe(db);
    let signalSent = false;
    const clients = Array.from({ length: 6 }, () => keepAliveClient(`${baseUrl}/healthz`, () => signalSent));
    // Let every client get going before the signal.
    await serve.waitFor(() => serve.requestLines().length >= 6 * 20);

    signalSent = true;
    serve.kill('SIGTERM');
    const reports = await Promise.all(clients);
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    running.delete(serve);

    for (const report of reports) {
      expect(report.errors).toEqual([]);
      expect(report.incomplete).toBe(0);
      // Each connection stayed in use until the server asked to close it, with an answer.
      expect(report.lastConnectionHeader).toBe('close');
      expect(report.answersAfterSignal).toBeGreaterThanOrEqual(1);
      expect(report.sockets).toBe(1);
    }
    // Every answer has its log line.
    expect(serve.requestLines()).toHaveLength(reports.reduce((sum, report) => sum + report.answers, 0));
  });
});

describe('seclookup serve: the drain and pipelined requests', () => {
  /** `count` GETs of `path(i)` with `key`, to be written on one connection at once, as a pipelining client sends them. */
  function pipelined(count: number, key: string, path: (i: number) => string): string {
    return Array.from({ length: count }, (_, i) => rawGet(path(i), key)).join('');
  }
  /** Each answer's status, and `close` on the ones that said `Connection: close`. */
  const shapes = (responses: { status: number; headers: Record<string, string> }[]) =>
    responses.map((r) => `${r.status}${r.headers.connection === 'close' ? ' close' : ''}`);

  it('answers every request already pipelined on a connection, one at a time, the last with Connection: close, and bills exactly those', async () => {
    // The first lookup is held up by DNS when SIGTERM arrives; the four behind it wait their turn.
    const slowDns = await startDnsServer({ behaviour: 'slow', delayMs: 150 });
    try {
      const dbPath = join(temp.make(), 'pipelined.db');
      const { serve, baseUrl } = await startServe(dbPath, { args: ['--dns', slowDns.address] });
      const key = (await serve.waitFor(() => serve.starterKeys().get('emailauth'))).secret;
      const subscription = await subscriptionOf(dbPath, key);
      const before = await remainingQuota(dbPath, subscription);

      const socket = await openSocket(Number(new URL(baseUrl).port));
      socket.write(pipelined(5, key, (i) => `/v1/emailauth/lookup?domain=held${i}.example.com`));
      const answers = collect(socket, { waitMs: 8000 });
      await eventually(async () => slowDns.total() >= 1, 'the first DNS query');
      serve.kill('SIGTERM');
      const { responses, closedByServer } = await answers;
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      running.delete(serve);

      // Pipelined requests are handled one at a time (adapters/pipelining.ts).
      expect(serve.stderr).toContain('SIGTERM received: finishing 1 in-flight request(s)');
      // Node drops the answers queued behind one that closes: the close waits for the last.
      expect(shapes(responses)).toEqual([...Array(4).fill('200'), '200 close']);
      expect(closedByServer).toBe(true);
      expect(await remainingQuota(dbPath, subscription)).toBe(before - 5);
      expect(serve.requestLines().map((line) => line.status)).toEqual(Array(5).fill(200));
    } finally {
      await slowDns.close();
    }
  });

  it('answers a pipelined burst that arrives during the drain on an open connection, all of it, then closes', async () => {
    const { serve, baseUrl } = await startServe(join(temp.make(), 'pipelined-late.db'));
    const key = (await serve.waitFor(() => serve.starterKeys().get('useragent'))).secret;
    const socket = await openSocket(Number(new URL(baseUrl).port));
    // One answer first, so the connection is open and idle when the signal comes.
    socket.write(pipelined(1, key, () => '/v1/useragent/lookup?ua=first'));
    await eventually(async () => serve.requestLines().length === 1, 'the first answer');
    serve.kill('SIGTERM');
    await serve.waitFor(() => serve.stderr.includes('SIGTERM received'));
    socket.write(pipelined(10, key, (i) => `/v1/useragent/lookup?ua=late${i}`));
    const { responses, closedByServer } = await collect(socket, { waitMs: 4000 });
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    running.delete(serve);

    // The first answer (read only now), then the ten of the burst, the last of them closing.
    expect(shapes(responses)).toEqual([...Array(10).fill('200'), '200 close']);
    expect(closedByServer).toBe(true);
  });
});

/** A small real-world-shaped zone under RFC 2606 .com names (emailauth needs an ICANN suffix). */
const MAIL_ZONE: Zone = {
  'example.com': [
    { type: 'MX', priority: 20, exchange: 'mx2.example.com' },
    { type: 'MX', priority: 10, exchange: 'mx1.example.com' },
    { type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' },
  ],
  '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
  'selector1._domainkey.example.com': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }],
  // 45.142.120.10 (a public address) is listed on the Spamhaus zone; the other bundled zones answer NXDOMAIN
  '10.120.142.45.zen.spamhaus.org': [{ type: 'A', address: '127.0.0.2' }],
};

describe('seclookup serve --dns', () => {
  it('answers emailval, emailauth and dnsbl from the DNS server it is pointed at, and 502 when that server goes silent', async () => {
    const dns = await startDnsServer({ zone: MAIL_ZONE });
    try {
      const { serve, baseUrl } = await startServe(join(temp.make(), 'dns.db'), { args: ['--dns', dns.address] });
      const keys = await serve.waitFor(() => serve.starterKeys().size === PRODUCT_IDS.length && serve.starterKeys());
      const key = (product: string) => keys.get(product)!.secret;

      const email = await getJson(`${baseUrl}/v1/emailval/lookup/${encodeURIComponent('jane@example.com')}`, key('emailval'));
      expect(email.status).toBe(200);
      expect(email.body).toMatchObject({
        email: 'jane@example.com',
        valid_format: true,
        has_mx: true,
        mx: ['10 mx1.example.com', '20 mx2.example.com'],
        risk: { level: 'low' },
        cached: false,
      });
      expect(email.body.fetched_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);

      const auth = await getJson(`${baseUrl}/v1/emailauth/lookup?domain=example.com`, key('emailauth'));
      expect(auth.body).toMatchObject({ domain: 'example.com', score: 100, spf: { found: true }, dmarc: { found: true }, dkim: { found: true } });
      expect((await getJson(`${baseUrl}/v1/emailauth/lookup?domain=example.com`, key('emailauth'))).body.cached).toBe(true);

      const listed = await getJson(`${baseUrl}/v1/dnsbl/lookup/45.142.120.10`, key('dnsbl'));
      expect(listed.body).toMatchObject({ ip: '45.142.120.10', listed: true, list_count: 1, lists: [{ zone: 'zen.spamhaus.org', responses: ['127.0.0.2'] }] });
      expect(listed.body.checked).toBeGreaterThan(1);
      for (const product of ['emailval', 'emailauth', 'dnsbl']) {
        const status = await getJson(`${baseUrl}/v1/${product}/status`, keys.get(product)!.public);
        expect(Number.isSafeInteger(status.body.database_records) && (status.body.database_records as number) > 0).toBe(true);
      }

      dns.setBehaviour('silent');
      const failed = await getJson(`${baseUrl}/v1/emailauth/lookup?domain=example.org`, key('emailauth'));
      expect([failed.status, failed.body.error_code]).toEqual([502, 'lookup_failed']);
      expect(JSON.stringify(failed.body)).not.toContain(dns.address);
    } finally {
      await dns.close();
    }
  });

  it('refuses a --dns value that is not a server address', async () => {
    const result = await runCli(['serve', '--db', join(temp.make(), 'x.db'), '--dns', 'resolver.example.com']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--dns: "resolver.example.com" is not a DNS server address');
  });
});
