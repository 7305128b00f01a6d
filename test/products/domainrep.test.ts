/**
 * The domainrep engine end to end against loopback servers: a DNS server answering the names
 * scored, their SPF/DMARC records and the three domain blocklist zones (documented listing
 * codes, error codes, undefined codes, a silent zone), and an RDAP server for whois (a young
 * and an old registration, an unregistered name). The outbound guard lets 127.0.0.0/8 through.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLookupError, isSeclookupError, LookupError } from '../../src/errors.js';
import { bundledDataDir, packageVersion } from '../../src/lib/datasets.js';
import { createMemoryCache, type CacheStore } from '../../src/lib/cache.js';
import { createLookup, type Lookup, type LookupOptions } from '../../src/lookup.js';
import { levelOf, scoreOf } from '../../src/products/domainrep/score.js';
import type { DomainRepResult } from '../../src/products/domainrep/types.js';
import { createApiStack } from '../api/harness.js';
import { startDnsServer, type DnsRecord, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';

const DAY = 86_400_000;
const DBL = 'dbl.spamhaus.org';
const SURBL = 'multi.surbl.org';
const URIBL = 'multi.uribl.com';

let dns: DnsTestServer;
let silentDns: DnsTestServer;
let rdap: RdapTestServer;

/** An RDAP domain object registered `daysAgo` days ago. */
function registration(name: string, daysAgo: number | null) {
  const events =
    daysAgo === null ? [] : [{ eventAction: 'registration', eventDate: new Date(Date.now() - daysAgo * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z') }];
  return rdapAnswer.json({
    objectClassName: 'domain',
    ldhName: name,
    status: ['active'],
    events,
    entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: ['vcard', [['fn', {}, 'text', 'Example Registrar']]] }],
  });
}

const A = (address = '203.0.113.10'): DnsRecord => ({ type: 'A', address });
const authenticated = (name: string): Zone => ({
  [name]: [A(), { type: 'MX', exchange: `mx.${name}`, priority: 10 }, { type: 'TXT', data: 'v=spf1 mx -all' }],
  [`_dmarc.${name}`]: [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
});
const listed = (site: string, zone: string, ...codes: string[]): Zone => ({ [`${site}.${zone}`]: codes.map((address) => A(address)) });

const ZONE: Zone = {
  'rdap.test': [A('127.0.0.1')],
  ...authenticated('oldclean.com'),
  ...authenticated('fresh.com'),
  'bare.com': [A()],
  'nodata.com': [{ type: 'TXT', data: 'hello' }],
  'listed.com': [A()],
  ...listed('listed.com', DBL, '127.0.1.2'),
  ...listed('listed.com', SURBL, '127.0.0.72'), // PH (8) + ABUSE (64)
  ...listed('listed.com', URIBL, '127.0.0.6'), // black (2) + grey (4)
  'errors.com': [A()],
  ...listed('errors.com', DBL, '127.255.255.254'), // Spamhaus: query via a public resolver
  ...listed('errors.com', URIBL, '127.0.0.1'), // URIBL: query refused
  ...listed('errors.com', SURBL, '10.0.0.1'), // not a blocklist answer at all
  'undefined.com': [A()],
  ...listed('undefined.com', SURBL, '127.0.0.32'), // bit 32: no documented SURBL meaning
  ...listed('undefined.com', DBL, '127.0.1.77'), // not a DBL code
  'blocked.com': [A()],
  ...listed('blocked.com', URIBL, '127.0.0.255'), // URIBL to a blocked resolver: every bit, the refusal bit among them
  ...listed('blocked.com', SURBL, '127.0.0.9'), // SURBL's refusal bit beside PH's
  'silentzone.com': [A()],
  ...listed('silentzone.com', DBL, '127.0.1.4'),
};

beforeAll(async () => {
  dns = await startDnsServer({ zone: ZONE, behaviours: {} });
  silentDns = await startDnsServer({ behaviour: 'silent' });
  rdap = await startRdapServer({
    'oldclean.com': registration('oldclean.com', 20 * 365),
    'fresh.com': registration('fresh.com', 10),
    'bare.com': registration('bare.com', 400),
    'nodata.com': registration('nodata.com', 100),
    'listed.com': registration('listed.com', 2 * 365),
    'errors.com': registration('errors.com', 2 * 365),
    'undefined.com': registration('undefined.com', 2 * 365),
    'silentzone.com': registration('silentzone.com', 2 * 365),
    'blocked.com': registration('blocked.com', 2 * 365),
    'nodate.com': registration('nodate.com', null),
  });
});

afterAll(async () => {
  await Promise.all([dns?.close(), silentDns?.close(), rdap?.close()]);
});

function options(extra: Partial<LookupOptions> = {}, dnsServer = () => dns): LookupOptions {
  const base = `http://rdap.test:${new URL(rdap.url).port}/rdap/`;
  // Short deadlines only where a server is meant to stay silent: a loaded CI machine can take
  // longer than 300 ms to answer a loopback question, which made the answering cases flaky.
  const silent = dnsServer() === silentDns;
  return {
    dns: { servers: [dnsServer().address], timeouts: { connectMs: 200, totalMs: silent ? 300 : 3_000 }, attempts: 1 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: { rdapServers: { com: base, xyz: base, org: base }, timeouts: { connectMs: 1_000, totalMs: 3_000 }, lookupTimeoutMs: 5_000 },
    ...extra,
  };
}
const lookupWith = (extra: Partial<LookupOptions> = {}, dnsServer = () => dns): Lookup => createLookup(options(extra, dnsServer));

async function failure(promise: Promise<unknown>): Promise<LookupError> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return error;
    throw error;
  }
  throw new Error('expected the lookup to fail');
}

const byCode = (result: DomainRepResult, code: string) => result.signals.filter((s) => s.code === code);

describe('network signals', () => {
  it('scores an old, authenticated, resolving, unlisted .com domain low, with every signal and its weight', async () => {
    const result = await lookupWith().domainrep('OldClean.com.');
    expect(result).toEqual({
      domain: 'oldclean.com',
      score: 0,
      level: 'low',
      signals: [
        { code: 'domain_age', detail: expect.stringMatching(/^registered 20 years ago \(\d{4}-\d{2}-\d{2}\)$/), weight: -10 },
        { code: 'email_auth', detail: 'oldclean.com publishes SPF and DMARC (emailauth score 75)', weight: 0 },
        { code: 'dns_resolution', detail: 'oldclean.com resolves (A, MX)', weight: 0 },
        { code: 'blocklist', detail: 'not listed on Spamhaus DBL (dbl.spamhaus.org)', weight: 0 },
        { code: 'blocklist', detail: 'not listed on SURBL multi (multi.surbl.org)', weight: 0 },
        { code: 'blocklist', detail: 'not listed on URIBL multi (multi.uribl.com)', weight: 0 },
        { code: 'phishing_list', detail: expect.stringContaining('not on the bundled phishing lists'), weight: 0 },
        { code: 'tld_risk', detail: expect.stringMatching(/^\.com: .* no more than its share of ordinary domains/), weight: 0 },
      ],
    });
  });

  it('weighs a young registration (10 days) against an old one, and a missing creation date mildly', async () => {
    const lookup = lookupWith();
    const fresh = await lookup.domainrep('fresh.com');
    expect(byCode(fresh, 'domain_age')).toEqual([{ code: 'domain_age', detail: expect.stringMatching(/^registered 10 days ago/), weight: 35 }]);
    expect(fresh.score).toBe(35);
    expect(fresh.level).toBe('medium');
    expect(byCode(await lookup.domainrep('bare.com'), 'domain_age')[0].weight).toBe(0); // 400 days: neither young nor old
    expect(byCode(await lookup.domainrep('nodata.com'), 'domain_age')[0].weight).toBe(15); // 100 days
  });

  it('reads missing SPF and DMARC, a name without records, and a name that does not exist', async () => {
    const lookup = lookupWith();
    const bare = await lookup.domainrep('bare.com');
    expect(byCode(bare, 'email_auth')).toEqual([{ code: 'email_auth', detail: 'bare.com: no SPF record, no DMARC record', weight: 20 }]);
    const nodata = await lookup.domainrep('nodata.com');
    expect(byCode(nodata, 'dns_resolution')).toEqual([{ code: 'dns_resolution', detail: 'nodata.com exists but has no A, AAAA or MX records', weight: 15 }]);
    const missing = await lookup.domainrep('never-registered.com');
    expect(byCode(missing, 'dns_resolution')).toEqual([
      { code: 'dns_resolution', detail: 'never-registered.com does not exist in DNS (NXDOMAIN)', weight: 50 },
    ]);
    expect(byCode(missing, 'domain_age')).toEqual([
      { code: 'domain_age', detail: 'never-registered.com is not registered: the registry has no record of it', weight: 40 },
    ]);
    expect(byCode(missing, 'email_auth')).toEqual([{ code: 'email_auth', detail: 'not applicable: never-registered.com does not exist in DNS', weight: 0 }]);
    expect([missing.score, missing.level]).toEqual([90, 'high']);
  });

  it('counts documented listing codes: DBL exact codes, SURBL and URIBL bitmasks (the highest weight per zone)', async () => {
    const result = await lookupWith().domainrep('listed.com');
    expect(byCode(result, 'blocklist')).toEqual([
      { code: 'blocklist', detail: 'listed on Spamhaus DBL (dbl.spamhaus.org): 127.0.1.2 low-reputation domain (spam)', weight: 35 },
      {
        code: 'blocklist',
        detail: 'listed on SURBL multi (multi.surbl.org): 127.0.0.8 PH: phishing sites; 127.0.0.64 ABUSE: spam and abuse sites',
        weight: 50,
      },
      {
        code: 'blocklist',
        detail:
          'listed on URIBL multi (multi.uribl.com): 127.0.0.2 black: domains belonging to and used by spammers; 127.0.0.4 grey: domains in bulk mail that may have legitimate uses',
        weight: 40,
      },
    ]);
    expect([result.score, result.level]).toEqual([100, 'high']);
  });

  it('treats error codes, foreign answers and undefined codes as unavailable, never as listings, and does not cache that result', async () => {
    const lookup = lookupWith();
    const errors = await lookup.detailed.domainrep('errors.com');
    expect(byCode(errors.result, 'blocklist')).toEqual([
      {
        code: 'blocklist',
        detail: expect.stringMatching(
          /^unavailable: Spamhaus DBL \(dbl\.spamhaus\.org\): zone_error: answered 127\.255\.255\.254 \(query refused: it came through a public or open resolver/,
        ),
        weight: 0,
      },
      {
        code: 'blocklist',
        detail: expect.stringMatching(/^unavailable: SURBL multi \(multi\.surbl\.org\): invalid_answer: answered 10\.0\.0\.1, outside 127\.0\.0\.0\/8/),
        weight: 0,
      },
      {
        code: 'blocklist',
        detail: expect.stringMatching(/^unavailable: URIBL multi \(multi\.uribl\.com\): zone_error: answered 127\.0\.0\.1 \(query refused/),
        weight: 0,
      },
    ]);
    expect(errors.result.score).toBe(20); // two years old and resolving; only the missing SPF and DMARC count
    const undefinedCodes = await lookup.domainrep('undefined.com');
    expect(byCode(undefinedCodes, 'blocklist').map((s) => s.detail.replace(/:.*?: /, ': '))).toEqual([
      expect.stringContaining('unknown_code: answered 127.0.1.77'),
      expect.stringContaining('unknown_code: answered 127.0.0.32'),
      'not listed on URIBL multi (multi.uribl.com)',
    ]);
    expect((await lookup.detailed.domainrep('errors.com')).cached).toBe(false);
  });

  it('reads the refusal bit of a bitmask zone as a refusal whatever else is set: never a listing (found by a reviewer)', async () => {
    const blocked = await lookupWith().domainrep('blocked.com');
    expect(byCode(blocked, 'blocklist')).toEqual([
      { code: 'blocklist', detail: 'not listed on Spamhaus DBL (dbl.spamhaus.org)', weight: 0 },
      {
        code: 'blocklist',
        detail: expect.stringMatching(
          /^unavailable: SURBL multi \(multi\.surbl\.org\): zone_error: answered 127\.0\.0\.9 \(query refused .*; other bits set beside it are no listing\)/,
        ),
        weight: 0,
      },
      {
        code: 'blocklist',
        detail: expect.stringMatching(/^unavailable: URIBL multi \(multi\.uribl\.com\): zone_error: answered 127\.0\.0\.255 \(query refused/),
        weight: 0,
      },
    ]);
  });

  it('scores with the other signals when one zone never answers', async () => {
    dns.setBehaviours({ [SURBL]: 'silent' });
    try {
      const result = await lookupWith().domainrep('silentzone.com');
      expect(byCode(result, 'blocklist')).toEqual([
        { code: 'blocklist', detail: 'listed on Spamhaus DBL (dbl.spamhaus.org): 127.0.1.4 phishing-related domain', weight: 50 },
        { code: 'blocklist', detail: expect.stringMatching(/^unavailable: SURBL multi \(multi\.surbl\.org\): timeout: no answer in time/), weight: 0 },
        { code: 'blocklist', detail: 'not listed on URIBL multi (multi.uribl.com)', weight: 0 },
      ]);
      expect([result.score, result.level]).toEqual([70, 'high']); // DBL 50 + no SPF/DMARC 20
    } finally {
      dns.setBehaviours({});
    }
  });

  it('fails with 502 lookup_failed only when every network signal failed (silent DNS, unreachable RDAP server)', async () => {
    const lookup = lookupWith({ whois: { rdapServers: { com: 'http://127.0.0.1:1/rdap/' } } }, () => silentDns);
    const error = await failure(lookup.domainrep('oldclean.com'));
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toContain('no reputation source answered for oldclean.com');
    // With DNS silent but whois answering, the score comes from whois and the name alone.
    const rdapByAddress = { com: `http://127.0.0.1:${new URL(rdap.url).port}/rdap/` };
    const partial = await lookupWith({ whois: { ...options().whois, rdapServers: rdapByAddress } }, () => silentDns).domainrep('fresh.com');
    expect(byCode(partial, 'domain_age')[0].weight).toBe(35);
    expect(byCode(partial, 'dns_resolution')[0].detail).toMatch(/^unavailable: DNS: /);
  });

  it('checks the site of a subdomain on the blocklists and whois, and keeps the name scored', async () => {
    const result = await lookupWith().domainrep('www.listed.com');
    expect(result.domain).toBe('www.listed.com');
    expect(byCode(result, 'blocklist').map((s) => s.weight)).toEqual([35, 50, 40]);
    expect(byCode(result, 'dns_resolution')[0].weight).toBe(50); // www.listed.com itself does not exist
  });
});

describe('cache', () => {
  it('answers a repeat from the cache (cached: true), kept no longer than the whois and DNS data behind it', async () => {
    const store = createMemoryCache();
    const ttls = new Map<string, number>();
    const recording: CacheStore = {
      get: (key) => store.get(key),
      delete: (key) => store.delete(key),
      set: (key, value, ttlMs) => (ttls.set(key, ttlMs ?? -1), store.set(key, value, ttlMs)),
    };
    const lookup = lookupWith({ cache: recording, whois: { ...options().whois, ttlMs: 30_000 } });
    const first = await lookup.detailed.domainrep('oldclean.com');
    const again = await lookup.detailed.domainrep('oldclean.com');
    expect([first.cached, again.cached]).toEqual([false, true]);
    expect(again.result).toEqual(first.result);
    expect(again.fetchedAt).toBeUndefined(); // SPEC: domainrep has no fetched_at
    const ttl = ttls.get(`domainrep:${packageVersion()}:oldclean.com`)!;
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30_000); // whois keeps its result 30 s here; DNS answers live 60-300 s
    await lookup.domainrep('errors.com');
    expect(ttls.has(`domainrep:${packageVersion()}:errors.com`)).toBe(false); // a result with an unavailable signal is not kept
  });

  it('shares one computation between concurrent lookups of a name', async () => {
    const lookup = lookupWith();
    rdap.hits.clear();
    const results = await Promise.all(Array.from({ length: 5 }, () => lookup.domainrep('bare.com')));
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(rdap.hits.get('/rdap/domain/bare.com')).toBe(1);
  });
});

describe('input', () => {
  it.each([['192.0.2.1'], ['example.notatld'], [''], ['co.uk'], ['http://example.com/x']])('refuses %j with 400 invalid_domain', async (input) => {
    const error = await failure(Promise.resolve().then(() => lookupWith().domainrep(input)));
    expect([error.code, error.status]).toEqual(['invalid_domain', 400]);
  });

  it('scores an IDN in its punycode form', async () => {
    const result = await lookupWith().domainrep('аррӏе.com');
    expect(result.domain).toBe('xn--80ak6aa92e.com');
    expect(result.signals.map((s) => s.code)).toEqual(expect.arrayContaining(['idn', 'confusable', 'brand_lookalike']));
  });
});

describe('monotonicity (adding a listing never lowers the score)', () => {
  it('holds for the score formula over any signals', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -10, max: 60 }), { maxLength: 20 }), fc.integer({ min: 0, max: 100 }), (weights, added) => {
        const before = scoreOf(weights.map((weight) => ({ weight })));
        const after = scoreOf([...weights, added].map((weight) => ({ weight })));
        const rank = (score: number) => ['low', 'medium', 'high'].indexOf(levelOf(score));
        return after >= before && rank(after) >= rank(before);
      }),
      { numRuns: 500 },
    );
  });

  it('holds through the engine for every set of zones listing a domain', async () => {
    const zones = [DBL, SURBL, URIBL];
    const codes = ['127.0.1.5', '127.0.0.16', '127.0.0.8'];
    const zone: Zone = { 'rdap.test': [A('127.0.0.1')] };
    for (let mask = 0; mask < 8; mask++) {
      zone[`m${mask}.org`] = [A()];
      zones.forEach((z, i) => {
        if (mask & (1 << i)) zone[`m${mask}.org.${z}`] = [A(codes[i])];
      });
    }
    const server = await startDnsServer({ zone });
    try {
      const lookup = lookupWith({}, () => server);
      const scores: number[] = [];
      for (let mask = 0; mask < 8; mask++) scores[mask] = (await lookup.domainrep(`m${mask}.org`)).score;
      for (let a = 0; a < 8; a++) for (let b = 0; b < 8; b++) if ((a & b) === a) expect(scores[b]).toBeGreaterThanOrEqual(scores[a]);
      expect(scores[7]).toBeGreaterThan(scores[0]);
    } finally {
      await server.close();
    }
  });
});

describe('options and data', () => {
  it('checks zones by name from the bundled file, and refuses a zone without weights', () => {
    expect(
      createLookup({ domainrep: { zones: ['dbl.spamhaus.org'] } })
        .engine('domainrep')
        .zones.map((z) => z.zone),
    ).toEqual(['dbl.spamhaus.org']);
    const noWeight = { zone: 'dbl.example.net', name: 'X', listing_codes: [{ code: '127.0.1.2', meaning: 'listed' }] };
    expect(() => createLookup({ domainrep: { zones: [noWeight as never] } }).engine('domainrep')).toThrow(/needs a "weight" from 0 to 100/);
    const badBit = { zone: 'bits.example.net', name: 'X', bitmask: true, listing_codes: [{ code: '127.0.0.3', meaning: 'two bits', weight: 5 }] };
    expect(() => createLookup({ domainrep: { zones: [badBit as never] } }).engine('domainrep')).toThrow(/one bit set/);
    expect(() => createLookup({ domainrep: { signalTimeoutMs: 0 } }).engine('domainrep')).toThrow(/signalTimeoutMs/);
  });

  it('loads the bundled data (zones, TLD table, brands, phishing lists) from data/domainrep', () => {
    const engine = createLookup({ dataDir: bundledDataDir() }).engine('domainrep');
    expect(engine.zones.map((z) => z.zone)).toEqual([DBL, SURBL, URIBL]);
    try {
      createLookup({ dataDir: '/nonexistent' }).engine('domainrep');
      throw new Error('expected dataset_missing');
    } catch (error) {
      expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    }
  });
});

describe('domainrep over HTTP (the API harness)', () => {
  it.each([
    ['GET ?domain=', '/v1/domainrep/lookup?domain=fresh.com'],
    ['GET /lookup/{domain}', '/v1/domainrep/lookup/fresh.com'],
  ])('%s answers 200 with domain, score, level and signals (no fetched_at), then cached', async (_form, path) => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('domainrep');
    const reply = await stack.call(path, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['success', 'request_id', 'cached', 'domain', 'score', 'level', 'signals']);
    expect(reply.body).toMatchObject({ success: true, cached: false, domain: 'fresh.com', score: 35, level: 'medium' });
    expect((await stack.call(path, { key: keys.secretKey })).body.cached).toBe(true);
  });

  it.each([
    ['no domain', '/v1/domainrep/lookup'],
    ['an empty domain', '/v1/domainrep/lookup?domain='],
    ['an IP address', '/v1/domainrep/lookup/93.184.215.14'],
    ['an unknown TLD', '/v1/domainrep/lookup?domain=example.notatld'],
  ])('answers %s with 400 invalid_domain', async (_name, path) => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('domainrep');
    const reply = await stack.call(path, { key: keys.secretKey });
    expect([reply.status, reply.body.success, reply.body.error_code]).toEqual([400, false, 'invalid_domain']);
  });

  it('answers 502 lookup_failed when every source fails, giving the quota unit back', async () => {
    const stack = await createApiStack({ lookup: lookupWith({ whois: { rdapServers: { com: 'http://127.0.0.1:1/rdap/' } } }, () => silentDns) });
    const keys = await stack.keys('domainrep');
    const quota = () => stack.meter.quota(keys.subscriptionId, 5_000, Date.now());
    const before = await quota();
    const reply = await stack.call('/v1/domainrep/lookup/oldclean.com', { key: keys.secretKey });
    expect([reply.status, reply.body.success, reply.body.error_code]).toEqual([502, false, 'lookup_failed']);
    expect(typeof reply.body.error).toBe('string');
    expect(await quota()).toEqual(before);
  });

  it('has a status route without database_records (SPEC)', async () => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('domainrep');
    const reply = await stack.call('/v1/domainrep/status', { key: keys.publicKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, product: 'domainrep', rate_limit_per_minute: 60, monthly_quota: 5_000 });
    expect('database_records' in reply.body).toBe(false);
  });
});
