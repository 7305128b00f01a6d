import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMeter } from '../../src/metering/sqlite.js';
import { PRODUCT_IDS, PRODUCTS } from '../../src/products/catalog.js';
import { CLI_PATH, cliEnv, createTempDirs, runCli, runCliJson } from './harness.js';

const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const FIREFOX_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** A `seclookup serve` child process with its output collected line by line. */
class ServeProcess {
  readonly stdoutLines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stdoutRest = '';

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.stdoutRest + chunk).split('\n');
      this.stdoutRest = parts.pop()!;
      this.stdoutLines.push(...parts);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  static async start(db: string): Promise<{ serve: ServeProcess; baseUrl: string }> {
    const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', db], { env: cliEnv(), cwd: tmpdir() });
    const serve = new ServeProcess(child);
    running.add(serve);
    const match = await serve.waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serve.stderr));
    return { serve, baseUrl: match[1] };
  }

  /** Poll until `probe` returns something truthy; fail with the output so far after 10 s. */
  async waitFor<T>(probe: () => T | null | undefined | false, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out; stdout:\n${this.stdoutLines.join('\n')}\nstderr:\n${this.stderr}`);
      if (this.child.exitCode !== null) throw new Error(`serve exited ${this.child.exitCode}; stderr:\n${this.stderr}`);
      await sleep(20);
    }
  }

  /** The JSON request-log lines printed so far. */
  logLines(): Record<string, unknown>[] {
    return this.stdoutLines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Product -> keys, from the one-time starter table. */
  starterKeys(): Map<string, { secret: string; public: string }> {
    const keys = new Map<string, { secret: string; public: string }>();
    for (const line of this.stdoutLines) {
      const row = /^(\w+)\s+(\w+_sec_[\w-]+)\s+(\w+_pub_[\w-]+)$/.exec(line);
      if (row) keys.set(row[1], { secret: row[2], public: row[3] });
    }
    return keys;
  }

  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.kill(signal);
    const result = await this.exited;
    running.delete(this);
    return result;
  }
}

const running = new Set<ServeProcess>();
const temp = createTempDirs();
let db: string;

beforeAll(() => {
  db = join(temp.make(), 'serve.db');
});
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
function postInTwoParts(url: string, key: string, body: string, between: () => Promise<void>): Promise<{ status: number; connection: string | undefined; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) as Record<string, unknown> }));
    });
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

  it('prints a starter key pair for every product once, serves lookups and logs each request as JSON', async () => {
    const { serve, baseUrl } = await ServeProcess.start(db);
    // The table is on stdout, the listening line on stderr: wait for the pipes to catch up.
    starter = await serve.waitFor(() => serve.starterKeys().size === PRODUCT_IDS.length && serve.starterKeys());
    expect([...starter.keys()].sort()).toEqual([...PRODUCT_IDS].sort());
    for (const [product, keys] of starter) {
      expect(keys.secret.startsWith(PRODUCTS[product as keyof typeof PRODUCTS].secretPrefix)).toBe(true);
      expect(keys.public.startsWith(PRODUCTS[product as keyof typeof PRODUCTS].publicPrefix)).toBe(true);
    }
    expect(serve.stdoutLines.join('\n')).toContain('shown only this once');
    expect(starter.get('scamrisk')!.public).toMatch(/^sa_pub_/);

    const health = await getJson(`${baseUrl}/healthz`);
    expect(health).toMatchObject({ status: 200, body: { success: true } });

    const uaKey = starter.get('useragent')!.secret;
    const lookup = await getJson(`${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(CHROME_UA)}`, uaKey);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toMatchObject({ success: true, browser: { name: 'Chrome' }, is_bot: false });

    const logged = await serve.waitFor(() => serve.logLines().find((line) => line.request_id === lookup.requestId));
    expect(logged).toMatchObject({ method: 'GET', route: '/v1/useragent/lookup', product: 'useragent', status: 200, error_code: null, client_ip: '127.0.0.1' });
    expect(typeof logged.latency_ms).toBe('number');
    expect(typeof logged.time).toBe('string');
    const logLine = serve.stdoutLines.find((line) => line.includes(lookup.requestId!))!;
    expect(logLine).not.toContain(uaKey);
    expect(logLine).not.toContain('Chrome');
    expect(serve.stderr).not.toMatch(/_sec_/);

    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('on a restart prints no keys, only how many there are', async () => {
    const { serve, baseUrl } = await ServeProcess.start(db);
    // Anything printed before listening is on stdout ahead of this request's log line.
    const health = await getJson(`${baseUrl}/healthz`);
    await serve.waitFor(() => serve.logLines().some((line) => line.request_id === health.requestId));
    expect(serve.starterKeys().size).toBe(0);
    expect(serve.stdoutLines.join('\n')).not.toMatch(/_sec_|_pub_/);
    expect(serve.stderr).toContain(`30 keys in ${db} (30 active); use \`seclookup keys list\``);
    expect(await serve.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('honours keys created and revoked with the CLI while it runs', async () => {
    const { serve, baseUrl } = await ServeProcess.start(db);
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

  it('on SIGTERM finishes the in-flight request, closes the database and exits 0', async () => {
    const { serve, baseUrl } = await ServeProcess.start(db);
    // Leave an idle keep-alive connection open: it must not hold up the shutdown.
    const warmup = await getJson(`${baseUrl}/v1/useragent/status`, starter.get('useragent')!.secret);
    expect(warmup.status).toBe(200);

    const response = await postInTwoParts(`${baseUrl}/v1/useragent/lookup`, starter.get('useragent')!.secret, JSON.stringify({ ua: FIREFOX_UA }), async () => {
      serve.child.kill('SIGTERM');
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

