/**
 * domainrep's signals from the name alone, on the bundled data: the label's shape, IDN, mixed
 * scripts and confusables, brand look-alikes, the TLD table and the phishing lists.
 */
import { describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { loadBrands, loadPhishingLists, loadTldRisk } from '../../src/products/domainrep/data.js';
import {
  createBrandMatcher,
  editDistance,
  idnSignals,
  looksRandom,
  phishingSignal,
  shapeSignals,
  skeleton,
  tldSignal,
  type NameParts,
} from '../../src/products/domainrep/lexical.js';
import { createLookup } from '../../src/lookup.js';

const DATA = bundledDataDir();
const engine = createLookup().engine('domainrep');
const parts = (input: string): NameParts => engine.prepare(input);
const brands = createBrandMatcher(loadBrands(DATA));
const tlds = loadTldRisk(DATA);
const lists = loadPhishingLists(DATA);

describe('the label', () => {
  it('reads the site label under the whole public suffix list', () => {
    expect(parts('www.example.co.uk')).toMatchObject({
      name: 'www.example.co.uk',
      site: 'example.co.uk',
      label: 'example',
      subdomain: 'www',
      tld: 'uk',
      registrable: 'example.co.uk',
    });
    expect(parts('paypal-login.pages.dev')).toMatchObject({ site: 'paypal-login.pages.dev', label: 'paypal-login', registrable: 'pages.dev', tld: 'dev' });
  });

  it('flags length, digits, hyphens and random-looking labels with their weights', () => {
    expect(shapeSignals(parts('example.com'))).toEqual([]);
    expect(shapeSignals(parts('secure-account-verification-centre.com')).map((s) => [s.code, s.weight])).toEqual([
      ['label_length', 10],
      ['label_hyphens', 10],
    ]);
    expect(shapeSignals(parts('login-secure-update-now.com')).map((s) => [s.code, s.weight])).toEqual([
      ['label_length', 5],
      ['label_hyphens', 10],
    ]);
    expect(shapeSignals(parts('bank2024online.com')).map((s) => s.code)).toEqual(['label_digits']);
    expect(shapeSignals(parts('xkq7zt9wvb2p.com')).map((s) => s.code)).toContain('label_entropy');
    expect(shapeSignals(parts('163.com'))).toEqual([]); // digits alone: not mixed with letters
  });

  it('tells machine-made labels from long words', () => {
    expect(looksRandom('stackoverflow')).toBe(false);
    expect(looksRandom('googleanalytics')).toBe(false);
    expect(looksRandom('qwxzkvbnrtplm')).toBe(true);
    expect(looksRandom('a8f3k2m9x7q1')).toBe(true);
  });
});

describe('internationalized names', () => {
  it('flags an IDN, a whole-script confusable and a mixed-script label', () => {
    expect(idnSignals(parts('аррӏе.com')).map((s) => [s.code, s.weight])).toEqual([
      ['idn', 5],
      ['confusable', 20],
    ]);
    const mixed = idnSignals(parts('pаypal.com')); // Cyrillic а among Latin letters
    expect(mixed.map((s) => s.code)).toEqual(['idn', 'mixed_script', 'confusable']);
    expect(mixed[1].detail).toContain('Cyrillic and Latin');
  });

  it('does not call ordinary IDNs mixed or confusable (Japanese with Latin, German umlauts stay readable)', () => {
    expect(idnSignals(parts('日本語abc.jp')).map((s) => s.code)).toEqual(['idn']);
    expect(idnSignals(parts('bücher.de')).map((s) => s.code)).toEqual(['idn']);
    expect(idnSignals(parts('пример.рф')).map((s) => s.code)).toEqual(['idn']); // all Cyrillic, not ASCII-looking
  });

  it('maps look-alikes to their skeleton', () => {
    expect(skeleton('paypa1')).toBe(skeleton('paypal'));
    expect(skeleton('g00gle')).toBe('google');
    expect(skeleton('rnicrosoft')).toBe(skeleton('microsoft'));
    expect(editDistance('coinbsae', 'coinbase', 2)).toBe(2);
    expect(editDistance('abc', 'xyzxyz', 1)).toBe(2);
  });
});

describe('brand look-alikes', () => {
  const brand = (input: string) => brands.match(parts(input));

  it.each([
    ['paypa1.com', 40, 'look-alike characters'],
    ['metamsk.io', 35, 'edit(s) from the brand "metamask"'],
    ['uniswap-airdrop.xyz', 25, 'contains the brand "uniswap"'],
    ['apple-id-verify.com', 25, 'contains the brand "apple"'],
    ['paypal.example.net', 20, 'appears as a subdomain of example.net'],
    ['paypal.xyz', 10, "not one of the brand's domains"],
  ])('%s: weight %d', (input, weight, detail) => {
    expect(brand(input)).toEqual({ code: 'brand_lookalike', detail: expect.stringContaining(detail), weight });
  });

  it("leaves the brands' own domains and words that merely contain a short brand alone", () => {
    expect(brand('paypal.com')).toBeNull();
    expect(brand('www.paypal.com')).toBeNull();
    expect(brand('accounts.google.com')).toBeNull();
    expect(brand('purchase.com')).toBeNull(); // "chase" is matched as a whole word only
    expect(brand('pineapple.com')).toBeNull();
    expect(brand('example.com')).toBeNull();
  });

  // Found by a reviewer: each scored 10 or 25 as a look-alike of its own brand.
  it.each([
    'googlesyndication.com',
    'www.googletagmanager.com',
    'google-analytics.com',
    'rr1.sn-abc.googlevideo.com',
    'c.amazon-adsystem.com',
    'login.microsoftonline-p.com',
    'scontent.cdninstagram.com',
    'dl.dropboxusercontent.com',
    'media.discordapp.net',
    'connect.facebook.net',
    'telegram.me',
    'www.apple.com.cn',
    'www.icloud.com.cn',
    'www.chase.co.uk',
    'www.dhl.co.uk',
  ])("%s: the brand's own service domain or country site", (input) => {
    expect(brand(input)).toBeNull();
  });
});

describe('TLD risk and the phishing lists', () => {
  it('weighs TLDs from the bundled table, neutral when too few domains are listed', () => {
    expect(tldSignal(parts('a.xyz'), tlds)).toMatchObject({ code: 'tld_risk', weight: 15 });
    expect(tldSignal(parts('a.com'), tlds)).toMatchObject({ weight: 0, detail: expect.stringContaining('no more than its share') });
    expect(tldSignal(parts('a.de'), tlds).weight).toBe(0);
    expect(tldSignal(parts('a.museum'), tlds)).toMatchObject({ weight: 0, detail: expect.stringContaining('too few to judge') });
  });

  it('finds a name or a parent on the lists; the allowlists win', () => {
    expect(phishingSignal('community-optimism.org', lists)).toEqual({
      code: 'phishing_list',
      detail: expect.stringContaining('MetaMask eth-phishing-detect blacklist'),
      weight: 60,
    });
    expect(phishingSignal('www.community-optimism.org', lists)).toMatchObject({
      weight: 60,
      detail: expect.stringContaining('a parent of www.community-optimism.org'),
    });
    expect(phishingSignal('09sync1n0-duckdns.org', lists)).toMatchObject({ weight: 60, detail: expect.stringContaining('polkadot{.js}') });
    expect(phishingSignal('metamax.exchange', lists)).toMatchObject({ weight: 0, detail: expect.stringContaining('allowlist') });
    expect(phishingSignal('duckdns.org', lists).weight).toBe(0);
    expect(phishingSignal('example.com', lists).weight).toBe(0);
  });
});
