/**
 * Two API instances (each with its own Redis meter and single-use store, as two `serve`
 * processes would have) on one real redis-server, driven through `api.handle`: the limits and a
 * captcha proof hold across them, and a Redis outage gets the configured onMeterError answer,
 * then heals without new instances.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLookup, type Lookup } from '../../src/lookup.js';
import type { Meter } from '../../src/metering/types.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { createRedisMeter, createRedisSingleUseStore } from '../../src/metering/redis/index.js';
import type { ApiOptions } from '../../src/api/types.js';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';

let server: RedisServer;
let lookup: Lookup;
const closing: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  server = await startRedisServer({ appendOnly: true });
  lookup = createLookup();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  await server.start();
  await server.flush();
});
afterEach(async () => {
  await Promise.all(closing.splice(0).map((store) => store.close()));
});

/** One instance: its own meter and single-use store on the shared Redis. */
async function instance(options: Partial<ApiOptions> = {}): Promise<ApiStack> {
  const meter: Meter = createRedisMeter(server.url(), { maxReconnectDelayMs: 100, commandTimeoutMs: 500 });
  const singleUse = createRedisSingleUseStore(server.url(), { maxReconnectDelayMs: 100 });
  closing.push(meter, singleUse);
  return createApiStack({ meter, singleUse, lookup, ...options });
}

const UA = encodeURIComponent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36');

function statuses(replies: Reply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const reply of replies) {
    const label = reply.status === 200 ? '200' : `${reply.status} ${String(reply.body.error_code)}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

describe('two API instances on one Redis', () => {
  it('400 lookups split over both against 120/minute: exactly 120 answered, 280 rate_limit_exceeded', async () => {
    const [a, b] = [await instance(), await instance()];
    const keys = await a.keys('useragent');
    const replies = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).call(`/v1/useragent/lookup?ua=${UA}`, { key: keys.secretKey })));
    expect(statuses(replies)).toEqual({ '200': 120, '429 rate_limit_exceeded': 280 });
  });

  it('a monthly quota of 50 across both: exactly 50 answered', async () => {
    const [a, b] = [await instance(), await instance()];
    const keys = await b.keys('useragent', { plan: 'test-quota50' });
    const replies = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 ? a : b).call(`/v1/useragent/lookup?ua=${UA}`, { key: keys.secretKey })));
    expect(statuses(replies)).toEqual({ '200': 50, '429 quota_exceeded': 70 });
    // b's commits reach Redis within its commitDelayMs, or when it closes; a's own usage() sends a's first.
    await b.meter.close();
    expect(await a.meter.usage()).toEqual([expect.objectContaining({ subscriptionId: keys.subscriptionId, lookups: 50 })]);
  });

  it('100 parallel siteverify calls for one captcha proof over both: exactly one succeeds', async () => {
    const [a, b] = [await instance(), await instance()];
    await a.meter.setPlan({ slug: 'burst', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 1_000 });
    const site = await createSiteKey(a.meter, { domains: ['example.com'], plan: 'burst' });
    const challenge = await a.call(`/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example.com&puzzle_type=pow`);
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    const token = `${challenge.body.challenge}.${solvePow(challenge.body.params as PowParams)}`;
    const verified = await b.call('/v1/captcha/verify', {
      json: { sitekey: site.siteKey, hostname: 'shop.example.com', token, trace: [], telemetry: { pointer_moves: 12, focus: true, elapsed_ms: 2400 } },
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 ? a : b).call('/v1/captcha/siteverify', { json: { secret: site.secretKey, response: verified.body.proof } }),
      ),
    );
    expect(statuses(replies)).toEqual({ '200': 1, '400 token_already_used': 99 });
  });

  it('a siteverify retried on the other instance with its idempotency_key, even while the first is at work, gets the same success; without the key, used', async () => {
    const [a, b] = [await instance(), await instance()];
    const site = await createSiteKey(a.meter, { domains: ['example.com'] });
    const key = 'a3bb189e-8bf9-4888-9912-ace4e6543002';
    for (let round = 0; round < 3; round++) {
      const challenge = await a.call(`/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example.com&puzzle_type=pow`);
      const token = `${challenge.body.challenge}.${solvePow(challenge.body.params as PowParams)}`;
      const verified = await a.call('/v1/captcha/verify', {
        json: { sitekey: site.siteKey, hostname: 'shop.example.com', token, trace: [], telemetry: { pointer_moves: 12, focus: true, elapsed_ms: 2400 } },
      });
      expect(verified.status, JSON.stringify(verified.body)).toBe(200);
      const siteverify = (stack: ApiStack, idempotencyKey?: string) =>
        stack.call('/v1/captcha/siteverify', { json: { secret: site.secretKey, response: verified.body.proof, idempotency_key: idempotencyKey } });
      // Sent at once: the retries on b reach Redis while a's first call is still at work.
      const together = await Promise.all(Array.from({ length: 6 }, (_, i) => siteverify(i % 2 ? b : a, key)));
      expect(statuses(together)).toEqual({ '200': 6 });
      expect(new Set(together.map((reply) => reply.body.challenge_ts)).size).toBe(1);
      expect(together[1].body).toMatchObject({ hostname: 'shop.example.com' });
      expect((await siteverify(b, key)).status).toBe(200);
      expect(statuses([await siteverify(b), await siteverify(a, 'b3bb189e-8bf9-4888-9912-ace4e6543002')])).toEqual({ '400 token_already_used': 2 });
    }
  });

  it("Redis down: 'deny' answers 500 internal_error, 'allow' serves unmetered; Redis back: both count again, no restart", async () => {
    const deny = await instance({ onMeterError: 'deny' });
    const allow = await instance({ onMeterError: 'allow' });
    await deny.meter.setPlan({ slug: 'five', product: '*', rateLimitPerMinute: 5, monthlyQuota: 100 });
    const keys = await deny.keys('useragent', { plan: 'five' });
    const lookupOn = (stack: ApiStack) => stack.call(`/v1/useragent/lookup?ua=${UA}`, { key: keys.secretKey });
    expect((await lookupOn(deny)).status).toBe(200);
    expect((await lookupOn(allow)).status).toBe(200);

    await server.stop();
    const started = performance.now();
    const down = await Promise.all([lookupOn(deny), lookupOn(allow), allow.call('/v1/useragent/status', { key: keys.secretKey })]);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(down.map((r) => `${r.status} ${String(r.body.error_code ?? '')}`)).toEqual(['500 internal_error', '200 ', '500 internal_error']);
    expect(deny.errors.some(({ error }) => (error as { cause?: { code?: string } }).cause?.code === 'store_failed')).toBe(true);

    // Back with its data (append-only file): the same instances count on from where they were.
    await server.start();
    const deadline = Date.now() + 5_000;
    let reply = await lookupOn(deny);
    while (reply.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      reply = await lookupOn(deny);
    }
    expect(reply.status).toBe(200); // the 3rd counted call of 5
    // Each instance reconnects on its own: 'allow' would serve unmetered until its connection is back.
    while (
      Date.now() < deadline &&
      !(await allow.meter.listPlans().then(
        () => true,
        () => false,
      ))
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    const rest = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? deny : allow).call(`/v1/useragent/lookup?ua=${UA}`, { key: keys.secretKey })));
    expect(statuses(rest)).toEqual({ '200': 2, '429 rate_limit_exceeded': 4 });
  });
});
