/**
 * One HTTP conformance suite, run over real loopback sockets against every adapter variant:
 * SPEC's routes, envelope, headers, error codes and limits must come out the same everywhere.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../src/api/create-api.js';
import type { Api, ApiOptions, RequestLogEvent } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { issueKeys, type IssuedKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { PRODUCT_IDS, type ProductId } from '../../src/products/catalog.js';
import { checkResponse } from '../openapi/check-response.js';
import { ADAPTERS, BODY_LIMIT, HELLO, type AdapterVariant, type Host, type RunningServer } from './adapters.js';

// ---------------------------------------------------------------------------------------------
// Inputs and expectations taken from SPEC.md
// ---------------------------------------------------------------------------------------------

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CHROME_WINDOWS_RESULT = {
  user_agent: CHROME_WINDOWS,
  browser: { name: 'Chrome', version: '131.0.0.0' },
  os: { name: 'Windows', version: '10' },
  device_type: 'desktop',
  is_bot: false,
  engine: 'Blink',
};
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const GITHUB = { id: 'github', name: 'GitHub' };

/** SPEC "Status route examples": starter limits per product (scamrisk is not listed; ours is 120 / 10,000). */
function starterLimits(product: ProductId): { rate: number; quota: number } {
  if (product === 'tls' || product === 'domainrep') return { rate: 60, quota: 5_000 };
  if (product === 'pwbreach' || product === 'captcha') return { rate: 60, quota: 10_000 };
  return { rate: 120, quota: 10_000 };
}
const WITH_DATABASE_RECORDS: ReadonlySet<ProductId> = new Set(['emailval', 'riskscore', 'emailauth', 'geoip', 'asn', 'dnsbl', 'whois']);
const SCAMRISK_TYPES = ['email', 'phone', 'ip', 'username', 'address', 'crypto', 'domain', 'url'];

/** Plans the limit tests subscribe to. */
const PLANS = {
  rate3: { slug: 'conformance-rate3', product: '*', rateLimitPerMinute: 3, monthlyQuota: 100 },
  quota2: { slug: 'conformance-quota2', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 2 },
  quota30: { slug: 'conformance-quota30', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 30 },
} as const;

/**
 * Every API in this suite runs on a clock stopped at load time, so each key's requests fall in
 * one rate window and a limit test never straddles a minute edge. It is the current UTC month.
 */
const FROZEN_NOW = Date.now();
const CURRENT_PERIOD = new Date(FROZEN_NOW).toISOString().slice(0, 7);
const NOW_SECONDS = Math.floor(FROZEN_NOW / 1000);
const RATE_WINDOW_END = (Math.floor(FROZEN_NOW / 60_000) + 1) * 60;

const IPV6_LOOPBACK = await canListenOn('::1');

// ---------------------------------------------------------------------------------------------
// HTTP helpers
// ---------------------------------------------------------------------------------------------

// Response bodies are checked field by field, so they are left loosely typed.
type Json = Record<string, any>;

interface Reply {
  status: number;
  headers: Headers;
  body: Json;
}

interface CallOptions {
  key?: string;
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  body?: string | Blob | ReadableStream<Uint8Array>;
}

async function call(url: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  // `duplex` (needed for stream bodies) is missing from the DOM RequestInit type.
  const init: RequestInit & { duplex: 'half' } = {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    duplex: 'half',
    signal: AbortSignal.timeout(10_000),
  };
  const response = await fetch(url, init);
  const text = await response.text();
  checkResponse({
    method: init.method!,
    path: new URL(url).pathname.replace(/^\/sec\//, '/') /* the fastify variant's mount */,
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: text,
    headers: Object.fromEntries(response.headers),
  });
  return { status: response.status, headers: response.headers, body: parseJson(text) };
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return { unparsed: text };
  }
}

/** A body sent with `Transfer-Encoding: chunked` (no Content-Length), in 500-byte pieces. */
function chunkedBody(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, (offset += 500)));
    },
  });
}

function expectJsonEnvelope(reply: Reply): void {
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  expect(reply.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(reply.headers.get('x-request-id')).toBe(reply.body.request_id);
}

function expectSuccess(reply: Reply): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(reply.body.success).toBe(true);
  expectJsonEnvelope(reply);
}

function expectError(reply: Reply, status: number, errorCode: string): void {
  expect({ status: reply.status, error_code: reply.body.error_code }).toEqual({ status, error_code: errorCode });
  expect(reply.body.success).toBe(false);
  expect(typeof reply.body.error).toBe('string');
  expect(reply.body.error.length).toBeGreaterThan(0);
  expectJsonEnvelope(reply);
}

function expectLimitHeaders(reply: Reply, expected: { rateLimit: number; rateRemaining: number; quotaLimit: number; quotaRemaining: number }): void {
  const header = (name: string) => reply.headers.get(name);
  expect({
    'x-ratelimit-limit': header('x-ratelimit-limit'),
    'x-ratelimit-remaining': header('x-ratelimit-remaining'),
    'x-ratelimit-reset': header('x-ratelimit-reset'),
    'x-quota-limit': header('x-quota-limit'),
    'x-quota-remaining': header('x-quota-remaining'),
    'x-quota-period': header('x-quota-period'),
  }).toEqual({
    'x-ratelimit-limit': String(expected.rateLimit),
    'x-ratelimit-remaining': String(expected.rateRemaining),
    'x-ratelimit-reset': String(RATE_WINDOW_END),
    'x-quota-limit': String(expected.quotaLimit),
    'x-quota-remaining': String(expected.quotaRemaining),
    'x-quota-period': CURRENT_PERIOD,
  });
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}

function canListenOn(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, host, () => probe.close(() => resolve(true)));
  });
}

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

/** One API behind one adapter on a real socket, with its meter for issuing keys. */
interface Stack {
  api: Api;
  meter: Meter;
  server: RunningServer;
  url(path: string): string;
  keys(product: ProductId, options?: { plan?: string; ipAllow?: string[] }): Promise<IssuedKeys>;
}

type StackOptions = Partial<ApiOptions> & { host?: Host };

/** A captcha site key (allowed on example.com) as the key pair the other products' tests use. */
async function siteKeyPair(meter: Meter, options: { plan?: string; ipAllow?: string[] }): Promise<IssuedKeys> {
  const created = await createSiteKey(meter, { domains: ['example.com'], ...options });
  return { product: 'captcha', plan: created.plan, subscriptionId: created.subscriptionId, keys: [], secretKey: created.secretKey, publicKey: created.siteKey };
}

async function startStack(adapter: AdapterVariant, options: StackOptions = {}): Promise<Stack> {
  const { host, ...apiOptions } = options;
  const meter = apiOptions.meter ?? createMemoryMeter();
  await Promise.all(Object.values(PLANS).map((plan) => meter.setPlan(plan)));
  const api = createApi({
    lookup: createLookup(),
    bodyLimit: BODY_LIMIT,
    now: () => FROZEN_NOW,
    secret: 'conformance-operator-secret-0123456789abcdef',
    ...apiOptions,
    meter,
  });
  const server = await adapter.start(api, host);
  return stackOn(api, meter, server);
}

function stackOn(api: Api, meter: Meter, server: RunningServer): Stack {
  return {
    api,
    meter,
    server,
    url: (path) => server.baseUrl + path,
    keys: (product, options = {}) => (product === 'captcha' ? siteKeyPair(meter, options) : issueKeys(meter, { product, ...options })),
  };
}

/** A real memory meter whose store "goes down" on consume; every other call reaches it. */
function meterFailingOnConsume(): Meter {
  const failing = async () => {
    throw new Error('meter store unreachable');
  };
  return new Proxy(createMemoryMeter(), {
    get: (target, name, receiver) => (name === 'consume' ? failing : Reflect.get(target, name, receiver)),
  });
}

const lookupPath = (ua: string) => `/v1/useragent/lookup?ua=${encodeURIComponent(ua)}`;

/** The useragent request forms of SPEC, each carrying `ua`. */
const USERAGENT_FORMS: readonly { form: string; request(ua: string): [string, CallOptions] }[] = [
  { form: 'GET ?ua=', request: (ua) => [lookupPath(ua), {}] },
  { form: 'GET ?user_agent=', request: (ua) => [`/v1/useragent/lookup?user_agent=${encodeURIComponent(ua)}`, {}] },
  { form: 'GET /lookup/{ua}', request: (ua) => [`/v1/useragent/lookup/${encodeURIComponent(ua)}`, {}] },
  { form: 'POST { ua }', request: (ua) => ['/v1/useragent/lookup', { json: { ua } }] },
  { form: 'POST { user_agent }', request: (ua) => ['/v1/useragent/lookup', { json: { user_agent: ua } }] },
];

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

describe.each(ADAPTERS)('$name adapter', (adapter) => {
  const servers: RunningServer[] = [];
  const meters: Meter[] = [];
  const sqliteDir = mkdtempSync(join(tmpdir(), 'seclookup-conformance-'));
  const logged: RequestLogEvent[] = [];
  /** Default options: bodyLimit 1024, memory meter, no trusted proxy. */
  let main: Stack;
  let mainOnIpv6: Stack | null = null;
  let sqlite: Stack;
  let trustingProxy: Stack;
  let withLog: Stack;
  let meterDownDeny: Stack;
  let meterDownAllow: Stack;

  beforeAll(async () => {
    const start = async (options: StackOptions = {}) => {
      const stack = await startStack(adapter, options);
      servers.push(stack.server);
      meters.push(stack.meter);
      return stack;
    };
    main = await start();
    sqlite = await start({ meter: createSqliteMeter(join(sqliteDir, 'meter.db')) });
    trustingProxy = await start({ trustProxy: ['127.0.0.1/32'] });
    withLog = await start({ onResponse: (event) => logged.push(event) });
    meterDownDeny = await start({ meter: meterFailingOnConsume() });
    meterDownAllow = await start({ meter: meterFailingOnConsume(), onMeterError: 'allow' });
    if (IPV6_LOOPBACK) {
      // The same API and meter as `main`, reached over IPv6 loopback.
      const server = await adapter.start(main.api, '::1');
      servers.push(server);
      mainOnIpv6 = stackOn(main.api, main.meter, server);
    }
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(meters.map((meter) => meter.close()));
    rmSync(sqliteDir, { recursive: true, force: true });
  });

  describe('routing', () => {
    it('answers GET /healthz without a key', async () => {
      const reply = await call(main.url('/healthz'));
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ success: true, status: 'ok' });
      expect(reply.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    });

    it('leaves paths outside the API to the application', async () => {
      const reply = await call(main.server.origin + '/hello');
      if (adapter.userRoute) expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: HELLO });
      // The bare Node listener owns the whole server, so it answers with its own 404.
      else expectError(reply, 404, 'not_found');
    });

    it('leaves broken percent-encoding outside the API to the application', async () => {
      const reply = await call(main.server.origin + '/hello%E0%A4%A');
      if (!adapter.userRoute) return expectError(reply, 404, 'not_found'); // the bare listener owns every path
      // The framework's own answer (Fastify: 400 FST_ERR_BAD_URL, Express: 404), never our envelope.
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.body.error_code).toBeUndefined();
    });

    it('answers HEAD with the status and headers of GET, Content-Length the length of its body, and no body', async () => {
      const { secretKey } = await main.keys('webhookip');
      for (const path of ['/healthz', '/v1/webhookip/lookup/140.82.112.5', '/v1/webhookip/nope', '/widget/api.js']) {
        const headers = { authorization: `Bearer ${secretKey}` };
        const get = await fetch(main.url(path), { headers });
        const body = await get.text();
        const head = await fetch(main.url(path), { method: 'HEAD', headers });
        expect({ path, status: head.status, length: head.headers.get('content-length'), body: await head.text() }).toEqual({
          path,
          status: get.status,
          length: String(Buffer.byteLength(body)),
          body: '',
        });
      }
    });

    it.each([
      ['an unknown route of a product', '/v1/useragent/nope'],
      ['an unknown route of a service product', '/v1/captcha/lookup'],
      ['an unknown product', '/v1/nope/status'],
    ])('answers 404 not_found for %s', async (_name, path) => {
      // The route is matched before the key is looked at, so any valid key will do.
      const { secretKey } = await main.keys('useragent');
      expectError(await call(main.url(path), { key: secretKey }), 404, 'not_found');
    });

    it.each([
      ['DELETE', '/v1/useragent/lookup', 'GET, POST'],
      ['DELETE', `/v1/webhookip/lookup/140.82.112.5`, 'GET'],
      ['POST', '/v1/useragent/status', 'GET'],
      ['POST', '/healthz', 'GET, HEAD'],
      ['DELETE', '/healthz', 'GET, HEAD'],
    ])('answers 405 method_not_allowed with Allow to %s %s', async (method, path, allow) => {
      const { secretKey } = await main.keys(path.includes('webhookip') ? 'webhookip' : 'useragent');
      const reply = await call(main.url(path), { key: secretKey, method });
      expectError(reply, 405, 'method_not_allowed');
      expect(reply.headers.get('allow')).toBe(allow);
    });
  });

  describe('useragent lookups', () => {
    it.each(USERAGENT_FORMS)('parses a Chrome on Windows UA sent as $form', async ({ request }) => {
      const { secretKey } = await main.keys('useragent');
      const [path, options] = request(CHROME_WINDOWS);
      const reply = await call(main.url(path), { key: secretKey, ...options });
      expectSuccess(reply);
      expect(reply.body).toMatchObject(CHROME_WINDOWS_RESULT);
      expect(typeof reply.body.cached).toBe('boolean');
      expect(reply.body).not.toHaveProperty('fetched_at');
    });

    it.each([
      [
        'an iPhone',
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
        { browser: { name: 'Mobile Safari' }, os: { name: 'iOS' }, device_type: 'mobile', is_bot: false },
      ],
      ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', { is_bot: true }],
    ])('classifies %s', async (_name, ua, expected) => {
      const { secretKey } = await main.keys('useragent');
      const reply = await call(main.url(lookupPath(ua)), { key: secretKey });
      expectSuccess(reply);
      expect(reply.body).toMatchObject(expected);
    });

    it('answers cached false for a new UA, then true for the same UA', async () => {
      const { secretKey } = await main.keys('useragent');
      const first = await call(main.url(lookupPath(FIREFOX_LINUX)), { key: secretKey });
      const second = await call(main.url(`/v1/useragent/lookup/${encodeURIComponent(FIREFOX_LINUX)}`), { key: secretKey });
      expect([first.body.cached, second.body.cached]).toEqual([false, true]);
      expect(second.body).toMatchObject({ browser: { name: 'Firefox', version: '128.0' }, os: { name: 'Ubuntu' }, engine: 'Gecko' });
    });

    it('gives every request its own request_id, echoed in X-Request-Id', async () => {
      const { secretKey } = await main.keys('useragent');
      const replies = await Promise.all(Array.from({ length: 5 }, () => call(main.url(lookupPath(CHROME_WINDOWS)), { key: secretKey })));
      replies.forEach(expectSuccess);
      expect(new Set(replies.map((r) => r.body.request_id)).size).toBe(5);
    });

    it.each([
      ['missing', '/v1/useragent/lookup', {}],
      ['empty (?ua=)', '/v1/useragent/lookup?ua=', {}],
      ['empty in a POST body', '/v1/useragent/lookup', { json: { ua: '' } }],
      ['missing from a POST body', '/v1/useragent/lookup', { json: {} }],
    ])('answers 400 invalid_user_agent when the UA is %s', async (_name, path, options: CallOptions) => {
      const { secretKey } = await main.keys('useragent');
      expectError(await call(main.url(path), { key: secretKey, ...options }), 400, 'invalid_user_agent');
    });
  });

  describe('batch (beyond SPEC)', () => {
    it('answers POST /v1/useragent/batch with one envelope per input, in order, billing the valid ones', async () => {
      const { secretKey } = await main.keys('useragent');
      const reply = await call(main.url('/v1/useragent/batch'), { key: secretKey, json: { inputs: [CHROME_WINDOWS, '', CHROME_WINDOWS] } });
      expectSuccess(reply);
      const results = reply.body.results as Record<string, unknown>[];
      expect(results).toHaveLength(3);
      expect(results[0]).toMatchObject({ success: true, ...CHROME_WINDOWS_RESULT });
      expect(results[1]).toEqual({ success: false, error: expect.any(String), error_code: 'invalid_user_agent' });
      expect(results[2]).toEqual(results[0]);
      expect(reply.headers.get('x-quota-remaining')).toBe('9998');
      expect(reply.headers.get('x-ratelimit-remaining')).toBe('117');
      const get = await call(main.url('/v1/useragent/batch'), { key: secretKey });
      expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    });
  });

  describe('webhookip lookups', () => {
    it.each([
      ['GET ?ip= (IPv4)', '/v1/webhookip/lookup?ip=140.82.112.5', '140.82.112.5'],
      ['GET /lookup/{ip} (IPv4)', '/v1/webhookip/lookup/140.82.112.5', '140.82.112.5'],
      ['GET /lookup/{ip} (URL-encoded IPv6)', '/v1/webhookip/lookup/2606%3A50c0%3A%3A1', '2606:50c0::1'],
      ['GET ?ip=&provider=github', '/v1/webhookip/lookup?ip=140.82.112.5&provider=github', '140.82.112.5'],
    ])('matches a GitHub hook address sent as %s', async (_form, path, ip) => {
      const { secretKey } = await main.keys('webhookip');
      const reply = await call(main.url(path), { key: secretKey });
      expectSuccess(reply);
      expect(reply.body).toMatchObject({ ip, matched: true, providers: [GITHUB] });
      expect(typeof reply.body.cached).toBe('boolean');
    });

    it('does not match a GitHub address when matching is restricted to another provider', async () => {
      const { secretKey } = await main.keys('webhookip');
      const reply = await call(main.url('/v1/webhookip/lookup?ip=140.82.112.5&provider=stripe'), { key: secretKey });
      expectSuccess(reply);
      expect(reply.body).toMatchObject({ ip: '140.82.112.5', matched: false, providers: [] });
    });

    it.each([
      ['a missing ip', '/v1/webhookip/lookup', 400, 'invalid_ip'],
      ['a malformed ip', '/v1/webhookip/lookup?ip=999.1.1.1', 400, 'invalid_ip'],
      ['a malformed path ip', '/v1/webhookip/lookup/not-an-ip', 400, 'invalid_ip'],
      ['broken percent-encoding in the path', '/v1/webhookip/lookup/%E0%A4%A', 400, 'invalid_ip'],
      ['an unknown provider', '/v1/webhookip/lookup?ip=140.82.112.5&provider=nope', 400, 'invalid_provider'],
      ['a private IPv4', '/v1/webhookip/lookup?ip=10.0.0.1', 422, 'ip_not_routable'],
      ['the IPv6 loopback', '/v1/webhookip/lookup/%3A%3A1', 422, 'ip_not_routable'],
    ])('answers %s (%s) with %i %s, without billing it', async (_name, path, status, code) => {
      const { secretKey } = await main.keys('webhookip');
      const reply = await call(main.url(path), { key: secretKey });
      expectError(reply, status, code);
      expectLimitHeaders(reply, { rateLimit: 120, rateRemaining: 119, quotaLimit: 10_000, quotaRemaining: 10_000 });
      const statusAfter = await call(main.url('/v1/webhookip/status'), { key: secretKey });
      expect(statusAfter.body.quota_remaining).toBe(10_000);
    });
  });

  describe('pwbreach lookups and the range route', () => {
    // SHA-1 of 123456, in the bundled sample.
    const HASH = '7C4A8D09CA3762AF61E59520943DC26494F8941B';

    it.each([
      ['POST JSON password', '/v1/pwbreach/lookup', { json: { password: '123456' } }],
      ['POST form password', '/v1/pwbreach/lookup', { body: 'password=123456', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['GET ?sha1=', `/v1/pwbreach/lookup?sha1=${HASH.toLowerCase()}`, {}],
    ])('answers %s with breached and a count', async (_form, path, options: CallOptions) => {
      const { secretKey } = await main.keys('pwbreach');
      const reply = await call(main.url(path), { key: secretKey, ...options });
      expectSuccess(reply);
      expect(reply.body).toMatchObject({ breached: true, cached: false });
      expect(reply.body.count).toBeGreaterThan(0);
    });

    it('refuses a password in the URL with 400 invalid_password', async () => {
      const { secretKey } = await main.keys('pwbreach');
      expectError(await call(main.url('/v1/pwbreach/lookup?password=123456'), { key: secretKey }), 400, 'invalid_password');
    });

    it('answers the range route in the range API text format, and HEAD with its headers only', async () => {
      const { secretKey } = await main.keys('pwbreach');
      const response = await fetch(main.url(`/v1/pwbreach/range/${HASH.slice(0, 5)}`), {
        headers: { authorization: `Bearer ${secretKey}`, 'add-padding': 'true' },
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
      expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      const lines = text.split('\r\n');
      expect(lines.length).toBeGreaterThanOrEqual(800);
      expect(lines.filter((line) => !line.endsWith(':0'))).toEqual([expect.stringMatching(new RegExp(`^${HASH.slice(5)}:[1-9]\\d*$`))]);
      const head = await fetch(main.url(`/v1/pwbreach/range/${HASH.slice(0, 5)}`), { method: 'HEAD', headers: { authorization: `Bearer ${secretKey}` } });
      expect({ status: head.status, type: head.headers.get('content-type'), body: await head.text() }).toEqual({
        status: 200,
        type: 'text/plain; charset=utf-8',
        body: '',
      });
      expectError(await call(main.url('/v1/pwbreach/range/XYZ'), { key: secretKey }), 400, 'invalid_request');
    });
  });

  describe('the captcha widget and routes', () => {
    it('serves /widget/api.js with an ETag (304 on a match), the version in the URLs it loads, and the frame with its CSP', async () => {
      const api = await call(main.url('/widget/api.js'));
      expect(api.status, JSON.stringify(api.body).slice(0, 300)).toBe(200);
      expect(api.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const text = String(api.body.unparsed);
      expect(text).not.toContain('__WIDGET_VERSION__');
      const version = /VERSION = '([0-9a-f]{12})'/.exec(text)?.[1];
      expect(version).toMatch(/^[0-9a-f]{12}$/);
      const etag = api.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{24}"$/);
      expect(api.headers.get('cache-control')).toBe('public, max-age=300');
      // If-None-Match compares weakly (a compressing proxy makes the tag weak), over a list, or `*`;
      // a 304 has no body and no Content-Length (RFC 9110 8.6).
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const unchanged = await call(main.url('/widget/api.js'), { headers: { 'if-none-match': ifNoneMatch } });
        expect([ifNoneMatch, unchanged.status, unchanged.headers.get('content-length')]).toEqual([ifNoneMatch, 304, null]);
        expect(unchanged.headers.get('etag')).toBe(etag);
      }
      expect((await call(main.url('/widget/api.js'), { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
      // Embedded by other sites, cross-origin-isolated ones and <script crossorigin> included.
      expect(api.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(api.headers.get('access-control-allow-origin')).toBe('*');
      const frame = await call(main.url(`/widget/frame.html?v=${version}`));
      expect(frame.status).toBe(200);
      expect(frame.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(frame.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(frame.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
      expect(frame.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // The frame asks for its script and style at this version too: after an upgrade a browser
      // never pairs the new frame with a cached old frame.js (and both are cached for good).
      const html = await (await fetch(main.url(`/widget/frame.html?v=${version}`))).text();
      expect([html.includes(`src="frame.js?v=${version}"`), html.includes(`href="widget.css?v=${version}"`)]).toEqual([true, true]);
      for (const file of ['frame.js', 'widget.css'])
        expect((await fetch(main.url(`/widget/${file}?v=${version}`))).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Mounted in an Express app, a path below /widget/ that is no widget file is the app's (here Express's own 404 page).
      if (adapter.name.startsWith('express')) {
        const missing = await fetch(main.url('/widget/nope.js'));
        expect([missing.status, (await missing.text()).includes('error_code')]).toEqual([404, false]);
      } else expectError(await call(main.url('/widget/nope.js')), 404, 'not_found');
      expectError(await call(main.url('/widget/api.js'), { method: 'POST', body: 'x' }), 405, 'method_not_allowed');
    });

    it('answers a challenge and a CORS preflight on every adapter', async () => {
      const { publicKey } = await main.keys('captcha');
      const challenge = await call(main.url(`/v1/captcha/challenge?sitekey=${publicKey}&hostname=www.example.com`));
      expectSuccess(challenge);
      expect(challenge.body.puzzle_type).toBe('pow');
      const preflight = await fetch(main.url(`/v1/captcha/verify?sitekey=${publicKey}`), {
        method: 'OPTIONS',
        headers: { origin: 'https://www.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://www.example.com');
      expect(preflight.headers.get('content-length')).toBeNull();
    });
  });

  describe('status routes', () => {
    it.each(['public', 'secret'] as const)('reports every SPEC field with the %s key', async (kind) => {
      const keys = await main.keys('useragent');
      const key = kind === 'public' ? keys.publicKey : keys.secretKey;
      const reply = await call(main.url('/v1/useragent/status'), { key });
      expectSuccess(reply);
      expect(reply.body).toEqual({
        success: true,
        request_id: reply.body.request_id,
        status: 'active',
        product: 'useragent',
        plan: 'starter',
        rate_limit_per_minute: 120,
        monthly_quota: 10_000,
        quota_unlimited: false,
        quota_remaining: 10_000,
        quota_period: CURRENT_PERIOD,
      });
      expectLimitHeaders(reply, { rateLimit: 120, rateRemaining: 119, quotaLimit: 10_000, quotaRemaining: 10_000 });
    });

    it('counts quota_remaining down with each lookup, and not with status calls', async () => {
      const { secretKey, publicKey } = await main.keys('webhookip');
      const remaining = async () => (await call(main.url('/v1/webhookip/status'), { key: publicKey })).body.quota_remaining;
      expect(await remaining()).toBe(10_000);
      for (let i = 0; i < 3; i++) expectSuccess(await call(main.url('/v1/webhookip/lookup?ip=140.82.112.5'), { key: secretKey }));
      expect(await remaining()).toBe(9_997);
      expect(await remaining()).toBe(9_997);
    });

    it.each([...PRODUCT_IDS])("answers the %s status route with that product's key", async (product) => {
      const { publicKey } = await main.keys(product);
      const reply = await call(main.url(`/v1/${product}/status`), { key: publicKey });
      expectSuccess(reply);
      const { rate, quota } = starterLimits(product);
      expect(reply.body).toMatchObject({
        status: 'active',
        product,
        plan: 'starter',
        rate_limit_per_minute: rate,
        monthly_quota: quota,
        quota_unlimited: false,
        quota_remaining: quota,
        quota_period: CURRENT_PERIOD,
      });
      if (WITH_DATABASE_RECORDS.has(product)) expect(Number.isSafeInteger(reply.body.database_records)).toBe(true);
      else expect(reply.body).not.toHaveProperty('database_records');
      if (product === 'scamrisk') expect(reply.body.supported_types).toEqual(SCAMRISK_TYPES);
      else expect(reply.body).not.toHaveProperty('supported_types');
    });

    it('takes the captcha site key as ?sitekey= and reports the captcha fields', async () => {
      const { publicKey } = await main.keys('captcha');
      expect(publicKey).toMatch(/^tf_pub_/);
      const reply = await call(main.url(`/v1/captcha/status?sitekey=${encodeURIComponent(publicKey)}`));
      expectSuccess(reply);
      expect(reply.body).toMatchObject({
        product: 'captcha',
        plan: 'starter',
        rate_limit_per_minute: 60,
        monthly_quota: 10_000,
        quota_remaining: 10_000,
        quota_period: CURRENT_PERIOD,
      });
      expect(typeof reply.body.domains_configured).toBe('boolean');
      expect(Number.isSafeInteger(reply.body.domain_count)).toBe(true);
      expect(reply.body.ip_restrictions).toBe(false);
    });
  });

  describe('authentication', () => {
    const cases: readonly { name: string; code: string; headers(keys: { ua: IssuedKeys; other: IssuedKeys; revoked: IssuedKeys }): Record<string, string> }[] =
      [
        { name: 'no Authorization header', code: 'missing_credentials', headers: () => ({}) },
        {
          name: 'a non-Bearer scheme',
          code: 'missing_credentials',
          headers: ({ ua }) => ({ authorization: `Basic ${Buffer.from(`${ua.secretKey}:`).toString('base64')}` }),
        },
        { name: 'an unknown key', code: 'invalid_api_key', headers: () => ({ authorization: 'Bearer ua_sec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }) },
        { name: 'a revoked key', code: 'invalid_api_key', headers: ({ revoked }) => ({ authorization: `Bearer ${revoked.secretKey}` }) },
        { name: "another product's secret key", code: 'invalid_api_key', headers: ({ other }) => ({ authorization: `Bearer ${other.secretKey}` }) },
        { name: 'the public key', code: 'wrong_key_type', headers: ({ ua }) => ({ authorization: `Bearer ${ua.publicKey}` }) },
      ];

    it.each(cases)('answers a lookup with $name with 401 $code', async ({ code, headers }) => {
      const keys = { ua: await main.keys('useragent'), other: await main.keys('webhookip'), revoked: await main.keys('useragent') };
      const revokedId = keys.revoked.keys.find((k) => k.kind === 'secret')!.id;
      expect(await main.meter.revokeKey(revokedId)).toMatchObject({ status: 'revoked' });
      const reply = await call(main.url(lookupPath(CHROME_WINDOWS)), { headers: headers(keys) });
      expectError(reply, 401, code);
    });

    it('refuses a key revoked after it was already in use', async () => {
      const keys = await main.keys('useragent');
      expectSuccess(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: keys.secretKey }));
      await main.meter.revokeKey(keys.keys.find((k) => k.kind === 'secret')!.id);
      expectError(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: keys.secretKey }), 401, 'invalid_api_key');
    });

    it('answers 403 ip_not_allowed to a caller outside the key allowlist, on lookup and status', async () => {
      const keys = await main.keys('useragent', { ipAllow: ['203.0.113.0/24'] });
      expectError(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: keys.secretKey }), 403, 'ip_not_allowed');
      expectError(await call(main.url('/v1/useragent/status'), { key: keys.publicKey }), 403, 'ip_not_allowed');
    });

    it('serves a caller inside the key allowlist', async () => {
      const { secretKey } = await main.keys('useragent', { ipAllow: ['127.0.0.1/32'] });
      expectSuccess(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: secretKey }));
    });

    it.skipIf(!IPV6_LOOPBACK)('sees an IPv6 loopback caller as ::1 when matching the allowlist', async () => {
      const ipv6Only = await main.keys('useragent', { ipAllow: ['::1/128'] });
      const ipv4Only = await main.keys('useragent', { ipAllow: ['127.0.0.1/32'] });
      expectSuccess(await call(mainOnIpv6!.url(lookupPath(CHROME_WINDOWS)), { key: ipv6Only.secretKey }));
      expectError(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: ipv6Only.secretKey }), 403, 'ip_not_allowed');
      expectError(await call(mainOnIpv6!.url(lookupPath(CHROME_WINDOWS)), { key: ipv4Only.secretKey }), 403, 'ip_not_allowed');
    });
  });

  describe('trusted proxies', () => {
    const viaProxy = (forwardedFor: string) => ({ 'x-forwarded-for': forwardedFor });

    it('takes the caller from X-Forwarded-For when the peer is a trusted proxy', async () => {
      const { secretKey } = await trustingProxy.keys('useragent', { ipAllow: ['203.0.113.0/24'] });
      expectSuccess(await call(trustingProxy.url(lookupPath(CHROME_WINDOWS)), { key: secretKey, headers: viaProxy('203.0.113.9') }));
    });

    it('believes only the right-most untrusted hop of X-Forwarded-For', async () => {
      const { secretKey } = await trustingProxy.keys('useragent', { ipAllow: ['203.0.113.0/24'] });
      const reply = await call(trustingProxy.url(lookupPath(CHROME_WINDOWS)), { key: secretKey, headers: viaProxy('203.0.113.9, 198.51.100.7') });
      expectError(reply, 403, 'ip_not_allowed');
    });

    it('ignores X-Forwarded-For when no proxy is trusted', async () => {
      const { secretKey } = await main.keys('useragent', { ipAllow: ['203.0.113.0/24'] });
      const reply = await call(main.url(lookupPath(CHROME_WINDOWS)), { key: secretKey, headers: viaProxy('203.0.113.9') });
      expectError(reply, 403, 'ip_not_allowed');
    });
  });

  describe('rate limits and quotas', () => {
    it('sends X-RateLimit-* and X-Quota-* on authenticated responses, counting the rate per key', async () => {
      const { secretKey, publicKey } = await main.keys('useragent');
      const lookup = await call(main.url(lookupPath(CHROME_WINDOWS)), { key: secretKey });
      expectLimitHeaders(lookup, { rateLimit: 120, rateRemaining: 119, quotaLimit: 10_000, quotaRemaining: 9_999 });
      const statusBySecret = await call(main.url('/v1/useragent/status'), { key: secretKey });
      expectLimitHeaders(statusBySecret, { rateLimit: 120, rateRemaining: 118, quotaLimit: 10_000, quotaRemaining: 9_999 });
      // The public key has its own per-minute window; the quota belongs to the subscription.
      const statusByPublic = await call(main.url('/v1/useragent/status'), { key: publicKey });
      expectLimitHeaders(statusByPublic, { rateLimit: 120, rateRemaining: 119, quotaLimit: 10_000, quotaRemaining: 9_999 });
    });

    it('answers 429 rate_limit_exceeded with Retry-After past the per-minute limit, without billing it', async () => {
      const keys = await main.keys('useragent', { plan: PLANS.rate3.slug });
      for (let i = 0; i < 3; i++) expectSuccess(await call(main.url(lookupPath(CHROME_WINDOWS)), { key: keys.secretKey }));
      const limited = await call(main.url(lookupPath(CHROME_WINDOWS)), { key: keys.secretKey });
      expectError(limited, 429, 'rate_limit_exceeded');
      expect(limited.headers.get('retry-after')).toBe(String(RATE_WINDOW_END - NOW_SECONDS));
      expectLimitHeaders(limited, { rateLimit: 3, rateRemaining: 0, quotaLimit: 100, quotaRemaining: 97 });
      expect(await main.meter.quota(keys.subscriptionId, 100, FROZEN_NOW)).toMatchObject({ remaining: 97 });
    });

    it('answers 429 quota_exceeded once the monthly quota is used, without billing it', async () => {
      const keys = await main.keys('webhookip', { plan: PLANS.quota2.slug });
      const lookup = () => call(main.url('/v1/webhookip/lookup?ip=140.82.112.5'), { key: keys.secretKey });
      expectSuccess(await lookup());
      expectSuccess(await lookup());
      const limited = await lookup();
      expectError(limited, 429, 'quota_exceeded');
      const nextMonth = new Date(FROZEN_NOW);
      const periodEnd = Date.UTC(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1) / 1000;
      expect(limited.headers.get('retry-after')).toBe(String(periodEnd - NOW_SECONDS));
      expect(limited.headers.get('x-quota-remaining')).toBe('0');
      const status = await call(main.url('/v1/webhookip/status'), { key: keys.publicKey });
      expect(status.body).toMatchObject({ monthly_quota: 2, quota_remaining: 0, quota_unlimited: false });
      const usage = (await main.meter.usage(CURRENT_PERIOD)).filter((row) => row.subscriptionId === keys.subscriptionId);
      expect(usage.reduce((sum, row) => sum + row.lookups, 0)).toBe(2);
    });

    describe.each([
      ['memory', () => main],
      ['sqlite', () => sqlite],
    ] as const)('under concurrency (%s meter)', (_meter, stackOf) => {
      it('admits exactly the per-minute limit out of 200 simultaneous lookups', async () => {
        const stack = stackOf();
        const { secretKey } = await stack.keys('useragent');
        const replies = await Promise.all(Array.from({ length: 200 }, () => call(stack.url(lookupPath(CHROME_WINDOWS)), { key: secretKey })));
        expect(countBy(replies, (r) => `${r.status} ${r.body.error_code ?? 'ok'}`)).toEqual({ '200 ok': 120, '429 rate_limit_exceeded': 80 });
      });

      it('admits exactly the monthly quota out of 50 simultaneous lookups', async () => {
        const stack = stackOf();
        const keys = await stack.keys('webhookip', { plan: PLANS.quota30.slug });
        const replies = await Promise.all(Array.from({ length: 50 }, () => call(stack.url('/v1/webhookip/lookup?ip=140.82.112.5'), { key: keys.secretKey })));
        expect(countBy(replies, (r) => `${r.status} ${r.body.error_code ?? 'ok'}`)).toEqual({ '200 ok': 30, '429 quota_exceeded': 20 });
        const status = await call(stack.url('/v1/webhookip/status'), { key: keys.publicKey });
        expect(status.body).toMatchObject({ monthly_quota: 30, quota_remaining: 0 });
      });
    });
  });

  describe('request bodies', () => {
    /** A JSON body of 5,000 bytes, well over the 1,024-byte limit. */
    const oversized = JSON.stringify({ ua: CHROME_WINDOWS.padEnd(5_000 - '{"ua":""}'.length) });

    it.each([
      ['with Content-Length', () => oversized],
      ['chunked', () => chunkedBody(oversized)],
    ])('answers 413 payload_too_large to a body over the limit sent %s', async (_name, body) => {
      expect(oversized.length).toBe(5_000);
      const { secretKey } = await main.keys('useragent');
      const reply = await call(main.url('/v1/useragent/lookup'), { key: secretKey, body: body(), headers: { 'content-type': 'application/json' } });
      expectError(reply, 413, 'payload_too_large');
    });

    it('reads a JSON body sent without any Content-Type', async () => {
      const { secretKey } = await main.keys('useragent');
      // A Blob without a type makes fetch send no Content-Type at all (a string would be text/plain).
      const reply = await call(main.url('/v1/useragent/lookup'), { key: secretKey, body: new Blob([JSON.stringify({ ua: CHROME_WINDOWS })]) });
      expectSuccess(reply);
      expect(reply.body).toMatchObject({ browser: { name: 'Chrome' }, device_type: 'desktop' });
    });

    it('answers 400 invalid_user_agent to broken percent-encoding in the path form', async () => {
      const { secretKey } = await main.keys('useragent');
      expectError(await call(main.url('/v1/useragent/lookup/Mozilla%E0%A4%A'), { key: secretKey }), 400, 'invalid_user_agent');
    });

    it('answers 400 invalid_json to malformed JSON', async () => {
      const { secretKey } = await main.keys('useragent');
      const reply = await call(main.url('/v1/useragent/lookup'), {
        key: secretKey,
        body: '{"ua": "Mozilla/5.0',
        headers: { 'content-type': 'application/json' },
      });
      expectError(reply, 400, 'invalid_json');
    });

    it('answers 415 unsupported_media_type to a text/plain body', async () => {
      const { secretKey } = await main.keys('useragent');
      const reply = await call(main.url('/v1/useragent/lookup'), { key: secretKey, body: `ua=${CHROME_WINDOWS}`, headers: { 'content-type': 'text/plain' } });
      expectError(reply, 415, 'unsupported_media_type');
    });

    it('checks the key before reading the body', async () => {
      const reply = await call(main.url('/v1/useragent/lookup'), { body: '{not json', headers: { 'content-type': 'application/json' } });
      expectError(reply, 401, 'missing_credentials');
    });
  });

  describe('meter store failures', () => {
    it("answers 500 internal_error under onMeterError 'deny' (the default)", async () => {
      const { secretKey, publicKey } = await meterDownDeny.keys('useragent');
      expectError(await call(meterDownDeny.url(lookupPath(CHROME_WINDOWS)), { key: secretKey }), 500, 'internal_error');
      expectError(await call(meterDownDeny.url('/v1/useragent/status'), { key: publicKey }), 500, 'internal_error');
    });

    it("serves the lookup unmetered under onMeterError 'allow'", async () => {
      const { secretKey } = await meterDownAllow.keys('useragent');
      const reply = await call(meterDownAllow.url(lookupPath(CHROME_WINDOWS)), { key: secretKey });
      expectSuccess(reply);
      expect(reply.body).toMatchObject(CHROME_WINDOWS_RESULT);
    });
  });

  describe('request log', () => {
    it('logs one event per request, with the route pattern and never the key or the input', async () => {
      const { secretKey, publicKey } = await withLog.keys('useragent');
      const before = logged.length;
      const requests: { path: string; options: CallOptions; expected: Partial<RequestLogEvent> }[] = [
        { path: '/healthz', options: {}, expected: { method: 'GET', route: '/healthz', product: null, status: 200, error_code: null } },
        {
          path: lookupPath(SAFARI_MAC),
          options: { key: secretKey },
          expected: { method: 'GET', route: '/v1/useragent/lookup', product: 'useragent', status: 200, error_code: null },
        },
        {
          path: `/v1/useragent/lookup/${encodeURIComponent(SAFARI_MAC)}`,
          options: { key: secretKey },
          expected: { route: '/v1/useragent/lookup/:ua', status: 200 },
        },
        {
          path: '/v1/useragent/lookup',
          options: { key: secretKey, json: { ua: SAFARI_MAC } },
          expected: { method: 'POST', route: '/v1/useragent/lookup', status: 200 },
        },
        { path: '/v1/useragent/status', options: { key: publicKey }, expected: { route: '/v1/useragent/status', status: 200 } },
        { path: lookupPath(SAFARI_MAC), options: { key: publicKey }, expected: { status: 401, error_code: 'wrong_key_type' } },
        { path: '/v1/nope/status', options: {}, expected: { status: 404, error_code: 'not_found', product: null } },
      ];
      for (const { path, options, expected } of requests) {
        const reply = await call(withLog.url(path), options);
        const events = logged.filter((event) => event.request_id === reply.headers.get('x-request-id'));
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ ...expected, client_ip: '127.0.0.1' });
        expect(events[0].latency_ms).toBeGreaterThanOrEqual(0);
        expect(Number.isNaN(Date.parse(events[0].time))).toBe(false);
      }
      expect(logged.length - before).toBe(requests.length);
      const text = JSON.stringify(logged);
      for (const secret of [secretKey, publicKey, SAFARI_MAC, encodeURIComponent(SAFARI_MAC), 'Macintosh']) expect(text).not.toContain(secret);
    });

    // Fastify refuses these before its route runs unless the plugin hands them on. A method no
    // route takes is logged under route `unmatched`.
    it.each([
      {
        name: 'POST with Content-Type garbage and no key',
        method: 'POST',
        key: false,
        contentType: 'garbage',
        status: 401,
        code: 'missing_credentials',
        route: '/v1/useragent/lookup',
      },
      {
        name: 'POST with Content-Type garbage',
        method: 'POST',
        key: true,
        contentType: 'garbage',
        status: 415,
        code: 'unsupported_media_type',
        route: '/v1/useragent/lookup',
      },
      {
        name: 'QUERY without a Content-Type',
        method: 'QUERY',
        key: false,
        contentType: undefined,
        status: 405,
        code: 'method_not_allowed',
        route: 'unmatched',
      },
      // Fastify routes only the methods the app added (docs/mounting.md; test/adapters/mounted-in-an-app.test.ts).
      ...(adapter.name.startsWith('fastify')
        ? []
        : [{ name: 'PROPFIND', method: 'PROPFIND', key: false, contentType: undefined, status: 405, code: 'method_not_allowed', route: 'unmatched' }]),
    ])('answers $name in the envelope ($status $code) and logs it once', async ({ method, key, contentType, status, code, route }) => {
      const { secretKey } = await withLog.keys('useragent');
      const reply = await call(withLog.url('/v1/useragent/lookup'), {
        method,
        key: key ? secretKey : undefined,
        headers: contentType ? { 'content-type': contentType } : {},
        body: method === 'POST' ? JSON.stringify({ ua: SAFARI_MAC }) : undefined,
      });
      expectError(reply, status, code);
      if (status === 405) expect(reply.headers.get('allow')).toBe('GET, POST');
      const events = logged.filter((event) => event.request_id === reply.headers.get('x-request-id'));
      expect(events.map((event) => [event.method, event.route, event.status, event.error_code])).toEqual([[method, route, status, code]]);
    });
  });
});
