/**
 * captcha through the API (api.handle, in-memory meter): site keys, pow and slider puzzles,
 * managed mode, single-use proofs and siteverify, status and usage, CORS, and every code of
 * SPEC's captcha table triggered for real.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApiStack, FROZEN_NOW, TEST_PLANS, TEST_SECRET, type ApiStack, type Reply } from '../api/harness.js';
import { createOperatorSecret } from '../../src/lib/operator-secret.js';
import { createSiteKey, normalizeHostname, updateSiteKey, revokeSiteKey, type CreateSiteKeyOptions } from '../../src/products/captcha/site-keys.js';
import { solvePow } from '../../src/products/captcha/puzzles/pow.js';
import type { PowParams } from '../../src/products/captcha/puzzles/pow.js';
import type { SliderParams } from '../../src/products/captcha/puzzles/slider.js';
import type { TracePoint } from '../../src/products/captcha/puzzles/types.js';
import type { SingleUseStore } from '../../src/metering/single-use.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { createMemorySingleUseStore } from '../../src/metering/memory/single-use.js';
import { rotateSigningKey } from '../../src/products/captcha/key-ring.js';

const HOST = 'shop.example.com';

interface Clock {
  now: number;
}

async function stack(options: { clock?: Clock; singleUse?: SingleUseStore } = {}): Promise<ApiStack> {
  const clock = options.clock;
  return createApiStack({ ...(clock ? { now: () => clock.now } : {}), ...(options.singleUse ? { singleUse: options.singleUse } : {}) });
}

async function siteKey(s: ApiStack, options: CreateSiteKeyOptions = {}) {
  return createSiteKey(s.meter, { domains: ['example.com'], ...options });
}

async function challenge(s: ApiStack, key: string, type = 'pow', hostname = HOST): Promise<Reply> {
  return s.call(`/v1/captcha/challenge?sitekey=${encodeURIComponent(key)}&hostname=${encodeURIComponent(hostname)}&puzzle_type=${type}`);
}

/** A drag a person might make: wobbling a little, fast in the middle, slowing at the end. */
function humanTrace(target: number): TracePoint[] {
  const points: TracePoint[] = [];
  let t = 0;
  for (let i = 0; i <= 40; i++) {
    const progress = i / 40;
    const eased = 1 - (1 - progress) ** 3; // decelerating
    t += 18 + (i % 3);
    points.push({ x: Math.round(target * eased * 10) / 10, y: Math.round(Math.sin(i / 3) * 20) / 10, t });
  }
  points[points.length - 1].x = target;
  return points;
}

async function solvePowChallenge(s: ApiStack, key: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  const c = await challenge(s, key);
  expect(c.status).toBe(200);
  const token = `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`;
  return s.call('/v1/captcha/verify', {
    json: { sitekey: key, hostname: HOST, token, trace: [], telemetry: { pointer_moves: 12, focus: true, elapsed_ms: 2400 }, ...extra },
  });
}

function expectCode(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body.error_code }, JSON.stringify(reply.body)).toEqual({ status, code });
  expect(reply.body.success).toBe(false);
  expect(String(reply.body.request_id)).toMatch(/^req_[0-9a-f]{32}$/);
}

describe('captcha: a pow puzzle from challenge to siteverify', () => {
  it('challenge, verify, then siteverify once (Turnstile-shaped success) and never again', async () => {
    const s = await stack();
    const key = await siteKey(s);
    expect(key.siteKey).toMatch(/^tf_pub_/);
    expect(key.secretKey).toMatch(/^tf_sec_/);
    const c = await challenge(s, key.siteKey);
    expect(c.body).toMatchObject({ success: true, puzzle_type: 'pow', expires_in: 120, params: { algorithm: 'sha256', difficulty: 14, count: 8 } });
    const verified = await solvePowChallenge(s, key.siteKey, { action: 'login' });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ success: true, risk_level: 'low', action: 'login' });
    const proof = String(verified.body.proof);
    expect(proof.length).toBeLessThanOrEqual(2048);
    expect(proof).not.toContain(key.siteKey);

    const first = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, remoteip: '203.0.113.9', action: 'login' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, hostname: HOST, action: 'login', 'error-codes': [], mode: 'puzzle', risk_level: 'low' });
    expect(Date.parse(String(first.body.challenge_ts))).toBeGreaterThan(0);
    expect(String(first.body.request_id)).toMatch(/^req_/);

    const second = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
    expectCode(second, 400, 'token_already_used');
    expect(second.body['error-codes']).toEqual(['timeout-or-duplicate']);
  });

  it("idempotency_key: retries sent at once to two instances (one SQLite file) all get the first call's success", async () => {
    // The retry used to find the proof spent but its success not yet remembered (a write later),
    // and answer token_already_used: the claim now holds its key, so the two agree in one step.
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-idempotency-'));
    const stores = [createSqliteSingleUseStore(join(dir, 'tokens.db')), createSqliteSingleUseStore(join(dir, 'tokens.db'))];
    try {
      const a = await stack({ singleUse: stores[0] });
      const b = await createApiStack({ meter: a.meter, singleUse: stores[1] });
      const key = await siteKey(a);
      for (let round = 0; round < 5; round++) {
        const proof = String((await solvePowChallenge(a, key.siteKey, { action: 'login' })).body.proof);
        const send = (instance: ApiStack, idempotencyKey: string) =>
          instance.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, idempotency_key: idempotencyKey } });
        // A backend's client timing out early and retrying, on either instance; another key's call alongside.
        const together = await Promise.all([
          ...Array.from({ length: 6 }, (_, i) => send(i % 2 ? b : a, '3f2504e0-4f89-41d3-9a0c-0305e82c3301')),
          send(b, '9b2a0a4e-3c1d-4e7f-8a6b-5d4c3b2a1f00'),
        ]);
        const first = together.findIndex((reply) => reply.status === 200);
        const winner = first === 6 ? '9b2a0a4e' : '3f2504e0';
        // Whichever key claimed the proof, every call with it succeeds and every other is used.
        expect(together.map((reply) => reply.status)).toEqual(winner === '3f2504e0' ? [...Array(6).fill(200), 400] : [...Array(6).fill(400), 200]);
        expect(new Set(together.filter((reply) => reply.status === 200).map((reply) => reply.body.challenge_ts)).size).toBe(1);
      }
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("idempotency_key (Turnstile's): a retry with the key of the call that succeeded gets the same success; any other call is token_already_used", async () => {
    const s = await stack();
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey, { action: 'login' })).body.proof);
    const idempotencyKey = '3F2504E0-4F89-41D3-9A0C-0305E82C3301';
    const siteverify = (fields: Record<string, unknown>) => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, ...fields } });

    const first = await siteverify({ idempotency_key: idempotencyKey });
    expect(first.status).toBe(200);
    // The retry (its answer lost, say): the same success, in any letter case of the key.
    for (const again of [idempotencyKey, idempotencyKey.toLowerCase()]) {
      const retry = await siteverify({ idempotency_key: again });
      expect(retry.status).toBe(200);
      const { request_id: _first, ...firstFields } = first.body;
      const { request_id: _retry, ...retryFields } = retry.body;
      expect(retryFields).toEqual(firstFields);
    }
    // Without the key, or with another: used, as before.
    expectCode(await siteverify({}), 400, 'token_already_used');
    expectCode(await siteverify({ idempotency_key: '9b2a0a4e-3c1d-4e7f-8a6b-5d4c3b2a1f00' }), 400, 'token_already_used');
    // A key that is not a UUID is refused before anything is looked at.
    for (const bad of ['retry-1', 42, '3f2504e0-4f89-41d3-9a0c-0305e82c330']) {
      const reply = await siteverify({ idempotency_key: bad });
      expectCode(reply, 400, 'invalid_request');
      expect(reply.body['error-codes']).toEqual(['bad-request']);
    }
  });

  it('idempotency_key: a call refused as token_already_used is not remembered, so its retry is refused too', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const siteverify = (fields: Record<string, unknown>) => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, ...fields } });
    // Used first without a key (another request of the site's, or a replay by someone else).
    expect((await siteverify({})).status).toBe(200);
    const late = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
    expectCode(await siteverify({ idempotency_key: late }), 400, 'token_already_used');
    expectCode(await siteverify({ idempotency_key: late }), 400, 'token_already_used');
  });

  it('a challenge answer is byte for byte the envelope JSON.stringify makes: success, request_id, challenge, puzzle_type, params, expires_in', async () => {
    const s = await stack();
    const key = await siteKey(s);
    for (const type of ['pow', 'slider']) {
      const c = await challenge(s, key.siteKey, type);
      expect(c.status).toBe(200);
      const { success, request_id, challenge: token, puzzle_type, params, expires_in, ...rest } = c.body;
      expect(rest).toEqual({});
      expect(c.raw).toBe(JSON.stringify({ success, request_id, challenge: token, puzzle_type, params, expires_in }));
      expect(puzzle_type).toBe(type);
      // The params answered are the ones signed into the challenge.
      const signed = Buffer.from(String(token).split('.')[0], 'base64url').toString('utf8');
      expect(signed).toContain(JSON.stringify(params));
    }
  });

  it('a challenge answer is ASCII, whatever the page: its Content-Length is its length, set without measuring it', async () => {
    const s = await stack();
    const key = await siteKey(s);
    // A page on an internationalised name: the hostname travels inside the base64url token.
    for (const [type, hostname] of [
      ['pow', HOST],
      ['slider', HOST],
      ['pow', 'bücher.example.com'],
      ['slider', 'straße.example.com'],
    ]) {
      const c = await challenge(s, key.siteKey, type, hostname);
      expect(c.status, c.raw).toBe(200);
      expect(c.raw).toMatch(/^[\x20-\x7e]+$/);
      expect(c.headers['content-length']).toBe(String(Buffer.byteLength(c.raw)));
    }
  });

  it('100 parallel siteverify calls for one proof: exactly one succeeds', async () => {
    const s = await stack();
    const key = await siteKey(s, { plan: TEST_PLANS.quota50.slug.replace('quota50', 'quota50') });
    await s.meter.setPlan({ slug: 'burst', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 1_000 });
    const wide = await siteKey(s, { plan: 'burst' });
    const proof = (await solvePowChallenge(s, wide.siteKey)).body.proof;
    const replies = await Promise.all(
      Array.from({ length: 100 }, () => s.call('/v1/captcha/siteverify', { json: { secret: wide.secretKey, response: proof } })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.body.error_code === 'token_already_used')).toHaveLength(99);
    expect(key.siteKey).toMatch(/^tf_pub_/);
  });

  it('a burst mixing one real solution sent 50 times with 50 forged challenges: exactly one proof, no 5xx, the forged ones burn nothing', async () => {
    const s = await stack();
    await s.meter.setPlan({ slug: 'burst', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 1_000 });
    const key = await siteKey(s, { plan: 'burst' });
    const c = await challenge(s, key.siteKey);
    const solution = solvePow(c.body.params as PowParams);
    const real = { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${solution}` };
    // The challenge's MAC altered (a character in its middle), with the right solution or a
    // wrong one: refused before the challenge is spent. (A wrong solution to the real challenge
    // would spend it: see below.)
    const text = String(c.body.challenge);
    const at = text.length - 10;
    const altered = `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    const forged = (i: number) => ({ ...real, token: `${altered}.${i % 2 ? solution.replace(/^\d+/, '4294967295') : solution}` });
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => s.call('/v1/captcha/verify', { json: i % 2 ? real : forged(i / 2) })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status >= 500)).toHaveLength(0);
    expect(replies.every((r) => r.status === 200 || r.status === 400)).toBe(true);
    // One unit billed: failures gave theirs back.
    expect((await s.call(`/v1/captcha/status?sitekey=${key.siteKey}`)).body.quota_remaining).toBe(999);
    // ...and committed: it stays billed past its lease.
    expect(await s.meter.quota(key.subscriptionId, 1_000, FROZEN_NOW + 120_000)).toMatchObject({ remaining: 999 });
  });

  it('siteverify takes a form-encoded body, as Turnstile server libraries send it', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const form = new URLSearchParams({ secret: key.secretKey, response: proof }).toString();
    const reply = await s.call('/v1/captcha/siteverify', { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(reply.status).toBe(200);
    expect(reply.body.success).toBe(true);
  });

  it('takes a secret or site key with white space around it (read from a file with its line break), as a Bearer key is', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const reply = await s.call('/v1/captcha/siteverify', { json: { secret: `${key.secretKey}\n`, response: proof } });
    expect([reply.status, reply.body.success]).toEqual([200, true]);
    expect((await s.call(`/v1/captcha/status?sitekey=${encodeURIComponent(` ${key.siteKey}\r\n`)}`)).status).toBe(200);
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: ' \n', response: proof } }), 401, 'missing_credentials');
  });

  it('a wrong solution is challenge_failed and spends the challenge: the right one after it is invalid_token; a replayed challenge is refused', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const attempt = async () => {
      const c = await challenge(s, key.siteKey);
      const right = solvePow(c.body.params as PowParams);
      const send = (solution: string) =>
        s.call('/v1/captcha/verify', { json: { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${solution}` } });
      return { right, send };
    };
    const first = await attempt();
    const wrong = first.right
      .split(',')
      .map((n, i) => (i === 0 ? String(Number(n) + 1) : n))
      .join(',');
    // One of the two neighbours might solve too (1 in 16384): find a counter that does not.
    expectCode(await first.send(`${wrong},1`), 400, 'challenge_failed');
    expectCode(await first.send(first.right), 400, 'invalid_token');
    const second = await attempt();
    expectCode(await second.send('x,y'), 400, 'challenge_failed');
    expectCode(await second.send(second.right), 400, 'invalid_token');
    const third = await attempt();
    expect((await third.send(third.right)).status).toBe(200);
    expectCode(await third.send(third.right), 400, 'invalid_token');
  });

  it('a forged, altered, foreign, misplaced or expired challenge is invalid_token', async () => {
    const clock = { now: Date.UTC(2026, 10, 23, 12) };
    const s = await stack({ clock });
    const key = await siteKey(s);
    const other = await siteKey(s);
    const c = await challenge(s, key.siteKey);
    const solution = solvePow(c.body.params as PowParams);
    const send = (sitekey: string, token: string, hostname = HOST) => s.call('/v1/captcha/verify', { json: { sitekey, hostname, token } });
    const text = String(c.body.challenge);
    const [payload, mac] = text.split('.');
    const flipped = `${payload.slice(0, 10)}${payload[10] === 'A' ? 'B' : 'A'}${payload.slice(11)}.${mac}`;
    expectCode(await send(key.siteKey, `${flipped}.${solution}`), 400, 'invalid_token');
    // The MAC's 43 characters end with 2 spare bits: the next character (A -> B, w -> x, 8 -> 9)
    // decodes to the same bytes, another text for one token, and is refused (a token has one text).
    const sameBytes = `${mac.slice(0, -1)}${String.fromCharCode(mac.charCodeAt(mac.length - 1) + 1)}`;
    expect(Buffer.from(sameBytes, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    expectCode(await send(key.siteKey, `${payload}.${sameBytes}.${solution}`), 400, 'invalid_token');
    expectCode(await send(key.siteKey, `garbage.${solution}`), 400, 'invalid_token');
    expectCode(await send(other.siteKey, `${text}.${solution}`), 400, 'invalid_token');
    expectCode(await send(key.siteKey, `${text}.${solution}`, 'www.example.com'), 400, 'invalid_token');
    clock.now += 121_000;
    expectCode(await send(key.siteKey, `${text}.${solution}`), 400, 'invalid_token');
  });

  it('tokens signed before a key rotation still verify; the proof from a rotated key passes siteverify', async () => {
    const clock = { now: Date.now() };
    const s = await stack({ clock });
    const key = await siteKey(s);
    const c = await challenge(s, key.siteKey);
    await rotateSigningKey(s.meter, createOperatorSecret(TEST_SECRET));
    // A fresh API on the same meter (another instance) reads the new ring.
    const other = await createApiStack({ meter: s.meter, now: () => clock.now });
    const verified = await other.call('/v1/captcha/verify', {
      json: { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${solvePow(c.body.params as PowParams)}` },
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    // The first instance has not seen the new key: a token naming it makes it re-read the ring
    // (at most once a second, so garbage key ids cannot hammer the store).
    clock.now += 1_100;
    const checked = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: verified.body.proof } });
    expect(checked.status).toBe(200);
  });
});

describe('captcha: slider', () => {
  async function slider(s: ApiStack, key: string) {
    const c = await challenge(s, key, 'slider');
    expect(c.body.puzzle_type).toBe('slider');
    return { challenge: String(c.body.challenge), params: c.body.params as SliderParams };
  }
  const verify = (s: ApiStack, key: string, token: string, trace: unknown) =>
    s.call('/v1/captcha/verify', { json: { sitekey: key, hostname: HOST, token, trace } });

  it('a human-like drag onto the notch passes; the proof verifies', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const { challenge: text, params } = await slider(s, key.siteKey);
    expect(params).toMatchObject({ width: 300, piece: 44, tolerance: 6 });
    const reply = await verify(s, key.siteKey, `${text}.${params.target}`, humanTrace(params.target));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const checked = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: reply.body.proof } });
    expect(checked.body).toMatchObject({ success: true, mode: 'puzzle' });
  });

  it.each([
    ['no trace', () => undefined],
    ['a ruler-straight constant-speed line', (target: number) => Array.from({ length: 30 }, (_, i) => ({ x: (target * i) / 29, y: 0, t: i * 20 }))],
    ['a drag too fast for a person', (target: number) => humanTrace(target).map((p) => ({ ...p, t: p.t / 10 }))],
    ['time going backwards', (target: number) => humanTrace(target).map((p, i) => ({ ...p, t: i === 5 ? 0 : p.t }))],
    [
      'speeding up at the end',
      (target: number) => Array.from({ length: 41 }, (_, i) => ({ x: Math.round(target * (i / 40) ** 3 * 10) / 10, y: (i % 4) - 1.5, t: i * 20 })),
    ],
    [
      'too few points',
      (target: number) => [
        { x: 0, y: 0, t: 0 },
        { x: target, y: 1, t: 900 },
      ],
    ],
    ['points with no numbers', (target: number) => humanTrace(target).map((p, i) => (i === 3 ? { x: 'a', y: 0, t: 1 } : p))],
  ])('refuses %s: challenge_failed', async (_name, trace) => {
    const s = await stack();
    const key = await siteKey(s);
    const { challenge: text, params } = await slider(s, key.siteKey);
    expectCode(await verify(s, key.siteKey, `${text}.${params.target}`, trace(params.target)), 400, 'challenge_failed');
  });

  it('refuses the piece left off the notch, and accepts a keyboard trace', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const missed = await slider(s, key.siteKey);
    expectCode(
      await verify(s, key.siteKey, `${missed.challenge}.${missed.params.target + 20}`, humanTrace(missed.params.target + 20)),
      400,
      'challenge_failed',
    );
    // A wrong answer spent that challenge: the keyboard trace answers a new one.
    const { challenge: text, params } = await slider(s, key.siteKey);
    const keys = Array.from({ length: 6 }, (_, i) => ({ x: Math.round((params.target * (i + 1)) / 6), y: 0, t: i * 150, k: 1 }));
    expect((await verify(s, key.siteKey, `${text}.${params.target}`, keys)).status).toBe(200);
  });

  it('puzzle_type=random gives either type; an unknown type is invalid_request', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const seen = new Set<unknown>();
    for (let i = 0; i < 24 && seen.size < 2; i++) seen.add((await challenge(s, key.siteKey, 'random')).body.puzzle_type);
    expect([...seen].sort()).toEqual(['pow', 'slider']);
    expectCode(await challenge(s, key.siteKey, 'chess'), 400, 'invalid_request');
  });
});

describe('captcha: managed mode', () => {
  const benign = {
    webdriver: false,
    headless: false,
    languages: 2,
    plugins: 3,
    pointer_moves: 25,
    keys: 0,
    focus: true,
    elapsed_ms: 3100,
    screen: [1280, 800],
  };

  it('a plausible browser passes without a puzzle: proof with mode managed', async () => {
    const s = await stack();
    const key = await siteKey(s, { managed: true });
    const reply = await s.call('/v1/captcha/managed', { json: { sitekey: key.siteKey, hostname: HOST, action: 'signup', telemetry: benign } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ success: true, mode: 'managed', risk_score: 0, risk_level: 'low', action: 'signup' });
    const checked = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: reply.body.proof, action: 'signup' } });
    expect(checked.body).toMatchObject({ success: true, mode: 'managed', action: 'signup' });
  });

  it('automation markers or a site key without managed mode: 422 interactive_required, and the quota unit is given back', async () => {
    const s = await stack();
    const key = await siteKey(s, { managed: true });
    const bot = await s.call('/v1/captcha/managed', { json: { sitekey: key.siteKey, hostname: HOST, telemetry: { ...benign, webdriver: true } } });
    expectCode(bot, 422, 'interactive_required');
    expect(bot.body.interactive_required).toBe(true);
    expect(bot.headers['x-quota-remaining']).toBe('10000');
    const plain = await siteKey(s);
    const off = await s.call('/v1/captcha/managed', { json: { sitekey: plain.siteKey, hostname: HOST, telemetry: benign } });
    expectCode(off, 422, 'interactive_required');
  });

  it('one weak signal alone (no interaction) still passes; telemetry of the wrong types is ignored, not an error', async () => {
    const s = await stack();
    const key = await siteKey(s, { managed: true });
    const quiet = await s.call('/v1/captcha/managed', {
      json: { sitekey: key.siteKey, hostname: HOST, telemetry: { ...benign, pointer_moves: 0, focus: false } },
    });
    expect(quiet.status).toBe(200);
    expect(quiet.body.risk_score).toBe(15);
    const odd = await s.call('/v1/captcha/managed', {
      json: { sitekey: key.siteKey, hostname: HOST, telemetry: { webdriver: 'yes', screen: 'big', elapsed_ms: -5, pointer_moves: 3 } },
    });
    expect(odd.status).toBe(200);
  });
});

describe('captcha: every code of the captcha table', () => {
  it('401 missing_credentials: no site key, no secret', async () => {
    const s = await stack();
    expectCode(await s.call(`/v1/captcha/challenge?hostname=${HOST}`), 401, 'missing_credentials');
    expectCode(await s.call('/v1/captcha/verify', { json: { hostname: HOST, token: 'x.y' } }), 401, 'missing_credentials');
    const reply = await s.call('/v1/captcha/siteverify', { json: { response: 'x' } });
    expectCode(reply, 401, 'missing_credentials');
    expect(reply.body['error-codes']).toEqual(['missing-input-secret']);
    expectCode(await s.call('/v1/captcha/status'), 401, 'missing_credentials');
  });

  it('401 invalid_api_key: unknown, revoked, or a plain captcha key that is no site key', async () => {
    const s = await stack();
    expectCode(await challenge(s, 'tf_pub_nosuchkeynosuchkeynosuchkey00'), 401, 'invalid_api_key');
    const key = await siteKey(s);
    const proof = (await solvePowChallenge(s, key.siteKey)).body.proof;
    await revokeSiteKey(s.meter, key.siteKey);
    expectCode(await challenge(s, key.siteKey), 401, 'invalid_api_key');
    const reply = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
    expectCode(reply, 401, 'invalid_api_key');
    expect(reply.body['error-codes']).toEqual(['invalid-input-secret']);
    const plain = await s.keys('captcha');
    expectCode(await challenge(s, plain.publicKey), 401, 'invalid_api_key');
  });

  it('a secret key siteverify has already seen (its site key remembered) is refused once revoked', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const sv = () => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
    expect((await sv()).body.success).toBe(true);
    const spent = await sv();
    expectCode(spent, 400, 'token_already_used');
    expect(Object.keys(spent.body)).toEqual(['success', 'error', 'error_code', 'error-codes', 'request_id']);
    expect(spent.body['error-codes']).toEqual(['timeout-or-duplicate']);
    await revokeSiteKey(s.meter, key.siteKey);
    const revoked = await sv();
    expectCode(revoked, 401, 'invalid_api_key');
    expect(revoked.body['error-codes']).toEqual(['invalid-input-secret']);
  });

  it('401 wrong_key_type: a secret on a browser route, a site key on siteverify', async () => {
    const s = await stack();
    const key = await siteKey(s);
    expectCode(await challenge(s, key.secretKey), 401, 'wrong_key_type');
    expectCode(await s.call('/v1/captcha/verify', { json: { sitekey: key.secretKey, hostname: HOST, token: 'a.b.c' } }), 401, 'wrong_key_type');
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.siteKey, response: 'a.b' } }), 401, 'wrong_key_type');
    expectCode(await s.call('/v1/captcha/usage', { key: key.siteKey }), 401, 'wrong_key_type');
  });

  it("X-Forwarded-Host names the API's own origin only when a trusted proxy (trustProxy) sent it, as X-Forwarded-For", async () => {
    const spoofed = { origin: 'https://evil.example.net', host: '127.0.0.1:8080', 'x-forwarded-host': 'evil.example.net' };
    const path = (key: string) => `/v1/captcha/challenge?sitekey=${key}&hostname=${HOST}`;
    // No proxy configured: the header is anyone's to send, and an Origin claiming to be this API is a third party.
    const direct = await stack();
    const directKey = await siteKey(direct);
    expectCode(await direct.call(path(directKey.siteKey), { headers: spoofed }), 403, 'domain_not_allowed');
    // Behind a trusted proxy (the socket peer is in trustProxy), it names the public origin.
    const proxied = await createApiStack({ trustProxy: ['10.0.0.0/8'] });
    const proxiedKey = await siteKey(proxied);
    const public_ = { origin: 'https://captcha.example.org', host: '127.0.0.1:8080', 'x-forwarded-host': 'captcha.example.org' };
    expect((await proxied.call(path(proxiedKey.siteKey), { headers: public_, remoteAddress: '10.0.0.5' })).status).toBe(200);
    // The same request from a peer outside trustProxy: ignored.
    expectCode(await proxied.call(path(proxiedKey.siteKey), { headers: public_, remoteAddress: '203.0.113.9' }), 403, 'domain_not_allowed');
  });

  it('403 domain_not_allowed, domain_required, domain_not_configured', async () => {
    const clock = { now: FROZEN_NOW };
    const s = await stack({ clock });
    const key = await siteKey(s);
    expectCode(await challenge(s, key.siteKey, 'pow', 'evil.example.net'), 403, 'domain_not_allowed');
    expectCode(await challenge(s, key.siteKey, 'pow', 'notexample.com'), 403, 'domain_not_allowed');
    expect((await challenge(s, key.siteKey, 'pow', 'a.b.example.com')).status).toBe(200); // subdomains are allowed
    expect((await challenge(s, key.siteKey, 'pow', 'EXAMPLE.com.')).status).toBe(200);
    // A third-party page's Origin is refused even with an allowed hostname field.
    const fromEvil = await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}`, {
      headers: { origin: 'https://evil.example.net', host: 'api.example.org' },
    });
    expectCode(fromEvil, 403, 'domain_not_allowed');
    expectCode(await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}`), 403, 'domain_required');
    // The widget's iframe calls from the API's own origin (Host; X-Forwarded-Host only from a trusted proxy, tested below): only `hostname` counts.
    const own = { origin: 'https://captcha.example.org' };
    expect((await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}`, { headers: { ...own, host: 'captcha.example.org' } })).status).toBe(
      200,
    );
    expectCode(await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}`, { headers: { ...own, host: 'captcha.example.org' } }), 403, 'domain_required');
    expectCode(await challenge(s, key.siteKey, 'pow', 'https://shop.example.com/'), 403, 'domain_required');
    // Without the hostname field, an allowed Origin names the page.
    expect(
      (await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}`, { headers: { origin: 'https://shop.example.com', host: 'api.example.org' } })).status,
    ).toBe(200);
    const bare = await createSiteKey(s.meter, {});
    expectCode(await challenge(s, bare.siteKey), 403, 'domain_not_configured');
    // siteverify: a proof for a hostname removed from the allowlist since.
    const proof = (await solvePowChallenge(s, key.siteKey)).body.proof;
    await updateSiteKey(s.meter, key.siteKey, { domains: ['other.example.org'] });
    clock.now += 2_100; // settings are reread after 2 s
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } }), 403, 'domain_not_allowed');
  });

  it('403 ip_not_allowed on browser routes and siteverify when the site key has an IP allowlist', async () => {
    const s = await stack();
    const key = await siteKey(s, { ipAllow: ['10.0.0.0/8', '2001:db8::/32'] });
    expectCode(await challenge(s, key.siteKey), 403, 'ip_not_allowed');
    const inside = await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}`, { remoteAddress: '10.1.2.3' });
    expect(inside.status).toBe(200);
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: 'a.b' } }), 403, 'ip_not_allowed');
    expect((await s.call(`/v1/captcha/status?sitekey=${key.siteKey}`, { remoteAddress: '2001:db8::7' })).body.ip_restrictions).toBe(true);
  });

  it('429 rate_limit_exceeded per site key; 429 quota_exceeded per subscription, shared by its site keys (verify and managed both count)', async () => {
    const s = await stack();
    const limited = await siteKey(s, { plan: TEST_PLANS.rate2.slug });
    expect((await challenge(s, limited.siteKey)).status).toBe(200);
    expect((await challenge(s, limited.siteKey)).status).toBe(200);
    const third = await challenge(s, limited.siteKey);
    expectCode(third, 429, 'rate_limit_exceeded');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);

    const first = await siteKey(s, { plan: TEST_PLANS.quota3.slug, managed: true });
    const second = await siteKey(s, { subscriptionId: first.subscriptionId, managed: true });
    expect(second.subscriptionId).toBe(first.subscriptionId);
    expect((await solvePowChallenge(s, first.siteKey)).status).toBe(200);
    expect((await solvePowChallenge(s, second.siteKey)).status).toBe(200);
    const c = await challenge(s, first.siteKey); // challenges are not billed
    expect(c.status).toBe(200);
    const telemetry = { pointer_moves: 4, focus: true, elapsed_ms: 2000, languages: 1 };
    expect((await s.call('/v1/captcha/managed', { json: { sitekey: second.siteKey, hostname: HOST, telemetry } })).status).toBe(200);
    expectCode(
      await s.call('/v1/captcha/verify', {
        json: { sitekey: first.siteKey, hostname: HOST, token: `${c.body.challenge}.${solvePow(c.body.params as PowParams)}` },
      }),
      429,
      'quota_exceeded',
    );
    // With no quota left no challenge is issued either: nobody solves a puzzle only to be refused.
    expectCode(await challenge(s, second.siteKey), 429, 'quota_exceeded');
    const status = await s.call(`/v1/captcha/status?sitekey=${second.siteKey}`);
    expect(status.body).toMatchObject({ monthly_quota: 3, quota_remaining: 0 });
  });

  it('500 server_error when the single-use store fails, with Turnstile internal-error on siteverify', async () => {
    let broken = false;
    const store: SingleUseStore = {
      consume: () => {
        if (broken) throw new Error('disk on fire');
        return true;
      },
      close: async () => {},
    };
    const s = await stack({ singleUse: store });
    const key = await siteKey(s);
    const proof = (await solvePowChallenge(s, key.siteKey)).body.proof;
    broken = true;
    const reply = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
    expectCode(reply, 500, 'server_error');
    expect(reply.body['error-codes']).toEqual(['internal-error']);
    expect(JSON.stringify(reply.body)).not.toContain('disk on fire');
    expectCode(await solvePowChallenge(s, key.siteKey), 500, 'server_error');
  });

  it('siteverify reads an action of null, as of an empty string, as none to check', async () => {
    const s = await stack();
    const key = await siteKey(s);
    for (const action of [null, '']) {
      const proof = String((await solvePowChallenge(s, key.siteKey, { action: 'login' })).body.proof);
      const reply = await s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, action } });
      expect([reply.status, reply.body.action]).toEqual([200, 'login']);
    }
  });

  it('400 token_already_used, invalid_token (bad or expired), action_mismatch, invalid_request on siteverify', async () => {
    const clock = { now: Date.UTC(2026, 10, 23, 12) };
    const s = await stack({ clock });
    const key = await siteKey(s);
    const other = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey, { action: 'login' })).body.proof);
    const sv = (json: Record<string, unknown>) => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, ...json } });
    expectCode(await sv({}), 400, 'invalid_request');
    expectCode(await sv({ response: 'not-a-token' }), 400, 'invalid_token');
    const badIp = await sv({ response: proof, remoteip: 'nope' });
    expectCode(badIp, 400, 'invalid_request');
    expect(badIp.body['error-codes']).toEqual(['bad-request']);
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: other.secretKey, response: proof } }), 400, 'invalid_token');
    expectCode(await sv({ response: proof, action: 'signup' }), 400, 'action_mismatch');
    clock.now += 301_000;
    const late = await sv({ response: proof });
    expectCode(late, 400, 'invalid_token');
    expect(late.body['error-codes']).toEqual(['timeout-or-duplicate']);
    // Refusals siteverify returns rather than throws are logged as thrown ones are: status and code.
    const lines = s.logged.filter((line) => line.route === '/v1/captcha/siteverify');
    expect(lines.map((line) => [line.status, line.error_code])).toEqual([
      [400, 'invalid_request'],
      [400, 'invalid_token'],
      [400, 'invalid_request'],
      [400, 'invalid_token'],
      [400, 'action_mismatch'],
      [400, 'invalid_token'],
    ]);
  });

  it('a verify whose client left before its answer is not billed: 499 client_closed_request, its quota unit given back', async () => {
    // The client leaves while its challenge is being claimed, as a closed tab would.
    const store = createMemorySingleUseStore();
    const leaving = new AbortController();
    const leaveWhileClaiming: SingleUseStore = {
      consume: (id, expiresAt, now) => (id.startsWith('c:') && leaving.abort(), store.consume(id, expiresAt, now)),
      close: () => store.close(),
    };
    const s = await stack({ singleUse: leaveWhileClaiming });
    const key = await siteKey(s);
    const quotaUsed = async () => (await s.call('/v1/captcha/usage', { key: key.secretKey })).body.quota_used;
    const c = await challenge(s, key.siteKey);
    const verify = (signal?: AbortSignal) =>
      s.api.handle({
        method: 'POST',
        url: '/v1/captcha/verify',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`, trace: [] }),
        remoteAddress: '127.0.0.1',
        signal,
      });
    const gone = await verify(leaving.signal);
    expect(gone.status).toBe(499);
    expect(JSON.parse(gone.body)).toMatchObject({ error_code: 'client_closed_request', error: expect.stringContaining('not billed') });
    expect(await quotaUsed()).toBe(0);
    // A client that stays is billed, as before.
    expect((await solvePowChallenge(s, key.siteKey)).status).toBe(200);
    expect(await quotaUsed()).toBe(1);
  });

  it('a replayed spent proof is refused from memory: the single-use store is asked once per proof, not once per replay', async () => {
    const store = createMemorySingleUseStore();
    const asked: string[] = [];
    const counting: SingleUseStore = { consume: (id, expiresAt, now) => (asked.push(id), store.consume(id, expiresAt, now)), close: () => store.close() };
    const s = await stack({ singleUse: counting });
    const key = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const sv = () => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof } });
    expect((await sv()).status).toBe(200);
    const proofClaims = () => asked.filter((id) => id.startsWith('p:'));
    expect(proofClaims()).toHaveLength(1);
    const replies = [await sv(), await sv(), await sv(), await sv()];
    for (const reply of replies) {
      expectCode(reply, 400, 'token_already_used');
      expect(Object.keys(reply.body)).toEqual(['success', 'error', 'error_code', 'error-codes', 'request_id']);
      expect(reply.body['error-codes']).toEqual(['timeout-or-duplicate']);
    }
    // The first replay learnt it from the store; the next three did not ask again.
    expect(proofClaims()).toHaveLength(2);
    expect(new Set(proofClaims()).size).toBe(1);
  });

  it('a remembered spent proof still meets every earlier check: another secret, action, expiry, and a signing key dropped from the ring', async () => {
    const clock = { now: Date.UTC(2026, 10, 23, 12) };
    const s = await stack({ clock });
    const key = await siteKey(s);
    const other = await siteKey(s);
    const proof = String((await solvePowChallenge(s, key.siteKey, { action: 'login' })).body.proof);
    const sv = (json: Record<string, unknown> = {}) => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: proof, ...json } });
    expect((await sv()).status).toBe(200);
    expectCode(await sv(), 400, 'token_already_used');
    expectCode(await sv(), 400, 'token_already_used');
    expectCode(await s.call('/v1/captcha/siteverify', { json: { secret: other.secretKey, response: proof } }), 400, 'invalid_token');
    expectCode(await sv({ action: 'signup' }), 400, 'action_mismatch');
    // The key that signed the proof leaves the ring (rotated out, then dropped an hour later): the proof no longer verifies.
    const secret = createOperatorSecret(TEST_SECRET);
    await rotateSigningKey(s.meter, secret, clock.now);
    await rotateSigningKey(s.meter, secret, clock.now + 3_600_001);
    clock.now += 61_000; // the ring is read again after a minute
    const unsigned = await sv();
    expectCode(unsigned, 400, 'invalid_token');
    expect(unsigned.body['error-codes']).toEqual(['invalid-input-response']);
    // A proof under the new key, spent and replayed, then expired: expiry answers first.
    const fresh = String((await solvePowChallenge(s, key.siteKey)).body.proof);
    const svFresh = () => s.call('/v1/captcha/siteverify', { json: { secret: key.secretKey, response: fresh } });
    expect((await svFresh()).status).toBe(200);
    expectCode(await svFresh(), 400, 'token_already_used');
    expectCode(await svFresh(), 400, 'token_already_used');
    clock.now += 301_000;
    const late = await svFresh();
    expectCode(late, 400, 'invalid_token');
    expect(late.body['error-codes']).toEqual(['timeout-or-duplicate']);
  });
});

describe('captcha: status, usage, CORS', () => {
  it('status with the site key (?sitekey=) or the secret (Bearer): exactly the spec fields', async () => {
    const s = await stack();
    const key = await siteKey(s, { domains: ['example.com', 'example.org'] });
    for (const reply of [await s.call(`/v1/captcha/status?sitekey=${key.siteKey}`), await s.call('/v1/captcha/status', { key: key.secretKey })]) {
      expect(reply.status).toBe(200);
      const { request_id, ...rest } = reply.body;
      expect(String(request_id)).toMatch(/^req_/);
      expect(rest).toEqual({
        success: true,
        status: 'active',
        product: 'captcha',
        plan: 'starter',
        domains_configured: true,
        domain_count: 2,
        ip_restrictions: false,
        rate_limit_per_minute: 60,
        monthly_quota: 10_000,
        quota_unlimited: false,
        quota_remaining: 10_000,
        quota_period: expect.stringMatching(/^\d{4}-\d{2}$/),
      });
    }
  });

  it('usage counts verify and managed over the subscription, with the secret in the body, the query or Bearer', async () => {
    const s = await stack();
    const key = await siteKey(s, { managed: true });
    await solvePowChallenge(s, key.siteKey);
    await s.call('/v1/captcha/managed', { json: { sitekey: key.siteKey, hostname: HOST, telemetry: { pointer_moves: 3, focus: true, elapsed_ms: 1500 } } });
    for (const reply of [
      await s.call('/v1/captcha/usage', { key: key.secretKey }),
      await s.call(`/v1/captcha/usage?secret=${key.secretKey}`),
      await s.call('/v1/captcha/usage', { method: 'GET', json: { secret: key.secretKey } }),
    ]) {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({ product: 'captcha', plan: 'starter', site_keys: 1, monthly_quota: 10_000, quota_used: 2, quota_remaining: 9_998 });
      expect(reply.body.days).toEqual([{ day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), verifications: 2 }]);
    }
  });

  it('answers a preflight from an allowed Origin with the CORS headers, and refuses another Origin', async () => {
    const s = await stack();
    const key = await siteKey(s);
    const ok = await s.call(`/v1/captcha/verify?sitekey=${key.siteKey}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers).toMatchObject({
      'access-control-allow-origin': 'https://shop.example.com',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      vary: 'Origin',
    });
    const evil = await s.call(`/v1/captcha/verify?sitekey=${key.siteKey}`, { method: 'OPTIONS', headers: { origin: 'https://evil.example.net' } });
    expect(evil.status).toBe(403);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const c = await s.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}`, {
      headers: { origin: 'https://shop.example.com', host: 'api.example.org' },
    });
    expect(c.headers['access-control-allow-origin']).toBe('https://shop.example.com');
  });
});

describe('captcha: a page hostname with a path, query or fragment is no hostname', () => {
  it('normalizeHostname refuses them, where it kept the part before the delimiter', () => {
    for (const text of ['shop.example.com/x', 'evil.test/.example.com', 'shop.example.com?x', 'shop.example.com#x', 'shop.example.com\\x', '1.2.3.4/x'])
      expect(normalizeHostname(text), text).toBeNull();
    expect(normalizeHostname(' Shop.Example.COM. ')).toBe('shop.example.com');
  });

  it('challenge with hostname=shop.example.com/x: 403 domain_required (not a challenge for shop.example.com); a site key domain with a path is refused', async () => {
    const s = await createApiStack();
    const key = await createSiteKey(s.meter, { domains: ['example.com'] });
    for (const hostname of ['shop.example.com/x', 'shop.example.com?x=1', 'shop.example.com#frag']) {
      expectCode(await s.call(`/v1/captcha/challenge?${new URLSearchParams({ sitekey: key.siteKey, hostname })}`), 403, 'domain_required');
    }
    await expect(createSiteKey(s.meter, { domains: ['example.com/path'] })).rejects.toThrow(/not a hostname/);
  });
});
