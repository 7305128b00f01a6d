/**
 * domainrep accuracy fixes (review of 2026-11): phishing-list entries written in Unicode match
 * the punycode name; entries that are public suffixes (`org.in`, `gb.net`, `alwaysdata.net`) do
 * not flag every site under them; email_auth of a missing subdomain reads its site's records; the
 * label of a name that is itself a private suffix; and the brands' own domains (service domains,
 * country sites) are not flagged. Network cases run against loopback DNS and RDAP servers.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { loadBrands, loadPhishingLists } from '../../src/products/domainrep/data.js';
import { createBrandMatcher, phishingSignal } from '../../src/products/domainrep/lexical.js';
import type { DomainRepResult } from '../../src/products/domainrep/types.js';
import { startDnsServer, type DnsRecord, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';

const DATA = bundledDataDir();
const engine = createLookup().engine('domainrep');
const lists = loadPhishingLists(DATA);
const brands = createBrandMatcher(loadBrands(DATA));
const DAY = 86_400_000;

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** A data folder holding only the two phishing lists (or brands.json), written as given. */
function dataDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'domainrep-accuracy-'));
  temporary.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), JSON.stringify(content));
  }
  return dir;
}

describe('phishing-list entries written in Unicode (defect 1)', () => {
  it('match the punycode name: the bundled polkadot entries aavè.com and chąinlist.org', () => {
    expect(phishingSignal('xn--aav-8la.com', lists)).toEqual({
      code: 'phishing_list',
      detail: 'xn--aav-8la.com is on the polkadot{.js} phishing deny list (2026-02-03 snapshot)',
      weight: 60,
    });
    const chainlist = engine.prepare('chąinlist.org');
    expect(chainlist.name).toBe('xn--chinlist-j8a.org');
    expect(phishingSignal(chainlist.name, lists).weight).toBe(60);
    expect(phishingSignal(engine.prepare('www.chąinlist.org').name, lists)).toMatchObject({ weight: 60, detail: expect.stringContaining('a parent of') });
    expect(lists.skipped).toBe(0); // every bundled entry has an ASCII form
  });

  it('converts every list (deny, blacklist, both allowlists) and skips, counting them, entries with no ASCII form', () => {
    const dir = dataDir({
      'phishing/metamask/config.json': { blacklist: ['bad.com', 'ＦＵＬＬＷＩＤＴＨ.com', 'ab\uFFFD.com'], whitelist: ['bücher.de'] },
      'phishing/polkadot/all.json': { deny: ['aavè.com', 'bücher.de', 'x\uFFFF.org', 'évil.net.'], allow: ['*.ñandú.com'] },
    });
    const read = loadPhishingLists(dir);
    expect(read.skipped).toBe(2);
    expect([...read.blocked.keys()].sort()).toEqual(['bad.com', 'fullwidth.com', 'xn--aav-8la.com', 'xn--bcher-kva.de', 'xn--vil-9la.net']);
    expect(read.allowed.has('xn--bcher-kva.de')).toBe(true);
    expect(read.allowedWildcard.has('xn--and-6ma2c.com')).toBe(true);
    expect(phishingSignal('xn--vil-9la.net', read).weight).toBe(60);
    expect(phishingSignal('xn--bcher-kva.de', read)).toMatchObject({ weight: 0, detail: expect.stringContaining('allowlist') });
    expect(phishingSignal('shop.xn--and-6ma2c.com', read).weight).toBe(0);
  });
});

describe('phishing-list entries that are public suffixes (defect 2)', () => {
  it.each([
    ['www.myngo.org.in', 'org.in (ICANN)'],
    ['mydomain.org.im', 'org.im (ICANN)'],
    ['startup.io.in', 'io.in (ICANN)'],
    ['anything.gb.net', 'gb.net (private)'],
    ['myhost.servebeer.com', 'servebeer.com (private)'],
    ['shop.alwaysdata.net', 'alwaysdata.net (private)'],
    ['www.shop.alwaysdata.net', 'alwaysdata.net above the site shop.alwaysdata.net'],
  ])('%s is not flagged through the listed suffix %s', (name) => {
    expect(phishingSignal(name, lists)).toEqual({
      code: 'phishing_list',
      detail: 'not on the bundled phishing lists (MetaMask eth-phishing-detect, polkadot{.js} phishing)',
      weight: 0,
    });
  });

  it('still matches a listed suffix exactly, and an ordinary parent as before', () => {
    expect(phishingSignal('alwaysdata.net', lists)).toMatchObject({
      weight: 60,
      detail: 'alwaysdata.net is on the polkadot{.js} phishing deny list (2026-02-03 snapshot)',
    });
    expect(phishingSignal('servebeer.com', lists).weight).toBe(60);
    expect(phishingSignal('www.community-optimism.org', lists)).toMatchObject({ weight: 60, detail: expect.stringContaining('a parent of') });
    // A listed name under a private suffix (a customer's site) and what is under it.
    expect(phishingSignal('degen-tips.eth.limo', lists).weight).toBe(60);
  });
});

describe('the label of a name that is itself a private suffix (defect 4)', () => {
  it.each([
    ['github.io', 'github.io', 'github', ''],
    ['vercel.app', 'vercel.app', 'vercel', ''],
    ['blogspot.com', 'blogspot.com', 'blogspot', ''],
    ['s3.amazonaws.com', 'amazonaws.com', 'amazonaws', 's3'],
  ])('%s: site %s, label %s', (input, site, label, subdomain) => {
    expect(engine.prepare(input)).toMatchObject({ name: input, site, label, subdomain });
  });

  it('keeps the labels of ordinary names and of customer sites', () => {
    expect(engine.prepare('alice.github.io')).toMatchObject({ site: 'alice.github.io', label: 'alice', registrable: 'github.io' });
    expect(engine.prepare('www.example.co.uk')).toMatchObject({ site: 'example.co.uk', label: 'example', subdomain: 'www' });
  });
});

describe("the brands' own domains (defect 5)", () => {
  const brand = (input: string) => brands.match(engine.prepare(input));

  it.each([
    'googleusercontent.com',
    'lh3.googleusercontent.com',
    'microsoftonline.com',
    'login.microsoftonline.com',
    'paypalobjects.com',
    's3.amazonaws.com',
    'paypal.co.uk',
    'www.paypal.de',
    'google.co.uk',
    'google.com.br',
    'amazon.com.br',
    'amazon.co.jp',
  ])('%s is not flagged', (input) => {
    expect(brand(input)).toBeNull();
  });

  it('still flags the brand name elsewhere and customer sites on a brand-run platform', () => {
    expect(brand('paypal.xyz')).toMatchObject({ weight: 10 });
    expect(brand('paypal.tk')).toMatchObject({ weight: 10 }); // not among PayPal's country sites
    expect(brand('amazon.xyz')).toMatchObject({ weight: 10 });
    expect(brand('amazon-login.s3.amazonaws.com')).toMatchObject({ weight: 25, detail: expect.stringContaining('amazon-login') });
    expect(brand('googleusercontent.xyz')).toMatchObject({ weight: 25 });
  });

  it('expands country_suffixes to the brand name under each, and refuses one that is not a country-code public suffix', () => {
    const brandsFile = (suffixes: string[]) =>
      dataDir({
        'domainrep/brands.json': { brands: [{ brand: 'examplebrand', domains: ['examplebrand.com'], match: 'substring', country_suffixes: suffixes }] },
      });
    expect(loadBrands(brandsFile(['co.uk', 'de']))[0].domains).toEqual(['examplebrand.com', 'examplebrand.co.uk', 'examplebrand.de']);
    for (const bad of ['xyz', 'com.be', 'github.io', 'co.uk.']) {
      expect(() => loadBrands(brandsFile([bad]))).toThrow(/country_suffixes entry .* is not a public suffix under a country-code TLD/);
    }
  });
});

// --- end to end, against loopback servers ------------------------------------------------------

let dns: DnsTestServer;
let rdap: RdapTestServer;

const A = (address = '203.0.113.10'): DnsRecord => ({ type: 'A', address });
const authenticated = (name: string): Zone => ({
  [name]: [A(), { type: 'MX', exchange: `mx.${name}`, priority: 10 }, { type: 'TXT', data: 'v=spf1 mx -all' }],
  [`_dmarc.${name}`]: [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
});
function registration(name: string, daysAgo: number) {
  const eventDate = new Date(Date.now() - daysAgo * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return rdapAnswer.json({ objectClassName: 'domain', ldhName: name, status: ['active'], events: [{ eventAction: 'registration', eventDate }] });
}

beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      'rdap.test': [A('127.0.0.1')],
      ...authenticated('oldclean.com'),
      'bare.com': [A()],
      ...authenticated('mycharity.org.in'),
      'evil-login.herokuapp.com': [A()],
      'herokuapp.com': [A()],
    },
    behaviours: {},
  });
  rdap = await startRdapServer({
    'oldclean.com': registration('oldclean.com', 20 * 365),
    'bare.com': registration('bare.com', 400),
    'mycharity.org.in': registration('mycharity.org.in', 10 * 365),
    'herokuapp.com': registration('herokuapp.com', 15 * 365),
  });
});

afterAll(async () => {
  await Promise.all([dns?.close(), rdap?.close()]);
});

function lookupWith(): Lookup {
  const base = `http://rdap.test:${new URL(rdap.url).port}/rdap/`;
  return createLookup({
    dns: { servers: [dns.address], timeouts: { connectMs: 200, totalMs: 3_000 }, attempts: 1 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: { rdapServers: { com: base, in: base }, timeouts: { connectMs: 1_000, totalMs: 3_000 }, lookupTimeoutMs: 5_000 },
  });
}
const byCode = (result: DomainRepResult, code: string) => result.signals.filter((s) => s.code === code);

describe('email_auth of a subdomain that does not exist (defect 3)', () => {
  it("reads the existing site's mail records and says whose they are", async () => {
    const lookup = lookupWith();
    const www = await lookup.domainrep('www.oldclean.com');
    expect(byCode(www, 'dns_resolution')[0].weight).toBe(50);
    expect(byCode(www, 'email_auth')).toEqual([
      { code: 'email_auth', detail: 'oldclean.com (the site of www.oldclean.com) publishes SPF and DMARC (emailauth score 75)', weight: 0 },
    ]);
    const bare = await lookup.domainrep('www.bare.com');
    expect(byCode(bare, 'email_auth')).toEqual([
      { code: 'email_auth', detail: 'bare.com (the site of www.bare.com): no SPF record, no DMARC record', weight: 20 },
    ]);
  });

  it('is not applicable, naming the site, when the site does not exist either', async () => {
    const lookup = lookupWith();
    for (const name of ['nothere.com', 'www.nothere.com']) {
      const result = await lookup.domainrep(name);
      expect(byCode(result, 'email_auth')).toEqual([{ code: 'email_auth', detail: 'not applicable: nothere.com does not exist in DNS', weight: 0 }]);
    }
  });
});

describe('a site under a listed public suffix, end to end (defect 2)', () => {
  it('scores mycharity.org.in low: the org.in listing does not count', async () => {
    const result = await lookupWith().domainrep('mycharity.org.in');
    expect(byCode(result, 'phishing_list')[0].weight).toBe(0);
    expect(result.level).toBe('low');
  });
});

// A site under a private suffix (`evil-login.herokuapp.com`): its registration age is the hosting
// platform's, so an old platform must not lend the customer's site the "5 years or more" trust (-10).
describe('domain_age of a site under a private suffix', () => {
  it("gives a customer's site no trust from the hosting platform's old registration, and says whose date it is", async () => {
    const [age] = byCode(await lookupWith().domainrep('evil-login.herokuapp.com'), 'domain_age');
    expect(age.weight).toBe(0);
    expect(age.detail).toMatch(/^herokuapp\.com, the platform evil-login\.herokuapp\.com is hosted on, was registered 15 years ago/);
  });

  it('still counts an old registration for the registrable domain itself and for an ordinary site', async () => {
    const lookup = lookupWith();
    expect(byCode(await lookup.domainrep('herokuapp.com'), 'domain_age')[0]).toMatchObject({
      weight: -10,
      detail: expect.stringMatching(/^registered 15 years ago/),
    });
    expect(byCode(await lookup.domainrep('oldclean.com'), 'domain_age')[0]).toMatchObject({ weight: -10 });
  });
});
