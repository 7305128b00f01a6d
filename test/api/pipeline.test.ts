/**
 * The request pipeline's rules, through `api.handle`: input is checked before quota is
 * reserved, the rate still counts every authenticated request, the store-failure policy covers
 * broken and hung stores, unexpected errors reach onError, HEAD, and status placeholders.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { SERVICE_MODULES, isBuiltProduct } from '../../src/products/registry.js';
import { createApiStack, FROZEN_NOW, stalledBody, TEST_PLANS } from './harness.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const UA_PATH = `/v1/useragent/lookup?ua=${encodeURIComponent(CHROME)}`;
const PERIOD = new Date(FROZEN_NOW).toISOString().slice(0, 7);

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-pipeline-'));
  dirs.push(dir);
  return dir;
}

/** A meter whose `method` fails (throws) or never answers (hangs); everything else works. */
function meterWith(method: 'resolveKey' | 'consume', behaviour: 'throws' | 'hangs'): Meter {
  const broken = behaviour === 'throws' ? async () => Promise.reject(new Error('meter store unreachable')) : () => new Promise(() => {});
  return new Proxy(createMemoryMeter(), { get: (target, name, receiver) => (name === method ? broken : Reflect.get(target, name, receiver)) });
}

describe('input is read and checked before quota is reserved', () => {
  it.each([
    ['memory', () => createMemoryMeter()],
    ['sqlite', () => createSqliteMeter(join(tempDir(), 'meter.db'))],
  ])('serves every valid request on a quota-50 key while 100 invalid ones arrive at once (%s meter)', async (_name, makeMeter) => {
    const stack = await createApiStack({ meter: makeMeter() });
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.quota50.slug });
    const valid = Array.from({ length: 50 }, () => stack.call(UA_PATH, { key: keys.secretKey }));
    const invalid = Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0
        ? stack.call('/v1/useragent/lookup?ua=', { key: keys.secretKey })
        : stack.call('/v1/useragent/lookup', { key: keys.secretKey, json: { ua: 42 } }),
    );
    const [validReplies, invalidReplies] = await Promise.all([Promise.all(valid), Promise.all(invalid)]);
    expect(validReplies.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(invalidReplies.map((r) => `${r.status} ${r.body.error_code}`))).toEqual(new Set(['400 invalid_user_agent']));
    expect(await stack.meter.quota(keys.subscriptionId, 50, FROZEN_NOW)).toMatchObject({ remaining: 0 });
    await stack.meter.close();
  });

  it('lets a GET through while three uploads on a quota-3 key are stalled, and bills none of them', async () => {
    const stack = await createApiStack();
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.quota3.slug });
    const uploads = [stalledBody(), stalledBody(), stalledBody()];
    const pending = uploads.map((upload) =>
      stack.call('/v1/useragent/lookup', { key: keys.secretKey, body: upload.body, headers: { 'content-type': 'application/json' } }),
    );
    const get = await stack.call(UA_PATH, { key: keys.secretKey });
    expect(get.status).toBe(200);
    expect(get.headers['x-quota-remaining']).toBe('2');
    uploads.forEach((upload) => upload.end());
    // The bodies end as broken JSON: the client's error, never billed.
    for (const reply of await Promise.all(pending)) expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_json']);
    expect(await stack.meter.quota(keys.subscriptionId, 3, FROZEN_NOW)).toEqual({ limit: 3, remaining: 2, period: PERIOD });
  });

  it('counts bad input against the rate without reserving quota', async () => {
    const stack = await createApiStack();
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.rate2.slug });
    const bad = await stack.call('/v1/useragent/lookup?ua=', { key: keys.secretKey });
    expect([bad.status, bad.body.error_code]).toEqual([400, 'invalid_user_agent']);
    expect(bad.headers).toMatchObject({ 'x-ratelimit-remaining': '1', 'x-quota-remaining': '100' });
    const good = await stack.call(UA_PATH, { key: keys.secretKey });
    expect(good.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'x-quota-remaining': '99' });
  });

  it('answers a rate-limited client 429 before looking at its input', async () => {
    const stack = await createApiStack();
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.rate2.slug });
    for (let i = 0; i < 2; i++) expect((await stack.call(UA_PATH, { key: keys.secretKey })).status).toBe(200);
    for (const path of ['/v1/useragent/lookup?ua=', UA_PATH]) {
      const limited = await stack.call(path, { key: keys.secretKey });
      expect([limited.status, limited.body.error_code]).toEqual([429, 'rate_limit_exceeded']);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
    const malformedBody = await stack.call('/v1/useragent/lookup', { key: keys.secretKey, body: '{oops', headers: { 'content-type': 'application/json' } });
    expect(malformedBody.body.error_code).toBe('rate_limit_exceeded');
  });
});

describe('store failures and deadlines', () => {
  it.each([
    ['resolveKey', 'throws'],
    ['resolveKey', 'hangs'],
    ['consume', 'throws'],
    ['consume', 'hangs'],
  ] as const)("serves a lookup unmetered under onMeterError 'allow' when %s %s, and tells onError", async (method, behaviour) => {
    const stack = await createApiStack({ meter: meterWith(method, behaviour), onMeterError: 'allow', meterTimeoutMs: 40 });
    const keys = await stack.keys('useragent');
    const reply = await stack.call(UA_PATH, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, browser: { name: 'Chrome' } });
    expect(reply.headers['x-ratelimit-limit']).toBeUndefined();
    expect(stack.errors.map((e) => e.context)).toEqual(['meter (allowed through)']);
    if (behaviour === 'hangs') expect(isSeclookupError(stack.errors[0].error, 'timeout')).toBe(true);
  });

  it.each([
    ['resolveKey', 'hangs'],
    ['consume', 'hangs'],
    ['consume', 'throws'],
  ] as const)("answers 500 internal_error under 'deny' when %s %s", async (method, behaviour) => {
    const stack = await createApiStack({ meter: meterWith(method, behaviour), meterTimeoutMs: 40 });
    const keys = await stack.keys('useragent');
    const reply = await stack.call(UA_PATH, { key: keys.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([500, 'internal_error']);
    expect(stack.errors).toHaveLength(1);
    expect(stack.errors[0].context).toBe(reply.body.request_id);
  });

  it('still refuses a key with the wrong shape when the store is down under allow', async () => {
    const stack = await createApiStack({ meter: meterWith('resolveKey', 'throws'), onMeterError: 'allow' });
    const reply = await stack.call(UA_PATH, { key: 'wk_sec_notauseragentkey' });
    expect([reply.status, reply.body.error_code]).toEqual([401, 'invalid_api_key']);
    const publicKey = await stack.call(UA_PATH, { key: 'ua_pub_abcdef' });
    expect([publicKey.status, publicKey.body.error_code]).toEqual([401, 'wrong_key_type']);
  });

  it('gives back the unit a consume reserved after its deadline had passed', async () => {
    const inner = createMemoryMeter();
    let delayMs = 0;
    const slow: Meter = new Proxy(inner, {
      get: (target, name, receiver) =>
        name === 'consume'
          ? async (request: Parameters<Meter['consume']>[0]) => {
              await new Promise((resolve) => setTimeout(resolve, delayMs));
              return inner.consume(request);
            }
          : Reflect.get(target, name, receiver),
    });
    const stack = await createApiStack({ meter: slow, meterTimeoutMs: 20 });
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.quota3.slug });
    delayMs = 150;
    expect((await stack.call(UA_PATH, { key: keys.secretKey })).status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await inner.quota(keys.subscriptionId, 3, FROZEN_NOW)).toMatchObject({ remaining: 3 });
  });

  it('reports an unexpected engine failure to onError, answers 500 without its detail, and refunds the unit', async () => {
    const real = createLookup();
    const broken = new TypeError('engine exploded: secret detail');
    const lookup = {
      ...real,
      engine: (id: string) => (id === 'useragent' ? { prepare: (ua: string) => ua, lookup: () => Promise.reject(broken) } : real.engine(id as never)),
    } as unknown as Lookup;
    const stack = await createApiStack({ lookup });
    const keys = await stack.keys('useragent', { plan: TEST_PLANS.quota3.slug });
    const reply = await stack.call(UA_PATH, { key: keys.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([500, 'internal_error']);
    expect(reply.raw).not.toContain('secret detail');
    expect(stack.errors).toEqual([{ error: broken, context: reply.body.request_id }]);
    expect(reply.headers['x-quota-remaining']).toBe('3');
    expect(await stack.meter.quota(keys.subscriptionId, 3, FROZEN_NOW)).toMatchObject({ remaining: 3 });
  });
});

describe('one product with its data missing', () => {
  it('serves the other products, and answers its own lookups 500 naming the file to the operator', async () => {
    const stack = await createApiStack({ lookup: createLookup({ dataDir: tempDir() }) });
    const ua = await stack.keys('useragent');
    expect((await stack.call(UA_PATH, { key: ua.secretKey })).status).toBe(200);
    const hooks = await stack.keys('webhookip');
    const reply = await stack.call('/v1/webhookip/lookup?ip=140.82.112.5', { key: hooks.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([500, 'internal_error']);
    expect(isSeclookupError(stack.errors[0].error, 'dataset_missing')).toBe(true);
    expect(String((stack.errors[0].error as Error).message)).toContain(join('webhookip', 'ranges.json'));
    expect((await stack.call('/v1/webhookip/status', { key: hooks.publicKey })).status).toBe(200);
  });
});

describe('HEAD', () => {
  it('answers HEAD on a GET route as GET, without the body', async () => {
    const stack = await createApiStack();
    const keys = await stack.keys('useragent');
    await stack.call(UA_PATH, { key: keys.secretKey });
    // Both from the cache, so their bodies differ in nothing but the request id (same length).
    const get = await stack.call(UA_PATH, { key: keys.secretKey });
    const head = await stack.call(UA_PATH, { key: keys.secretKey, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.raw).toBe('');
    // GET's headers, and the length of GET's body (the adapter writes GET's own from the body).
    expect(Object.keys(head.headers).sort()).toEqual([...Object.keys(get.headers), 'content-length'].sort());
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.raw)));
    const status = await stack.call('/v1/useragent/status', { key: keys.publicKey, method: 'HEAD' });
    expect([status.status, status.raw]).toEqual([200, '']);
    const unknown = await stack.call('/v1/useragent/nope', { key: keys.publicKey, method: 'HEAD' });
    expect([unknown.status, unknown.raw]).toEqual([404, '']);
  });
});

describe('the registry', () => {
  it('serves every product of the spec: a lookup module or a service module each', () => {
    for (const product of PRODUCT_IDS) expect(isBuiltProduct(product) || SERVICE_MODULES.some((s) => s.id === product), product).toBe(true);
  });
});
