/**
 * A zone found from coordinates stays within the record's own country (src/products/geoip/
 * country-zones.ts): tz-lookup's coarse boundaries put addresses near a border in the
 * neighbour's zone, sometimes with another UTC offset. Real data throughout: the bundled DB-IP
 * City Lite files, tz-lookup, and data/timezone/zone.tab (tzdata 2025b).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tzlookup from '@photostructure/tz-lookup';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/harness.js';
import { isSeclookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { bundledCountryZones, readCountryZones } from '../../src/products/geoip/country-zones.js';
import { readGeo } from '../../src/products/geoip/record.js';
import { same } from '../cheap-expect.js';

const JANUARY = Date.UTC(2026, 0, 15, 12);
const lookup = createLookup({ now: () => JANUARY, geoip: { asn: false, watch: false } });

/** zone.tab read here on its own terms: country -> zones (plus Crimea for RU, as zone1970.tab has it). */
function zonesByCountry(): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>([['RU', new Set(['Europe/Simferopol'])]]);
  for (const line of readFileSync(join(bundledDataDir(), 'timezone', 'zone.tab'), 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [country, , zone] = line.split('\t');
    const zones = map.get(country!) ?? new Set<string>();
    zones.add(zone!);
    map.set(country!, zones);
  }
  return map;
}
const COUNTRY_ZONES = zonesByCountry();

describe('the reviewer’s addresses: the zone of the record’s country, with its offset (2026-01-15 12:00 UTC)', () => {
  it.each([
    // Another UTC offset than tz-lookup's zone (America/St_Johns -03:30, America/Port-au-Prince -05:00, Europe/Athens +02:00).
    ['70.36.1.177', 'PM', 'Saint-Pierre', 'America/Miquelon', '-03:00', '-03'],
    ['190.123.77.188', 'DO', 'Monte Cristo', 'America/Santo_Domingo', '-04:00', 'AST'],
    ['91.212.96.147', 'AL', 'Sarande', 'Europe/Tirane', '+01:00', 'CET'],
    // Asia/Shanghai (+08:00) at the coordinates: the Jewish Autonomous Oblast keeps Vladivostok time.
    ['85.15.102.207', 'RU', 'Nikolayevka', 'Asia/Vladivostok', '+10:00', '+10'],
    // Asia/Kathmandu (+05:45) just south of the Nepalese border.
    ['223.190.40.239', 'IN', 'Jhanjharpur', 'Asia/Kolkata', '+05:30', 'IST'],
    // Same offset, the neighbour's zone: America/Toronto, America/Guatemala, Europe/Bucharest, ...
    ['35.58.0.98', 'US', 'Sault Ste. Marie', 'America/Detroit', '-05:00', 'EST'],
    ['200.123.212.39', 'BZ', 'Punta Gorda', 'America/Belize', '-06:00', 'CST'],
    ['195.66.157.242', 'UA', 'Tiachivka', 'Europe/Kyiv', '+02:00', 'EET'],
    ['207.194.134.198', 'CA', 'Oliver', 'America/Vancouver', '-08:00', 'PST'],
    ['209.169.169.70', 'CA', 'Saint-Louis-du-Ha Ha', 'America/Toronto', '-05:00', 'EST'],
    ['178.193.152.195', 'CH', 'Delemont', 'Europe/Zurich', '+01:00', 'CET'],
    ['213.196.121.247', 'BA', 'Gradiska', 'Europe/Sarajevo', '+01:00', 'CET'],
    ['45.232.80.212', 'BR', 'Alecrim', 'America/Sao_Paulo', '-03:00', '-03'],
    ['200.197.47.227', 'BR', 'Atalaia do Norte', 'America/Eirunepe', '-05:00', '-05'],
    // tz-lookup draws northern Vietnam as Asia/Bangkok (zone1970.tab's grouping); zone.tab's zone for VN is Asia/Ho_Chi_Minh.
    ['14.254.144.30', 'VN', 'Hanoi', 'Asia/Ho_Chi_Minh', '+07:00', '+07'],
  ])('%s (%s, %s) is %s %s %s', async (ip, country, city, id, utcOffset, abbreviation) => {
    const answer = await lookup.timezone(ip);
    expect(answer).toEqual({ ip, timezone: { id, utc_offset: utcOffset, abbreviation }, country: { code: country }, city });
    // The coordinates alone would give another country's zone: the case this test is about.
    const geo = await lookup.geoip(ip);
    expect(geo.timezone.id).toBe(id);
    const raw = tzlookup(geo.location.latitude!, geo.location.longitude!);
    expect(COUNTRY_ZONES.get(country)!.has(raw), `${raw} is not a zone of ${country}`).toBe(false);
  });

  it('a country tzdata lists no zone for (XK, Kosovo) keeps the zone at its coordinates', async () => {
    expect(await lookup.timezone('46.99.77.117')).toMatchObject({
      timezone: { id: 'Europe/Belgrade', utc_offset: '+01:00', abbreviation: 'CET' },
      country: { code: 'XK' },
    });
    expect(COUNTRY_ZONES.has('XK')).toBe(false);
  });
});

describe('measured: random public addresses', () => {
  it('20,000 IPv4 and 5,000 IPv6 addresses: no zone outside the record’s country (tz-lookup alone: some)', async () => {
    const rand = seededRandom(1970);
    const hex = () => Math.floor(rand() * 0x10000).toString(16);
    const counts = { answered: 0, zoned: 0, outside: 0, rawOutside: 0, otherOffset: 0, noOffset: 0, unlisted: 0 };
    const outside: string[] = [];
    for (let n = 0; n < 25_000; ) {
      const ip =
        n % 5 === 4
          ? `2${hex().slice(0, 3).padStart(3, '0')}:${hex()}:${hex()}::${hex()}`
          : Array.from({ length: 4 }, () => Math.floor(rand() * 256)).join('.');
      let geo: Awaited<ReturnType<typeof lookup.geoip>>;
      try {
        geo = await lookup.geoip(ip);
      } catch {
        continue; // not routable, or no record
      }
      n++;
      counts.answered++;
      const id = geo.timezone.id;
      const country = geo.country.code;
      if (id === null || country === null) continue;
      counts.zoned++;
      const zones = COUNTRY_ZONES.get(country);
      if (!zones) {
        counts.unlisted++; // XK, BV, HM: tz-lookup's zone is kept
        same(id, tzlookup(geo.location.latitude!, geo.location.longitude!), ip);
        continue;
      }
      if (!zones.has(id)) {
        counts.outside++;
        outside.push(`${ip} ${country} ${id}`);
      }
      const raw = tzlookup(geo.location.latitude!, geo.location.longitude!);
      if (!zones.has(raw)) {
        counts.rawOutside++;
        if (offsetAt(raw) !== offsetAt(id)) counts.otherOffset++;
      } else {
        same(id, raw, ip); // a zone already in the country is never changed
      }
      const answer = await lookup.timezone(ip);
      same(answer.timezone.id, id, ip);
      if (answer.timezone.utc_offset === null) counts.noOffset++;
    }
    expect(outside).toEqual([]);
    expect(counts.outside).toBe(0);
    expect(counts.noOffset).toBe(0);
    expect(counts.zoned).toBeGreaterThan(24_000);
    // What the coordinates alone gave on the same sample (measured: 88; 4 with another UTC offset
    // than the country's zone on 2026-01-15). 100,000 addresses gave 339 and 11, 290 of them
    // Vietnam's Asia/Bangkok, and 6 in XK, a country tzdata lists no zone for (tested by name above).
    expect(counts.rawOutside).toBeGreaterThanOrEqual(88);
    expect(counts.otherOffset).toBeGreaterThanOrEqual(4);
  });
});

function offsetAt(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(JANUARY).find((part) => part.type === 'timeZoneName')!
    .value;
}

describe('readGeo: the rule on single records', () => {
  const flat = (country_code: string, latitude: number, longitude: number) => ({
    country_code,
    state1: '',
    state2: '',
    city: '',
    postcode: '',
    latitude,
    longitude,
    timezone: '',
  });

  it('a link shared by two countries: Ljubljana is Europe/Ljubljana for SI and Europe/Zagreb for HR (zone.tab names both)', () => {
    expect(tzlookup(46.05, 14.51)).toBe('Europe/Ljubljana');
    expect(readGeo(flat('SI', 46.05, 14.51)).timezoneId).toBe('Europe/Ljubljana');
    expect(readGeo(flat('HR', 46.05, 14.51)).timezoneId).toBe('Europe/Zagreb');
  });

  it('a country of several zones gets the one tz-lookup finds nearest, else the nearest principal location', () => {
    // Windsor, Ontario (tz-lookup: America/Toronto) under a US code: America/Detroit, found across the river.
    expect(tzlookup(42.3, -83.05)).toBe('America/Toronto');
    expect(readGeo(flat('US', 42.3, -83.05)).timezoneId).toBe('America/Detroit');
    // New York City under a CA code: no Canadian zone within the rings (about 55 km), so the zone whose principal
    // location is nearest, America/Toronto (about 550 km; America/Halifax is about 950 km).
    expect(tzlookup(40.71, -74.01)).toBe('America/New_York');
    expect(readGeo(flat('CA', 40.71, -74.01)).timezoneId).toBe('America/Toronto');
  });

  it('a record without a country, or of a country tzdata does not list, keeps tz-lookup’s zone', () => {
    expect(readGeo({ state1: '', latitude: 46.05, longitude: 14.51 }).timezoneId).toBe('Europe/Ljubljana');
    expect(readGeo(flat('XK', 46.05, 14.51)).timezoneId).toBe('Europe/Ljubljana');
    expect(readGeo(flat('BV', -54.42, 3.36)).timezoneId).toBe(tzlookup(-54.42, 3.36));
  });

  it('a MaxMind record’s own time_zone is never changed', () => {
    const record = { country: { iso_code: 'HR' }, location: { latitude: 46.05, longitude: 14.51, time_zone: 'Europe/Ljubljana' } };
    expect(readGeo(record).timezoneId).toBe('Europe/Ljubljana');
    expect(readGeo({ ...record, location: { latitude: 46.05, longitude: 14.51 } }).timezoneId).toBe('Europe/Zagreb');
  });
});

describe('the table: data/timezone/zone.tab', () => {
  const temp = mkdtempSync(join(tmpdir(), 'seclookup-zonetab-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('tzdata 2025b: 418 rows, 247 countries; every zone known to Node’s ICU', () => {
    const table = bundledCountryZones();
    expect(table.rows).toBe(418);
    expect(COUNTRY_ZONES.size).toBe(247);
    for (const [country, zones] of COUNTRY_ZONES) {
      expect(table.zonesOf(country)).toEqual(zones);
      for (const zone of zones) expect(() => new Intl.DateTimeFormat('en-US', { timeZone: zone }), zone).not.toThrow();
    }
  });

  it('a zone Node’s ICU does not know (a newer tzdata than ICU’s) is never the replacement', () => {
    const path = join(temp, 'zone.tab');
    const bundled = readFileSync(join(bundledDataDir(), 'timezone', 'zone.tab'), 'utf8');
    // PM gets a second zone, unknown, whose principal location is New York; Kosovo gets only an unknown zone.
    writeFileSync(path, `${bundled}PM\t+4043-07400\tAmerica/Nowhere\nXK\t+4240+02110\tEurope/Nowhere\n`);
    expect(() => new Intl.DateTimeFormat('en-US', { timeZone: 'America/Nowhere' })).toThrow(RangeError);
    const table = readCountryZones(path);
    // A PM record placed in New York: no PM zone on the rings, the nearest principal location is the unknown zone's.
    expect(table.zoneFor('PM', 40.71, -74.01, 'America/New_York', tzlookup)).toBe('America/Miquelon');
    expect(table.zoneFor('XK', 42.66, 21.17, 'Europe/Belgrade', tzlookup)).toBe('Europe/Belgrade');
  });

  it('a missing or malformed file is dataset_missing / dataset_invalid, naming it', () => {
    const missing = join(temp, 'none.tab');
    const thrown = (path: string) => {
      try {
        readCountryZones(path);
      } catch (error) {
        return error;
      }
      return null;
    };
    const absent = thrown(missing);
    expect(isSeclookupError(absent) && absent.code).toBe('dataset_missing');
    expect((absent as Error).message).toContain(missing);
    const bad = join(temp, 'bad.tab');
    writeFileSync(bad, 'AD\tsomewhere\tEurope/Andorra\n');
    const invalid = thrown(bad);
    expect(isSeclookupError(invalid) && invalid.code).toBe('dataset_invalid');
    expect((invalid as Error).message).toContain(bad);
  });

  it("is read from the engine's data folder (createLookup({ dataDir })), not the package's (found by a reviewer)", async () => {
    const dataDir = join(temp, 'data');
    cpSync(bundledDataDir(), dataDir, { recursive: true, filter: (path) => !path.endsWith('.idx') });
    // The folder's table without Vietnam: its Hanoi record keeps the zone at its coordinates
    // (tz-lookup's Asia/Bangkok), where the package's table makes it Asia/Ho_Chi_Minh.
    const zoneTab = join(dataDir, 'timezone', 'zone.tab');
    writeFileSync(zoneTab, readFileSync(zoneTab, 'utf8').replace(/^VN\t.*\n/m, ''));
    const folder = createLookup({ dataDir, geoip: { asn: false, watch: false } });
    expect((await folder.geoip('14.254.144.30')).timezone.id).toBe('Asia/Bangkok');
    expect((await lookup.geoip('14.254.144.30')).timezone.id).toBe('Asia/Ho_Chi_Minh');
    await folder.close();
    // And a folder without the table fails the engine's build, naming the folder's file.
    const bare = join(temp, 'data-without-zone-tab');
    cpSync(dataDir, bare, { recursive: true });
    rmSync(join(bare, 'timezone', 'zone.tab'));
    const error = (() => {
      try {
        createLookup({ dataDir: bare, geoip: { asn: false, watch: false } }).engine('geoip');
      } catch (thrown) {
        return thrown;
      }
      return null;
    })();
    expect(isSeclookupError(error) && error.code).toBe('dataset_missing');
    expect((error as Error).message).toContain(join(bare, 'timezone', 'zone.tab'));
  });
});
