/**
 * captcha bypasses a script tried (api.handle, in-memory meter): picking the slider to skip the
 * proof of work a risky visitor owes, guessing a slider's position on one challenge, passing
 * managed mode with no telemetry at all, and answering a challenge fetched at low risk once the
 * risk has risen.
 */
import { describe, expect, it } from 'vitest';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import type { SliderParams } from '../../src/products/captcha/puzzles/slider.js';
import type { TracePoint } from '../../src/products/captcha/puzzles/types.js';
import { createSiteKey, type CreateSiteKeyOptions } from '../../src/products/captcha/site-keys.js';

const HOST = 'shop.example.com';
const HEADLESS_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
/** What the widget reports of a visitor's browser: score 0. */
const HUMAN = { webdriver: false, headless: false, languages: 2, plugins: 3, pointer_moves: 14, keys: 0, focus: true, elapsed_ms: 2600, screen: [1280, 800] };

async function siteKey(s: ApiStack, options: CreateSiteKeyOptions = {}) {
  return createSiteKey(s.meter, { domains: ['example.com'], ...options });
}

function challenge(s: ApiStack, key: string, type: string, telemetry?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const query = new URLSearchParams({ sitekey: key, hostname: HOST, puzzle_type: type });
  if (telemetry !== undefined) query.set('telemetry', JSON.stringify(telemetry));
  return s.call(`/v1/captcha/challenge?${query}`, { headers });
}

function verify(s: ApiStack, key: string, token: string, trace: TracePoint[]): Promise<Reply> {
  return s.call('/v1/captcha/verify', { json: { sitekey: key, hostname: HOST, token, trace } });
}

/** The reviewer's trace: three arrow-key presses over 300 ms, ending on `x`. */
function keyboardTrace(x: number): TracePoint[] {
  return [
    { x: 0, y: 0, t: 0, k: 1 },
    { x: 4, y: 0, t: 150, k: 1 },
    { x, y: 0, t: 300, k: 1 },
  ];
}

/** A drag a person might make: wobbling a little, fast in the middle, slowing at the end. */
function humanTrace(target: number): TracePoint[] {
  const points: TracePoint[] = [];
  let t = 0;
  for (let i = 0; i <= 40; i++) {
    const eased = 1 - (1 - i / 40) ** 3;
    t += 18 + (i % 3);
    points.push({ x: Math.round(target * eased * 10) / 10, y: Math.round(Math.sin(i / 3) * 20) / 10, t });
  }
  points[points.length - 1].x = target;
  return points;
}

function expectCode(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body.error_code }, JSON.stringify(reply.body)).toEqual({ status, code });
}

describe('captcha: above low risk the proof of work is owed, whatever puzzle_type asks', () => {
  it('HeadlessChrome asking for a slider gets the pow at 18 bits (high) or 16 (medium), and random too', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    const ua = { 'user-agent': HEADLESS_UA };
    const high = await challenge(s, key.siteKey, 'slider', { webdriver: true }, ua);
    expect(high.status, JSON.stringify(high.body)).toBe(200);
    expect(high.body).toMatchObject({ puzzle_type: 'pow', params: { algorithm: 'sha256', difficulty: 18, count: 8 } });
    // No telemetry, the User-Agent kept: headless 30 + no interaction 15 = 45, medium.
    expect((await challenge(s, key.siteKey, 'slider', undefined, ua)).body).toMatchObject({ puzzle_type: 'pow', params: { difficulty: 16 } });
    for (let i = 0; i < 8; i++)
      expect((await challenge(s, key.siteKey, 'random', undefined, ua)).body).toMatchObject({ puzzle_type: 'pow', params: { difficulty: 16 } });
    // An unknown type is still refused, at any risk.
    expectCode(await challenge(s, key.siteKey, 'chess', undefined, ua), 400, 'invalid_request');
  });

  it("the reviewer's script: a slider answer with a 3-key trace gets no proof; the pow at its difficulty does", async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { blockAt: null } });
    const c = await challenge(s, key.siteKey, 'slider', undefined, { 'user-agent': HEADLESS_UA });
    expect(c.body.puzzle_type).toBe('pow');
    expect((c.body.params as PowParams).difficulty).toBe(16);
    expectCode(await verify(s, key.siteKey, `${c.body.challenge}.150`, keyboardTrace(150)), 400, 'challenge_failed');
    const again = await challenge(s, key.siteKey, 'slider', undefined, { 'user-agent': HEADLESS_UA });
    const solved = await verify(s, key.siteKey, `${again.body.challenge}.${solvePow(again.body.params as PowParams)}`, []);
    expect(solved.status, JSON.stringify(solved.body)).toBe(200);
    expect(solved.body).toMatchObject({ success: true, risk_level: 'medium' });
  });

  it('at low risk the slider is still issued and a drag solves it; with risk scaling off, at any risk', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    const c = await challenge(s, key.siteKey, 'slider', HUMAN);
    expect(c.body).toMatchObject({ puzzle_type: 'slider', params: { width: 300 } });
    const target = (c.body.params as SliderParams).target;
    const solved = await verify(s, key.siteKey, `${c.body.challenge}.${target}`, humanTrace(target));
    expect(solved.status, JSON.stringify(solved.body)).toBe(200);
    expect(solved.body).toMatchObject({ success: true, risk_level: 'low' });

    // Scaling off: the risk asks for no more work than low's, so the slider stays the site's choice.
    const flat = await siteKey(s, { risk: { scaleDifficulty: false } });
    const risky = await challenge(s, flat.siteKey, 'slider', { webdriver: true }, { 'user-agent': HEADLESS_UA });
    expect(risky.body).toMatchObject({ puzzle_type: 'slider' });
  });
});

describe('captcha: a wrong answer uses the challenge up', () => {
  it('a wrong slider answer, then the right one on the same challenge: challenge_failed, then invalid_token', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    const c = await challenge(s, key.siteKey, 'slider');
    expect(c.body.puzzle_type).toBe('slider');
    const target = (c.body.params as SliderParams).target;
    const off = target + 20;
    expectCode(await verify(s, key.siteKey, `${c.body.challenge}.${off}`, keyboardTrace(off)), 400, 'challenge_failed');
    const right = await verify(s, key.siteKey, `${c.body.challenge}.${target}`, keyboardTrace(target));
    expectCode(right, 400, 'invalid_token');
    expect(String(right.body.error)).toMatch(/already answered; fetch a new one/);
    // Each try costs a new challenge, and a new one is solvable.
    const next = await challenge(s, key.siteKey, 'slider');
    const nextTarget = (next.body.params as SliderParams).target;
    expect((await verify(s, key.siteKey, `${next.body.challenge}.${nextTarget}`, keyboardTrace(nextTarget))).status).toBe(200);
  });

  it('the same for a pow: a wrong solution spends the challenge', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    const c = await challenge(s, key.siteKey, 'pow');
    expectCode(await verify(s, key.siteKey, `${c.body.challenge}.x,y`, []), 400, 'challenge_failed');
    expectCode(await verify(s, key.siteKey, `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`, []), 400, 'invalid_token');
  });
});

describe('captcha: managed mode needs telemetry', () => {
  const managed = (s: ApiStack, key: string, extra: Record<string, unknown> = {}) =>
    s.call('/v1/captcha/managed', { json: { sitekey: key, hostname: HOST, ...extra } });

  it('a body of sitekey and hostname only: 422 interactive_required, and the quota unit is given back', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { managed: true });
    const bare = await managed(s, key.siteKey);
    expectCode(bare, 422, 'interactive_required');
    expect(bare.body.interactive_required).toBe(true);
    expect(String(bare.body.error)).toMatch(/no telemetry/);
    expect(bare.headers['x-quota-remaining']).toBe('10000');
  });

  it.each([
    ['an empty object', {}],
    ['a lone focus flag', { focus: true }],
    ['counts of the wrong type', { pointer_moves: '30', keys: null, focus: true, elapsed_ms: 4000 }],
    ['not an object', 'hello'],
  ])('telemetry that is %s: 422 interactive_required', async (_name, telemetry) => {
    const s = await createApiStack();
    const key = await siteKey(s, { managed: true });
    expectCode(await managed(s, key.siteKey, { telemetry }), 422, 'interactive_required');
  });

  it("the widget's telemetry still passes, with no interaction counted too (0 moves, 0 keys)", async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { managed: true });
    expect((await managed(s, key.siteKey, { telemetry: HUMAN })).body).toMatchObject({ success: true, mode: 'managed', risk_score: 0 });
    const still = await managed(s, key.siteKey, { telemetry: { ...HUMAN, pointer_moves: 0, keys: 0, focus: false } });
    expect(still.body).toMatchObject({ success: true, mode: 'managed', risk_score: 15 });
  });
});

// A challenge fetched looking clean, answered from a hosting address or a headless browser (found by a reviewer).
describe('captcha: a risk that rose since the challenge owes the pow that risk asks for', () => {
  it('a slider fetched at low risk, answered with a HeadlessChrome User-Agent (medium): invalid_token, the challenge unspent; a new challenge asks 16 bits', async () => {
    const s = await createApiStack();
    const key = await createSiteKey(s.meter, { domains: ['example.com'] });
    const c = await challenge(s, key.siteKey, 'slider', HUMAN);
    expect(c.body.puzzle_type).toBe('slider');
    const target = (c.body.params as SliderParams).target;
    const answer = (headers: Record<string, string>) =>
      s.call('/v1/captcha/verify', {
        json: { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${target}`, trace: humanTrace(target), telemetry: HUMAN },
        headers,
      });
    // Before the fix: 200, a proof at risk 30 (medium) for a slider a script passes in milliseconds.
    expectCode(await answer({ 'user-agent': HEADLESS_UA }), 400, 'invalid_token');
    const again = await challenge(s, key.siteKey, 'slider', HUMAN, { 'user-agent': HEADLESS_UA });
    expect(again.body).toMatchObject({ puzzle_type: 'pow', params: { difficulty: 16 } });
    // The refused answer did not spend the challenge: answered at the risk it was issued for, it passes.
    const passed = await answer({});
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    expect(passed.body.risk_level).toBe('low');
  });

  it('the same for a 14-bit pow answered with webdriver telemetry (medium): refused; a 16-bit pow at that risk passes', async () => {
    const s = await createApiStack();
    const key = await createSiteKey(s.meter, { domains: ['example.com'] });
    const risky = { ...HUMAN, webdriver: true };
    const verify = (c: Reply) =>
      s.call('/v1/captcha/verify', {
        json: { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`, telemetry: risky },
      });
    const low = await challenge(s, key.siteKey, 'pow', HUMAN);
    expect(low.body.params).toMatchObject({ difficulty: 14 });
    expectCode(await verify(low), 400, 'invalid_token');
    const query = new URLSearchParams({ sitekey: key.siteKey, hostname: HOST, telemetry: JSON.stringify(risky) });
    const medium = await s.call(`/v1/captcha/challenge?${query}`);
    expect(medium.body.params).toMatchObject({ difficulty: 16 });
    const passed = await verify(medium);
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    expect(passed.body.risk_level).toBe('medium');
  });

  it('with risk scaling off the slider still passes at any risk (the policy owes no harder work)', async () => {
    const s = await createApiStack();
    const key = await createSiteKey(s.meter, { domains: ['example.com'], risk: { scaleDifficulty: false, blockAt: null } });
    const c = await challenge(s, key.siteKey, 'slider', HUMAN);
    const target = (c.body.params as SliderParams).target;
    const passed = await s.call('/v1/captcha/verify', {
      json: {
        sitekey: key.siteKey,
        hostname: HOST,
        token: `${c.body.challenge}.${target}`,
        trace: humanTrace(target),
        telemetry: { ...HUMAN, webdriver: true },
      },
      headers: { 'user-agent': HEADLESS_UA },
    });
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    expect(passed.body.risk_level).toBe('high');
  });
});
