/**
 * emailauth against a real loopback DNS server (test/servers/dns-server.ts): the engine through
 * createLookup, and its HTTP forms once through api.handle. The zone is EMAIL_ZONE's records
 * under RFC 2606 names with real (ICANN) suffixes, since emailauth refuses unknown TLDs such as
 * `.test`, plus names built to fail (CNAME loops answer SERVFAIL).
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isLookupError, type LookupError } from '../../src/errors.js';
import { createMemoryCache } from '../../src/lib/cache.js';
import type { DnsResolverOptions } from '../../src/lib/dns/index.js';
import { createLookup, type LookupOptions } from '../../src/lookup.js';
import { createEmailAuthEngine } from '../../src/products/emailauth/engine.js';
import { dkimKey, isDmarcRecord, isSpfRecord } from '../../src/products/emailauth/records.js';
import { DKIM_SELECTORS, type EmailAuthResult } from '../../src/products/emailauth/types.js';
import { createApiStack } from '../api/harness.js';
import { startDnsServer, type DnsRecord, type Zone } from '../servers/dns-server.js';
import { DKIM_KEYS, EMAIL_ZONE } from '../servers/email-zone.js';

/** EMAIL_ZONE's `*example.test` names moved under example.com. */
const EXAMPLE_COM: Zone = Object.fromEntries(
  Object.entries(EMAIL_ZONE)
    .filter(([name]) => name.endsWith('example.test'))
    .map(([name, records]) => [name.replace(/example\.test$/, 'example.com'), records]),
);

const TXT = (data: string): DnsRecord => ({ type: 'TXT', data });
const cname = (target: string): DnsRecord[] => [{ type: 'CNAME', target }];
/** A CNAME pointing into a two-name loop: the server answers SERVFAIL for it. */
const LOOP = cname('loop-a.example.net');

const ZONE: Zone = {
  // Everything (score 100): SPF among other TXT, DMARC, DKIM default/google (2048-bit key in two
  // character-strings)/selector1 (ed25519)/k1 (revoked)
  ...EXAMPLE_COM,
  // Nothing at all: the name exists with an A record only
  'example.net': [{ type: 'A', address: '192.0.2.80' }],
  'spf-only.example.net': [TXT('v=spf1 a -all'), TXT('v=spf10 not an spf record')],
  'two-spf.example.net': EMAIL_ZONE['two-spf.test'],
  // SPF records that break RFC 7208's grammar (the suite's non-ascii-mech, redirect twice)
  'hosed.example.net': [TXT('v=spf1 a:ïcaramba.example.net -all')],
  'two-redirects.example.net': [TXT('v=spf1 redirect=a.example.com redirect=b.example.com')],
  // DMARC tree walk: mail.sub.example.org has none, example.org does
  'example.org': EMAIL_ZONE['example.org'],
  '_dmarc.example.org': EMAIL_ZONE['_dmarc.example.org'],
  'mail.sub.example.org': EMAIL_ZONE['mail.sub.example.org'],
  'own.example.org': [TXT('v=spf1 -all')],
  '_dmarc.own.example.org': [TXT('v=DMARC1; p=none')],
  // Microsoft 365: selector1 a CNAME into the tenant's zone, selector2 a dangling CNAME
  'contoso.example.net': EMAIL_ZONE['contoso.test'],
  'selector1._domainkey.contoso.example.net': EMAIL_ZONE['selector1._domainkey.contoso.test'],
  'selector2._domainkey.contoso.example.net': EMAIL_ZONE['selector2._domainkey.contoso.test'],
  'selector1-contoso-test._domainkey.contoso.onmicrosoft.test': EMAIL_ZONE['selector1-contoso-test._domainkey.contoso.onmicrosoft.test'],
  // IDN: münchen.example.net
  'xn--mnchen-3ya.example.net': [TXT('v=spf1 mx -all')],
  // TXT records at selector names that are, and are not, DKIM key records
  'lookalike.example.net': [TXT('V=SPF1 -all')],
  'default._domainkey.lookalike.example.net': [TXT('v=spf1 -all')],
  'google._domainkey.lookalike.example.net': [TXT('google-site-verification=abc'), TXT(`k=rsa; p=${DKIM_KEYS.rsa1024}`)],
  'mail._domainkey.lookalike.example.net': [TXT('v=DMARC1; p=reject')],
  // Failures on single names, the rest answering
  'loop-a.example.net': cname('loop-b.example.net'),
  'loop-b.example.net': cname('loop-a.example.net'),
  'partial.example.net': [TXT('v=spf1 -all')],
  'google._domainkey.partial.example.net': [TXT(`v=DKIM1; p=${DKIM_KEYS.rsa1024}`)],
  's1._domainkey.partial.example.net': LOOP,
  'broken-dmarc.example.net': [TXT('v=spf1 -all')],
  '_dmarc.broken-dmarc.example.net': LOOP,
  'dkim-down.example.net': [TXT('v=spf1 -all')],
  ...Object.fromEntries(DKIM_SELECTORS.map((s) => [`${s}._domainkey.dkim-down.example.net`, LOOP])),
};

const server = await startDnsServer({ zone: ZONE });
const failing = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
afterAll(() => Promise.all([server.close(), failing.close()]));
beforeEach(() => {
  server.resetCounts();
  failing.resetCounts();
});

/** A new createLookup (empty caches) on the zone's server. */
function fresh(options: LookupOptions = {}, dns: DnsResolverOptions = {}) {
  return createLookup({ ...options, dns: { servers: [server.address], timeouts: { totalMs: 1_000 }, ...dns } });
}

async function rejection(promise: Promise<unknown>): Promise<LookupError> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return error;
    throw error;
  }
  throw new Error('expected a LookupError');
}

const NONE = {
  spf: { found: false, record: null, records: [], valid: false, error: null },
  dkim: { found: false, selectors: [], failed_selectors: [] },
  dmarc: { found: false, record: null, records: [], valid: false, error: null, source: null, policy_domain: null },
};
const SPF_EXAMPLE = 'v=spf1 include:_spf.example.net ~all';
const DMARC_EXAMPLE = 'v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.test; adkim=s; aspf=s';
const DMARC_ORG = 'v=DMARC1; p=quarantine; sp=none; pct=100; rua=mailto:dmarc@example.org';

describe('emailauth lookups', () => {
  it('finds everything on example.com (score 100), the 2048-bit key joined from its two strings', async () => {
    const result = await fresh().emailauth('example.com');
    expect(result).toEqual({
      domain: 'example.com',
      score: 100,
      spf: { found: true, record: SPF_EXAMPLE, records: [SPF_EXAMPLE], valid: true, error: null },
      dkim: {
        found: true,
        selectors: [
          { selector: 'default', record: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa1024}`, revoked: false },
          { selector: 'google', record: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`, revoked: false },
          { selector: 'selector1', record: `v=DKIM1; k=ed25519; p=${DKIM_KEYS.ed25519}`, revoked: false },
          { selector: 'k1', record: 'v=DKIM1; p=', revoked: true },
        ],
        failed_selectors: [],
      },
      dmarc: { found: true, record: DMARC_EXAMPLE, records: [DMARC_EXAMPLE], valid: true, error: null, source: 'domain', policy_domain: 'example.com' },
    } satisfies EmailAuthResult);
    expect(result.dkim.selectors[1].record.length).toBeGreaterThan(255);
    // One TXT query per name: the domain, _dmarc, and the nine selectors in parallel.
    expect(server.total()).toBe(11);
    for (const selector of DKIM_SELECTORS) expect(server.queries.get(`${selector}._domainkey.example.com TXT`)).toBe(1);
  });

  it('finds nothing on a domain with no records (score 0)', async () => {
    expect(await fresh().emailauth('example.net')).toEqual({ domain: 'example.net', score: 0, ...NONE });
  });

  it('answers a domain that does not exist (NXDOMAIN) with nothing found, not an error', async () => {
    expect(await fresh().emailauth('no-such-name.example.net')).toEqual({ domain: 'no-such-name.example.net', score: 0, ...NONE });
  });

  it('scores SPF alone 35, ignoring a TXT record that only starts like one (v=spf10)', async () => {
    expect(await fresh().emailauth('spf-only.example.net')).toEqual({
      ...NONE,
      domain: 'spf-only.example.net',
      score: 35,
      spf: { found: true, record: 'v=spf1 a -all', records: ['v=spf1 a -all'], valid: true, error: null },
    });
  });

  it('reports two SPF records as found but not valid (RFC 7208 permerror), the first as the record', async () => {
    const { spf, score } = await fresh().emailauth('two-spf.example.net');
    expect(spf).toEqual({
      found: true,
      record: 'v=spf1 ip4:192.0.2.0/24 -all',
      records: ['v=spf1 ip4:192.0.2.0/24 -all', SPF_EXAMPLE],
      valid: false,
      error: '2 v=spf1 records (RFC 7208 4.5: permerror)',
    });
    expect(score).toBe(35);
  });

  it.each([
    ['non-ASCII text', 'hosed.example.net', 'v=spf1 a:ïcaramba.example.net -all', 'non-ASCII character in the record'],
    [
      'redirect twice',
      'two-redirects.example.net',
      'v=spf1 redirect=a.example.com redirect=b.example.com',
      'redirect= appears more than once in "redirect=b.example.com"',
    ],
  ])('reports an SPF record with %s as found but not valid, with the grammar error', async (_name, domain, record, error) => {
    const { spf, score } = await fresh().emailauth(domain);
    expect(spf).toEqual({ found: true, record, records: [record], valid: false, error });
    // Presence score (SPEC): a record that is there counts, valid or not.
    expect(score).toBe(35);
  });

  it('walks up the labels to the organizational domain for DMARC (DMARCbis) and says where the record came from', async () => {
    const result = await fresh().emailauth('mail.sub.example.org');
    expect(result).toEqual({
      ...NONE,
      domain: 'mail.sub.example.org',
      score: 40,
      dmarc: { found: true, record: DMARC_ORG, records: [DMARC_ORG], valid: true, error: null, source: 'organizational', policy_domain: 'example.org' },
    });
    // The domain's own _dmarc, then every parent up to the TLD: the walk stops only at a psd tag.
    for (const name of ['mail.sub.example.org', 'sub.example.org', 'example.org', 'org']) expect(server.queries.get(`_dmarc.${name} TXT`)).toBe(1);
    expect(server.total()).toBe(14);
  });

  it("uses a subdomain's own DMARC record without walking", async () => {
    const { dmarc, score } = await fresh().emailauth('own.example.org');
    expect(dmarc).toEqual({
      found: true,
      record: 'v=DMARC1; p=none',
      records: ['v=DMARC1; p=none'],
      valid: true,
      error: null,
      source: 'domain',
      policy_domain: 'own.example.org',
    });
    expect(score).toBe(75);
    expect(server.queries.get('_dmarc.example.org TXT')).toBeUndefined();
  });

  it('follows a Microsoft 365 selector CNAME to its key; a dangling CNAME is no key', async () => {
    const { dkim, score } = await fresh().emailauth('contoso.example.net');
    expect(dkim).toEqual({
      found: true,
      selectors: [{ selector: 'selector1', record: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`, revoked: false }],
      failed_selectors: [],
    });
    expect(score).toBe(60);
  });

  it('counts only DKIM key records at selector names: a p= tag, and any v= first and DKIM1', async () => {
    const { spf, dkim } = await fresh().emailauth('lookalike.example.net');
    expect(spf.found).toBe(true); // `V=SPF1`: the version is case-insensitive
    expect(dkim.selectors).toEqual([{ selector: 'google', record: `k=rsa; p=${DKIM_KEYS.rsa1024}`, revoked: false }]);
  });

  it.each([['MÜNCHEN.Example.NET.'], ['münchen.example.net'], ['xn--mnchen-3ya.example.net'], ['  ｍünchen．example．net  ']])(
    'normalizes the IDN %j to punycode',
    async (input) => {
      const result = await fresh().emailauth(input);
      expect(result.domain).toBe('xn--mnchen-3ya.example.net');
      expect(result.spf.record).toBe('v=spf1 mx -all');
    },
  );

  it('accepts a 253-character domain, and asks nothing for names DNS cannot carry', async () => {
    const domain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
    expect(domain).toHaveLength(253);
    expect(await fresh().emailauth(domain)).toEqual({ domain, score: 0, ...NONE });
    // The domain and the tree walk's parents: _dmarc.<domain> and every selector name are over 253.
    const parents = [`${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`, `${'c'.repeat(63)}.${'d'.repeat(57)}.com`, `${'d'.repeat(57)}.com`, 'com'];
    expect(Object.fromEntries(server.queries)).toEqual({ [`${domain} TXT`]: 1, ...Object.fromEntries(parents.map((p) => [`_dmarc.${p} TXT`, 1])) });
  });

  it.each([
    ['an empty string', ''],
    ['whitespace', '  \t '],
    ['an IPv4 address', '192.0.2.1'],
    ['a short-hand IPv4 address', '0x7f.1'],
    ['a bracketed IPv6 address', '[2001:db8::1]'],
    ['an unknown TLD', 'foo.notatld'],
    ['a reserved TLD', 'example.test'],
    ['a single label', 'localhost'],
    ['dots only', '..'],
    ['a lone dot', '.'],
    ['an empty label', 'example..com'],
    ['a leading dot', '.example.com'],
    ['a 64-character label', `${'a'.repeat(64)}.com`],
    ['a 254-character name', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`],
    ['an input over 1024 characters', `${'a.'.repeat(600)}com`],
    ['a bare public suffix', 'co.uk'],
    ['a TLD', 'com'],
    ['a space', 'exa mple.com'],
    ['an underscore', 'ex_ample.com'],
    ['a wildcard', '*.example.com'],
    ['a leading hyphen', '-example.com'],
    ['a trailing hyphen', 'example-.com'],
    ['a URL', 'https://example.com/'],
    ['a port', 'example.com:25'],
    ['an e-mail address', 'user@example.com'],
    ['invalid punycode', 'xn--zz.com'],
  ])('refuses %s with invalid_domain, before any DNS query', async (_name, input) => {
    const error = await rejection(fresh().emailauth(input));
    expect([error.code, error.status]).toEqual(['invalid_domain', 400]);
    expect(server.total()).toBe(0);
  });

  it('refuses a non-string with invalid_domain', async () => {
    const error = await rejection(fresh().emailauth(42 as unknown as string));
    expect(error.code).toBe('invalid_domain');
  });
});

describe('emailauth DNS failures', () => {
  it('answers 502 lookup_failed, within its deadline, when the DNS server never answers', async () => {
    failing.setBehaviour('silent');
    const lookup = createLookup({ dns: { servers: [failing.address], timeouts: { totalMs: 200 }, attempts: 2 } });
    const started = performance.now();
    const error = await rejection(lookup.emailauth('example.com'));
    const elapsed = performance.now() - started;
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toContain('no answer in time');
    expect(error.message).not.toContain('127.0.0.1');
    // Every query in parallel, two attempts of 200 ms each.
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1_500);
    expect(failing.queries.get('example.com TXT')).toBe(2);
  });

  it('answers 502 lookup_failed when the DNS server answers SERVFAIL', async () => {
    failing.setBehaviour('servfail');
    const error = await rejection(createLookup({ dns: { servers: [failing.address] } }).emailauth('example.com'));
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toBe('DNS lookup of example.com failed: the DNS server answered with an error');
  });

  it('answers 502 when the DMARC query fails although SPF answered: no partial score', async () => {
    const error = await rejection(fresh().emailauth('broken-dmarc.example.net'));
    expect(error.code).toBe('lookup_failed');
    expect(error.message).toContain('_dmarc.broken-dmarc.example.net');
  });

  it('answers 502 when every DKIM selector query fails', async () => {
    expect((await rejection(fresh().emailauth('dkim-down.example.net'))).code).toBe('lookup_failed');
  });

  it('reports a DKIM selector whose query failed while the others answered, and does not cache that result', async () => {
    const lookup = fresh();
    const first = await lookup.detailed.emailauth('partial.example.net');
    expect(first.result.dkim).toEqual({
      found: true,
      selectors: [{ selector: 'google', record: `v=DKIM1; p=${DKIM_KEYS.rsa1024}`, revoked: false }],
      failed_selectors: ['s1'],
    });
    expect(first.result.score).toBe(60);
    expect(server.queries.get('s1._domainkey.partial.example.net TXT')).toBe(2); // two attempts
    server.resetCounts();
    const second = await lookup.detailed.emailauth('partial.example.net');
    expect(second.cached).toBe(false);
    // Asked again only for what failed: every other answer is in the resolver's cache.
    expect(Object.fromEntries(server.queries)).toEqual({ 's1._domainkey.partial.example.net TXT': 2 });
  });
});

describe('emailauth cache', () => {
  it('serves the second lookup from its cache: cached, same fetched_at, no DNS query', async () => {
    const lookup = fresh();
    const first = await lookup.detailed.emailauth('example.com');
    expect(first.cached).toBe(false);
    expect(server.total()).toBe(11);
    first.result.dkim.selectors.length = 0; // a caller's change must not reach the cache
    const second = await lookup.detailed.emailauth(' Example.COM. ');
    expect(second.cached).toBe(true);
    expect(server.total()).toBe(11);
    expect(second.fetchedAt).toEqual(first.fetchedAt);
    expect(second.result.dkim.selectors).toHaveLength(4);
    expect(JSON.parse(second.json!)).toEqual(second.result);
  });

  it('keeps a result as long as its shortest-lived DNS answer (here the 60 s negative TTL)', async () => {
    let clock = Date.UTC(2026, 10, 23, 12, 0, 0);
    const now = () => clock;
    const lookup = fresh({ now, cache: createMemoryCache({ now }) }, { now });
    const first = await lookup.detailed.emailauth('example.com');
    expect(first.fetchedAt).toEqual(new Date(clock));
    clock += 59_000;
    expect((await lookup.detailed.emailauth('example.com')).cached).toBe(true);
    clock += 2_000;
    server.resetCounts();
    const later = await lookup.detailed.emailauth('example.com');
    expect(later.cached).toBe(false);
    // Only the five NXDOMAIN selectors expired; the positive answers (300 s) came from the
    // resolver's cache, so the result was last retrieved when they were.
    expect(server.total()).toBe(5);
    expect(later.fetchedAt).toEqual(first.fetchedAt);
    expect(later.result).toEqual(first.result);
  });

  it('caches nothing with cacheSize 0, and refuses a bad cacheSize', async () => {
    const lookup = fresh({ emailauth: { cacheSize: 0 } });
    await lookup.emailauth('example.com');
    expect((await lookup.detailed.emailauth('example.com')).cached).toBe(false);
    expect(() =>
      createEmailAuthEngine(
        {
          dns: () => {
            throw new Error('unused');
          },
        },
        { cacheSize: -1 },
      ),
    ).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });
});

describe('emailauth record rules', () => {
  it.each([
    ['v=spf1', true],
    ['v=spf1 -all', true],
    ['V=SPF1 include:_spf.example.net ~all', true],
    ['v=spf10 -all', false],
    ['v=spf1-all', false],
    [' v=spf1 -all', false],
    ['spf2.0/pra -all', false],
  ])('SPF %j: %s', (text, expected) => expect(isSpfRecord(text)).toBe(expected));

  it.each([
    ['v=DMARC1; p=none', true],
    ['v=DMARC1', true],
    ['V = DMARC1 ; p=reject', true],
    ['v=dmarc1; p=none', false],
    ['v=DMARC10; p=none', false],
    ['p=none; v=DMARC1', false],
  ])('DMARC %j: %s', (text, expected) => expect(isDmarcRecord(text)).toBe(expected));

  it.each([
    [`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa1024}`, { revoked: false }],
    [`k=RSA; p=${DKIM_KEYS.rsa2048}`, { revoked: false }],
    ['v=DKIM1; p=', { revoked: true }],
    ['v=DKIM1; p= ; t=y', { revoked: true }],
    [`v=DKIM1; p=${DKIM_KEYS.rsa1024.slice(0, 100)} \r\n ${DKIM_KEYS.rsa1024.slice(100)}`, { revoked: false }],
    ['v=DKIM1; k=rsa; p=MIGf', null],
    ['v=DKIM1; k=rsa', null],
    [`v=DKIM2; p=${DKIM_KEYS.rsa1024}`, null],
    [`k=rsa; v=DKIM1; p=${DKIM_KEYS.rsa1024}`, null],
    ['v=DMARC1; p=reject', null],
    ['v=spf1 -all', null],
    ['google-site-verification=abc', null],
  ])('DKIM %j: %j', (text, expected) => expect(dkimKey(text)).toEqual(expected));
});

const stack = await createApiStack({ lookup: fresh() });
const keys = await stack.keys('emailauth');

describe('emailauth over HTTP', () => {
  const FETCHED_AT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

  it.each([
    ['GET ?domain=', '/v1/emailauth/lookup?domain=example.org'],
    ['GET /lookup/{domain}', '/v1/emailauth/lookup/example.org'],
  ])('%s answers the result with cached and fetched_at', async (_form, path) => {
    const reply = await stack.call(path, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    const { request_id, cached, fetched_at, ...result } = reply.body;
    expect(result).toEqual({ success: true, ...(await fresh().emailauth('example.org')) });
    expect(request_id).toEqual(expect.any(String));
    expect(typeof cached).toBe('boolean');
    expect(fetched_at).toMatch(FETCHED_AT);
  });

  it('takes an encoded IDN in the path and answers the punycode domain; the repeat is cached', async () => {
    const path = `/v1/emailauth/lookup/${encodeURIComponent('münchen.example.net')}`;
    const first = await stack.call(path, { key: keys.secretKey });
    expect(first.body).toMatchObject({ success: true, cached: false, domain: 'xn--mnchen-3ya.example.net', score: 35 });
    const second = await stack.call(path, { key: keys.secretKey });
    expect(second.body).toMatchObject({ cached: true, fetched_at: first.body.fetched_at });
  });

  it.each([
    ['no domain', '/v1/emailauth/lookup'],
    ['an empty domain', '/v1/emailauth/lookup?domain='],
    ['an unknown TLD', '/v1/emailauth/lookup/foo.notatld'],
    ['an IP address', '/v1/emailauth/lookup?domain=192.0.2.1'],
    ['broken percent-encoding', '/v1/emailauth/lookup/exa%E0%A4%A'],
  ])('answers %s with 400 invalid_domain', async (_name, path) => {
    const reply = await stack.call(path, { key: keys.secretKey });
    expect([reply.status, reply.body.success, reply.body.error_code]).toEqual([400, false, 'invalid_domain']);
  });

  it('answers 502 lookup_failed on SERVFAIL, and refunds the quota unit', async () => {
    failing.setBehaviour('servfail');
    const failingStack = await createApiStack({ lookup: createLookup({ dns: { servers: [failing.address] } }) });
    const failingKeys = await failingStack.keys('emailauth');
    const before = await failingStack.meter.quota(failingKeys.subscriptionId, 10_000, Date.now());
    const reply = await failingStack.call('/v1/emailauth/lookup?domain=example.com', { key: failingKeys.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([502, 'lookup_failed']);
    expect(await failingStack.meter.quota(failingKeys.subscriptionId, 10_000, Date.now())).toEqual(before);
  });

  it('reports database_records (the DKIM selectors probed) on the status route', async () => {
    const reply = await stack.call('/v1/emailauth/status', { key: keys.publicKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, product: 'emailauth', database_records: 9 });
  });
});
