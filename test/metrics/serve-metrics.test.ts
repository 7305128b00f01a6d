/** `seclookup serve --metrics` and `--metrics-port` as a real process: counters move with the traffic, never a key or an input in the text. */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { createTempDirs, runCli } from '../cli/harness.js';
import { running, startServe } from '../cli/serve-process.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { sample } from './scrape.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const temp = createTempDirs();
let db: string;
let dns: DnsTestServer;
let keys: Map<string, { secret: string; public: string }>;

beforeAll(async () => {
  db = join(temp.make(), 'metrics.db');
  dns = await startDnsServer({
    zone: { 'example.com': [{ type: 'TXT', data: 'v=spf1 -all' }], '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }] },
  });
});
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(async () => {
  await dns?.close();
  temp.cleanup();
});

const lookupUa = (baseUrl: string, key?: string) =>
  fetch(`${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

describe('seclookup serve --metrics', () => {
  it('serves GET /metrics on the API port without a key: requests by product, route and status, latency, meter, caches, DNS calls', async () => {
    const { serve, baseUrl } = await startServe(db, { args: ['--metrics', '--dns', dns.address] });
    keys = await serve.waitFor(() => serve.starterKeys().size === PRODUCT_IDS.length && serve.starterKeys());
    // Its own stderr line, which may arrive in a later chunk than the one the keys came in.
    await serve.waitFor(() => serve.stderr.includes(`metrics at ${baseUrl}/metrics`));
    const key = keys.get('useragent')!.secret;

    for (let i = 0; i < 5; i++) expect((await lookupUa(baseUrl, key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await lookupUa(baseUrl)).status).toBe(401);
    expect((await lookupUa(baseUrl, 'sk_live_notakey')).status).toBe(401);
    dns.resetCounts();
    const auth = keys.get('emailauth')!.secret;
    for (let i = 0; i < 2; i++)
      expect((await fetch(`${baseUrl}/v1/emailauth/lookup?domain=example.com`, { headers: { authorization: `Bearer ${auth}` } })).status).toBe(200);

    const response = await fetch(`${baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await response.text();
    const route = '/v1/useragent/lookup';
    expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route, status: '200' })).toBe(5);
    expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route, status: '401' })).toBe(3);
    expect(sample(text, 'seclookup_http_request_duration_seconds_count', { product: 'useragent', route })).toBe(8);
    expect(sample(text, 'seclookup_http_request_duration_seconds_bucket', { product: 'useragent', route, le: '+Inf' })).toBe(8);
    expect(sample(text, 'seclookup_http_requests_total', { product: 'emailauth', route: '/v1/emailauth/lookup', status: '200' })).toBe(2);
    // /metrics itself is not an API request
    expect(text).not.toContain('route="/metrics"');
    expect(sample(text, 'seclookup_cache_misses_total', { product: 'useragent' })).toBe(1);
    expect(sample(text, 'seclookup_cache_hits_total', { product: 'useragent' })).toBe(4);
    expect(sample(text, 'seclookup_cache_misses_total', { product: 'emailauth' })).toBe(1);
    expect(sample(text, 'seclookup_cache_hits_total', { product: 'emailauth' })).toBe(1);
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'dns' })).toBe(dns.total());
    expect(dns.total()).toBeGreaterThan(0);
    expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'dns' })).toBe(0);
    // every key lookup and consume went through the instrumented store
    expect(sample(text, 'seclookup_meter_store_duration_seconds_count', { op: 'consume' })).toBeGreaterThanOrEqual(7);
    expect(sample(text, 'seclookup_meter_store_errors_total', { op: 'consume' })).toBe(0);
    expect(sample(text, 'seclookup_dataset_age_seconds', { product: 'webhookip', dataset: 'ranges.json' })).toBeGreaterThanOrEqual(0);
    // Nothing dropped: the log's destination takes every line.
    expect(sample(text, 'seclookup_log_lines_dropped_total')).toBe(0);
    // Nor a connection: this machine's open-files limit leaves room for every one.
    expect(sample(text, 'seclookup_connections_dropped_total', { server: 'api' })).toBe(0);
    expect(text).toMatch(/^process_cpu_seconds_total /m);

    for (const [, pair] of keys) {
      expect(text).not.toContain(pair.secret);
      expect(text).not.toContain(pair.public);
    }
    for (const input of ['Firefox', 'Mozilla', 'example.com', 'notakey', '127.0.0.1', dns.address]) expect(text).not.toContain(input);
    await serve.stop('SIGKILL');
  });

  it('--metrics-port N serves them on a port of their own (and /metrics on the API port is 404); so does $SECLOOKUP_METRICS_PORT', async () => {
    for (const how of [{ args: ['--metrics-port', '0'] }, { env: { SECLOOKUP_METRICS_PORT: '0' } }]) {
      const { serve, baseUrl } = await startServe(db, how);
      const metricsUrl = (await serve.waitFor(() => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(serve.stderr)))[1];
      expect(metricsUrl).not.toContain(baseUrl);
      expect((await fetch(`${baseUrl}/metrics`)).status).toBe(404);
      expect((await lookupUa(baseUrl, keys.get('useragent')!.secret)).status).toBe(200);
      const text = await (await fetch(metricsUrl)).text();
      expect(sample(text, 'seclookup_http_requests_total', { product: 'none', route: 'unmatched', status: '404' })).toBe(1);
      expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route: '/v1/useragent/lookup', status: '200' })).toBe(1);
      expect((await fetch(metricsUrl.replace('/metrics', '/v1/useragent/status'))).status).toBe(404);
      // The first stops cleanly, its metrics port closed too (else the process would never exit).
      if (how.args) expect((await serve.stop('SIGTERM')).code).toBe(0);
      else await serve.stop('SIGKILL');
    }
  });

  it('--metrics-port: clients that send their request a byte at a time cannot hold the port; they are cut and scrapes answered again', async () => {
    const { serve } = await startServe(db, { args: ['--metrics-port', '0'] });
    const port = Number((await serve.waitFor(() => /metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(serve.stderr)))[1]);
    // Eight, the connections the port holds (METRICS_PORT_CONNECTIONS), each sending a header byte a second.
    const slow = Array.from({ length: 8 }, () => connect(port, '127.0.0.1').on('error', () => {}));
    const answers = slow.map((socket) => {
      let text = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
      return new Promise<string>((done) => socket.on('close', () => done(text)));
    });
    await Promise.all(slow.map((socket) => once(socket, 'connect')));
    for (const socket of slow) socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const drip = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed) socket.write('a');
    }, 1_000);
    try {
      // serve closes each with a 408 once METRICS_SERVER_OPTIONS.headersTimeout has passed.
      for (const text of await Promise.all(answers)) expect(text).toMatch(/^HTTP\/1\.1 408 /);
      const scrape = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toContain('seclookup_http_requests_total');
    } finally {
      clearInterval(drip);
      for (const socket of slow) socket.destroy();
    }
  }, 30_000);

  it('is off by default, and on from the config file or $SECLOOKUP_METRICS', async () => {
    const off = await startServe(db);
    expect((await fetch(`${off.baseUrl}/metrics`)).status).toBe(404);
    expect(off.serve.stderr).not.toContain('metrics at');
    await off.serve.stop('SIGKILL');

    const config = join(temp.make(), 'seclookup.json');
    writeFileSync(config, JSON.stringify({ metrics: true }));
    for (const how of [{ args: ['--config', config] }, { env: { SECLOOKUP_METRICS: '1' } }]) {
      const { serve, baseUrl } = await startServe(db, how);
      expect((await fetch(`${baseUrl}/metrics`)).status).toBe(200);
      await serve.stop('SIGKILL');
    }
  });

  it.each<[string[], Record<string, string>, string]>([
    [['--metrics-port', 'abc'], {}, '--metrics-port'],
    [['--metrics-port', '70000'], {}, '--metrics-port'],
    [['--port', '8099', '--metrics-port', '8099'], {}, '--metrics-port must differ from --port'],
    [[], { SECLOOKUP_METRICS: 'maybe' }, '$SECLOOKUP_METRICS must be on or off'],
  ])('refuses a bad value: %j %j', async (args, env, message) => {
    const result = await runCli(['serve', '--db', join(temp.make(), 'x.db'), ...(args.includes('--port') ? [] : ['--port', '0']), ...args], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
