/**
 * captcha's risk policy through the API (api.handle, in-memory meter): the pow difficulty grows
 * with the risk seen at challenge time and is bound into the signed challenge; siteverify
 * refuses a proof at or above the site key's limit with 403 risk_too_high (and uses the token
 * up); the defaults hold for site keys stored before the policy existed.
 */
import { describe, expect, it } from 'vitest';
import { createApiStack, type ApiStack, type Reply } from '../api/harness.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import { createSiteKey, listSiteKeys, updateSiteKey, type CreateSiteKeyOptions } from '../../src/products/captcha/site-keys.js';
import { DEFAULT_RISK_POLICY } from '../../src/products/captcha/risk-policy.js';

const HOST = 'shop.example.com';
/** What a visitor's browser reports: score 0. */
const HUMAN = { webdriver: false, headless: false, languages: 2, pointer_moves: 14, focus: true, elapsed_ms: 2600, screen: [1280, 800] };
/** No interaction and answered at once: 15 + 20 = 35, medium. */
const QUIET = { pointer_moves: 0, keys: 0, focus: false, elapsed_ms: 120, languages: 2 };
/** Playwright's headless Chromium after a click: webdriver 40 + headless 30 = 70, high. */
const HEADLESS = { ...HUMAN, webdriver: true, headless: true };

async function siteKey(s: ApiStack, options: CreateSiteKeyOptions = {}) {
  return createSiteKey(s.meter, { domains: ['example.com'], ...options });
}

function challenge(s: ApiStack, key: string, telemetry?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const query = new URLSearchParams({ sitekey: key, hostname: HOST });
  if (telemetry !== undefined) query.set('telemetry', typeof telemetry === 'string' ? telemetry : JSON.stringify(telemetry));
  return s.call(`/v1/captcha/challenge?${query}`, { headers });
}

function verify(s: ApiStack, key: string, token: string, telemetry: unknown): Promise<Reply> {
  return s.call('/v1/captcha/verify', { json: { sitekey: key, hostname: HOST, token, telemetry } });
}

function siteverify(s: ApiStack, secret: string, response: unknown): Promise<Reply> {
  return s.call('/v1/captcha/siteverify', { json: { secret, response } });
}

/** A proof whose risk is `verifyTelemetry`'s, from a challenge fetched with `challengeTelemetry`. */
async function proofWith(s: ApiStack, key: string, challengeTelemetry: unknown, verifyTelemetry: unknown): Promise<Reply> {
  const c = await challenge(s, key, challengeTelemetry);
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  const reply = await verify(s, key, `${c.body.challenge}.${solvePow(c.body.params as PowParams)}`, verifyTelemetry);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply;
}

const difficultyOf = (reply: Reply) => (reply.body.params as PowParams).difficulty;

describe('captcha risk policy: the proof of work grows with the risk seen at challenge time', () => {
  it('low 14 bits, medium 16, high 18 (4x the work per level); the HeadlessChrome User-Agent counts without telemetry', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    expect(difficultyOf(await challenge(s, key.siteKey, HUMAN))).toBe(14);
    expect(difficultyOf(await challenge(s, key.siteKey))).toBe(14); // no telemetry: "no interaction" only, 15
    expect(difficultyOf(await challenge(s, key.siteKey, QUIET))).toBe(16);
    const high = await challenge(s, key.siteKey, HEADLESS);
    expect(high.body).toMatchObject({ success: true, puzzle_type: 'pow', params: { algorithm: 'sha256', difficulty: 18, count: 8 } });
    // A bot that sends no telemetry but keeps its User-Agent: headless 30 + no interaction 15 = 45, medium.
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
    expect(difficultyOf(await challenge(s, key.siteKey, undefined, { 'user-agent': ua }))).toBe(16);
    // Telemetry that is not JSON, or too long, is none: never an error.
    expect(difficultyOf(await challenge(s, key.siteKey, '{"webdriver":tru'))).toBe(14);
    expect(difficultyOf(await challenge(s, key.siteKey, JSON.stringify({ ...HEADLESS, timezone: 'x'.repeat(3000) })))).toBe(14);
    // The slider is no work for a machine: above low risk the pow is issued whatever was asked.
    const slider = await s.call(
      `/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}&puzzle_type=slider&telemetry=${encodeURIComponent(JSON.stringify(HEADLESS))}`,
    );
    expect(slider.body).toMatchObject({ puzzle_type: 'pow', params: { difficulty: 18 } });
  });

  it('scaling off: 14 bits whatever the risk', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { scaleDifficulty: false } });
    expect(difficultyOf(await challenge(s, key.siteKey, HEADLESS))).toBe(14);
    expect(difficultyOf(await challenge(s, key.siteKey, QUIET))).toBe(14);
  });

  it('the difficulty is bound into the signed challenge: a 14-bit solution of a high-risk challenge is refused, a real one passes', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { blockAt: null } });
    const high = await challenge(s, key.siteKey, HEADLESS);
    const params = high.body.params as PowParams;
    expect(params.difficulty).toBe(18);
    // The cheap solution: the same salt at the low-risk difficulty (what a client picking its own difficulty would send).
    const cheap = await verify(s, key.siteKey, `${high.body.challenge}.${solvePow({ ...params, difficulty: 14 })}`, HUMAN);
    expect(cheap.status).toBe(400);
    expect(cheap.body).toMatchObject({ success: false, error_code: 'challenge_failed' });
    expect(String(cheap.body.error)).toMatch(/does not solve its puzzle/);

    // A medium challenge solved at its own 16 bits passes; its proof keeps the challenge's risk.
    const medium = await challenge(s, key.siteKey, QUIET);
    expect(difficultyOf(medium)).toBe(16);
    const solved = await verify(s, key.siteKey, `${medium.body.challenge}.${solvePow(medium.body.params as PowParams)}`, HUMAN);
    expect(solved.status).toBe(200);
    expect(solved.body).toMatchObject({ success: true, risk_score: 35, risk_level: 'medium' });
  });
});

describe('captcha risk policy: siteverify refuses a high-risk proof', () => {
  it('the default limit (60): 403 risk_too_high with its score, error-codes risk-too-high; the token is used up', async () => {
    const s = await createApiStack();
    // The limit is the default; the difficulty is not scaled, so the proofs are 14-bit (an 18-bit one took 1.6 s to solve).
    const key = await siteKey(s, { risk: { scaleDifficulty: false } });
    const verified = await proofWith(s, key.siteKey, HEADLESS, HEADLESS);
    expect(verified.body).toMatchObject({ success: true, risk_score: 70, risk_level: 'high' });
    const refused = await siteverify(s, key.secretKey, verified.body.proof);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, error_code: 'risk_too_high', 'error-codes': ['risk-too-high'], risk_score: 70, risk_level: 'high' });
    expect(String(refused.body.request_id)).toMatch(/^req_/);
    expect(String(refused.body.error)).toContain('60');
    const again = await siteverify(s, key.secretKey, verified.body.proof);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error_code: 'token_already_used' });

    // A medium-risk proof (35) passes under the default limit.
    const medium = await proofWith(s, key.siteKey, QUIET, QUIET);
    expect((await siteverify(s, key.secretKey, medium.body.proof)).body).toMatchObject({ success: true, risk_score: 35, risk_level: 'medium' });
  });

  it('with an idempotency_key, a refusal for risk (the token used up all the same) is refused the same on retry, never a success', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { scaleDifficulty: false } });
    const proof = (await proofWith(s, key.siteKey, HEADLESS, HUMAN)).body.proof;
    const body = { secret: key.secretKey, response: proof, idempotency_key: '6ba7b810-9dad-11d1-80b4-00c04fd430c8' };
    expect((await s.call('/v1/captcha/siteverify', { json: body })).body).toMatchObject({ success: false, error_code: 'risk_too_high' });
    expect((await s.call('/v1/captcha/siteverify', { json: body })).body).toMatchObject({ success: false, error_code: 'risk_too_high' });
    // Another key, or none: the token is used.
    const other = { ...body, idempotency_key: '6ba7b811-9dad-11d1-80b4-00c04fd430c8' };
    expect((await s.call('/v1/captcha/siteverify', { json: other })).body).toMatchObject({ success: false, error_code: 'token_already_used' });
  });

  it('the risk seen at challenge time counts at siteverify even when verify sends clean telemetry', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { scaleDifficulty: false } }); // 14 bits, so the test solves fast
    const verified = await proofWith(s, key.siteKey, HEADLESS, HUMAN);
    expect(verified.body).toMatchObject({ risk_score: 70, risk_level: 'high' });
    expect((await siteverify(s, key.secretKey, verified.body.proof)).body).toMatchObject({ success: false, error_code: 'risk_too_high', risk_score: 70 });
  });

  it('a raised limit or none at all lets the same proof through', async () => {
    const s = await createApiStack();
    // Difficulty not scaled: the limit is what is tested, and a 14-bit proof solves 16 times faster than an 18-bit one.
    const raised = await siteKey(s, { risk: { blockAt: 80, scaleDifficulty: false } });
    const off = await siteKey(s, { risk: { blockAt: null, scaleDifficulty: false } });
    for (const key of [raised, off]) {
      const verified = await proofWith(s, key.siteKey, HEADLESS, HEADLESS);
      const answer = await siteverify(s, key.secretKey, verified.body.proof);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: true, 'error-codes': [], risk_score: 70, risk_level: 'high' });
    }
    // A limit below the score refuses it: the limit is the site key's, not the level's.
    const strict = await siteKey(s, { risk: { blockAt: 30, scaleDifficulty: false } });
    const medium = await proofWith(s, strict.siteKey, QUIET, QUIET);
    expect((await siteverify(s, strict.secretKey, medium.body.proof)).body).toMatchObject({ error_code: 'risk_too_high', risk_score: 35 });
  });

  it('the policy read at siteverify is the current one: lifting the limit after verify lets an issued proof through', async () => {
    const s = await createApiStack();
    const key = await siteKey(s, { risk: { scaleDifficulty: false } }); // the default limit, 14-bit puzzles
    const before = await proofWith(s, key.siteKey, HEADLESS, HEADLESS);
    const after = await proofWith(s, key.siteKey, HEADLESS, HEADLESS);
    expect((await siteverify(s, key.secretKey, before.body.proof)).body).toMatchObject({ error_code: 'risk_too_high' });
    await updateSiteKey(s.meter, key.siteKey, { risk: { blockAt: null } });
    // A fresh API on the same meter: no settings cached from the calls above.
    const fresh = await createApiStack({ meter: s.meter });
    expect((await siteverify(fresh, key.secretKey, after.body.proof)).body).toMatchObject({ success: true, risk_score: 70 });
  });
});

describe('captcha risk policy: settings', () => {
  it('a site key stored before the policy existed gets the default: scaled pow and the limit at 60', async () => {
    const s = await createApiStack();
    const key = await siteKey(s);
    const [listed] = await listSiteKeys(s.meter);
    const { risk: _dropped, plan: _plan, status: _status, secretKeyPrefix: _prefix, ...legacy } = listed;
    await s.meter.setSetting(`captcha.sitekey.${listed.publicKeyId}`, JSON.stringify(legacy));
    expect(await s.meter.getSetting(`captcha.sitekey.${listed.publicKeyId}`)).not.toContain('risk');
    expect((await listSiteKeys(s.meter))[0].risk).toEqual({ blockAt: 60, scaleDifficulty: true });
    expect(difficultyOf(await challenge(s, key.siteKey, HEADLESS))).toBe(18);
    // An update of one field keeps the default of the other: the limit at 60 refuses a high-risk
    // proof (solved at 14 bits: the test of the default policy above solves an 18-bit one).
    const updated = await updateSiteKey(s.meter, key.siteKey, { risk: { scaleDifficulty: false } });
    expect(updated.risk).toEqual({ blockAt: 60, scaleDifficulty: false });
    const verified = await proofWith(s, key.siteKey, HEADLESS, HEADLESS);
    expect((await siteverify(s, key.secretKey, verified.body.proof)).body).toMatchObject({ error_code: 'risk_too_high', risk_score: 70 });
  });

  it('the library API: create and update take the policy, list shows it; bad values are refused', async () => {
    const s = await createApiStack();
    expect(DEFAULT_RISK_POLICY).toEqual({ blockAt: 60, scaleDifficulty: true });
    const key = await siteKey(s, { risk: { blockAt: 75 } });
    expect((await listSiteKeys(s.meter))[0].risk).toEqual({ blockAt: 75, scaleDifficulty: true });
    expect((await updateSiteKey(s.meter, key.siteKey, { risk: { blockAt: null } })).risk).toEqual({ blockAt: null, scaleDifficulty: true });
    for (const bad of [0, 101, 59.5, '60'] as unknown[]) {
      await expect(siteKey(s, { risk: { blockAt: bad as number } })).rejects.toMatchObject({
        code: 'invalid_option',
        message: expect.stringContaining('risk.blockAt'),
      });
    }
    await expect(updateSiteKey(s.meter, key.siteKey, { risk: { scaleDifficulty: 'yes' as unknown as boolean } })).rejects.toMatchObject({
      code: 'invalid_option',
    });
    expect((await listSiteKeys(s.meter)).filter((k) => k.siteKey === key.siteKey)[0].risk.blockAt).toBeNull();
  });
});
