/**
 * captcha: a risk that rises between the challenge and its answer (a challenge fetched looking
 * clean, answered from a hosting address or a headless browser) owes the harder pow that risk
 * asks for (api.handle, in-memory meter; found by a reviewer).
 */
import { describe, expect, it } from 'vitest';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import type { SliderParams } from '../../src/products/captcha/puzzles/slider.js';
import type { TracePoint } from '../../src/products/captcha/puzzles/types.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';

const HOST = 'shop.example.com';
const HEADLESS_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
/** What the widget reports of a visitor's browser: score 0. */
const HUMAN = { webdriver: false, headless: false, languages: 2, plugins: 3, pointer_moves: 14, keys: 0, focus: true, elapsed_ms: 2600, screen: [1280, 800] };

function challenge(s: ApiStack, key: string, type: string, headers: Record<string, string> = {}): Promise<Reply> {
  const query = new URLSearchParams({ sitekey: key, hostname: HOST, puzzle_type: type, telemetry: JSON.stringify(HUMAN) });
  return s.call(`/v1/captcha/challenge?${query}`, { headers });
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

describe('captcha: a risk that rose since the challenge owes the pow that risk asks for', () => {
  it('a slider fetched at low risk, answered with a HeadlessChrome User-Agent (medium): invalid_token, the challenge unspent; a new challenge asks 16 bits', async () => {
    const s = await createApiStack();
    const key = await createSiteKey(s.meter, { domains: ['example.com'] });
    const c = await challenge(s, key.siteKey, 'slider');
    expect(c.body.puzzle_type).toBe('slider');
    const target = (c.body.params as SliderParams).target;
    const answer = (headers: Record<string, string>) =>
      s.call('/v1/captcha/verify', {
        json: { sitekey: key.siteKey, hostname: HOST, token: `${c.body.challenge}.${target}`, trace: humanTrace(target), telemetry: HUMAN },
        headers,
      });
    // Before the fix: 200, a proof at risk 30 (medium) for a slider a script passes in milliseconds.
    expectCode(await answer({ 'user-agent': HEADLESS_UA }), 400, 'invalid_token');
    const again = await challenge(s, key.siteKey, 'slider', { 'user-agent': HEADLESS_UA });
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
    const low = await challenge(s, key.siteKey, 'pow');
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
    const c = await challenge(s, key.siteKey, 'slider');
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
