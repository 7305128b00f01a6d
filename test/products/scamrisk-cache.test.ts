/**
 * scamrisk's assessment cache: a repeat within the TTL is `cached: true` with a fresh request id,
 * a report filed through the engine or the report route shows at once, and an entry expires after
 * `cacheTtlMs` on the store's clock (a fake one here: nothing sleeps).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryCache } from '../../src/lib/cache.js';
import { createLookup } from '../../src/lookup.js';
import { isPromise } from '../../src/lib/outcome.js';
import { createMemoryReportStore } from '../../src/products/scamrisk/reports.js';
import { SOFT_SOURCES } from '../../src/products/scamrisk/types.js';
import { SCAMRISK_CACHE_TTL_MS, scamriskCacheSettings } from '../../src/products/scamrisk/engine.js';
import { createApiStack, FROZEN_NOW } from '../api/harness.js';

const OFFLINE = { disable: [...SOFT_SOURCES] };
const VALUE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('scamrisk assessment cache', () => {
  it('a repeat of the same identifier (any spelling of it) is cached: true with a fresh request_id; another identifier is not', async () => {
    const lookup = createLookup({ now: () => FROZEN_NOW, scamrisk: { ...OFFLINE, reports: createMemoryReportStore() } });
    const stack = await createApiStack({ lookup });
    const { secretKey } = await stack.keys('scamrisk');
    const first = await stack.call('/v1/scamrisk/assess', { key: secretKey, json: { type: 'crypto', value: VALUE } });
    const second = await stack.call(`/v1/scamrisk/assess?type=crypto&value=${VALUE.toLowerCase()}`, { key: secretKey });
    const other = await stack.call('/v1/scamrisk/assess', { key: secretKey, json: { username: 'someone' } });
    expect([first.status, first.body.cached, second.status, second.body.cached, other.body.cached]).toEqual([200, false, 200, true, false]);
    expect(second.body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(second.body.request_id).not.toBe(first.body.request_id);
    const { request_id: _a, cached: _b, ...firstRest } = first.body;
    const { request_id: _c, cached: _d, ...secondRest } = second.body;
    expect(secondRest).toEqual(firstRest);
  });

  it('a report through the report route is not hidden by the cache: the next assessment counts it', async () => {
    const lookup = createLookup({ now: () => FROZEN_NOW, scamrisk: { ...OFFLINE, reports: createMemoryReportStore() } });
    const stack = await createApiStack({ lookup });
    const { secretKey } = await stack.keys('scamrisk');
    const before = await stack.call('/v1/scamrisk/assess', { key: secretKey, json: { email: 'bad.actor@example.com' } });
    expect(before.body.report_summary).toMatchObject({ total_reports: 0 });
    const filed = await stack.call('/v1/scamrisk/report', { key: secretKey, json: { type: 'email', value: 'Bad.Actor@Example.com', category: 'phishing' } });
    expect(filed.status).toBe(200);
    const after = await stack.call('/v1/scamrisk/assess', { key: secretKey, json: { email: 'bad.actor@example.com' } });
    expect(after.body).toMatchObject({ cached: false, report_summary: { total_reports: 1 } });
  });

  it('an entry lives cacheTtlMs on the store clock; a report added behind the engine shows once it expires', async () => {
    let clock = 1_000; // not 0: lru-cache reads a start time of 0 as none
    const store = createMemoryReportStore({ now: () => FROZEN_NOW });
    const lookup = createLookup({ now: () => FROZEN_NOW, cache: createMemoryCache({ now: () => clock }), scamrisk: { ...OFFLINE, reports: store } });
    const assess = () => lookup.detailed.scamrisk({ username: 'someone' });
    expect((await assess()).cached).toBe(false);
    await store.add({ type: 'username', identifier: 'someone', category: 'scam', source: 'cli' });
    clock = 1_000 + SCAMRISK_CACHE_TTL_MS - 1;
    const held = await assess();
    expect([held.cached, held.result.report_summary.total_reports]).toEqual([true, 0]);
    clock = 1_000 + SCAMRISK_CACHE_TTL_MS + 1;
    const expired = await assess();
    expect([expired.cached, expired.result.report_summary.total_reports]).toEqual([false, 1]);
  });

  it('a hit in the local cache is answered in the same turn (no promise), so the API neither awaits it nor watches the client', async () => {
    const lookup = createLookup({ now: () => FROZEN_NOW, scamrisk: { ...OFFLINE, reports: createMemoryReportStore() } });
    const engine = lookup.engine('scamrisk');
    const query = engine.prepare({ type: 'crypto', value: VALUE });
    const miss = engine.lookup(query);
    expect(isPromise(miss)).toBe(true);
    expect((await miss).cached).toBe(false);
    const hit = engine.lookup(query);
    expect(isPromise(hit)).toBe(false);
    expect(hit).toMatchObject({ cached: true, json: (await miss).json });
  });

  it('cacheSize 0 or cacheTtlMs 0 turn it off; bad values are refused', async () => {
    for (const options of [{ cacheSize: 0 }, { cacheTtlMs: 0 }]) {
      const lookup = createLookup({ scamrisk: { ...OFFLINE, ...options } });
      await lookup.detailed.scamrisk({ username: 'someone' });
      expect((await lookup.detailed.scamrisk({ username: 'someone' })).cached, JSON.stringify(options)).toBe(false);
    }
    expect(scamriskCacheSettings(undefined)).toEqual({ maxEntries: 10_000, ttlMs: 60_000 });
    expect(() => scamriskCacheSettings({ cacheTtlMs: -1 })).toThrow(/cacheTtlMs must be a non-negative integer/);
    expect(() => scamriskCacheSettings({ cacheSize: 1.5 })).toThrow(/cacheSize must be a non-negative integer/);
  });
});
