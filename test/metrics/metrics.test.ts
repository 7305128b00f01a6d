/** seclookup/metrics in process: the meter wrapper, the lookup observer (caches, upstream calls against loopback servers), the request metrics. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/create-api.js';
import type { RequestLogEvent } from '../../src/api/types.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpGet } from '../../src/lib/http-get.js';
import { createLookup } from '../../src/lookup.js';
import { handshake } from '../../src/products/tls/handshake.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { createMetrics } from '../../src/metrics/index.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { startWhoisServer, whoisAnswer, type WhoisTestServer } from '../servers/whois-server.js';
import { rdapAnswer, startRdapServer } from '../servers/rdap-server.js';
import { mintCertificate, startTlsServer } from '../servers/tls-server.js';
import { sample } from './scrape.js';

let dns: DnsTestServer;
let whois: WhoisTestServer;

beforeAll(async () => {
  dns = await startDnsServer({
    zone: { 'example.com': [{ type: 'TXT', data: 'v=spf1 -all' }], '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }] },
    behaviours: { 'broken-example.com': 'servfail' },
  });
  whois = await startWhoisServer({ answer: (query) => (query === 'amazon.co.uk' ? whoisAnswer.sample('amazon.co.uk') : whoisAnswer.close()) });
});
afterAll(async () => {
  await Promise.all([dns?.close(), whois?.close()]);
});

describe('instrumentMeter', () => {
  it('times every store call by operation, counts failures (sync throws and rejections), and keeps sync answers sync', async () => {
    const metrics = createMetrics();
    const memory = createMemoryMeter();
    const failing: Meter = Object.assign(Object.create(memory) as Meter, {
      resolveKey: () => {
        throw new Error('store down');
      },
      listKeys: () => Promise.reject(new Error('store down')),
    });
    const meter = metrics.instrumentMeter(failing);
    expect(() => meter.resolveKey('a'.repeat(64))).toThrow('store down');
    await expect(meter.listKeys()).rejects.toThrow('store down');
    await meter.getSetting('x');
    const plain = metrics.instrumentMeter(memory);
    const answer = plain.resolveKey('b'.repeat(64));
    expect(answer).toBeNull(); // the memory meter answers synchronously, and still does wrapped

    const text = await metrics.metrics();
    expect(sample(text, 'seclookup_meter_store_errors_total', { op: 'resolveKey' })).toBe(1);
    expect(sample(text, 'seclookup_meter_store_errors_total', { op: 'listKeys' })).toBe(1);
    expect(sample(text, 'seclookup_meter_store_errors_total', { op: 'getSetting' })).toBe(0);
    expect(sample(text, 'seclookup_meter_store_duration_seconds_count', { op: 'resolveKey' })).toBe(2);
    expect(sample(text, 'seclookup_meter_store_duration_seconds_count', { op: 'getSetting' })).toBe(1);
    expect(sample(text, 'seclookup_meter_store_duration_seconds_bucket', { op: 'getSetting', le: '+Inf' })).toBe(1);
  });

  it('through the API: a store that fails is a 500 and an error counted on the operation', async () => {
    const metrics = createMetrics();
    const memory = createMemoryMeter();
    const { secretKey } = await issueKeys(memory, { product: 'useragent' });
    let down = false;
    const flaky: Meter = Object.assign(Object.create(memory) as Meter, {
      consume: (request: Parameters<Meter['consume']>[0]) => (down ? Promise.reject(new Error('store down')) : memory.consume(request)),
    });
    const api = createApi({ lookup: createLookup(), meter: metrics.instrumentMeter(flaky), onResponse: metrics.onResponse });
    const get = () =>
      api.handle({ method: 'GET', url: '/v1/useragent/lookup?ua=curl%2F8.0', headers: { authorization: `Bearer ${secretKey}` }, remoteAddress: '127.0.0.1' });
    expect((await get()).status).toBe(200);
    down = true;
    expect((await get()).status).toBe(500);
    const text = await metrics.metrics();
    expect(sample(text, 'seclookup_meter_store_errors_total', { op: 'consume' })).toBe(1);
    expect(sample(text, 'seclookup_meter_store_duration_seconds_count', { op: 'consume' })).toBe(2);
    expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route: '/v1/useragent/lookup', status: '500' })).toBe(1);
    expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route: '/v1/useragent/lookup', status: '200' })).toBe(1);
    expect(text).not.toContain(secretKey);
    expect(text).not.toContain('curl');
  });
});

describe('the lookup observer', () => {
  it('counts cache hits and misses per product', async () => {
    const metrics = createMetrics();
    const lookup = createLookup({ observer: metrics.observer });
    await lookup.useragent('curl/8.0');
    await lookup.useragent('curl/8.0');
    await lookup.useragent('curl/8.0');
    await lookup.useragent('Wget/1.21');
    const text = await metrics.metrics();
    expect(sample(text, 'seclookup_cache_misses_total', { product: 'useragent' })).toBe(2);
    expect(sample(text, 'seclookup_cache_hits_total', { product: 'useragent' })).toBe(2);
    expect(text).not.toContain('curl');
    await lookup.close();
  });

  it('counts DNS and WHOIS calls, their failures and latency by kind, and stops at close()', async () => {
    const metrics = createMetrics();
    const lookup = createLookup({
      observer: metrics.observer,
      dns: { servers: [dns.address], attempts: 1 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { uk: null, pl: null }, whoisServers: { uk: whois.address, pl: whois.address }, cacheSize: 0 } as never,
    });
    dns.resetCounts();
    await lookup.emailauth('example.com');
    const asked = dns.total();
    await expect(lookup.emailauth('broken-example.com')).rejects.toThrow(/DNS|SERVFAIL|lookup/i);
    await lookup.whois('amazon.co.uk');
    await expect(lookup.whois('example.pl')).rejects.toThrow(); // the server closes without answering

    const text = await metrics.metrics();
    expect(asked).toBeGreaterThan(0);
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'dns' })).toBeGreaterThanOrEqual(asked + 1);
    expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'dns' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'whois' })).toBe(whois.queries.length);
    expect(sample(text, 'seclookup_upstream_duration_seconds_count', { kind: 'whois' })).toBe(whois.queries.length);
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'tls' })).toBe(0);
    for (const secret of ['example.com', 'broken-example.com', 'amazon', 'example.pl', '127.0.0.1']) expect(text).not.toContain(secret);

    await lookup.close();
    const before = sample(await metrics.metrics(), 'seclookup_upstream_requests_total', { kind: 'dns' });
    const other = createLookup({ dns: { servers: [dns.address], attempts: 1 } });
    await other.emailauth('example.org').catch(() => undefined);
    expect(sample(await metrics.metrics(), 'seclookup_upstream_requests_total', { kind: 'dns' })).toBe(before);
  });
});

describe('upstream kinds', () => {
  it('counts a whois lookup over RDAP as rdap and a tls lookup as one tls handshake, both ok', async () => {
    const [rdap, tls] = await Promise.all([
      startRdapServer({ 'example.com': rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json') }),
      startTlsServer({ certificate: mintCertificate({ subject: 'metrics.tls.test', dnsNames: ['metrics.tls.test'] }) }),
    ]);
    dns.setZone({ 'rdap.registry.test': [{ type: 'A', address: '127.0.0.1' }], 'metrics.tls.test': [{ type: 'A', address: '127.0.0.1' }] });
    const metrics = createMetrics();
    const lookup = createLookup({
      observer: metrics.observer,
      dns: { servers: [dns.address] },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { com: `http://rdap.registry.test:${new URL(rdap.url).port}/rdap/` } },
    });
    try {
      expect(await lookup.whois('example.com')).toMatchObject({ domain: 'example.com', source: 'rdap' });
      expect(await lookup.tls('metrics.tls.test', { port: tls.port })).toMatchObject({ host: 'metrics.tls.test', port: tls.port });
      const text = await metrics.metrics();
      expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'rdap' })).toBe(1);
      expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'rdap' })).toBe(0);
      expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'tls' })).toBe(1);
      expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'tls' })).toBe(0);
      expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'http' })).toBe(0);
      expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'dns' })).toBeGreaterThanOrEqual(2);
      for (const secret of ['example.com', 'metrics.tls.test', 'rdap.registry.test']) expect(text).not.toContain(secret);
    } finally {
      await lookup.close();
      await Promise.all([rdap.close(), tls.close()]);
    }
  });

  it('counts HTTP fetches and TLS handshakes, an HTTP answer of any status as ok and a refused connection as a failure', async () => {
    const metrics = createMetrics();
    const lookup = createLookup({ observer: metrics.observer });
    const server = createServer((_req, res) => res.writeHead(404).end('no'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect((await httpGet(`http://127.0.0.1:${port}/x`)).status).toBe(404);
      // a plain HTTP server does not speak TLS: a failed handshake
      await expect(handshake({ address: '127.0.0.1', port }, 2_000)).rejects.toThrow();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    await expect(httpGet(`http://127.0.0.1:${port}/x`)).rejects.toThrow(/ECONNREFUSED/);
    const text = await metrics.metrics();
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'http' })).toBe(2);
    expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'http' })).toBe(1);
    expect(sample(text, 'seclookup_upstream_requests_total', { kind: 'tls' })).toBe(1);
    expect(sample(text, 'seclookup_upstream_failures_total', { kind: 'tls' })).toBe(1);
    expect(sample(text, 'seclookup_upstream_duration_seconds_count', { kind: 'http' })).toBe(2);
    await lookup.close();
  });
});

describe('createMetrics', () => {
  it('keeps its metrics in a private registry: two sets count apart', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.onResponse({
      time: '',
      request_id: 'r',
      method: 'GET',
      route: '/healthz',
      product: null,
      status: 200,
      error_code: null,
      latency_ms: 0.2,
      client_ip: '10.1.2.3',
    });
    expect(sample(await a.metrics(), 'seclookup_http_requests_total', { product: 'none', route: '/healthz', status: '200' })).toBe(1);
    expect(sample(await b.metrics(), 'seclookup_http_requests_total', { product: 'none', route: '/healthz', status: '200' })).toBe(0);
    expect(await a.metrics()).not.toContain('10.1.2.3');
  });

  it("counts again after prom-client's registry.resetMetrics(): requests, latency and meter calls start over from 0", async () => {
    const metrics = createMetrics();
    const meter = metrics.instrumentMeter(createMemoryMeter());
    const event: RequestLogEvent = {
      time: '',
      request_id: 'r',
      method: 'GET',
      route: '/v1/useragent/lookup',
      product: 'useragent',
      status: 200,
      error_code: null,
      latency_ms: 3,
      client_ip: '10.1.2.3',
    };
    metrics.onResponse(event);
    await meter.getSetting('x');
    metrics.registry.resetMetrics();
    const zeroed = await metrics.metrics();
    expect(sample(zeroed, 'seclookup_http_requests_total', { product: 'useragent', route: '/v1/useragent/lookup', status: '200' })).toBe(0);
    expect(sample(zeroed, 'seclookup_http_request_duration_seconds_sum', { product: 'useragent', route: '/v1/useragent/lookup' })).toBe(0);

    metrics.onResponse(event);
    metrics.onResponse(event);
    await meter.getSetting('x');
    await meter.getSetting('x');
    const text = await metrics.metrics();
    expect(sample(text, 'seclookup_http_requests_total', { product: 'useragent', route: '/v1/useragent/lookup', status: '200' })).toBe(2);
    expect(sample(text, 'seclookup_http_request_duration_seconds_count', { product: 'useragent', route: '/v1/useragent/lookup' })).toBe(2);
    expect(sample(text, 'seclookup_http_request_duration_seconds_sum', { product: 'useragent', route: '/v1/useragent/lookup' })).toBeCloseTo(0.006);
    expect(sample(text, 'seclookup_http_request_duration_seconds_bucket', { product: 'useragent', route: '/v1/useragent/lookup', le: '+Inf' })).toBe(2);
    expect(sample(text, 'seclookup_meter_store_duration_seconds_count', { op: 'getSetting' })).toBe(2);
  });
});
