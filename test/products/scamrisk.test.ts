/**
 * scamrisk end to end through createLookup and the API harness: bundled-list evidence, the
 * report database in the score, the scoring caps, every error code, request ids and status.
 * Engine-backed sources that need the network are disabled; the lists and reports are real.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { coveringDomains } from '../../src/products/scamrisk/engine.js';
import { parseIdentifier } from '../../src/products/scamrisk/identifiers.js';
import { createMemoryReportStore, type ReportStore } from '../../src/products/scamrisk/reports.js';
import { LIMITATIONS, SOFT_SOURCES, type ScamriskRequest, type ScamriskResult } from '../../src/products/scamrisk/types.js';
import { createApiStack, FROZEN_NOW, type ApiStack } from '../api/harness.js';

const DATA = join(bundledDataDir(), 'scamrisk');
const lines = (file: string) =>
  readFileSync(join(DATA, file), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const metamask = JSON.parse(readFileSync(join(bundledDataDir(), 'phishing', 'metamask', 'config.json'), 'utf8')) as {
  blacklist: string[];
  whitelist: string[];
};
const polkadotAddresses = JSON.parse(readFileSync(join(DATA, 'polkadot', 'address.json'), 'utf8')) as Record<string, string[]>;
const SANCTIONED_ETH = lines('ofac/sanctioned_addresses_ETH.txt')[0];
const SANCTIONED_BTC = lines('ofac/sanctioned_addresses_XBT.txt')[0];
const OFFLINE = { disable: [...SOFT_SOURCES] };

let store: ReportStore;
let lookup: Lookup;

function fresh(now = () => FROZEN_NOW, cacheSize?: number): void {
  store = createMemoryReportStore({ now });
  lookup = createLookup({ now, scamrisk: { ...OFFLINE, reports: store, cacheSize } });
}

/** Any object, as an HTTP body or a JavaScript caller may send it: the engine checks every field. */
async function assess(request: Record<string, unknown>): Promise<ScamriskResult> {
  return lookup.scamrisk(request as ScamriskRequest);
}

beforeAll(() => fresh());

describe('the input type (found by a reviewer: it was any object)', () => {
  it('takes { type, value } and the shorthand; a misspelled field or an unknown type does not compile, and fails at run time too', async () => {
    expect((await lookup.scamrisk({ type: 'email', value: 'someone@example.com' })).identifier.type).toBe('email');
    expect((await lookup.scamrisk({ phone: '020 7946 0000', region: 'GB' })).identifier.type).toBe('phone');
    // tsc (npm test's type check) fails if these lines ever type-check.
    // @ts-expect-error: "tpye" is no field
    await expect(lookup.scamrisk({ tpye: 'crypto', value: 'x' })).rejects.toMatchObject({ code: 'invalid_request' });
    // @ts-expect-error: "wallet" is no identifier type
    await expect(lookup.scamrisk({ type: 'wallet', value: 'x' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('bundled lists', () => {
  it('a sanctioned ETH address (any letter case) is critical with its asset as evidence', async () => {
    for (const value of [SANCTIONED_ETH, SANCTIONED_ETH.toLowerCase()]) {
      const result = await assess({ type: 'crypto', value });
      expect(result.assessment.risk_level).toBe('critical');
      expect(result.assessment.recommendation).toBe('manual_review');
      expect(result.signals).toContainEqual(
        expect.objectContaining({ code: 'sanctioned_address', severity: 'critical', source: 'ofac', detail: 'asset: ETH' }),
      );
    }
  });

  it('a sanctioned Bitcoin address is critical', async () => {
    const result = await assess({ crypto: SANCTIONED_BTC });
    expect(result.assessment.risk_level).toBe('critical');
    expect(result.signals.map((s) => s.code)).toContain('sanctioned_address');
  });

  it('every bundled OFAC address is critical, a Bitcoin Cash one with or without its bitcoincash: prefix', async () => {
    const files = readdirSync(join(DATA, 'ofac')).filter((name) => name.endsWith('.txt'));
    let assessed = 0;
    for (const file of files) {
      for (const address of lines(`ofac/${file}`)) {
        // XMR's list also holds a 64-hex value that is no Monero address (a key, not a wallet).
        if (/^[0-9a-f]{64}$/.test(address)) continue;
        const cashaddr = file.includes('_BCH') && /^[qp]/.test(address);
        const forms = cashaddr ? [address, `bitcoincash:${address}`, `BITCOINCASH:${address.toUpperCase()}`] : [address];
        for (const value of forms) {
          const result = await assess({ type: 'crypto', value });
          expect([file, value, result.signals.some((s) => s.code === 'sanctioned_address')]).toEqual([file, value, true]);
          assessed++;
        }
      }
    }
    expect(assessed).toBeGreaterThan(600);
  });

  it('a polkadot scam address shows its campaign and a high level', async () => {
    const [campaign, addresses] = Object.entries(polkadotAddresses)[0];
    const result = await assess({ type: 'crypto', value: addresses[0] });
    expect(result.signals).toContainEqual(expect.objectContaining({ code: 'scam_address', detail: `campaign: ${campaign}` }));
    expect(['high', 'critical']).toContain(result.assessment.risk_level);
  });

  it('a blocklisted phishing domain is flagged (also in a URL and under a subdomain); an allowlisted one is not', async () => {
    const blocked = metamask.blacklist.find((d) => !metamask.whitelist.some((w) => d === w || d.endsWith(`.${w}`)) && !d.includes('*'))!;
    for (const request of [{ domain: blocked }, { type: 'url', value: `https://${blocked}/claim` }, { domain: `login.${blocked}` }]) {
      const result = await assess(request);
      expect(
        result.signals.map((s) => s.code),
        JSON.stringify(request),
      ).toContain('phishing_domain');
      expect(result.assessment.risk_score).toBeGreaterThanOrEqual(60);
    }
    const allowed = metamask.whitelist.find((d) => d.split('.').length === 2)!;
    const result = await assess({ domain: allowed });
    expect(result.signals.map((s) => s.code)).not.toContain('phishing_domain');
  });

  it("polkadot-js's denySub pages (an impersonating account): the page and below it are phishing, in any case; the rest of the site is not", async () => {
    const denySub = (JSON.parse(readFileSync(join(bundledDataDir(), 'phishing', 'polkadot', 'all.json'), 'utf8')) as { denySub: string[] }).denySub;
    expect(denySub.length).toBeGreaterThan(0);
    for (const entry of denySub) {
      const [host, account] = [entry.slice(0, entry.indexOf('/')), entry.slice(entry.indexOf('/') + 1)];
      for (const url of [`https://${entry}`, `https://www.${host}/${account.toUpperCase()}/status/1`, `${host}/${account}/`]) {
        const result = await assess({ type: 'url', value: url });
        expect(result.signals, url).toContainEqual(expect.objectContaining({ code: 'phishing_domain', source: 'polkadot', detail: `listed: ${entry}` }));
      }
      for (const url of [`https://${host}/`, `https://${host}/${account}x`, `https://${host}/other/${account}`]) {
        const result = await assess({ type: 'url', value: url });
        expect(
          result.signals.map((s) => s.code),
          url,
        ).not.toContain('phishing_domain');
      }
      // A domain names no page: the site itself is not listed.
      expect((await assess({ domain: host })).signals.map((s) => s.code)).not.toContain('phishing_domain');
    }
  });

  it('a fresh, valid identifier with no signals gets allow, minimal, and the limitations', async () => {
    const result = await assess({ type: 'username', value: '@Some.Fresh_User' });
    expect(result).toMatchObject({
      identifier: { type: 'username', masked: 's***' },
      assessment: {
        risk_score: 0,
        risk_level: 'minimal',
        recommendation: 'allow',
        coverage: { sources_queried: 1, sources_responded: 1, independent_matches: 0 },
      },
      signals: [],
      report_summary: { total_reports: 0, verified_reports: 0, disputed_reports: 0, categories: [] },
      limitations: [...LIMITATIONS],
    });
    expect(result.generated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    expect(result.limitations.join(' ')).toMatch(/not proof of safety/);
    expect(result.limitations.join(' ')).toMatch(/identity or conduct/);
  });
});

describe('structure signals', () => {
  it('brand in a subdomain, a punycode confusable, a premium-rate number', async () => {
    expect((await assess({ url: 'https://paypal.com.account-verify.xyz/login' })).signals.map((s) => s.code)).toContain('brand_in_subdomain');
    expect((await assess({ url: 'https://www.paypal.com/' })).signals).toEqual([]);
    const idn = await assess({ domain: 'xn--pypal-4ve.com' });
    expect(idn.signals.map((s) => s.code)).toEqual(expect.arrayContaining(['idn_domain', 'mixed_script_domain', 'lookalike_domain']));
    expect(idn.assessment.risk_level).toBe('high');
    const premium = await assess({ phone: '+44 909 879 0000' });
    expect(premium.signals.map((s) => s.code)).toContain('premium_rate_number');
    expect(premium.assessment.recommendation).toBe('manual_review');
  });

  it('an EIP-55 address with a wrong checksum is refused with invalid_identifier naming the reason, not scored', async () => {
    const good = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // EIP-55's own example
    const bad = '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // one letter's case flipped
    expect((await assess({ crypto: good })).signals).toEqual([]);
    await expect(assess({ crypto: bad })).rejects.toMatchObject({
      code: 'invalid_identifier',
      status: 400,
      message: expect.stringContaining('bad checksum for an EVM (EIP-55 mixed-case) address'),
    });
    // No checksum to check in one letter case: both stay valid.
    expect((await assess({ crypto: good.toLowerCase() })).identifier.type).toBe('crypto');
    expect((await assess({ crypto: `0x${good.slice(2).toUpperCase()}` })).identifier.type).toBe('crypto');
  });
});

describe('reports in the score', () => {
  it('verified reports from one reporter give high but never critical; more reporters do not pass the cap alone', async () => {
    fresh();
    const value = 'scammer_handle';
    for (let i = 0; i < 20; i++) await lookup.engine('scamrisk').report({ type: 'username', value, category: 'scam', source: 'one-desk', verified: true });
    let result = await assess({ username: value });
    expect(result.assessment.risk_level).toBe('high');
    expect(result.report_summary).toEqual({ total_reports: 20, verified_reports: 20, disputed_reports: 0, categories: ['scam'] });
    expect(result.signals[0]).toMatchObject({ code: 'reported_verified', severity: 'high', source: 'reports' });
    for (let i = 0; i < 10; i++) await lookup.engine('scamrisk').report({ type: 'username', value, category: 'fraud', source: `desk-${i}`, verified: true });
    result = await assess({ username: value });
    expect(result.assessment.risk_score).toBeLessThan(80);
  });

  it('unverified reports alone stay below high; a reported sanctioned address stays critical; disputed reports add nothing', async () => {
    fresh(undefined, 0); // the dispute below changes the store behind the engine: no assessment cache
    await lookup.engine('scamrisk').report({ type: 'phone', value: '+14155550100', category: 'fraud', source: 'a' });
    let result = await assess({ phone: '+1 415 555 0100' });
    expect(result.signals.map((s) => s.code)).toContain('reported');
    expect(result.assessment.risk_score).toBeLessThan(60);
    const stored = await lookup.engine('scamrisk').report({ type: 'crypto', value: SANCTIONED_ETH, category: 'scam', source: 'b', verified: true });
    result = await assess({ crypto: SANCTIONED_ETH });
    expect(result.assessment.risk_level).toBe('critical');
    expect(result.report_summary.total_reports).toBe(1);
    await store.dispute(stored.id, true, FROZEN_NOW);
    result = await assess({ crypto: SANCTIONED_ETH.toLowerCase() });
    expect(result.report_summary).toMatchObject({ total_reports: 1, disputed_reports: 1, categories: [] });
    expect(result.signals.map((s) => s.code)).toContain('reports_disputed');
  });

  it('old reports decay', async () => {
    fresh();
    const year = 365 * 86_400_000;
    await store.add({
      type: 'address',
      identifier: '1 old street, springfield',
      category: 'scam',
      source: 'x',
      verified: true,
      reportedAt: FROZEN_NOW - 2 * year,
    });
    const result = await assess({ address: '1  Old Street ,Springfield' });
    expect(result.report_summary.total_reports).toBe(1);
    expect(result.assessment.risk_score).toBeLessThan(15);
    // 65 points halved four times: it weighs about 4, and its signal no longer says high.
    expect(result.signals).toMatchObject([{ code: 'reported_verified', severity: 'info', source: 'reports' }]);
    expect(result.assessment.recommendation).toBe('allow');
  });

  it("a report's severity follows its decay: a verified one is high when fresh, medium at half a year, low at a year; an unverified one goes from medium to info", async () => {
    fresh();
    const day = 86_400_000;
    const severityAt = async (ageDays: number, verified: boolean) => {
      const identifier = `aged_${ageDays}_${verified}`;
      await store.add({ type: 'username', identifier, category: 'scam', source: 'desk', verified, reportedAt: FROZEN_NOW - ageDays * day });
      return (await assess({ username: identifier })).signals.find((s) => s.source === 'reports')?.severity;
    };
    expect(await severityAt(0, true)).toBe('high');
    expect(await severityAt(180, true)).toBe('medium');
    expect(await severityAt(365, true)).toBe('low');
    expect(await severityAt(0, false)).toBe('medium');
    expect(await severityAt(365, false)).toBe('low');
    expect(await severityAt(730, false)).toBe('info');
  });
});

describe("a domain's reports and the addresses and pages on it", () => {
  it('only a verified domain report counts for an e-mail or a URL on it: one unverified report on gmail.com no longer flags every mailbox (found by a reviewer)', async () => {
    fresh();
    await store.add({ type: 'domain', identifier: 'gmail.com', category: 'scam', source: 'someone' });
    expect((await assess({ domain: 'gmail.com' })).report_summary.total_reports).toBe(1);
    for (const request of [{ email: 'alice.smith@gmail.com' }, { url: 'https://gmail.com/' }]) {
      const result = await assess(request);
      expect(result.report_summary.total_reports).toBe(0);
      expect(result.assessment.risk_score).toBe(0);
    }
    await store.add({ type: 'domain', identifier: 'gmail.com', category: 'phishing', source: 'abuse-desk', verified: true });
    // Other addresses than above: those answers are in the result cache.
    for (const request of [{ email: 'bob.jones@gmail.com' }, { url: 'https://gmail.com/login' }]) {
      const result = await assess(request);
      expect(result.report_summary).toMatchObject({ total_reports: 1, categories: ['phishing'] });
      expect(result.signals.map((s) => s.code)).toContain('reported_verified');
    }
  });
});

describe("a domain's verified reports and its subdomains", () => {
  it("count for a subdomain and the pages and mailboxes under it; an unverified one stays the domain's own (found by a reviewer: rotating subdomains got around reports)", async () => {
    fresh();
    await store.add({ type: 'domain', identifier: 'evil-shop.com', category: 'scam', source: 'someone' });
    expect((await assess({ domain: 'login.evil-shop.com' })).report_summary.total_reports).toBe(0);
    await store.add({ type: 'domain', identifier: 'evil-shop.com', category: 'phishing', source: 'abuse-desk', verified: true });
    for (const request of [{ domain: 'pay.login.evil-shop.com' }, { url: 'https://www.evil-shop.com/checkout' }, { email: 'billing@mail.evil-shop.com' }]) {
      const result = await assess(request);
      expect(result.report_summary, JSON.stringify(request)).toMatchObject({ total_reports: 1, categories: ['phishing'] });
    }
    // Not a sibling, not the suffix above it.
    expect((await assess({ domain: 'evil-shop.co' })).report_summary.total_reports).toBe(0);
    expect(coveringDomains(parseIdentifier('domain', 'a.b.evil-shop.co.uk'))).toEqual(['b.evil-shop.co.uk', 'evil-shop.co.uk']);
    expect(coveringDomains(parseIdentifier('url', 'https://evil-shop.com/'))).toEqual(['evil-shop.com']);
    expect(coveringDomains(parseIdentifier('url', 'http://203.0.113.9/'))).toEqual([]);
    expect(coveringDomains(parseIdentifier('username', 'someone'))).toEqual([]);
  });
});

describe('HTTP', () => {
  let stack: ApiStack;
  let secret: string;
  let publicKey: string;

  beforeAll(async () => {
    fresh();
    stack = await createApiStack({ lookup });
    ({ secretKey: secret, publicKey } = await stack.keys('scamrisk'));
  });

  it('POST {type, value}, the typed shorthand and GET answer the same assessment, each with a fresh req_ id', async () => {
    const a = await stack.call('/v1/scamrisk/assess', { key: secret, json: { type: 'crypto', value: SANCTIONED_ETH } });
    const b = await stack.call('/v1/scamrisk/assess', { key: secret, json: { crypto: SANCTIONED_ETH } });
    const c = await stack.call(`/v1/scamrisk/assess?type=crypto&value=${SANCTIONED_ETH}`, { key: secret });
    for (const reply of [a, b, c]) {
      expect(reply.status).toBe(200);
      expect(reply.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(reply.body).toMatchObject({ success: true, assessment: { risk_level: 'critical' } });
    }
    expect(new Set([a.body.request_id, b.body.request_id, c.body.request_id]).size).toBe(3);
  });

  it('status lists supported_types', async () => {
    const reply = await stack.call('/v1/scamrisk/status', { key: publicKey });
    expect(reply.body.supported_types).toEqual(['email', 'phone', 'ip', 'username', 'address', 'crypto', 'domain', 'url']);
  });

  it('every error code, for real', async () => {
    const cases: [string, Parameters<ApiStack['call']>[1], number, string][] = [
      ['/v1/scamrisk/assess', { json: { type: 'email', value: 'a@example.com' } }, 401, 'missing_credentials'],
      ['/v1/scamrisk/assess', { key: 'sa_sec_nope', json: { type: 'email', value: 'a@example.com' } }, 401, 'invalid_api_key'],
      ['/v1/scamrisk/assess', { key: publicKey, json: { type: 'email', value: 'a@example.com' } }, 401, 'wrong_key_type'],
      ['/v1/scamrisk/assess', { key: secret, json: { type: 'fax', value: '1' } }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess', { key: secret, json: { type: 'email' } }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess', { key: secret, json: { type: 'email', value: 'a@example.com', email: 'a@example.com' } }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess', { key: secret, json: { email: 'a@example.com', phone: '+14155550100' } }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess', { key: secret, json: { type: 'email', value: 'a@example.com', extra: 1 } }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess?type=email', { key: secret }, 400, 'invalid_request'],
      ['/v1/scamrisk/assess', { key: secret, json: { type: 'email', value: 'not-an-email' } }, 400, 'invalid_identifier'],
      ['/v1/scamrisk/assess', { key: secret, json: { ip: '10.0.0.1' } }, 400, 'invalid_identifier'],
      ['/v1/scamrisk/assess', { key: secret, json: { crypto: 'hello' } }, 400, 'invalid_identifier'],
    ];
    for (const [path, options, status, code] of cases) {
      const reply = await stack.call(path, options);
      expect([reply.status, reply.body.error_code], JSON.stringify(options)).toEqual([status, code]);
      expect(reply.body.request_id).toMatch(/^req_/);
    }
  });

  it('429 rate_limit_exceeded and quota_exceeded', async () => {
    const rate = await stack.keys('scamrisk', { plan: 'test-rate2' });
    const codes: unknown[] = [];
    for (let i = 0; i < 3; i++) codes.push((await stack.call('/v1/scamrisk/assess', { key: rate.secretKey, json: { username: 'x' } })).body.error_code);
    expect(codes.at(-1)).toBe('rate_limit_exceeded');
    const quota = await stack.keys('scamrisk', { plan: 'test-quota3' });
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 4; i++) last = (await stack.call('/v1/scamrisk/assess', { key: quota.secretKey, json: { username: 'x' } })).body;
    expect(last.error_code).toBe('quota_exceeded');
  });

  it('500 assessment_failed when the report database fails', async () => {
    const broken = createMemoryReportStore();
    await broken.close();
    const failing = await createApiStack({ lookup: createLookup({ scamrisk: { ...OFFLINE, reports: broken } }) });
    const keys = await failing.keys('scamrisk');
    const reply = await failing.call('/v1/scamrisk/assess', { key: keys.secretKey, json: { username: 'x' } });
    expect([reply.status, reply.body.error_code]).toEqual([500, 'assessment_failed']);
  });

  it('POST /report files an unverified report that the next assessment counts', async () => {
    const reply = await stack.call('/v1/scamrisk/report', {
      key: secret,
      json: { type: 'email', value: 'Bad.Actor@Example.com', category: 'phishing', reporter: 'help-desk' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.report).toMatchObject({
      identifier: { type: 'email', masked: 'b***@example.com' },
      category: 'phishing',
      reporter: 'help-desk',
      verified: false,
    });
    const assessed = await stack.call('/v1/scamrisk/assess', { key: secret, json: { email: 'bad.actor@example.com' } });
    expect(assessed.body.report_summary).toMatchObject({ total_reports: 1, categories: ['phishing'] });
    const bad = await stack.call('/v1/scamrisk/report', { key: secret, json: { type: 'email', value: 'x@example.com', category: 'nope' } });
    expect([bad.status, bad.body.error_code]).toEqual([400, 'invalid_request']);
    const noAuth = await stack.call('/v1/scamrisk/report', { key: publicKey, json: { type: 'email', value: 'x@example.com', category: 'scam' } });
    expect(noAuth.body.error_code).toBe('wrong_key_type');
  });

  it('POST /report: one subscription counts as one reporter, whatever names it gives; another subscription is another (found by a reviewer)', async () => {
    const flood = async (key: string, names: string[]) => {
      for (const reporter of names) {
        const reply = await stack.call('/v1/scamrisk/report', { key, json: { type: 'domain', value: 'flooded-shop.com', category: 'scam', reporter } });
        expect(reply.body).toMatchObject({ success: true });
      }
    };
    // Four names from one key used to be four independent reporters: 75 points, high, manual_review.
    await flood(secret, ['a', 'b', 'c', 'd']);
    const once = await stack.call('/v1/scamrisk/assess', { key: secret, json: { domain: 'flooded-shop.com' } });
    const reports = (body: Record<string, unknown>) => (body.signals as { source: string; detail?: string }[]).find((signal) => signal.source === 'reports');
    expect(reports(once.body)?.detail).toBe('1 reporter(s); scam');
    expect(once.body.report_summary).toMatchObject({ total_reports: 4 });
    const other = await stack.keys('scamrisk');
    await flood(other.secretKey, ['a']);
    const twice = await stack.call('/v1/scamrisk/assess', { key: secret, json: { domain: 'flooded-shop.com' } });
    expect(reports(twice.body)?.detail).toBe('2 reporter(s); scam');
    expect((twice.body.assessment as { risk_score: number }).risk_score).toBeGreaterThan((once.body.assessment as { risk_score: number }).risk_score);
  });

  it('POST /report counts a note in characters, not UTF-16 units: 500 emoji are taken, 501 refused', async () => {
    const report = (note: string) =>
      stack.call('/v1/scamrisk/report', { key: secret, json: { type: 'domain', value: 'emoji-note-shop.com', category: 'scam', note } });
    const fits = await report('😀'.repeat(500));
    expect([fits.status, fits.body.success]).toEqual([200, true]);
    expect((await store.find('domain', 'emoji-note-shop.com')).map((r) => r.note)).toEqual(['😀'.repeat(500)]);
    const over = await report('😀'.repeat(501));
    expect([over.status, over.body.error_code, over.body.error]).toEqual([400, 'invalid_request', 'note must be a string of at most 500 characters']);
  });

  it('POST /report refuses a region for anything but a phone number, as an assessment does', async () => {
    const reply = await stack.call('/v1/scamrisk/report', { key: secret, json: { type: 'email', value: 'a@b.com', category: 'scam', region: 'GB' } });
    expect([reply.status, reply.body.error_code, reply.body.error]).toEqual([400, 'invalid_request', 'region applies to phone numbers only']);
  });

  it('POST /report refuses a reporter name with a control or text-direction character (an escape, a newline or U+202E would reach `reports list` on a terminal)', async () => {
    // U+202E shows the rest backwards: "desk\u202Eresu-deifirev" reads as "deskverified-user".
    for (const reporter of ['desk\u001b[31m', 'desk\n999 email fake@row.com', 'desk\u202Eresu-deifirev', 'desk\u2067x']) {
      const reply = await stack.call('/v1/scamrisk/report', { key: secret, json: { type: 'email', value: 'x@example.com', category: 'scam', reporter } });
      expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_request']);
    }
  });
});
