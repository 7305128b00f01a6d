/**
 * createLookup's configuration mistakes (docs/library.md: "configuration mistakes, thrown at
 * construction, are TypeErrors with code: 'invalid_option'"): thrown by createLookup itself, as
 * that TypeError, naming the option; never a SeclookupError, a raw error from deep inside, a
 * failure at the product's first call, or silence. Also what `load()` accepts, and that the
 * options table of docs/library.md lists every option.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lookupOptionsFrom } from '../src/cli/engines.js';
import { isSeclookupError } from '../src/errors.js';
import { createMemoryCache } from '../src/lib/cache.js';
import { MAX_CACHE_ENTRIES } from '../src/lib/option-checks.js';
import { createLookup, type LookupOptions } from '../src/lookup.js';
import type { AnyProductModule } from '../src/products/module.js';
import { PRODUCT_MODULES } from '../src/products/registry.js';
import { thrown } from './thrown.js';

const emptyDir = mkdtempSync(join(tmpdir(), 'seclookup-options-'));
afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

/** The top-level options beside the products' (LookupOptions). */
const GENERAL_OPTIONS = ['dataDir', 'cache', 'eager', 'dns', 'outbound', 'observer', 'onCacheError', 'now'];
/** The products that take options (every one but timezone). */
const WITH_OPTIONS = PRODUCT_MODULES.filter((module) => Object.keys(module.optionNames).length > 0);

/** createLookup(options) itself (no engine asked for) throws the invalid_option TypeError, its message naming each of `names`. */
function expectRefused(options: unknown, ...names: string[]): Error {
  const error = thrown(() => createLookup(options as LookupOptions));
  expect(error, `${JSON.stringify(options)}: ${error.message}`).toBeInstanceOf(TypeError);
  expect(error.code, `${JSON.stringify(options)}: ${error.message}`).toBe('invalid_option');
  for (const name of names) expect(error.message, JSON.stringify(options)).toContain(name);
  return error;
}

describe('createLookup option mistakes: the invalid_option TypeError, never dataset_invalid', () => {
  it('eager: an option mistake is the TypeError itself, not a SeclookupError dataset_invalid wrapping it', () => {
    const error = expectRefused({ eager: true, useragent: { cacheSize: -1 } }, 'useragent', 'cacheSize');
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(false);
    expectRefused({ eager: true, geoip: { database: 5 } }, 'geoip', 'database');
    expectRefused({ eager: true, dataDir: 5 }, 'dataDir');
  });

  it('eager and load(): a mistake only the build can see (a zone its file lacks, a bad dataset option) is invalid_option too', () => {
    const zone = thrown(() => createLookup({ dnsbl: { zones: ['no.such.zone.example'] } }).load(['dnsbl']));
    expect(zone).toBeInstanceOf(TypeError);
    expect(zone).toMatchObject({ code: 'invalid_option', message: expect.stringMatching(/^dnsbl: dnsbl zones option: .*"no\.such\.zone\.example"/) });
    const lookup = createLookup({ webhookip: { dataset: { generated: 'yesterday', providers: [] } } });
    const dataset = thrown(() => lookup.load(['webhookip']));
    expect(dataset).toBeInstanceOf(TypeError);
    expect(dataset).toMatchObject({ code: 'invalid_option', message: expect.stringContaining('dataset') });
  });

  it('load(): an unknown product is invalid_option naming it, a string is one product, anything else is refused clearly', () => {
    const lookup = createLookup({ dataDir: emptyDir });
    for (const products of [['nope'], ['useragent', 'nope']]) {
      const error = thrown(() => lookup.load(products as never));
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toMatchObject({ code: 'invalid_option', message: expect.stringContaining('"nope"') });
    }
    // One product by name, not its letters: useragent needs no data, webhookip's is missing here.
    expect(() => lookup.load('useragent')).not.toThrow();
    expect(
      isSeclookupError(
        thrown(() => lookup.load('webhookip')),
        'dataset_missing',
      ),
    ).toBe(true);
    for (const products of [null, 5, { useragent: true }]) {
      const error = thrown(() => lookup.load(products as never));
      expect(error, String(products)).toBeInstanceOf(TypeError);
      expect(error).toMatchObject({ code: 'invalid_option', message: expect.stringContaining('load: products must be') });
    }
  });
});

describe('createLookup option mistakes: named by createLookup, not raw errors from deep inside', () => {
  it('createLookup(null), now, dataDir, dns.servers and outbound.allowPrivateTargets of the wrong type', () => {
    expectRefused(null, 'options must be an object');
    expectRefused({ now: 'x' }, 'now');
    expectRefused({ dataDir: 5 }, 'dataDir');
    expectRefused({ dns: { servers: '1.1.1.1' } }, 'dns.servers');
    expectRefused({ outbound: { allowPrivateTargets: '10.0.0.0/8' } }, 'outbound.allowPrivateTargets');
    expectRefused({ outbound: { allowPrivateTargets: ['10.0.0.1/8'] } }, 'outbound.allowPrivateTargets', 'host bits');
  });

  it(`a cacheSize over ${MAX_CACHE_ENTRIES} (any product, and the DNS cache) is refused, not a RangeError from lru-cache`, () => {
    const cached = WITH_OPTIONS.filter((module) => 'cacheSize' in module.optionNames).map((module) => module.id);
    expect(cached.length).toBeGreaterThanOrEqual(12);
    for (const id of cached) expectRefused({ [id]: { cacheSize: 1e12 } }, id, 'cacheSize', String(MAX_CACHE_ENTRIES));
    expectRefused({ dns: { cache: { maxEntries: 1e12 } } }, 'dns.cache.maxEntries');
    // The maximum itself is allowed (lru-cache allocates its slots only when the cache is made, on first use).
    expect(() => createLookup({ useragent: { cacheSize: MAX_CACHE_ENTRIES } })).not.toThrow();
  });
});

describe('createLookup option mistakes: every product checked at construction, not at its first call', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['useragent', { cacheSize: -1 }, 'cacheSize'],
    ['webhookip', { dataset: 5 }, 'dataset'],
    ['pwbreach', { memoryMaxBytes: -1 }, 'memoryMaxBytes'],
    ['pwbreach', { cacheTtlMs: 'long' }, 'cacheTtlMs'],
    ['emailval', { cacheSize: 'many' }, 'cacheSize'],
    ['emailauth', { cacheSize: -1 }, 'cacheSize'],
    ['dnsbl', { zoneTimeoutMs: 0 }, 'zoneTimeoutMs'],
    ['dnsbl', { zones: [{ zone: 'bl.example.net' }] }, 'zones'],
    ['geoip', { watchIntervalMs: 0 }, 'watchIntervalMs'],
    ['asn', { csv: [] }, 'csv'],
    ['asn', { cymru: { zone: 'not a zone' } }, 'cymru.zone'],
    ['tls', { cacheTtlMs: 0 }, 'cacheTtlMs'],
    ['whois', { maxRedirects: -1 }, 'maxRedirects'],
    ['whois', { rdapServers: { com: 'ftp://rdap.example' } }, 'rdapServers.com'],
    ['domainrep', { signalTimeoutMs: 0 }, 'signalTimeoutMs'],
    ['scamrisk', { defaultRegion: 'usa' }, 'defaultRegion'],
    ['scamrisk', { disable: ['nope'] }, 'disable'],
    ['riskscore', { ipsumThreshold: 11 }, 'ipsumThreshold'],
    ['riskscore', { provider: 'ipinfo' }, 'key'],
  ])('%s %j', (id, options, name) => {
    expectRefused({ [id]: options }, id, name);
  });

  it('every product with options checks them at construction (its checkOptions)', () => {
    expect(WITH_OPTIONS.filter((module) => typeof module.checkOptions !== 'function').map((module) => module.id)).toEqual([]);
  });

  it('reads no data and builds no engine to check them: files that are not there pass until the product is used', () => {
    const lookup = createLookup({
      dataDir: emptyDir,
      geoip: { database: join(emptyDir, 'none.mmdb'), watch: false },
      asn: { database: join(emptyDir, 'none-asn.mmdb') },
      pwbreach: { store: join(emptyDir, 'none.pwb') },
      scamrisk: { reports: join(emptyDir, 'no-such-folder', 'reports.db') },
      dnsbl: { zones: ['zen.spamhaus.org'] },
      dns: { servers: ['127.0.0.1:5353'] },
    });
    expect(
      isSeclookupError(
        thrown(() => lookup.engine('geoip')),
        'dataset_missing',
      ),
    ).toBe(true);
  });
});

describe('createLookup option mistakes: said as what they are, and none silently accepted', () => {
  it('pwbreach upstream of the wrong type names what it got, not "(got undefined)"', () => {
    const error = expectRefused({ pwbreach: { upstream: 5 } }, 'pwbreach upstream', '(got 5)');
    expect(error.message).not.toContain('undefined');
    expectRefused({ pwbreach: { upstream: { url: 'https://range.example/{prefix}', retries: 2 } } }, 'pwbreach upstream.retries');
  });

  it('scamrisk reports of the wrong type is refused at construction, not a retryable assessment_failed at every call', () => {
    expectRefused({ scamrisk: { reports: 5 } }, 'scamrisk reports', '(got 5)');
    expectRefused({ scamrisk: { reports: { find: () => [] } } }, 'scamrisk reports');
  });

  it.each<[Record<string, unknown>, string]>([
    [{ tls: { timeouts: 'x' } }, 'tls timeouts'],
    [{ tls: { timeouts: { totalMS: 100 } } }, 'tls timeouts.totalMS'],
    [{ whois: { timeouts: 'x' } }, 'whois timeouts'],
    [{ riskscore: { timeouts: 5 } }, 'riskscore timeouts'],
    [{ dns: { timeouts: 'x' } }, 'dns.timeouts'],
    [{ geoip: { watch: 'yes' } }, 'geoip watch'],
    [{ geoip: { lazy: 'x' } }, 'geoip lazy'],
    [{ geoip: { onReload: 'x' } }, 'geoip onReload'],
    [{ geoip: { onReloadError: 'x' } }, 'geoip onReloadError'],
    [{ geoip: { asn: 'x' } }, 'geoip: asn'],
    [{ geoip: { reverseDns: 'yes' } }, 'geoip reverseDns'],
    [{ riskscore: { local: 'off' } }, 'riskscore local'],
    [{ eager: 'yes' }, 'eager'],
    [{ cache: {} }, 'cache'],
    [{ observer: 5 }, 'observer'],
    [{ onCacheError: true }, 'onCacheError'],
  ])('%j is refused, naming %s', (options, name) => {
    expectRefused(options, name);
  });
});

describe('createLookup option mistakes: an unknown top-level name is refused, as an unknown product option is', () => {
  it('a misspelled or unknown name, with what was likely meant', () => {
    expect(expectRefused({ dataDri: './x' }, 'dataDri').message).toContain('did you mean dataDir?');
    expect(expectRefused({ goeip: { watch: false } }, 'goeip').message).toContain('did you mean geoip?');
    expectRefused({ bogus: 1 }, 'bogus');
    // captcha is a product, but not one of createLookup's: its settings are createApi's.
    expectRefused({ captcha: {} }, 'captcha');
  });

  it('accepts every option LookupOptions has, each product included, and what serve passes', async () => {
    const observer = { cache: () => {}, upstream: () => {} };
    const all = createLookup({
      dataDir: emptyDir,
      cache: createMemoryCache(),
      eager: false,
      dns: { servers: ['127.0.0.1:5353'], timeouts: { connectMs: 100, totalMs: 200 }, attempts: 1, cache: { maxEntries: 0 } },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      observer,
      onCacheError: () => {},
      now: Date.now,
      ...Object.fromEntries(PRODUCT_MODULES.map((module) => [module.id, {}])),
    });
    await all.close();
    // serve: the flags' options (dataDir, dns and outbound even when undefined), --db as scamrisk's reports, the metrics observer, a shared cache.
    const served = {
      ...lookupOptionsFrom(PRODUCT_MODULES as readonly AnyProductModule[], {}, 'serve'),
      scamrisk: { reports: join(emptyDir, 'x.db') },
      observer,
      cache: createMemoryCache(),
    };
    await createLookup(served).close();
  });
});

describe('docs/library.md', () => {
  it("lists every createLookup option in its options table, and each product's option names in its row", () => {
    const text = readFileSync(new URL('../docs/library.md', import.meta.url), 'utf8');
    const rows = new Map(
      text
        .slice(text.indexOf('| option | default | meaning |'))
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .map((line) => [/^\| `(\w+)`/.exec(line)![1], line]),
    );
    expect([...GENERAL_OPTIONS, ...WITH_OPTIONS.map((module) => module.id)].filter((name) => !rows.has(name))).toEqual([]);
    for (const module of WITH_OPTIONS) {
      const missing = Object.keys(module.optionNames).filter((name) => !rows.get(module.id)!.includes(name));
      expect(missing, module.id).toEqual([]);
    }
  });
});

describe('a URL option refused for its shape', () => {
  it.each([
    ['pwbreach upstream', { pwbreach: { upstream: 'https://user:S3CRET-PW@exa mple.com/range/{prefix}' } }],
    ['pwbreach upstream without {prefix}', { pwbreach: { upstream: 'https://user:S3CRET-PW@example.com/range/' } }],
    ['riskscore url', { riskscore: { provider: 'ipinfo', key: 'k', url: 'http://user:S3CRET-PW@x y' } }],
    ['whois rdapServers', { whois: { rdapServers: { example: 'ftp://user:S3CRET-PW@rdap.example' } } }],
  ])('%s: the message quotes it without its password', (_name, options) => {
    const { code, message } = thrown(() => createLookup(options as LookupOptions));
    expect(code).toBe('invalid_option');
    expect(message).toContain('user:***@');
    expect(message).not.toContain('S3CRET-PW');
  });
});
