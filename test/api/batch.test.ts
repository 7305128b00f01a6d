/**
 * `POST /v1/<product>/batch` through `api.handle`: results in order with one envelope per
 * input, metering (every input against the rate, every valid one against the quota, all or
 * none), identical inputs looked up once and a bounded number at a time, refunds of failed
 * lookups, the body's errors, the routes that have no batch, and the request log.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { LookupError } from '../../src/errors.js';
import { PRODUCT_MODULES } from '../../src/products/registry.js';
import { createLookup } from '../../src/lookup.js';
import { startDnsServer } from '../servers/dns-server.js';
import { createTempDirs } from '../cli/harness.js';
import { createApiStack, FROZEN_NOW, TEST_PLANS, type ApiStack } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());
const tempDir = () => temp.make('seclookup-batch-');

const PERIOD = new Date(FROZEN_NOW).toISOString().slice(0, 7);
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** 100 distinct public addresses. */
const IPS = Array.from({ length: 100 }, (_, i) => `8.8.${i}.${((i * 7) % 250) + 1}`);

async function geoipKey(stack: ApiStack, plan?: string) {
  return (await stack.keys('geoip', plan ? { plan } : {})).secretKey;
}

async function quotaRemaining(stack: ApiStack, product: 'geoip' | 'useragent', key: string): Promise<unknown> {
  const status = await stack.call(`/v1/${product}/status`, { key });
  expect(status.status).toBe(200);
  return status.body.quota_remaining;
}

/** The geoip engine, with its `lookup` spied on (the API calls it once per distinct valid input). */
function spyGeoip(stack: ApiStack) {
  const engine = stack.lookup.engine('geoip') as { lookup: (...args: unknown[]) => unknown };
  const real = engine.lookup.bind(engine);
  return { real, spy: vi.spyOn(engine, 'lookup') };
}

describe('POST /v1/<product>/batch', () => {
  it('answers 100 IPs with 100 results in order, billing exactly 100 quota units and 100 rate units', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, request_id: reply.headers['x-request-id'] });
    const results = reply.body.results as Record<string, unknown>[];
    expect(results).toHaveLength(100);
    expect(results.map((item) => [item.success, item.ip])).toEqual(IPS.map((ip) => [true, ip]));
    // Items carry no request_id: the batch's envelope does.
    expect(results.some((item) => 'request_id' in item)).toBe(false);
    expect(reply.headers).toMatchObject({ 'x-quota-limit': '10000', 'x-quota-remaining': '9900', 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '20' });
    expect(await quotaRemaining(stack, 'geoip', key)).toBe(9_900);
    expect(await stack.meter.usage(PERIOD)).toEqual([expect.objectContaining({ product: 'geoip', lookups: 100 })]);
  });

  it('gives each item what the single lookup answers, without its request_id', async () => {
    const stack = await createApiStack();
    for (const [product, path, inputs] of [
      ['geoip', '/v1/geoip/lookup?ip=', ['8.8.8.8', '10.0.0.1', 'nope']],
      ['useragent', '/v1/useragent/lookup?ua=', [CHROME, 'curl/8.5.0']],
    ] as const) {
      const key = (await stack.keys(product)).secretKey;
      const batch = await stack.call(`/v1/${product}/batch`, { key, json: { inputs } });
      const singles = await Promise.all(inputs.map((input) => stack.call(path + encodeURIComponent(input), { key })));
      const expected = singles.map(({ body: { request_id: _requestId, ...rest } }) => rest);
      // Both answered from the same engine: `cached` may differ between the first and later calls.
      const uncached = (items: Record<string, unknown>[]) => items.map(({ cached: _cached, ...rest }) => rest);
      expect(uncached(batch.body.results as Record<string, unknown>[])).toEqual(uncached(expected));
    }
  });

  it('answers valid and invalid inputs side by side: invalid ones count against the rate only', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    const inputs = ['8.8.8.8', 'not-an-ip', '10.0.0.1', '1.1.1.1', '', '2001:db8::1'];
    const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs } });
    expect(reply.status).toBe(200);
    const results = reply.body.results as Record<string, unknown>[];
    expect(results.map((item) => (item.success ? `ok ${item.ip}` : item.error_code))).toEqual([
      'ok 8.8.8.8',
      'invalid_ip',
      'ip_not_routable',
      'ok 1.1.1.1',
      'invalid_ip',
      'ip_not_routable',
    ]);
    expect(results[1]).toEqual({ success: false, error: expect.any(String), error_code: 'invalid_ip' });
    expect(reply.headers).toMatchObject({ 'x-ratelimit-remaining': String(120 - 6), 'x-quota-remaining': String(10_000 - 2) });

    // Nothing valid: nothing reserved, every input still counted against the rate.
    const none = await stack.call('/v1/geoip/batch', { key, json: { inputs: ['x', 'y'] } });
    expect(none.status).toBe(200);
    expect((none.body.results as Record<string, unknown>[]).map((item) => item.error_code)).toEqual(['invalid_ip', 'invalid_ip']);
    expect(none.headers).toMatchObject({ 'x-ratelimit-remaining': String(120 - 8), 'x-quota-remaining': String(10_000 - 2) });
  });

  it('looks identical inputs up once, gives every copy its result, and bills every copy', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    const { spy } = spyGeoip(stack);
    const inputs = ['8.8.8.8', '1.1.1.1', '8.8.8.8', 'nope', '8.8.8.8', '1.1.1.1', 'nope'];
    const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs } });
    expect(spy).toHaveBeenCalledTimes(2);
    const results = reply.body.results as Record<string, unknown>[];
    expect(results.map((item) => item.ip ?? item.error_code)).toEqual(['8.8.8.8', '1.1.1.1', '8.8.8.8', 'invalid_ip', '8.8.8.8', '1.1.1.1', 'invalid_ip']);
    expect(results[2]).toEqual(results[0]);
    expect(results[4]).toEqual(results[0]);
    expect(reply.headers).toMatchObject({ 'x-ratelimit-remaining': String(120 - 7), 'x-quota-remaining': String(10_000 - 5) });
  });

  it('runs at most 8 lookups of a batch at once', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    const { real, spy } = spyGeoip(stack);
    let inFlight = 0;
    let most = 0;
    spy.mockImplementation(async (...args: unknown[]) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return real(...args);
    });
    const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 40) } });
    expect((reply.body.results as unknown[]).length).toBe(40);
    expect(spy).toHaveBeenCalledTimes(40);
    expect(most).toBe(8);
  });

  it('refunds the inputs whose lookup failed (every copy), answering their error in place', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    const { real, spy } = spyGeoip(stack);
    spy.mockImplementation((query: unknown) => {
      const ip = JSON.stringify(query);
      if (ip.includes('1.1.1.1')) throw new LookupError('lookup_failed', 'the database is being replaced');
      if (ip.includes('9.9.9.9')) return Promise.reject(new Error('a bug'));
      return real(query);
    });
    const inputs = ['8.8.8.8', '1.1.1.1', '9.9.9.9', '1.1.1.1', 'bad'];
    const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs } });
    expect(reply.status).toBe(200);
    const results = reply.body.results as Record<string, unknown>[];
    expect(results.map((item) => item.ip ?? item.error_code)).toEqual(['8.8.8.8', 'lookup_failed', 'internal_error', 'lookup_failed', 'invalid_ip']);
    expect(results[1]).toEqual({ success: false, error: 'the database is being replaced', error_code: 'lookup_failed' });
    // 4 valid inputs reserved, 3 refunded: one billed.
    expect(reply.headers['x-quota-remaining']).toBe(String(10_000 - 1));
    expect(await quotaRemaining(stack, 'geoip', key)).toBe(10_000 - 1);
    expect(await stack.meter.usage(PERIOD)).toEqual([expect.objectContaining({ lookups: 1 })]);
    // The unexpected error reached onError with the batch's request id.
    expect(stack.errors).toEqual([{ error: expect.objectContaining({ message: 'a bug' }), context: reply.body.request_id }]);
  });

  describe('limits', () => {
    it('refuses more than 100 inputs (or createApi({ batchLimit })) with 400 invalid_request, billing nothing', async () => {
      const stack = await createApiStack();
      const key = await geoipKey(stack, 'enterprise');
      const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs: [...IPS, '8.8.8.8'] } });
      expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_request']);
      expect(reply.body.error).toMatch(/101 inputs is more than 100/);
      // Counted as one request against the rate, as a single lookup's bad input.
      expect(reply.headers).toMatchObject({ 'x-ratelimit-remaining': String(3_000 - 1), 'x-quota-remaining': 'unlimited' });
      expect(await stack.meter.usage()).toEqual([]);
      expect((await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS } })).status).toBe(200);

      const small = await createApiStack({ batchLimit: 3 });
      const smallKey = await geoipKey(small);
      expect((await small.call('/v1/geoip/batch', { key: smallKey, json: { inputs: IPS.slice(0, 3) } })).status).toBe(200);
      expect((await small.call('/v1/geoip/batch', { key: smallKey, json: { inputs: IPS.slice(0, 4) } })).body.error_code).toBe('invalid_request');
      await expect(createApiStack({ batchLimit: 0 })).rejects.toMatchObject({ code: 'invalid_option' });
    });

    it.each([
      ['memory', () => createMemoryMeter()],
      ['sqlite', () => createSqliteMeter(join(tempDir(), 'meter.db'))],
    ])('refuses a batch that does not fit the remaining quota whole: 429 quota_exceeded, no quota used (%s meter)', async (_name, makeMeter) => {
      const stack = await createApiStack({ meter: makeMeter() });
      const key = await geoipKey(stack, TEST_PLANS.quota50.slug);
      expect((await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 20) } })).status).toBe(200);
      // 40 would fit the month's 50, not the 30 left.
      const over = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 40) } });
      expect([over.status, over.body.error_code]).toEqual([429, 'quota_exceeded']);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(over.headers['x-quota-remaining']).toBe('30');
      expect(await quotaRemaining(stack, 'geoip', key)).toBe(30);
      expect((await stack.meter.usage()).map((row) => row.lookups)).toEqual([20]);
      // Invalid inputs need no quota: 30 valid ones and 10 bad ones fit.
      const fits = await stack.call('/v1/geoip/batch', { key, json: { inputs: [...IPS.slice(0, 30), ...Array(10).fill('bad')] } });
      expect(fits.status).toBe(200);
      expect(fits.headers['x-quota-remaining']).toBe('0');
      expect((await stack.call('/v1/geoip/batch', { key, json: { inputs: ['8.8.8.8'] } })).body.error_code).toBe('quota_exceeded');
      await stack.meter.close();
    });

    it('refuses a batch that does not fit the remaining rate whole: 429 rate_limit_exceeded, nothing counted', async () => {
      const stack = await createApiStack();
      await stack.meter.setPlan({ slug: 'test-rate10', product: '*', rateLimitPerMinute: 10, monthlyQuota: 1_000 });
      const key = await geoipKey(stack, 'test-rate10');
      expect((await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 6) } })).headers['x-ratelimit-remaining']).toBe('4');
      const over = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 5) } });
      expect([over.status, over.body.error_code]).toEqual([429, 'rate_limit_exceeded']);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(over.headers).toMatchObject({ 'x-ratelimit-remaining': '4', 'x-quota-remaining': '994' });
      // Nothing was counted: the 4 left still fit.
      const fits = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 4) } });
      expect(fits.status).toBe(200);
      expect(fits.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'x-quota-remaining': '990' });
    });

    it('a burst of concurrent batches, valid and invalid, loses no count: exactly the batches that fit are answered (sqlite meter)', async () => {
      const stack = await createApiStack({ meter: createSqliteMeter(join(tempDir(), 'burst.db')) });
      const key = await geoipKey(stack); // starter: 120 a minute
      // 12 batches of 20 inputs at once (5 valid, 15 not IPs each): 240 rate units asked, 120 fit.
      const inputs = (n: number) => [...IPS.slice(n * 5, n * 5 + 5), ...Array.from({ length: 15 }, (_, i) => `bad-${n}-${i}`)];
      const replies = await Promise.all(Array.from({ length: 12 }, (_, n) => stack.call('/v1/geoip/batch', { key, json: { inputs: inputs(n) } })));
      const answered = replies.filter((reply) => reply.status === 200);
      expect(answered).toHaveLength(6);
      expect(replies.filter((reply) => reply.status === 429 && reply.body.error_code === 'rate_limit_exceeded')).toHaveLength(6);
      for (const reply of answered) {
        const results = reply.body.results as Record<string, unknown>[];
        expect(results.filter((item) => item.success === true)).toHaveLength(5);
        expect(results.filter((item) => item.error_code === 'invalid_ip')).toHaveLength(15);
      }
      // 6 batches x 5 valid inputs billed, nothing else (the status route would be rate-limited now).
      expect(Math.min(...answered.map((reply) => Number(reply.headers['x-quota-remaining'])))).toBe(10_000 - 30);
      expect((await stack.meter.usage()).reduce((sum, row) => sum + row.lookups, 0)).toBe(30);
      await stack.meter.close();
    });

    it("refuses a batch larger than the key's whole rate limit with 400 invalid_request, as it could never fit", async () => {
      const stack = await createApiStack();
      await stack.meter.setPlan({ slug: 'test-rate10', product: '*', rateLimitPerMinute: 10, monthlyQuota: 1_000 });
      const key = await geoipKey(stack, 'test-rate10');
      const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 11) } });
      expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_request']);
      expect(reply.body.error).toMatch(/rate limit of 10 per minute/);
    });

    it("refuses a batch with more valid inputs than the key's whole monthly quota with 400 invalid_request, as it could never fit", async () => {
      const stack = await createApiStack();
      await stack.meter.setPlan({ slug: 'test-quota5', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 5 });
      const key = await geoipKey(stack, 'test-quota5');
      const reply = await stack.call('/v1/geoip/batch', { key, json: { inputs: IPS.slice(0, 6) } });
      expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_request']);
      expect(reply.body.error).toMatch(/monthly quota of 5/);
      expect(reply.headers['retry-after']).toBeUndefined();
      // One rate unit, no quota; and invalid inputs do not count towards the quota: 5 valid fit.
      expect(reply.headers).toMatchObject({ 'x-ratelimit-remaining': '999', 'x-quota-remaining': '5' });
      const fits = await stack.call('/v1/geoip/batch', { key, json: { inputs: [...IPS.slice(0, 5), 'not-an-ip', 'nor-this'] } });
      expect(fits.status).toBe(200);
      expect(fits.headers).toMatchObject({ 'x-quota-remaining': '0' });
    });
  });

  describe('requests that are not a batch', () => {
    it.each([
      ['no inputs', { ua: 'x' }],
      ['inputs not an array', { inputs: '8.8.8.8' }],
      ['no inputs at all', { inputs: [] }],
      ['an input that is not a string', { inputs: ['8.8.8.8', 42] }],
      ['a null input', { inputs: [null] }],
    ])('%s: 400 invalid_request, one rate unit, no quota', async (_name, json) => {
      const stack = await createApiStack();
      const key = await geoipKey(stack);
      const reply = await stack.call('/v1/geoip/batch', { key, json });
      expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_request']);
      expect(reply.headers).toMatchObject({ 'x-ratelimit-remaining': '119', 'x-quota-remaining': '10000' });
    });

    it('answers body errors as every POST route does', async () => {
      const stack = await createApiStack({ bodyLimit: 2_000 });
      const key = await geoipKey(stack);
      const call = (body: string, type = 'application/json') => stack.call('/v1/geoip/batch', { key, body, headers: { 'content-type': type } });
      const codes = async (reply: Promise<{ status: number; body: Record<string, unknown> }>) => {
        const { status, body } = await reply;
        return [status, body.error_code];
      };
      expect(await codes(call('{"inputs": ['))).toEqual([400, 'invalid_json']);
      expect(await codes(call('["8.8.8.8"]'))).toEqual([400, 'invalid_json']);
      expect(await codes(call('inputs=8.8.8.8', 'text/plain'))).toEqual([415, 'unsupported_media_type']);
      expect(await codes(call(JSON.stringify({ inputs: IPS.concat(IPS) })))).toEqual([413, 'payload_too_large']);
      // The same answers as the POST lookup route of useragent.
      const ua = (await stack.keys('useragent')).secretKey;
      expect(await codes(stack.call('/v1/useragent/lookup', { key: ua, body: '{"ua": [', headers: { 'content-type': 'application/json' } }))).toEqual([
        400,
        'invalid_json',
      ]);
      expect(await codes(stack.call('/v1/useragent/lookup', { key: ua, body: 'x', headers: { 'content-type': 'text/plain' } }))).toEqual([
        415,
        'unsupported_media_type',
      ]);
    });

    it("needs the product's secret key", async () => {
      const stack = await createApiStack();
      const keys = await stack.keys('geoip');
      expect((await stack.call('/v1/geoip/batch', { json: { inputs: ['8.8.8.8'] } })).body.error_code).toBe('missing_credentials');
      expect((await stack.call('/v1/geoip/batch', { key: keys.publicKey, json: { inputs: ['8.8.8.8'] } })).body.error_code).toBe('wrong_key_type');
      const other = (await stack.keys('asn')).secretKey;
      expect((await stack.call('/v1/geoip/batch', { key: other, json: { inputs: ['8.8.8.8'] } })).status).toBe(401);
    });

    it('answers GET and HEAD with 405 Allow: POST, and products without a batch with 404', async () => {
      const stack = await createApiStack();
      const key = await geoipKey(stack);
      for (const method of ['GET', 'HEAD', 'PUT']) {
        const reply = await stack.call('/v1/geoip/batch', { key, method });
        expect([reply.status, reply.headers.allow]).toEqual([405, 'POST']);
      }
      for (const product of ['scamrisk', 'captcha']) {
        const reply = await stack.call(`/v1/${product}/batch`, { key, json: { inputs: ['a@example.com'] } });
        expect([reply.status, reply.body.error_code]).toEqual([404, 'not_found']);
      }
      expect((await stack.call('/v1/geoip/batch/x', { key, json: { inputs: [] } })).status).toBe(404);
    });
  });

  it('logs one event for the batch, with its route pattern', async () => {
    const stack = await createApiStack();
    const key = await geoipKey(stack);
    await stack.call('/v1/geoip/batch', { key, json: { inputs: ['8.8.8.8', '1.1.1.1', 'bad'] } });
    await stack.call('/v1/geoip/batch', { key, json: { inputs: 'bad' } });
    expect(stack.logged.map((event) => [event.method, event.route, event.product, event.status, event.error_code])).toEqual([
      ['POST', '/v1/geoip/batch', 'geoip', 200, null],
      ['POST', '/v1/geoip/batch', 'geoip', 400, 'invalid_request'],
    ]);
  });

  it('pwbreach takes SHA-1 hashes only: a password is an invalid input, never looked up', async () => {
    const stack = await createApiStack();
    const key = (await stack.keys('pwbreach')).secretKey;
    const engine = stack.lookup.engine('pwbreach') as { lookup: (...args: unknown[]) => unknown };
    const spy = vi.spyOn(engine, 'lookup');
    const sha1 = '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8'; // "password"
    const reply = await stack.call('/v1/pwbreach/batch', { key, json: { inputs: [sha1, 'password', sha1.toLowerCase()] } });
    const results = reply.body.results as Record<string, unknown>[];
    expect(results.map((item) => item.error_code ?? item.breached)).toEqual([true, 'invalid_password', true]);
    // Two spellings of one hash are two inputs (identical strings are merged, not equivalent ones).
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('answers the inputs a silent DNS server left unanswered at the batch deadline with lookup_failed, unbilled, and answers in time', async () => {
    const dns = await startDnsServer({ behaviour: 'silent' });
    const lookup = createLookup({ dns: { servers: [dns.address] } });
    try {
      const stack = await createApiStack({ lookup, batchDeadlineMs: 300 });
      const key = (await stack.keys('emailauth')).secretKey;
      const started = performance.now();
      const reply = await stack.call('/v1/emailauth/batch', { key, json: { inputs: ['a-silent.com', 'not a domain!', 'b-silent.org'] } });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(reply.status).toBe(200);
      const results = reply.body.results as Record<string, unknown>[];
      expect(results.map((item) => item.error_code)).toEqual(['lookup_failed', 'invalid_domain', 'lookup_failed']);
      expect(String(results[0].error)).toContain('the batch ran out of time (300 ms)');
      expect(dns.total()).toBeGreaterThan(0);
      // Two valid inputs reserved two units; both were given back.
      expect(reply.headers['x-quota-remaining']).toBe('10000');
      expect((await stack.call('/v1/emailauth/status', { key })).body.quota_remaining).toBe(10_000);
    } finally {
      await lookup.close();
      await dns.close();
    }
  });

  it('is declared by every product whose lookup takes one string, and by no other', () => {
    const declared = Object.fromEntries(PRODUCT_MODULES.flatMap((module) => (module.batch ? [[module.id, module.batch.input]] : [])));
    expect(declared).toEqual({
      useragent: 'ua',
      webhookip: 'ip',
      geoip: 'ip',
      timezone: 'ip',
      emailauth: 'domain',
      dnsbl: 'ip',
      emailval: 'email',
      tls: 'host',
      whois: 'domain',
      asn: 'ip',
      pwbreach: 'sha1',
      domainrep: 'domain',
      riskscore: 'ip',
    });
  });
});
