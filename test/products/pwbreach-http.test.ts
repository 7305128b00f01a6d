/**
 * pwbreach over the API (`api.handle`, the request log through `onResponse`): SPEC's request
 * forms, the refusals, the range route beyond SPEC, and that no response, log event or error
 * report ever carries the password or its full hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { PADDING_EXTRA, PADDING_MIN } from '../../src/products/pwbreach/range.js';
import { createApiStack, type Reply } from '../api/harness.js';
import { respond, startHttpFixture } from '../servers/http-fixture.js';

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();
const sample = new Map(
  readFileSync(join(bundledDataDir(), 'pwbreach', 'pwned-sample.txt'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(':'))
    .map(([hash, count]) => [hash, Number(count)] as const),
);
const PASSWORD = '123456';
const HASH = sha1(PASSWORD);
const COUNT = sample.get(HASH)!;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const stack = await createApiStack();
const { secretKey, publicKey } = await stack.keys('pwbreach');

function expectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body.error_code, success: reply.body.success }).toEqual({ status, code, success: false });
}

/** Everything a client or the operator could see: every answer's body and headers, every log event, every error report. */
const seen: string[] = [];
async function call(path: string, options: Parameters<typeof stack.call>[1] = {}): Promise<Reply> {
  const reply = await stack.call(path, { key: secretKey, ...options });
  seen.push(reply.raw, JSON.stringify(reply.headers));
  return reply;
}

afterAll(() => {
  // The password, its hash and the hash's suffix appear nowhere, in any case.
  // Request ids are random hex: left out, so one cannot contain "123456" by chance.
  const everything = [...seen, ...stack.logged.map((event) => JSON.stringify(event)), ...stack.errors.map((e) => `${String(e.error)} ${e.context}`)]
    .join('\n')
    .replace(/req_[0-9a-f]{32}/g, 'req_')
    .toUpperCase();
  expect(everything).toContain('/V1/PWBREACH/LOOKUP');
  for (const secret of [PASSWORD, HASH, HASH.slice(5), 'HUNTER2-SECRET', sha1('hunter2-secret'), sha1('hunter2-secret').slice(5)]) {
    expect(everything).not.toContain(secret.toUpperCase());
  }
});

describe('pwbreach lookup forms (SPEC)', () => {
  it.each([
    ['POST JSON password', '/v1/pwbreach/lookup', { json: { password: PASSWORD } }],
    ['POST JSON sha1 (lower case)', '/v1/pwbreach/lookup', { json: { sha1: HASH.toLowerCase() } }],
    ['POST JSON sha1 (upper case)', '/v1/pwbreach/lookup', { json: { sha1: HASH } }],
    ['POST JSON password with an empty sha1', '/v1/pwbreach/lookup', { json: { password: PASSWORD, sha1: '' } }],
    ['POST form password', '/v1/pwbreach/lookup', { body: `password=${PASSWORD}`, headers: FORM }],
    ['POST JSON without a Content-Type', '/v1/pwbreach/lookup', { body: JSON.stringify({ password: PASSWORD }) }],
    ['GET ?sha1=', `/v1/pwbreach/lookup?sha1=${HASH.toLowerCase()}`, {}],
  ])('%s answers breached with the sample count', async (_form, path, options) => {
    const reply = await call(path, options);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: true, request_id: reply.body.request_id, cached: false, breached: true, count: COUNT });
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers breached false and count 0 for a password not in the data', async () => {
    const reply = await call('/v1/pwbreach/lookup', { json: { password: 'hunter2-secret' } });
    expect(reply.body).toMatchObject({ success: true, breached: false, count: 0 });
  });

  it.each([
    ['GET ?password=', '/v1/pwbreach/lookup?password=hunter2-secret', {}],
    ['GET ?password= with a sha1 too', `/v1/pwbreach/lookup?sha1=${sha1('hunter2-secret')}&password=hunter2-secret`, {}],
    ['GET ?password= empty', '/v1/pwbreach/lookup?password=', {}],
    ['POST with ?password= in the URL', '/v1/pwbreach/lookup?password=hunter2-secret', { json: { sha1: sha1('hunter2-secret') } }],
    // Any case of the name, and the range route too (found by a reviewer: both answered 200).
    ['GET ?PASSWORD= with a sha1', `/v1/pwbreach/lookup?PASSWORD=hunter2-secret&sha1=${sha1('hunter2-secret')}`, {}],
    ['GET ?Pass%77ord= encoded', `/v1/pwbreach/lookup?Pass%77ord=hunter2-secret&sha1=${sha1('hunter2-secret')}`, {}],
    ['the range route', '/v1/pwbreach/range/7C4A8?password=hunter2-secret', {}],
  ])('refuses a password in the URL (%s) with 400, never echoing it', async (form, path, options) => {
    const reply = await call(path, options);
    // The range route's input error is invalid_request (it takes no password at all).
    expectError(reply, 400, form === 'the range route' ? 'invalid_request' : 'invalid_password');
    expect(reply.body.error).toMatch(/never be sent in a URL/);
  });

  it('refuses a JSON body that is not UTF-8 (400 invalid_json), rather than check a password with U+FFFD for its bytes', async () => {
    const latin1 = Buffer.from('{"password":"p\u00e4ssword"}', 'latin1'); // 0xE4: no UTF-8
    const before = (await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining;
    const reply = await call('/v1/pwbreach/lookup', { body: latin1, headers: { 'content-type': 'application/json' } });
    expectError(reply, 400, 'invalid_json');
    expect(reply.body.error).toMatch(/not UTF-8/);
    expect((await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining).toBe(before);
    // The same password in UTF-8 is read.
    const utf8 = await call('/v1/pwbreach/lookup', {
      body: Buffer.from('{"password":"p\u00e4ssword"}', 'utf8'),
      headers: { 'content-type': 'application/json' },
    });
    expect(utf8.status).toBe(200);
  });

  // Found by a reviewer: a lone surrogate escaped in valid JSON was hashed as U+FFFD, and answered 200.
  it('refuses a password holding a lone surrogate ("\\ud83d" in JSON) with 400 invalid_password, rather than check U+FFFD for it', async () => {
    const before = (await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining;
    const reply = await call('/v1/pwbreach/lookup', { body: '{"password":"hunter2-secret\\ud83d"}', headers: { 'content-type': 'application/json' } });
    expectError(reply, 400, 'invalid_password');
    expect((await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining).toBe(before);
    // Both halves of the pair (an emoji) are read.
    expect((await call('/v1/pwbreach/lookup', { body: '{"password":"hunter2-secret\\ud83d\\ude00"}' })).status).toBe(200);
  });

  it.each([
    ['GET without sha1', '/v1/pwbreach/lookup', {}],
    ['GET with an empty sha1', '/v1/pwbreach/lookup?sha1=', {}],
    ['GET with 39 hex digits', `/v1/pwbreach/lookup?sha1=${HASH.slice(1)}`, {}],
    ['GET with 41 hex digits', `/v1/pwbreach/lookup?sha1=${HASH}0`, {}],
    ['GET with a non-hex digit', `/v1/pwbreach/lookup?sha1=${HASH.slice(0, 39)}Z`, {}],
    ['POST with an empty JSON object', '/v1/pwbreach/lookup', { json: {} }],
    ['POST with an empty password', '/v1/pwbreach/lookup', { json: { password: '' } }],
    ['POST with a numeric password', '/v1/pwbreach/lookup', { json: { password: 123456 } }],
    ['POST with a bad sha1', '/v1/pwbreach/lookup', { json: { sha1: 'xyz' } }],
    ['POST with both password and sha1', '/v1/pwbreach/lookup', { json: { password: 'hunter2-secret', sha1: sha1('hunter2-secret') } }],
    ['POST with a password over 1,024 bytes', '/v1/pwbreach/lookup', { json: { password: 'hunter2-secret'.repeat(80) } }],
    ['POST form without a password', '/v1/pwbreach/lookup', { body: 'user=alice', headers: FORM }],
  ])('answers 400 invalid_password to %s, without billing it', async (_name, path, options) => {
    const before = (await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining;
    expectError(await call(path, options), 400, 'invalid_password');
    expect((await call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining).toBe(before);
  });

  it('has no path form: /lookup/{x} is not a route (404), whatever follows', async () => {
    for (const path of [`/v1/pwbreach/lookup/${HASH}`, '/v1/pwbreach/lookup/hunter2-secret', '/v1/pwbreach/lookup/a/b']) {
      const reply = await call(path);
      expectError(reply, 404, 'not_found');
    }
  });

  it('answers 405 with Allow for other methods on /lookup', async () => {
    const reply = await call('/v1/pwbreach/lookup', { method: 'DELETE' });
    expectError(reply, 405, 'method_not_allowed');
    expect(reply.headers.allow).toBe('POST, GET');
  });

  it('needs the secret key: the public one is 401 wrong_key_type, none is 401 missing_credentials', async () => {
    expectError(await call('/v1/pwbreach/lookup', { key: publicKey, json: { password: PASSWORD } }), 401, 'wrong_key_type');
    expectError(await stack.call('/v1/pwbreach/lookup', { json: { password: PASSWORD } }), 401, 'missing_credentials');
  });

  it('reports the starter plan of SPEC: 60 per minute, 10,000 per month', async () => {
    const reply = await call('/v1/pwbreach/status', { key: publicKey });
    expect(reply.body).toMatchObject({ success: true, product: 'pwbreach', plan: 'starter', rate_limit_per_minute: 60, monthly_quota: 10_000 });
    expect(reply.body).not.toHaveProperty('database_records');
  });
});

describe('pwbreach range route (beyond SPEC)', () => {
  const prefix = HASH.slice(0, 5);
  const expected = [...sample].filter(([h]) => h.startsWith(prefix)).map(([h, c]) => `${h.slice(5)}:${c}`);

  it('answers the range API text format: SUFFIX:COUNT lines, CRLF, text/plain', async () => {
    const reply = await stack.call(`/v1/pwbreach/range/${prefix.toLowerCase()}`, { key: secretKey });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.headers['x-request-id']).toMatch(/^req_/);
    expect(reply.headers['x-quota-limit']).toBe('10000');
    expect(reply.raw).toBe(expected.join('\r\n'));
  });

  it('answers an empty body for a prefix with no hashes', async () => {
    const empty = [...Array(16)].map((_, i) => `0000${i.toString(16).toUpperCase()}`).find((p) => ![...sample.keys()].some((h) => h.startsWith(p)))!;
    const reply = await stack.call(`/v1/pwbreach/range/${empty}`, { key: secretKey });
    expect({ status: reply.status, raw: reply.raw }).toEqual({ status: 200, raw: '' });
  });

  it('pads with count-0 lines when asked with Add-Padding: true', async () => {
    const reply = await stack.call(`/v1/pwbreach/range/${prefix}`, { key: secretKey, headers: { 'add-padding': 'True' } });
    const lines = reply.raw.split('\r\n');
    expect(lines.length).toBeGreaterThanOrEqual(PADDING_MIN);
    expect(lines.length).toBeLessThanOrEqual(PADDING_MIN + PADDING_EXTRA);
    expect(lines.filter((line) => !line.endsWith(':0'))).toEqual(expected);
  });

  it('is metered like a lookup: billed once per answer, secret key only', async () => {
    const before = (await stack.call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining as number;
    await stack.call(`/v1/pwbreach/range/${prefix}`, { key: secretKey });
    expect((await stack.call('/v1/pwbreach/status', { key: publicKey })).body.quota_remaining).toBe(before - 1);
    expectError(await stack.call(`/v1/pwbreach/range/${prefix}`, { key: publicKey }), 401, 'wrong_key_type');
    expect(stack.logged.at(-1)).toMatchObject({ route: '/v1/pwbreach/range/:prefix', status: 401 });
  });

  it.each([
    ['too short', '/v1/pwbreach/range/7C4A'],
    ['too long', `/v1/pwbreach/range/${HASH.slice(0, 6)}`],
    ['a whole hash', `/v1/pwbreach/range/${sha1('hunter2-secret')}`],
    ['not hex', '/v1/pwbreach/range/ZZZZZ'],
    ['another segment', '/v1/pwbreach/range/7C4A8/x'],
    ['broken percent-encoding', '/v1/pwbreach/range/%E0%A4%A'],
    ['an NTLM mode', `/v1/pwbreach/range/${prefix}?mode=ntlm`],
  ])('answers 400 invalid_request (a JSON envelope) to a prefix %s', async (_name, path) => {
    const reply = await call(path);
    expectError(reply, 400, 'invalid_request');
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers HEAD with the headers and no body', async () => {
    const reply = await stack.call(`/v1/pwbreach/range/${prefix}`, { key: secretKey, method: 'HEAD' });
    expect({ status: reply.status, raw: reply.raw, type: reply.headers['content-type'] }).toEqual({ status: 200, raw: '', type: 'text/plain; charset=utf-8' });
  });

  it('is the /range path only: no bare /range, no POST', async () => {
    expectError(await call('/v1/pwbreach/range'), 404, 'not_found');
    expectError(await call(`/v1/pwbreach/range/${prefix}`, { method: 'POST', json: {} }), 405, 'method_not_allowed');
  });
});

describe('pwbreach with a failing upstream', () => {
  it('answers 502 lookup_failed and refunds the quota unit', async () => {
    const upstream = await startHttpFixture({ [`/range/${HASH.slice(0, 5)}`]: respond.status(503) });
    try {
      const failing = await createApiStack({
        lookup: createLookup({ pwbreach: { upstream: { url: `${upstream.url}/range/{prefix}`, attempts: 2, backoffMs: 1 } } }),
      });
      const keys = await failing.keys('pwbreach');
      const reply = await failing.call('/v1/pwbreach/lookup', { key: keys.secretKey, json: { password: PASSWORD } });
      expectError(reply, 502, 'lookup_failed');
      seen.push(reply.raw);
      expect(upstream.hits.get(`/range/${HASH.slice(0, 5)}`)).toBe(2);
      const status = await failing.call('/v1/pwbreach/status', { key: keys.publicKey });
      expect(status.body.quota_remaining).toBe(10_000);
      const range = await failing.call(`/v1/pwbreach/range/${HASH.slice(0, 5)}`, { key: keys.secretKey });
      expectError(range, 502, 'lookup_failed');
      expect(range.headers['content-type']).toBe('application/json; charset=utf-8');
      seen.push(...failing.logged.map((event) => JSON.stringify(event)));
    } finally {
      await upstream.close();
    }
  });
});
