import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLookupError, isSeclookupError } from '../src/errors.js';
import { createMemoryCache, type CacheStore } from '../src/lib/cache.js';
import { packageVersion } from '../src/lib/datasets.js';
import { createLookup, type LookupOptions } from '../src/lookup.js';
import { SOFT_SOURCES } from '../src/products/scamrisk/types.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const emptyDir = mkdtempSync(join(tmpdir(), 'seclookup-empty-'));
afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('createLookup', () => {
  it('builds engines lazily: with no data, useragent works and webhookip names the missing file', async () => {
    const lookup = createLookup({ dataDir: emptyDir });
    expect(await lookup.useragent(CHROME)).toMatchObject({ browser: { name: 'Chrome' } });
    const error = await rejection(lookup.webhookip('140.82.112.5'));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect((error as Error).message).toContain(join(emptyDir, 'webhookip', 'ranges.json'));
    // Still the same answer later: the failure is remembered, not retried per call.
    expect(isSeclookupError(await rejection(lookup.webhookip('140.82.112.5')), 'dataset_missing')).toBe(true);
  });

  it('eager: throws at construction, listing each product whose data failed', () => {
    let thrown: unknown;
    try {
      createLookup({ dataDir: emptyDir, eager: true });
    } catch (error) {
      thrown = error;
    }
    expect(isSeclookupError(thrown, 'dataset_missing')).toBe(true);
    expect((thrown as Error).message).toMatch(/^webhookip: /);
    expect((thrown as Error).message).not.toContain('useragent');
  });

  it('checks outbound.allowPrivateTargets at construction', () => {
    expect(() => createLookup({ outbound: { allowPrivateTargets: ['10.0.0.1/8'] } })).toThrow(/host bits/);
    expect(() => createLookup({ outbound: { allowPrivateTargets: ['not-a-cidr'] } })).toThrow(/not a valid IP address or CIDR/);
    expect(() => createLookup({ outbound: { allowPrivateTargets: ['127.0.0.0/8'] } })).not.toThrow();
  });

  it('refuses a product option it does not know (a typo) and options that are not an object, naming them', () => {
    const refused = (options: unknown) => {
      try {
        createLookup(options as LookupOptions);
      } catch (error) {
        return error as Error;
      }
      throw new Error('accepted');
    };
    expect(refused({ geoip: { databse: 'x.mmdb' } }).message).toBe(
      'createLookup: geoip.databse is not an option of geoip (its options: database, databases, provider, asn, asnDatabase, reverseDns, lazy, watch, watchIntervalMs, cacheSize, onReload, onReloadError)',
    );
    expect(refused({ timezone: { cacheSize: 5 } }).message).toBe('createLookup: timezone.cacheSize is not an option of timezone (it has none)');
    expect(refused({ useragent: 'big' })).toMatchObject({ code: 'invalid_option', message: 'createLookup: useragent options must be an object' });
    expect(() => createLookup({ useragent: { cacheSize: 10 }, geoip: {} })).not.toThrow();
  });

  it('close() releases what the built engines hold: a report database scamrisk opened from a path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-close-'));
    try {
      const lookup = createLookup({ scamrisk: { reports: join(dir, 'reports.db'), disable: [...SOFT_SOURCES] } });
      expect((await lookup.scamrisk({ username: 'someone' })).report_summary.total_reports).toBe(0);
      const { reports } = lookup.engine('scamrisk');
      await lookup.close();
      const error = await rejection(Promise.resolve().then(() => reports.find('username', 'someone')));
      expect(isSeclookupError(error, 'store_failed')).toBe(true);
      await lookup.close(); // twice is harmless
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('after close(), builds no engine: a product first asked then is refused, and opens nothing close() would not release', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-closed-'));
    try {
      const file = join(dir, 'reports.db');
      const lookup = createLookup({ scamrisk: { reports: file, disable: [...SOFT_SOURCES] } });
      expect(await lookup.useragent(CHROME)).toMatchObject({ browser: { name: 'Chrome' } });
      await lookup.close();
      const error = await rejection(lookup.scamrisk({ username: 'someone' }));
      expect(isSeclookupError(error, 'store_failed')).toBe(true);
      expect((error as Error).message).toMatch(/^scamrisk: this lookup is closed/);
      expect(existsSync(file)).toBe(false); // the report database was never opened
      expect(() => lookup.engine('geoip')).toThrow(/this lookup is closed/);
      expect(() => lookup.load(['geoip'])).toThrow(/this lookup is closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('load(products) builds only the products named', () => {
    const lookup = createLookup({ dataDir: emptyDir });
    expect(() => lookup.load(['useragent'])).not.toThrow();
    expect(() => lookup.load()).toThrow(/webhookip/);
  });

  it('passes per-product options to their engines', async () => {
    const lookup = createLookup({
      webhookip: { dataset: { generated: '2026-01-01', providers: [{ id: 'acme', name: 'Acme', source_url: 'https://acme.example', cidrs: ['9.9.9.0/24'] }] } },
    });
    expect(await lookup.webhookip('9.9.9.9')).toEqual({ ip: '9.9.9.9', matched: true, providers: [{ id: 'acme', name: 'Acme' }] });
    expect(lookup.engine('webhookip').cidrCount).toBe(1);
  });

  it('detailed answers a plain object: its result survives a spread, JSON and structuredClone, cached or not', async () => {
    const lookup = createLookup();
    for (const outcome of [await lookup.detailed.useragent(CHROME), await lookup.detailed.useragent(CHROME), await lookup.detailed.timezone('8.8.8.8')]) {
      const { result } = outcome;
      expect(Object.keys(outcome)).toContain('result');
      expect({ ...outcome }.result).toEqual(result);
      expect(JSON.parse(JSON.stringify(outcome)).result).toEqual(result);
      expect(structuredClone(outcome).result).toEqual(result);
    }
  });

  it('validates input with LookupError before looking anything up', async () => {
    const lookup = createLookup();
    const error = await rejection(lookup.webhookip('10.0.0.1'));
    expect(isLookupError(error) && [error.code, error.status]).toEqual(['ip_not_routable', 422]);
  });

  it('puts every product cache into one shared store, keyed by product, version and normalized input', async () => {
    const inner = createMemoryCache();
    const keys: string[] = [];
    const store: CacheStore = {
      get: async (key) => inner.get(key),
      set: async (key, value, ttl) => {
        keys.push(key);
        inner.set(key, value, ttl);
      },
      delete: (key) => inner.delete(key),
    };
    const lookup = createLookup({ cache: store });
    expect((await lookup.detailed.useragent(CHROME)).cached).toBe(false);
    const second = await lookup.detailed.useragent(CHROME);
    expect(second.cached).toBe(true);
    expect(second.result).toMatchObject({ browser: { name: 'Chrome' } });
    expect(keys).toEqual([`useragent:${packageVersion()}:${CHROME}`]);
  });

  it('answers uncached, and tells onCacheError, when the shared store fails', async () => {
    const failures: unknown[] = [];
    const broken: CacheStore = { get: async () => Promise.reject(new Error('down')), set: () => Promise.reject(new Error('down')), delete: () => {} };
    const lookup = createLookup({ cache: broken, onCacheError: (error) => failures.push(error) });
    const outcome = await lookup.detailed.useragent(CHROME);
    expect(outcome).toMatchObject({ cached: false, result: { browser: { name: 'Chrome' } } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(failures).toHaveLength(2);
    expect(failures.every((e) => isSeclookupError(e, 'store_failed'))).toBe(true);
  });
});
