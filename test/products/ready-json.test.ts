/**
 * geoip, asn, timezone and webhookip hand the API their answers as ready JSON (LookupOutcome
 * `json`), byte for byte `JSON.stringify(result)`, the result still a fresh object per call; and
 * the remembered JSON follows the data: a reloaded geoip file, a timezone clock past a DST change.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createJsonMemo } from '../../src/lib/json-memo.js';
import { createLookup } from '../../src/lookup.js';
import { MAXMIND, sourceNetworks } from './geoip-fixtures.js';

const temp = mkdtempSync(join(tmpdir(), 'seclookup-ready-json-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const PUBLIC_IPS = [
  '1.1.1.1',
  '8.8.8.8',
  '9.9.9.9',
  '81.2.69.142',
  '74.209.24.1',
  '2001:4860:4860::8888',
  '2606:4700::1111',
  '216.160.83.56',
  '3.5.140.2',
  '140.82.112.3',
];

/**
 * Every lookup three times: from the second on (geoip and timezone only note an address the
 * first time; asn and webhookip answer JSON at once) JSON as JSON.stringify makes it, a new
 * result object each time.
 */
async function expectReadyJson(call: (ip: string) => Promise<{ result: object; json?: string }>, ips: readonly string[]): Promise<number> {
  let answered = 0;
  for (const ip of ips) {
    let zeroth: { result: object; json?: string };
    try {
      zeroth = await call(ip);
    } catch {
      continue; // not found in this database: no answer to compare
    }
    if (zeroth.json !== undefined) expect(zeroth.json, ip).toBe(JSON.stringify(zeroth.result));
    const first = await call(ip);
    const second = await call(ip);
    expect(first.json, ip).toBe(JSON.stringify(first.result));
    expect(second.json, ip).toBe(first.json);
    expect(second.result).not.toBe(first.result);
    expect(second.result).toEqual(first.result);
    answered++;
  }
  return answered;
}

describe('ready JSON, byte for byte', () => {
  it('geoip (bundled DB-IP files with the asn product, and MaxMind test files)', async () => {
    const bundled = createLookup({ geoip: { watch: false } });
    expect(await expectReadyJson((ip) => bundled.detailed.geoip(ip), PUBLIC_IPS)).toBeGreaterThan(5);
    const maxmind = createLookup({ geoip: { watch: false, asn: false, database: MAXMIND.enterprise } });
    const ips = sourceNetworks('GeoIP2-Enterprise-Test').map((n) => n.ip);
    expect(await expectReadyJson((ip) => maxmind.detailed.geoip(ip), ips)).toBeGreaterThan(5);
  });

  it('asn, timezone and webhookip (with and without a provider filter)', async () => {
    const lookup = createLookup({ geoip: { watch: false } });
    expect(await expectReadyJson((ip) => lookup.detailed.asn(ip), PUBLIC_IPS)).toBe(PUBLIC_IPS.length);
    expect(await expectReadyJson((ip) => lookup.detailed.timezone(ip), PUBLIC_IPS)).toBe(PUBLIC_IPS.length);
    const webhookIps = [...PUBLIC_IPS, '192.30.252.1', '185.199.108.1', '54.187.174.169', '3.18.12.63', '2a0a:a440::1'];
    expect(await expectReadyJson((ip) => lookup.detailed.webhookip(ip), webhookIps)).toBe(webhookIps.length);
    expect(await expectReadyJson((ip) => lookup.detailed.webhookip(ip, { provider: 'github,stripe' }), webhookIps)).toBe(webhookIps.length);
    const github = await lookup.detailed.webhookip('192.30.252.1');
    expect(github.json).toBe('{"ip":"192.30.252.1","matched":true,"providers":[{"id":"github","name":"GitHub"}]}');
    expect((await lookup.detailed.webhookip('192.30.252.1', { provider: 'stripe' })).json).toBe('{"ip":"192.30.252.1","matched":false,"providers":[]}');
  });
});

describe('the remembered JSON follows the data', () => {
  it('timezone: the same address after a DST change answers the new offset', async () => {
    const clock = { now: Date.UTC(2026, 0, 15, 12) };
    const lookup = createLookup({ now: () => clock.now, geoip: { asn: false, watch: false, database: MAXMIND.enterprise } });
    await lookup.detailed.timezone('74.209.24.1');
    const winter = await lookup.detailed.timezone('74.209.24.1');
    expect(JSON.parse(winter.json!).timezone).toEqual({ id: 'America/New_York', utc_offset: '-05:00', abbreviation: 'EST' });
    clock.now = Date.UTC(2026, 6, 15, 12);
    const summer = await lookup.detailed.timezone('74.209.24.1');
    expect(summer.json).toBeUndefined(); // a new clock reading: noted, then answered as JSON
    const again = await lookup.detailed.timezone('74.209.24.1');
    expect(again.json).toBe(JSON.stringify(summer.result));
    expect(JSON.parse(again.json!).timezone).toEqual({ id: 'America/New_York', utc_offset: '-04:00', abbreviation: 'EDT' });
  });

  it('geoip: after a reload the same address answers from the new file', async () => {
    const path = join(temp, 'geo.mmdb');
    copyFileSync(MAXMIND.city, path);
    const lookup = createLookup({ geoip: { asn: false, watch: false, database: path } });
    await lookup.detailed.geoip('81.2.69.142');
    const before = await lookup.detailed.geoip('81.2.69.142');
    expect(JSON.parse(before.json!)).toMatchObject({ provider: 'MaxMind GeoIP2-City', city: 'London' });
    copyFileSync(MAXMIND.country, `${path}.next`);
    renameSync(`${path}.next`, path);
    expect(lookup.engine('geoip').reload()).toBe(true);
    expect((await lookup.detailed.geoip('81.2.69.142')).json).toBeUndefined(); // another record: noted
    const after = await lookup.detailed.geoip('81.2.69.142');
    expect(after.json).toBe(JSON.stringify(after.result));
    expect(JSON.parse(after.json!)).toMatchObject({ provider: 'MaxMind GeoIP2-Country', city: null });
  });

  it("a caller changing its result changes no JSON, its own or the next caller's", async () => {
    const lookup = createLookup({ geoip: { watch: false } });
    for (const product of ['asn', 'geoip', 'timezone', 'webhookip'] as const) {
      await lookup.detailed[product]('140.82.112.5'); // noted by geoip and timezone
      const first = await lookup.detailed[product]('140.82.112.5');
      const before = JSON.stringify(first.result);
      (first.result as { ip: string }).ip = 'changed';
      expect(first.json, product).toBe(before);
      const second = await lookup.detailed[product]('140.82.112.5');
      expect(second.json, product).toBe(before);
      expect(second.result, product).toEqual(JSON.parse(before));
    }
  });

  it('the memo: a new source is a miss; bounded; size 0 keeps nothing', () => {
    const memo = createJsonMemo<{ n: number }>(2);
    const a = {};
    expect(memo.json('k', { n: 1 }, a)).toBe('{"n":1}');
    expect(memo.json('k', { n: 2 }, a)).toBe('{"n":1}'); // same input, same source: remembered
    expect(memo.json('k', { n: 2 }, {})).toBe('{"n":2}');
    expect(memo.json('k', { n: 3 }, a, 'other')).toBe('{"n":3}');
    memo.json('x', { n: 0 }, a);
    memo.json('y', { n: 0 }, a);
    expect(memo.size).toBe(2);
    // repeated: the first sighting is only noted; the JSON is made at the second.
    const noted = createJsonMemo<{ n: number }>(4);
    expect(noted.repeated('k', { n: 1 }, a)).toBeUndefined();
    expect(noted.repeated('k', { n: 1 }, a)).toBe('{"n":1}');
    expect(noted.repeated('k', { n: 2 }, a)).toBe('{"n":1}');
    expect(noted.repeated('k', { n: 2 }, {})).toBeUndefined();
    const none = createJsonMemo<{ n: number }>(0);
    expect(none.json('k', { n: 1 }, a)).toBe('{"n":1}');
    expect(none.json('k', { n: 2 }, a)).toBe('{"n":2}');
    expect(none.size).toBe(0);
  });
});
