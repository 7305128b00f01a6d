/**
 * captcha's limits through the API (api.handle, on the in-memory and the SQLite meter): the site
 * key's per-minute window is counted by its pages (challenge, verify, managed), the secret key's
 * by the site's server (siteverify, usage, status with the secret), so page traffic anyone can
 * send cannot lock the server out; and no challenge is issued once the monthly quota is used up.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { createTempDirs } from '../cli/harness.js';

const HOST = 'shop.example.com';
/** The captcha starter plan's per-minute rate (SPEC's status example). */
const STARTER_RATE = 60;
const temp = createTempDirs();
afterAll(() => temp.cleanup());

const METERS: { name: string; open: () => Meter }[] = [
  { name: 'memory meter', open: () => createMemoryMeter() },
  { name: 'SQLite meter', open: () => createSqliteMeter(join(temp.make('seclookup-captcha-limits-'), 'meter.db')) },
];

async function withStack(open: () => Meter, test: (s: ApiStack) => Promise<void>): Promise<void> {
  const meter = open();
  try {
    await test(await createApiStack({ meter }));
  } finally {
    await meter.close();
  }
}

function challenge(s: ApiStack, siteKey: string): Promise<Reply> {
  return s.call(`/v1/captcha/challenge?sitekey=${encodeURIComponent(siteKey)}&hostname=${HOST}`);
}

/** A proof, as the widget gets one: a challenge solved and verified (two requests in the site key's window). */
async function proofFor(s: ApiStack, siteKey: string): Promise<string> {
  const c = await challenge(s, siteKey);
  expect(c.status).toBe(200);
  const token = `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`;
  const verified = await s.call('/v1/captcha/verify', { json: { sitekey: siteKey, hostname: HOST, token } });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  return String(verified.body.proof);
}

function expectCode(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body.error_code }, JSON.stringify(reply.body)).toEqual({ status, code });
}

describe.each(METERS)('captcha rate windows ($name)', ({ open }) => {
  it("challenges that use up the site key's window leave siteverify, usage and status with the secret their own window", async () => {
    await withStack(open, async (s) => {
      const key = await createSiteKey(s.meter, { domains: ['example.com'] });
      const proof = await proofFor(s, key.siteKey);
      // Anyone holding the public key (every page does) sends the rest of the minute's requests.
      const flood: Reply[] = [];
      for (let i = 2; i < STARTER_RATE; i++) flood.push(await challenge(s, key.siteKey));
      expect(flood.every((reply) => reply.status === 200)).toBe(true);
      const over = await challenge(s, key.siteKey);
      expectCode(over, 429, 'rate_limit_exceeded');
      expect(over.headers['x-ratelimit-limit']).toBe(String(STARTER_RATE));
      expectCode(await s.call(`/v1/captcha/status?sitekey=${key.siteKey}`), 429, 'rate_limit_exceeded');

      // The site's server is answered by the token's merits, in a window of its own.
      const verified = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
      expect(verified.status, JSON.stringify(verified.body)).toBe(200);
      expect(verified.body).toMatchObject({ success: true, hostname: HOST, 'error-codes': [] });
      expect(verified.headers['x-ratelimit-remaining']).toBe(String(STARTER_RATE - 1));
      expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } }), 400, 'token_already_used');
      expect((await s.call('/v1/captcha/usage', { key: key.secretKey })).status).toBe(200);
      expect((await s.call('/v1/captcha/status', { key: key.secretKey })).body).toMatchObject({ success: true, status: 'active' });
    });
  });

  it("the server's window is limited at the plan's rate too, and never counts against the pages'", async () => {
    await withStack(open, async (s) => {
      const key = await createSiteKey(s.meter, { domains: ['example.com'] });
      for (let i = 0; i < STARTER_RATE; i++) {
        expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: 'not-a-token' } }), 400, 'invalid_token');
      }
      expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: 'not-a-token' } }), 429, 'rate_limit_exceeded');
      const page = await challenge(s, key.siteKey);
      expect(page.status).toBe(200);
      expect(page.headers['x-ratelimit-remaining']).toBe(String(STARTER_RATE - 1));
    });
  });
});

describe('captcha monthly quota at challenge', () => {
  it('429 quota_exceeded on challenge once the quota is used up, with the headers every 429 has', async () => {
    await withStack(createMemoryMeter, async (s) => {
      await s.meter.setPlan({ slug: 'quota1', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 1 });
      const key = await createSiteKey(s.meter, { domains: ['example.com'], plan: 'quota1' });
      await proofFor(s, key.siteKey);
      const refused = await challenge(s, key.siteKey);
      expectCode(refused, 429, 'quota_exceeded');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers).toMatchObject({ 'x-quota-limit': '1', 'x-quota-remaining': '0', 'x-ratelimit-limit': '1000' });
      // The site's server still reads the quota it is out of.
      expect((await s.call('/v1/captcha/status', { key: key.secretKey })).body).toMatchObject({ monthly_quota: 1, quota_remaining: 0 });
    });
  });

  it('an unlimited plan is never refused at challenge', async () => {
    await withStack(createMemoryMeter, async (s) => {
      const key = await createSiteKey(s.meter, { domains: ['example.com'], plan: 'enterprise' });
      await proofFor(s, key.siteKey);
      const c = await challenge(s, key.siteKey);
      expect(c.status).toBe(200);
      expect(c.headers['x-quota-remaining']).toBe('unlimited');
    });
  });
});
