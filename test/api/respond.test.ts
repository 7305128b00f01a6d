/**
 * `api.respond`: the same answer as `handle`, without a promise when every step answered at
 * once (the adapters' hot path), and a promise whenever one step waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { isPromise } from '../../src/lib/outcome.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createApiStack, stalledBody } from './harness.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const BIG = { slug: 'respond-big', product: '*' as const, rateLimitPerMinute: 1_000_000, monthlyQuota: null };

const dir = mkdtempSync(join(tmpdir(), 'seclookup-respond-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const get = (url: string, key?: string): ApiRequest => ({
  method: 'GET',
  url,
  headers: key ? { authorization: `Bearer ${key}` } : {},
  remoteAddress: '127.0.0.1',
});

/** The body with its request id blanked, to compare two answers. */
const comparable = (response: ApiResponse) => ({
  ...response,
  headers: { ...response.headers, 'x-request-id': '' } as Record<string, string>,
  body: response.body.replace(/req_[0-9a-f]{32}/, ''),
});

describe('api.respond', () => {
  it('answers a warm lookup on the SQLite meter without a promise, with the bytes handle answers', async () => {
    const stack = await createApiStack({ meter: createSqliteMeter(join(dir, 'meter.db')) });
    try {
      await stack.meter.setPlan(BIG);
      const { secretKey } = await stack.keys('useragent', { plan: BIG.slug });
      const url = `/v1/useragent/lookup?ua=${encodeURIComponent(CHROME)}`;
      // The first call reserves through the store (a promise) and takes the key's allowance.
      expect(isPromise(stack.api.respond!(get(url, secretKey)))).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));

      const now = stack.api.respond!(get(url, secretKey));
      expect(isPromise(now)).toBe(false);
      const viaHandle = await stack.api.handle(get(url, secretKey));
      // The same answer but for its request id and the one more request the rate counted.
      const { 'x-ratelimit-remaining': remaining, ...headers } = comparable(now as ApiResponse).headers;
      const { 'x-ratelimit-remaining': remainingAfter, ...handleHeaders } = comparable(viaHandle).headers;
      expect(headers).toEqual(handleHeaders);
      expect(Number(remaining) - Number(remainingAfter)).toBe(1);
      expect(comparable(now as ApiResponse).body).toBe(comparable(viaHandle).body);
      expect((now as ApiResponse).status).toBe(200);
      expect(JSON.parse((now as ApiResponse).body)).toMatchObject({ success: true, browser: { name: 'Chrome' } });
      expect(isPromise(stack.api.respond!(get('/healthz')))).toBe(false);
      // Both were logged, as handle's answers are.
      expect(stack.logged.filter((line) => line.route === '/v1/useragent/lookup').map((line) => line.status)).toEqual([200, 200, 200]);
    } finally {
      await stack.meter.close();
    }
  });

  it('issues a captcha challenge without a promise once its site key is warm, a real one, and refuses a wrong key at once', async () => {
    const stack = await createApiStack({ meter: createSqliteMeter(join(dir, 'captcha.db')) });
    try {
      await stack.meter.setPlan(BIG);
      const site = await createSiteKey(stack.meter, { domains: ['shop.example.com'], plan: BIG.slug });
      const page = (url: string, body?: unknown): ApiRequest => ({
        method: body === undefined ? 'GET' : 'POST',
        url,
        headers: { origin: 'https://shop.example.com', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        remoteAddress: '127.0.0.1',
      });
      const url = `/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example.com`;
      // The first reads the site key's settings and the signing keys from the store.
      const first = stack.api.respond!(page(url));
      expect(isPromise(first)).toBe(true);
      expect((await first).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));

      const now = stack.api.respond!(page(url));
      expect(isPromise(now)).toBe(false);
      const answer = JSON.parse((now as ApiResponse).body) as { challenge: string; params: PowParams };
      expect(answer).toMatchObject({ success: true, puzzle_type: 'pow', expires_in: 120 });
      // Written by hand, it is the text JSON.stringify makes of the envelope, member for member.
      expect(Object.keys(answer)).toEqual(['success', 'request_id', 'challenge', 'puzzle_type', 'params', 'expires_in']);
      expect((now as ApiResponse).body).toBe(JSON.stringify(answer));
      expect((now as ApiResponse).headers['access-control-allow-origin']).toBe('https://shop.example.com');
      // A real challenge: solved, it verifies.
      const token = `${answer.challenge}.${solvePow(answer.params)}`;
      const verified = await stack.api.handle(
        page('/v1/captcha/verify', { sitekey: site.siteKey, hostname: 'shop.example.com', token, trace: [], telemetry: { pointer_moves: 9, focus: true } }),
      );
      expect(verified.status).toBe(200);
      expect(JSON.parse(verified.body).proof).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);

      // A refusal thrown on the way is answered at once too, in its envelope.
      const refused = stack.api.respond!(page(`/v1/captcha/challenge?sitekey=${site.secretKey}&hostname=shop.example.com`));
      expect(isPromise(refused)).toBe(false);
      expect((refused as ApiResponse).status).toBe(401);
      expect(JSON.parse((refused as ApiResponse).body)).toMatchObject({ success: false, error_code: 'wrong_key_type' });
      expect(stack.logged.filter((line) => line.route === '/v1/captcha/challenge').map((line) => line.status)).toEqual([200, 200, 401]);
    } finally {
      await stack.meter.close();
    }
  });

  it('answers with a promise when a step waits (a body still arriving), and errors as their envelope', async () => {
    const stack = await createApiStack();
    const { secretKey } = await stack.keys('useragent');
    const upload = stalledBody('{"ua":"' + CHROME + '"}');
    const waiting = stack.api.respond!({
      method: 'POST',
      url: '/v1/useragent/lookup',
      headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
      body: upload.body,
      remoteAddress: '127.0.0.1',
    });
    expect(isPromise(waiting)).toBe(true);
    upload.end();
    expect(await waiting).toMatchObject({ status: 200 });

    const refused = await stack.api.respond!(get('/v1/useragent/lookup?ua=x'));
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, error_code: 'missing_credentials' });
  });
});
