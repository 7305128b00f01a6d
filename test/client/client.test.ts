/**
 * `seclookup/client` against real servers, never a mock of the client:
 *
 * - a real `seclookup serve` (the built CLI, as an operator runs it) whose DNS, RDAP and TLS
 *   targets are loopback servers, so every product answers without the internet: each client
 *   method must give what the in-process `createLookup()` gives for the same arguments, errors
 *   arrive as the same LookupError with the service's request id, and quota_exceeded is final;
 * - the API on a loopback node server with a clock the test sets (`createApi({ now })`), so a
 *   rate-limit window ends a second after the client is refused: it waits Retry-After and succeeds;
 * - hostile loopback HTTP servers: 502 twice then 200 (retries with backoff), one that never
 *   answers (the deadline, also through a `fetch` that ignores the signal), one that always
 *   fails (abort during a backoff wait), a closed port, one that records what it is sent (bad
 *   arguments and bad options fail before anything is).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListener } from '../../adapters/node.js';
import { createClient, type RetryEvent, type SeclookupClient } from '../../src/client/index.js';
import { LookupError } from '../../src/errors.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import type { BuiltProductId } from '../../src/products/registry.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { createTempDirs, runCli, runCliJson } from '../cli/harness.js';
import { startServe, type ServeRun } from '../cli/serve-process.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { createLoopbackHttpServers } from '../servers/http-loopback.js';
import { closedPort, mintCertificate, startTlsServer, type TlsTestServer } from '../servers/tls-server.js';

const temp = createTempDirs();
let dns: DnsTestServer;
let rdap: RdapTestServer;
let tls: TlsTestServer;
let serve: ServeRun;
let baseUrl: string;
let db: string;
let keys: Record<string, string>;
let lookup: Lookup;
let client: SeclookupClient;

beforeAll(async () => {
  const dir = temp.make('seclookup-client-');
  db = join(dir, 'serve.db');
  [dns, rdap, tls] = await Promise.all([
    startDnsServer({
      zone: {
        'rdap.registry.test': [{ type: 'A', address: '127.0.0.1' }],
        'client.tls.test': [{ type: 'A', address: '127.0.0.1' }],
        'example.com': [
          { type: 'A', address: '203.0.113.10' },
          { type: 'MX', exchange: 'mail.example.com', priority: 10 },
          { type: 'TXT', data: 'v=spf1 -all' },
        ],
        'mail.example.com': [{ type: 'A', address: '203.0.113.25' }],
        '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
        'example.com.dbl.spamhaus.org': [{ type: 'A', address: '127.0.1.2' }],
      },
    }),
    startRdapServer({ 'example.com': rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json') }),
    startTlsServer({ certificate: mintCertificate({ subject: 'client.tls.test', dnsNames: ['client.tls.test'] }) }),
  ]);
  const rdapServers = { com: `http://rdap.registry.test:${new URL(rdap.url).port}/rdap/` };
  ({ serve, baseUrl } = await startServe(db, {
    args: ['--dns', dns.address, '--allow-private-targets', '127.0.0.0/8', '--whois-rdap-servers', `com=${rdapServers.com}`],
  }));
  // The starter key pairs serve prints on its first start, one per product.
  keys = Object.fromEntries([...serve.starterKeys()].map(([product, pair]) => [product, pair.secret]));
  lookup = createLookup({
    dns: { servers: [dns.address] },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: { rdapServers },
    scamrisk: { reports: join(dir, 'reports.db') },
  });
  client = createClient({ baseUrl, keys });
});

afterAll(async () => {
  await serve?.stop('SIGTERM');
  await Promise.all([dns?.close(), rdap?.close(), tls?.close(), lookup?.close()]);
  temp.cleanup();
});

/** One call per product, with inputs every product answers from the loopback servers and bundled data. */
/** Nothing reached serve since its `before`th log line: the next call's line is the only one after it. */
async function expectNothingSentSince(before: number): Promise<void> {
  const next = await client.detailed.geoip('8.8.8.8');
  await serve.waitFor(() => serve.requestLines().some((line) => line.request_id === next.requestId));
  expect(
    serve
      .requestLines()
      .slice(before)
      .map((line) => line.request_id),
  ).toEqual([next.requestId]);
}

const CALLS: { [Id in BuiltProductId]: () => Parameters<Lookup[Id]> } = {
  useragent: () => ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'],
  webhookip: () => ['140.82.112.5', { provider: 'github' }],
  geoip: () => ['8.8.8.8'],
  timezone: () => ['2001:4860:4860::8888'],
  emailauth: () => ['example.com'],
  dnsbl: () => ['8.8.8.8'],
  emailval: () => ['Someone+tag@Example.com'],
  tls: () => ['client.tls.test', { port: tls.port }],
  whois: () => ['www.example.com'],
  asn: () => ['1.1.1.1'],
  pwbreach: () => ['password'],
  scamrisk: () => [{ type: 'domain', value: 'example.com' }],
  domainrep: () => ['example.com'],
  riskscore: () => ['185.220.101.1'],
};

describe('against seclookup serve', () => {
  it.each(Object.keys(CALLS) as BuiltProductId[])('%s gives the in-process result', async (id) => {
    const call = (calls: SeclookupClient | Lookup) => (calls[id] as (...args: unknown[]) => Promise<object>)(...CALLS[id]());
    const [remote, local] = await Promise.all([call(client), call(lookup)]);
    if (id === 'scamrisk') {
      // The one field that differs: when each assessment was made.
      expect(Date.parse((remote as { generated_at: string }).generated_at.replace('+00:00', 'Z'))).toBeGreaterThan(Date.now() - 60_000);
      (remote as { generated_at: string }).generated_at = (local as { generated_at: string }).generated_at;
    }
    expect(remote).toEqual(local);
    expect(Object.keys(remote)).toEqual(Object.keys(JSON.parse(JSON.stringify(local)) as object));
  });

  it('detailed: cached, fetchedAt and the request id the service logged', async () => {
    const first = await client.detailed.geoip('9.9.9.9');
    const local = await lookup.detailed.geoip('9.9.9.9');
    expect(local.fetchedAt).toBeInstanceOf(Date);
    expect(first).toEqual({ result: local.result, cached: local.cached, fetchedAt: local.fetchedAt, requestId: expect.stringMatching(/^req_[0-9a-f]{32}$/) });
    await serve.waitFor(() => serve.requestLines().some((line) => line.request_id === first.requestId));

    const ua = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
    const miss = await client.detailed.useragent(ua);
    const hit = await client.detailed.useragent(ua);
    expect([miss.cached, hit.cached, hit.result]).toEqual([false, true, miss.result]);
    expect(hit).not.toHaveProperty('fetchedAt');
    expect(hit.requestId).not.toBe(miss.requestId);
  });

  it('throws the in-process LookupError, with the status and request id of the answer', async () => {
    for (const [remote, local] of [
      [() => client.emailauth('not a domain!'), () => lookup.emailauth('not a domain!')],
      [() => client.webhookip('10.0.0.1'), () => lookup.webhookip('10.0.0.1')],
      [() => client.webhookip('140.82.112.5', { provider: 'nope' }), () => lookup.webhookip('140.82.112.5', { provider: 'nope' })],
      [() => client.pwbreach({ sha1: 'xyz' }), () => lookup.pwbreach({ sha1: 'xyz' })],
      [() => client.scamrisk({ type: 'phone', value: 'x' }), () => lookup.scamrisk({ type: 'phone', value: 'x' })],
    ] as const) {
      const expected = (await (local as () => Promise<unknown>)().catch((error: unknown) => error)) as LookupError;
      const error = await (remote as () => Promise<unknown>)().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LookupError);
      expect(error).toMatchObject({ code: expected.code, status: expected.status, message: expected.message, requestId: expect.stringMatching(/^req_/) });
    }
    const error = (await client.emailauth('').catch((caught: unknown) => caught)) as LookupError;
    expect([error.code, error.status]).toEqual(['invalid_domain', 400]);
    await serve.waitFor(() => serve.requestLines().find((line) => line.request_id === error.requestId && line.status === 400));
  });

  it('arguments of another type fail as in-process, with no request; a long User-Agent or password as in-process too', async () => {
    const before = serve.requestLines().length;
    // [product, arguments, whether the message is the engine's too]
    const cases: [BuiltProductId, unknown[], boolean][] = [
      ['useragent', [10n], true],
      ['geoip', [Symbol('ip')], true],
      ['geoip', [['8.8.8.8']], true],
      ['webhookip', [{ toString: () => '140.82.112.5' }], true],
      ['webhookip', ['140.82.112.5', { provider: ['github'] }], true],
      ['tls', ['client.tls.test', { port: BigInt(tls.port) }], true],
      ['emailval', [42], true],
      ['whois', [new String('example.com')], true],
      ['pwbreach', [{ password: 10n }], true],
      ['pwbreach', ['x'.repeat(70_000)], true],
      ['scamrisk', ['8.8.8.8'], true],
      ['scamrisk', [{ type: 'ip', value: 10n }], false],
    ];
    for (const [id, args, sameMessage] of cases) {
      const expected = (await (lookup[id] as (...a: unknown[]) => Promise<unknown>)(...args).catch((error: unknown) => error)) as LookupError;
      expect(expected, `${id} in-process`).toBeInstanceOf(LookupError);
      const error = (await (client[id] as (...a: unknown[]) => Promise<unknown>)(...args).catch((caught: unknown) => caught)) as LookupError;
      expect(error, id).toBeInstanceOf(LookupError);
      expect(error, id).toMatchObject({ code: expected.code, status: expected.status });
      expect(error.requestId, id).toBeUndefined();
      if (sameMessage) expect(error.message, id).toBe(expected.message);
    }
    // The same in a batch: inputs must be strings, as the service's batch route says.
    await expect(client.batch.geoip([10n] as never)).rejects.toMatchObject({ name: 'LookupError', code: 'invalid_request', status: 400 });
    // Nothing was sent: the next line serve logs is the next call's.
    await expectNothingSentSince(before);

    // Over the service's 64 KiB body limit, but the engine reads 500 characters of it.
    for (const ua of [`Mozilla/5.0 ${'x'.repeat(70_000)}`, `${' '.repeat(70_000)}curl/8.5.0`]) {
      expect(await client.useragent(ua)).toEqual(await lookup.useragent(ua));
      const [item] = await client.batch.useragent([ua]);
      expect(item.success && item.result).toEqual(await lookup.useragent(ua));
    }
  });

  it('long inputs: refused by their length as in-process, with no request, or sent short for the in-process answer', async () => {
    const long = 'a'.repeat(20_000);
    const settle = (promise: Promise<unknown>) =>
      promise.then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
    const call = (calls: SeclookupClient | Lookup, id: BuiltProductId, args: unknown[]) => (calls[id] as (...a: unknown[]) => Promise<unknown>)(...args);
    // What serve logs from here on: after this call's line, the earlier tests' are all in.
    const mark = await client.detailed.geoip('8.8.8.8');
    const before = await serve.waitFor(() => serve.requestLines().findIndex((line) => line.request_id === mark.requestId) + 1);
    // Over a request line's 16 KiB or a body's 64 KiB (431, 413 if sent): the engines refuse them by their length first.
    const refused: [BuiltProductId, unknown[]][] = [
      ['geoip', [long]],
      ['asn', [' '.repeat(20_000)]],
      ['webhookip', [long, { provider: 'github' }]],
      ['whois', [`${long}.com`]],
      ['tls', [`${long}.com`]],
      ['pwbreach', [{ sha1: long }]],
    ];
    for (const [id, args] of refused) {
      const expected = (await call(lookup, id, args).catch((error: unknown) => error)) as LookupError;
      expect(expected, `${id} in-process`).toBeInstanceOf(LookupError);
      const error = (await call(client, id, args).catch((caught: unknown) => caught)) as LookupError;
      expect(error, id).toBeInstanceOf(LookupError);
      expect(error, id).toMatchObject({ code: expected.code, status: expected.status, message: expected.message });
      expect(error.requestId, id).toBeUndefined();
    }
    await expectNothingSentSince(before);

    // Read by the engine after other checks, or answered: sent as short as gives the same answer.
    const sent: [BuiltProductId, unknown[]][] = [
      ['emailval', [`${long}@example.com`]],
      ['geoip', [`${' '.repeat(20_000)}8.8.8.8`]],
      ['webhookip', ['140.82.112.5', { provider: long }]],
      ['webhookip', ['140.82.112.5', { provider: `${'github,'.repeat(3_000)}stripe` }]],
      ['scamrisk', [{ type: 'url', value: `https://example.com/${'a'.repeat(70_000)}` }]],
      ['scamrisk', [{ username: 'u'.repeat(70_000) }]],
    ];
    for (const [id, args] of sent) {
      const [remote, local] = await Promise.all([settle(call(client, id, args)), settle(call(lookup, id, args))]);
      if ('result' in local) expect(remote, id).toEqual(local);
      else {
        const expected = local.error as LookupError;
        const error = 'error' in remote ? remote.error : remote.result;
        expect(error, id).toBeInstanceOf(LookupError);
        expect(error, id).toMatchObject({
          code: expected.code,
          status: expected.status,
          message: expected.message,
          requestId: expect.stringMatching(/^req_/),
        });
      }
    }
  });

  it("a batch whose answer a proxy lost is not retried, so billed once; a single lookup's is, and billed twice", async () => {
    // A proxy in front of serve that loses an answer serve gave (and billed): the client sees a 502 page.
    let lose = true;
    const proxy = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const answer = await fetch(`${baseUrl}${request.url}`, {
        method: request.method,
        headers: { authorization: request.headers.authorization ?? '', 'content-type': 'application/json' },
        body: request.method === 'POST' ? body : undefined,
      });
      const text = await answer.text();
      if (lose) response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');
      else response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      lose = false;
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = createClient({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, keys, backoff: { baseMs: 1 } });
    const used = async (from: number, atLeast: number) => {
      let now = from;
      for (let waited = 0; from - now < atLeast && waited < 5_000; waited += 20) {
        now = (await client.status('useragent')).quota_remaining;
        if (from - now < atLeast) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return from - now;
    };
    try {
      const start = (await client.status('useragent')).quota_remaining;
      const inputs = Array.from({ length: 5 }, (_, i) => `lost-batch-agent/${i}`);
      await expect(proxied.batch.useragent(inputs)).rejects.toMatchObject({
        code: 'lookup_failed',
        status: 502,
        message: expect.stringMatching(/not retried: the service may have answered the batch, and billed it/),
      });
      expect(await used(start, 5)).toBe(5);
      lose = true;
      expect(await proxied.useragent('lost-single-agent/1')).toMatchObject({ is_bot: expect.any(Boolean) });
      expect(await used(start, 7)).toBe(7);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('auth errors are the service answer; a product without a key fails before any request', async () => {
    const wrong = createClient({ baseUrl, keys: () => keys.useragent });
    await expect(wrong.geoip('8.8.8.8')).rejects.toMatchObject({ code: 'invalid_api_key', status: 401, requestId: expect.stringMatching(/^req_/) });
    const none = createClient({ baseUrl, keys: { useragent: keys.useragent } });
    const before = serve.requestLines().length;
    const error = (await none.geoip('8.8.8.8').catch((caught: unknown) => caught)) as LookupError;
    expect(error).toBeInstanceOf(LookupError);
    expect([error.code, error.status, error.requestId]).toEqual(['missing_credentials', 401, undefined]);
    expect(serve.requestLines().length).toBe(before);
  });

  it('batch: one request, the in-process result or LookupError per input, in order', async () => {
    const inputs = ['example.com', 'not a domain!', 'example.com', 'EXAMPLE.com.'];
    const items = await client.batch.emailauth(inputs);
    const local = await Promise.all(
      inputs.map((input) =>
        lookup.emailauth(input).then(
          (result) => ({ result }),
          (error: LookupError) => ({ error }),
        ),
      ),
    );
    expect(items).toHaveLength(4);
    items.forEach((item, i) => {
      const expected = local[i];
      if ('result' in expected) {
        expect(item).toMatchObject({ success: true, cached: expect.any(Boolean), fetchedAt: expect.any(Date) });
        expect(item.success && item.result).toEqual(expected.result);
      } else {
        expect(item.success).toBe(false);
        if (item.success) return;
        expect(item.error).toBeInstanceOf(LookupError);
        expect(item.error).toMatchObject({
          code: expected.error.code,
          status: expected.error.status,
          message: expected.error.message,
          requestId: expect.stringMatching(/^req_/),
        });
      }
    });
    // fetchedAt as a Date on the products that carry it; sha1 hashes for pwbreach.
    const [geo] = await client.batch.geoip(['9.9.9.9']);
    expect(geo).toMatchObject({ success: true, result: { ip: '9.9.9.9' }, fetchedAt: expect.any(Date) });
    const hashes = await client.batch.pwbreach(['5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8', 'xyz']);
    expect(hashes.map((item) => (item.success ? item.result.breached : item.error.code))).toEqual([
      (await lookup.pwbreach('password')).breached,
      'invalid_password',
    ]);
    // A refused batch throws, as a refused call does.
    await expect(client.batch.geoip([])).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    // One request for the four inputs, logged once.
    const batches = () => serve.requestLines().filter((line) => line.route === '/v1/emailauth/batch');
    await serve.waitFor(() => batches().length > 0);
    expect(batches().map((line) => line.status)).toEqual([200]);
  });

  it("status: the key's plan and quota, with the product's own fields", async () => {
    const before = await client.status('emailval');
    expect(before).toMatchObject({
      status: 'active',
      product: 'emailval',
      plan: 'starter',
      rate_limit_per_minute: 120,
      quota_unlimited: false,
      quota_period: new Date().toISOString().slice(0, 7),
    });
    expect(before.database_records).toBeGreaterThan(1000);
    await client.emailval('someone@example.com');
    expect((await client.status('emailval')).quota_remaining).toBe(before.quota_remaining - 1);
    expect((await client.status('scamrisk')).supported_types).toEqual(['email', 'phone', 'ip', 'username', 'address', 'crypto', 'domain', 'url']);
    await expect(createClient({ baseUrl, keys: { geoip: keys.useragent } }).status('geoip')).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });
  });

  it('captcha: siteverify a token a page earned, once; usage counts the verification', async () => {
    const site = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example', '--json', '--db', db]);
    const challenge = (await (await fetch(`${baseUrl}/v1/captcha/challenge?sitekey=${site.site_key}&hostname=shop.example&puzzle_type=pow`)).json()) as {
      challenge: string;
      params: PowParams;
    };
    const verify = await fetch(`${baseUrl}/v1/captcha/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sitekey: site.site_key,
        hostname: 'shop.example',
        token: `${challenge.challenge}.${solvePow(challenge.params)}`,
        action: 'login',
      }),
    });
    const { proof } = (await verify.json()) as { proof: string };
    expect(proof).toEqual(expect.any(String));
    const captcha = createClient({ baseUrl, keys: { captcha: site.secret_key } }).captcha;
    await expect(captcha.siteverify(proof, { action: 'signup' })).rejects.toMatchObject({ code: 'action_mismatch', status: 400 });
    expect(await captcha.siteverify(proof, { action: 'login', remoteip: '203.0.113.9' })).toMatchObject({
      hostname: 'shop.example',
      action: 'login',
      'error-codes': [],
      mode: 'puzzle',
      risk_level: expect.stringMatching(/^(low|medium|high)$/),
    });
    const again = (await captcha.siteverify(proof).catch((caught: unknown) => caught)) as LookupError;
    expect(again).toMatchObject({
      code: 'token_already_used',
      status: 400,
      requestId: expect.stringMatching(/^req_/),
      fields: { 'error-codes': ['timeout-or-duplicate'] },
    });
    const usage = await captcha.usage();
    expect(usage).toMatchObject({ product: 'captcha', site_keys: 1, quota_used: 1 });
    await expect(createClient({ baseUrl, keys: { captcha: site.site_key } }).captcha.siteverify(proof)).rejects.toMatchObject({
      code: 'wrong_key_type',
      status: 401,
    });
  });

  it('captcha: a siteverify whose answer is lost is retried with the same idempotency key, and succeeds', async () => {
    const site = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example', '--json', '--db', db]);
    const challenge = (await (await fetch(`${baseUrl}/v1/captcha/challenge?sitekey=${site.site_key}&hostname=shop.example`)).json()) as {
      challenge: string;
      params: PowParams;
    };
    const verified = await fetch(`${baseUrl}/v1/captcha/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sitekey: site.site_key, hostname: 'shop.example', token: `${challenge.challenge}.${solvePow(challenge.params)}` }),
    });
    const { proof } = (await verified.json()) as { proof: string };
    // A proxy in front of serve that loses the first answer: serve verified (and used up) the
    // token, the client sees a 502. What serve was sent is kept to compare the two attempts.
    const sent: string[] = [];
    const proxy = createServer(async (request, response) => {
      const body = await new Promise<string>((resolve) => {
        let text = '';
        request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        request.on('end', () => resolve(text));
      });
      sent.push(body);
      const answer = await fetch(`${baseUrl}${request.url}`, { method: request.method, headers: { 'content-type': 'application/json' }, body });
      const text = await answer.text();
      if (sent.length === 1) response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      else response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const retries: RetryEvent[] = [];
      const captcha = createClient({ baseUrl: proxyUrl, keys: { captcha: site.secret_key }, backoff: { baseMs: 1 }, onRetry: (e) => retries.push(e) }).captcha;
      expect(await captcha.siteverify(proof)).toMatchObject({ hostname: 'shop.example', 'error-codes': [] });
      expect(retries.map((e) => e.error.status)).toEqual([502]);
      // Both attempts carried one key, a UUID the client made for this call.
      const [first, second] = sent.map((body) => JSON.parse(body) as { idempotency_key: string });
      expect(first.idempotency_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(second.idempotency_key).toBe(first.idempotency_key);
      // A new call is a new verification: the token is used.
      await expect(captcha.siteverify(proof)).rejects.toMatchObject({ code: 'token_already_used' });
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('quota_exceeded is not retried', async () => {
    expect((await runCli(['plans', 'set', 'client-q1', '--all-products', '--rate-limit', '1000', '--monthly-quota', '1', '--db', db])).code).toBe(0);
    const created = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'asn', '--plan', 'client-q1', '--json', '--db', db]);
    const retries: RetryEvent[] = [];
    const limited = createClient({ baseUrl, keys: { asn: created.secret_key }, onRetry: (event) => retries.push(event) });
    expect(await limited.asn('8.8.8.8')).toMatchObject({ asn: 15169 });
    const error = (await limited.asn('8.8.4.4').catch((caught: unknown) => caught)) as LookupError;
    expect(error).toBeInstanceOf(LookupError);
    expect(error).toMatchObject({ code: 'quota_exceeded', status: 429, requestId: expect.stringMatching(/^req_/) });
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(retries).toEqual([]);
    const mine = () => serve.requestLines().filter((line) => line.product === 'asn' && (line.status === 429 || line.request_id === error.requestId));
    await serve.waitFor(() => mine().length > 0);
    expect(mine().map((line) => line.request_id)).toEqual([error.requestId]);
  });
});

describe('rate limits, on an API with a clock the test sets', () => {
  let stack: ApiStack;
  let server: Server;
  let url: string;
  let offset = 0;

  beforeAll(async () => {
    stack = await createApiStack({ now: () => Date.now() + offset });
    server = createServer(createListener(stack.api));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Make the server's clock read `secondsIntoMinute` now. */
  function setClock(secondsIntoMinute: number): void {
    const real = Date.now();
    offset = Math.ceil(real / 60_000) * 60_000 + (secondsIntoMinute - 60) * 1000 - real;
  }

  it('waits Retry-After after rate_limit_exceeded and succeeds in the next window', async () => {
    const { secretKey } = await stack.keys('useragent', { plan: 'test-rate2' }); // 2 per minute
    const retries: RetryEvent[] = [];
    const limited = createClient({ baseUrl: url, keys: { useragent: secretKey }, onRetry: (event) => retries.push(event) });
    setClock(59); // the window ends in 1 s, and Retry-After says 1
    await limited.useragent('curl/8.5.0');
    await limited.useragent('curl/8.5.0');
    const started = Date.now();
    expect(await limited.useragent('Wget/1.21')).toMatchObject({ is_bot: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(retries).toEqual([{ product: 'useragent', attempt: 1, reason: 'rate_limit', delayMs: 1000, error: expect.any(LookupError) }]);
    expect(retries[0].error).toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfter: 1, requestId: expect.stringMatching(/^req_/) });
    expect(stack.logged.map((event) => event.status)).toEqual([200, 200, 429, 200]);
  });

  it('fails at once when Retry-After outlasts the deadline', async () => {
    const { secretKey } = await stack.keys('useragent', { plan: 'test-rate2' });
    const limited = createClient({ baseUrl: url, keys: { useragent: secretKey }, timeoutMs: 5_000 });
    setClock(20);
    await limited.useragent('curl/8.5.0');
    await limited.useragent('curl/8.5.0');
    const started = Date.now();
    await expect(limited.useragent('curl/8.5.0')).rejects.toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 40 });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('against hostile servers', () => {
  const loopback = createLoopbackHttpServers();
  const listen = loopback.listen;
  afterAll(() => loopback.close());

  const envelope = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fixture' });
    res.end(JSON.stringify(body));
  };

  it('sends GET ?param= or a JSON POST to <baseUrl>/v1/<product>/<path>, under a mount prefix too', async () => {
    const seen: string[] = [];
    const url = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${req.headers['content-type'] ?? '-'} ${body}`);
        envelope(res, 200, { success: true, request_id: 'req_1', cached: false });
      });
    });
    const mounted = createClient({ baseUrl: `${url}/api/security/`, keys: (product) => Promise.resolve(`${product}_key`) });
    await mounted.webhookip('140.82.112.5', { provider: 'github,stripe' });
    await mounted.tls('example.com', { port: 8443 });
    await mounted.pwbreach('correct horse');
    await mounted.scamrisk({ email: 'a@b.test' });
    await mounted.useragent('curl/8.5.0');
    expect(seen).toEqual([
      'GET /api/security/v1/webhookip/lookup?ip=140.82.112.5&provider=github%2Cstripe Bearer webhookip_key - ',
      'GET /api/security/v1/tls/lookup?host=example.com&port=8443 Bearer tls_key - ',
      'POST /api/security/v1/pwbreach/lookup Bearer pwbreach_key application/json {"password":"correct horse"}',
      'POST /api/security/v1/scamrisk/assess Bearer scamrisk_key application/json {"email":"a@b.test"}',
      'POST /api/security/v1/useragent/lookup Bearer useragent_key application/json {"ua":"curl/8.5.0"}',
    ]);
  });

  it('takes a baseUrl ending in /v1 as the root, rather than asking for /v1/v1/...', async () => {
    const seen: string[] = [];
    const url = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume().on('end', () => envelope(res, 200, { success: true, request_id: 'req_1', cached: false }));
    });
    await createClient({ baseUrl: `${url}/v1`, keys: { useragent: 'ua_key' } }).useragent('curl/8.5.0');
    await createClient({ baseUrl: `${url}/api/v1/`, keys: { useragent: 'ua_key' } }).useragent('curl/8.5.0');
    expect(seen).toEqual(['POST /v1/useragent/lookup', 'POST /api/v1/useragent/lookup']);
  });

  it('refuses bad options at construction', () => {
    const keys = {};
    const invalidOption = expect.objectContaining({ name: 'TypeError', code: 'invalid_option' });
    for (const options of [
      undefined,
      null,
      'http://example.com',
      { baseUrl: 'not a url', keys },
      { baseUrl: 'ftp://example.com', keys },
      { baseUrl: 'http://example.com/?x=1', keys },
      { baseUrl: 42, keys },
      { baseUrl: 'http://example.com', keys: 'ua_sec_x' },
      { baseUrl: 'http://example.com', keys: ['ua_sec_x'] },
      { baseUrl: 'http://example.com', keys, retries: -1 },
      { baseUrl: 'http://example.com', keys, timeoutMs: 0 },
      { baseUrl: 'http://example.com', keys, timeoutMs: '500' },
      { baseUrl: 'http://example.com', keys, backoff: { baseMs: Number.NaN } },
      { baseUrl: 'http://example.com', keys, backoff: 100 },
      { baseUrl: 'http://example.com', keys, signal: 'not a signal' },
      { baseUrl: 'http://example.com', keys, signal: {} },
      { baseUrl: 'http://example.com', keys, onRetry: 'log' },
      { baseUrl: 'http://example.com', keys, fetch: 'fetch' },
      { baseUrl: 'http://example.com', keys, fetch: null },
    ]) {
      expect(() => createClient(options as never), JSON.stringify(options) ?? String(options)).toThrow(invalidOption);
    }
    const client = createClient({ baseUrl: 'http://example.com', keys });
    for (const options of [null, undefined, 5, [], { retries: 1.5 }, { timeoutMs: Number.NaN }, { signal: 'not a signal' }, { signal: null }]) {
      expect(() => client.with(options as never), JSON.stringify(options) ?? String(options)).toThrow(invalidOption);
    }
    // What is right passes: a signal from AbortSignal's own factories, a URL object, a keys function.
    expect(() => createClient({ baseUrl: new URL('http://example.com'), keys: () => 'k', signal: AbortSignal.timeout(1_000) }).with({})).not.toThrow();
  });

  it('arguments a request cannot carry fail with a LookupError before any request: batches, status, captcha', async () => {
    const seen: string[] = [];
    const url = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      // One result: only the last call below, a batch of one input, is sent.
      req.resume().on('end', () => envelope(res, 200, { success: true, request_id: 'req_1', cached: false, results: [{ success: true, cached: false }] }));
    });
    const recorded = createClient({ baseUrl: url, keys: () => 'k' });
    for (const [call, code] of [
      [() => recorded.batch.geoip('8.8.8.8' as never), 'invalid_request'],
      [() => recorded.batch.useragent(['curl/8.5.0', Symbol('ua')] as never), 'invalid_request'],
      [() => recorded.status(Symbol('geoip') as never), 'invalid_request'],
      [() => recorded.status('nope' as never), 'invalid_request'],
      [() => recorded.captcha.siteverify('token', null as never), 'invalid_request'],
      [() => recorded.captcha.siteverify(10n as never), 'invalid_request'],
      [() => recorded.dnsbl(Symbol('ip') as never, { zones: 'zen.spamhaus.org' }), 'invalid_ip'],
    ] as const) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error, String(call)).toBeInstanceOf(LookupError);
      expect(error, String(call)).toMatchObject({ code, status: 400 });
      expect((error as LookupError).requestId, String(call)).toBeUndefined();
    }
    expect(seen).toEqual([]);
    await recorded.batch.useragent([`Mozilla/5.0 ${'x'.repeat(70_000)}`]);
    expect(seen).toEqual(['POST /v1/useragent/batch']);
  });

  it('retries 502 twice with exponential backoff and full jitter, then answers', async () => {
    const arrivals: number[] = [];
    const url = await listen((req, res) => {
      arrivals.push(performance.now());
      if (arrivals.length === 1) return res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>'); // the proxy in front
      if (arrivals.length === 2) return envelope(res, 502, { success: false, error: 'DNS failed', error_code: 'lookup_failed', request_id: 'req_2' });
      expect(req.headers.authorization).toBe('Bearer geo_sec_x');
      envelope(res, 200, { success: true, request_id: 'req_3', cached: false, fetched_at: '2026-01-02 03:04:05.678', ip: '8.8.8.8' });
    });
    const retries: RetryEvent[] = [];
    const flaky = createClient({ baseUrl: url, keys: { geoip: 'geo_sec_x' }, backoff: { baseMs: 100, capMs: 150 }, onRetry: (event) => retries.push(event) });
    expect(await flaky.detailed.geoip('8.8.8.8')).toEqual({
      result: { ip: '8.8.8.8' },
      cached: false,
      fetchedAt: new Date('2026-01-02T03:04:05.678Z'),
      requestId: 'req_3',
    });
    expect(retries.map(({ attempt, reason, error }) => [attempt, reason, error.code, error.status, error.requestId])).toEqual([
      [1, 'transient', 'lookup_failed', 502, undefined], // the proxy's page carries no request id
      [2, 'transient', 'lookup_failed', 502, 'req_2'],
    ]);
    // Retry n waits a random time below min(cap, base * 2^(n-1)): below 100 ms, then below 150.
    expect(retries[0].delayMs).toBeLessThan(100);
    expect(retries[1].delayMs).toBeLessThan(150);
    for (const [i, { delayMs }] of retries.entries()) expect(arrivals[i + 1] - arrivals[i]).toBeGreaterThanOrEqual(delayMs - 1);
  });

  it('gives up after `retries` with the last answer, and never retries a 4xx', async () => {
    let count = 0;
    const url = await listen((req, res) => {
      count++;
      if (req.url?.includes('bad')) return envelope(res, 400, { success: false, error: 'bad', error_code: 'invalid_ip', request_id: `req_${count}` });
      envelope(res, 500, { success: false, error: 'boom', error_code: 'internal_error', request_id: `req_${count}` });
    });
    const failing = createClient({ baseUrl: url, keys: { asn: 'k' }, retries: 2, backoff: { baseMs: 1 } });
    await expect(failing.asn('8.8.8.8')).rejects.toMatchObject({ code: 'internal_error', status: 500, requestId: 'req_3' });
    expect(count).toBe(3);
    await expect(failing.asn('bad')).rejects.toMatchObject({ code: 'invalid_ip', status: 400, requestId: 'req_4' });
    expect(count).toBe(4);
  });

  it('times out a server that never answers, at timeoutMs', async () => {
    const url = await listen(() => {});
    const started = Date.now();
    const error = (await createClient({ baseUrl: url, keys: { asn: 'k' }, timeoutMs: 300 })
      .asn('8.8.8.8')
      .catch((caught: unknown) => caught)) as LookupError;
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(error).toBeInstanceOf(LookupError);
    expect([error.code, error.status, error.requestId, (error.cause as Error).name]).toEqual(['lookup_failed', 502, undefined, 'TimeoutError']);
    expect(error.message).toMatch(/no answer within 300 ms/);
  });

  it('keeps the deadline when fetch ignores the signal: no answer, or headers and then nothing', async () => {
    const silent = await listen(() => {});
    const stalled = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"success":true,');
    });
    // A fetch that drops the signal (as some proxy agents' do): only the client's own race can end the call.
    const deaf: typeof fetch = (input, init) => fetch(input, { ...init, signal: undefined });
    for (const url of [silent, stalled]) {
      const call = createClient({ baseUrl: url, keys: { asn: 'k' }, timeoutMs: 200, fetch: deaf }).asn('8.8.8.8');
      const settled = await Promise.race([
        call.then(
          () => 'resolved',
          (error: unknown) => error,
        ),
        new Promise((resolve) => setTimeout(resolve, 3_000, 'still pending after 3 s')),
      ]);
      expect(settled, url).toBeInstanceOf(LookupError);
      const error = settled as LookupError;
      expect([error.code, error.status, error.requestId, (error.cause as Error).name]).toEqual(['lookup_failed', 502, undefined, 'TimeoutError']);
      expect(error.message).toMatch(/no answer within 200 ms/);
    }
    // The caller's abort too: at once, with its reason.
    const controller = new AbortController();
    const call = createClient({ baseUrl: silent, keys: { asn: 'k' }, timeoutMs: 60_000, fetch: deaf })
      .with({ signal: controller.signal })
      .asn('8.8.8.8');
    setTimeout(() => controller.abort(new Error('user gave up')), 50);
    const settled = await Promise.race([
      call.catch((error: unknown) => error),
      new Promise((resolve) => setTimeout(resolve, 3_000, 'still pending after 3 s')),
    ]);
    expect(settled).toEqual(new Error('user gave up'));
  });

  it('an AbortSignal rejects at once during a backoff wait, with its reason', async () => {
    let count = 0;
    const url = await listen((_req, res) => (count++, envelope(res, 502, { success: false, error: 'x', error_code: 'lookup_failed', request_id: 'req_x' })));
    const controller = new AbortController();
    let abortedAt = 0;
    const slow = createClient({
      baseUrl: url,
      keys: { asn: 'k' },
      retries: 20,
      timeoutMs: 60_000,
      backoff: { baseMs: 5_000, capMs: 5_000 },
      // Abort 50 ms into the first wait long enough to see (each is drawn from [0, 5 s)).
      onRetry: ({ delayMs }) =>
        void (delayMs >= 1_000 && !abortedAt && setTimeout(() => ((abortedAt = Date.now()), controller.abort(new Error('user gave up'))), 50)),
    });
    const error = await slow
      .with({ signal: controller.signal })
      .asn('8.8.8.8')
      .catch((caught: unknown) => caught);
    expect(Date.now() - abortedAt).toBeLessThan(100);
    expect(error).toEqual(new Error('user gave up'));
    const seen = count;
    // Aborted is final: a call with the same signal rejects before any request.
    await expect(slow.with({ signal: controller.signal }).asn('8.8.8.8')).rejects.toThrow('user gave up');
    expect(count).toBe(seen);
  });

  it('a refused connection is a transient lookup_failed, retried and then thrown', async () => {
    const retries: RetryEvent[] = [];
    const down = createClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      keys: { asn: 'k' },
      retries: 1,
      backoff: { baseMs: 1 },
      onRetry: (event) => retries.push(event),
    });
    const error = (await down.asn('8.8.8.8').catch((caught: unknown) => caught)) as LookupError;
    expect(error).toBeInstanceOf(LookupError);
    expect([error.code, error.status, error.requestId]).toEqual(['lookup_failed', 502, undefined]);
    expect(error.message).toMatch(/ECONNREFUSED|fetch failed/);
    expect(retries.map((event) => event.reason)).toEqual(['transient']);
  });
});
