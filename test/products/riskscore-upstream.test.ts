/**
 * riskscore upstreams on loopback: an answer that lacks what the scoring rests on (ipinfo
 * without its `privacy` data, an IPQualityScore answer without its flags or score) is a 502
 * naming the cause, never a clean verdict; IPQualityScore's own score drives the verdict and
 * the description as it drives the risk score.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { createApiStack } from '../api/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/riskscore/${name}`, import.meta.url), 'utf8'));
const KEY = 'sekret-key-0123456789';

/** What a basic ipinfo token gets: location and network, no `privacy` object. */
const IPINFO_BASIC = { ip: '1.1.1.1', city: 'Sydney', region: 'New South Wales', country: 'AU', loc: '-33.8,151.2', org: 'AS13335 Cloudflare, Inc.' };
/** An IPQualityScore answer in its documented shape, nothing flagged: only the score varies. */
const ipqsAnswer = (fraudScore: number) => ({
  success: true,
  message: 'Success',
  fraud_score: fraudScore,
  country_code: 'US',
  city: 'Ashburn',
  ISP: 'Example ISP',
  ASN: 64496,
  proxy: false,
  vpn: false,
  tor: false,
  recent_abuse: false,
  bot_status: false,
  mobile: false,
  connection_type: 'Residential',
});
const without = (record: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(record).filter(([k]) => !keys.includes(k)));

let server: HttpFixture;
beforeAll(async () => {
  const full = fixture('ipinfo-8.8.8.8.json');
  server = await startHttpFixture({
    '/ipinfo/1.1.1.1': respond.json(IPINFO_BASIC),
    '/ipinfo/8.8.4.4': respond.json({ ...full, ip: '8.8.4.4', privacy: without(full.privacy, 'tor', 'relay') }),
    '/ipinfo/8.8.8.8': respond.json(full),
    [`/ipqs/${KEY}/9.9.9.9`]: respond.json(ipqsAnswer(90)),
    [`/ipqs/${KEY}/9.9.9.10`]: respond.json(ipqsAnswer(30)),
    [`/ipqs/${KEY}/9.9.9.11`]: respond.json(ipqsAnswer(0)),
    [`/ipqs/${KEY}/9.9.9.12`]: respond.json({ ...ipqsAnswer(60), connection_type: 'Data Center' }),
    [`/ipqs/${KEY}/9.9.9.13`]: respond.json(without(ipqsAnswer(0), 'fraud_score', 'proxy', 'vpn', 'tor', 'recent_abuse')),
    [`/ipqs/${KEY}/9.9.9.14`]: respond.json(without(ipqsAnswer(0), 'vpn')),
    // A refusal that repeats the request path, key and all.
    [`/ipqs/${KEY}/9.9.9.15`]: respond.json({ success: false, message: `Invalid key for request /ipqs/${KEY}/9.9.9.15` }),
  });
});
afterAll(() => server.close());

const ipinfo = () => createLookup({ riskscore: { provider: 'ipinfo', url: `${server.url}/ipinfo`, key: KEY } });
const ipqs = () => createLookup({ riskscore: { provider: 'ipqualityscore', url: `${server.url}/ipqs`, key: KEY } });

describe('riskscore upstream answers missing what the scoring needs', () => {
  it('ipinfo without "privacy" (a basic token) is 502 lookup_failed naming the plan, quota given back; never clean', async () => {
    const stack = await createApiStack({ lookup: ipinfo() });
    const keys = await stack.keys('riskscore');
    const before = (await stack.call('/v1/riskscore/status', { key: keys.publicKey })).body.quota_remaining;
    const reply = await stack.call('/v1/riskscore/lookup?ip=1.1.1.1', { key: keys.secretKey });
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ success: false, error_code: 'lookup_failed' });
    expect(reply.body.error).toMatch(/no "privacy" data .*plan does not include privacy detection/);
    expect(reply.raw).not.toContain(KEY);
    expect(reply.raw).not.toContain('Clean');
    expect((await stack.call('/v1/riskscore/status', { key: keys.publicKey })).body.quota_remaining).toBe(before);
  });

  it('ipinfo with a "privacy" object lacking some of its flags is 502, naming them', async () => {
    await expect(ipinfo().riskscore('8.8.4.4')).rejects.toMatchObject({ code: 'lookup_failed', message: expect.stringContaining('"tor", "relay"') });
  });

  it('ipinfo with its whole "privacy" object still answers', async () => {
    const r = await ipinfo().riskscore('8.8.8.8');
    expect(r.intelligence).toMatchObject({ verdict: 'hosting', flags: { is_hosting: true, is_tor: false, is_vpn: false } });
  });

  it('IPQualityScore without its score and flags is 502 naming the fields, not a clean verdict', async () => {
    await expect(ipqs().riskscore('9.9.9.13')).rejects.toMatchObject({
      code: 'lookup_failed',
      message: 'IPQualityScore lookup failed: the answer has no "fraud_score", "proxy", "vpn", "tor", "recent_abuse"',
    });
    await expect(ipqs().riskscore('9.9.9.14')).rejects.toMatchObject({ code: 'lookup_failed', message: expect.stringContaining('no "vpn"') });
  });
});

describe("riskscore: the provider's own error message", () => {
  it("is passed on without the operator's key, which IPQualityScore has in its request path (found by a reviewer)", async () => {
    const stack = await createApiStack({ lookup: ipqs() });
    const keys = await stack.keys('riskscore');
    const reply = await stack.call('/v1/riskscore/lookup?ip=9.9.9.15', { key: keys.secretKey });
    expect(reply.status).toBe(502);
    expect(reply.body.error).toBe('IPQualityScore lookup failed: the provider said: Invalid key for request /ipqs/***/9.9.9.15');
    expect(reply.raw).not.toContain(KEY);
  });
});

describe("riskscore: IPQualityScore's fraud_score in the verdict and the description", () => {
  it('fraud_score 90 with nothing flagged: verdict suspicious, risk critical, the description names the score', async () => {
    const r = await ipqs().riskscore('9.9.9.9');
    expect(r.intelligence).toMatchObject({
      verdict: 'suspicious',
      description: "Suspicious: the provider's own risk score is 90/100.",
      risk: { score: 90, level: 'critical' },
      flags: { is_anonymous: false, is_malicious: false, is_hosting: false },
    });
  });

  it('fraud_score 60 on a datacenter address: suspicious before hosting', async () => {
    const r = await ipqs().riskscore('9.9.9.12');
    expect(r.intelligence).toMatchObject({ verdict: 'suspicious', risk: { score: 60, level: 'high' }, flags: { is_hosting: true } });
    expect(r.intelligence.description).toContain('60/100');
  });

  it('a fraud_score below the high band stays clean, and the description still says the score', async () => {
    expect((await ipqs().riskscore('9.9.9.10')).intelligence).toMatchObject({
      verdict: 'clean',
      description: "Clean: on none of the lists checked; the provider's own risk score is 30/100.",
      risk: { score: 30, level: 'medium' },
    });
    expect((await ipqs().riskscore('9.9.9.11')).intelligence).toMatchObject({
      verdict: 'clean',
      description: 'Clean: on none of the lists checked.',
      risk: { score: 0, level: 'low' },
    });
  });
});
