/**
 * The asn engine over real data: the npm package's CSV (the default), CSV files written here
 * (quoted names, a range that is not one CIDR, IPv6, an overlap, unsorted rows), and MaxMind's
 * own test databases (answers compared with the JSON the test database was built from, and the
 * network with the `maxmind` reader's own prefix length). Then the index file's life: written
 * at the first build, read at the next, rebuilt when stale, truncated or corrupt, and kept out
 * of folders it cannot write or must not trust.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ipaddr from 'ipaddr.js';
import { Reader, type AsnResponse } from 'maxmind';
import { afterAll, describe, expect, it } from 'vitest';
import { isLookupError, isSeclookupError } from '../../src/errors.js';
import { isRoutable, parseIpInput } from '../../src/lib/ip-input.js';
import { forgetSharedFileData } from '../../src/lib/shared-file-data.js';
import { createLookup } from '../../src/lookup.js';
import { INDEX_FORMAT, loadAsnIndex } from '../../src/products/asn/csv-index.js';
import { formatIPv6BigInt, ipv6Network, ipv6PrefixInRange } from '../../src/products/asn/network.js';
import { ASN_PACKAGE, ASN_PACKAGE_VERSION, locateAsnPackage, openLocalSource, versionDate } from '../../src/products/asn/sources.js';
import { isReservedAsn } from '../../src/products/asn/reserved.js';
import type { AsnEngine, AsnResult } from '../../src/products/asn/types.js';

const temp = realpathSync(mkdtempSync(join(tmpdir(), 'seclookup-asn-'))); // index paths are real paths
afterAll(() => rmSync(temp, { recursive: true, force: true }));
let dirs = 0;
const newDir = (): string => {
  const dir = join(temp, `d${++dirs}`);
  mkdirSync(dir);
  return dir;
};

const FIXTURES = new URL('../fixtures/maxmind/', import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;

/** A result with the DNS-only fields null, as every local answer has them. */
const local = (ip: string, asn: number | null, as_org: string | null, network: string | null, network_type: AsnResult['network_type']): AsnResult => ({
  ip,
  asn,
  as_org,
  network,
  country_code: null,
  registry: null,
  allocated: null,
  network_type,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected a throw');
}

// ---------------------------------------------------------------------------------------------

describe('asn over the npm package @ip-location-db/asn (the default)', () => {
  const lookup = createLookup();
  const engine = lookup.engine('asn') as AsnEngine;

  it.each([
    ['1.1.1.1', local('1.1.1.1', 13335, 'Cloudflare, Inc.', '1.1.1.0/24', 'hosting')],
    ['8.8.8.8', local('8.8.8.8', 15169, 'Google LLC', '8.8.8.0/24', 'unknown')],
    ['2606:4700:4700::1111', local('2606:4700:4700::1111', 13335, 'Cloudflare, Inc.', '2606:4700:4700::/48', 'hosting')],
    // IPv6 text is answered in RFC 5952 form; IPv4-mapped IPv6 is the IPv4 address.
    ['2001:4860:4860:0:0:0:0:8888', local('2001:4860:4860::8888', 15169, 'Google LLC', '2001:4860:4840::/42', 'unknown')],
    ['::ffff:8.8.8.8', local('8.8.8.8', 15169, 'Google LLC', '8.8.8.0/24', 'unknown')],
    // 1.0.128.0-1.0.196.255 is not one CIDR: the largest CIDR inside it that holds the address.
    ['1.0.128.5', local('1.0.128.5', 23969, 'TOT Public Company Limited', '1.0.128.0/18', 'unknown')],
    ['1.0.196.77', local('1.0.196.77', 23969, 'TOT Public Company Limited', '1.0.196.0/24', 'unknown')],
    // The data's one overlap: 214.95.0.0-215.0.255.255 (AS749) and 215.0.0.0-215.1.3.255 (AS721).
    ['214.95.0.1', local('214.95.0.1', 749, 'United States Department of Defense (DoD)', '214.95.0.0/16', 'unknown')],
    ['215.0.0.1', local('215.0.0.1', 721, 'DoD Network Information Center', '215.0.0.0/16', 'isp')], // "Network" is an isp word
    // Public, but in no range: a result with nulls, not an error.
    ['1.0.1.1', local('1.0.1.1', null, null, null, 'unknown')],
    ['2c0f:ffff::1', local('2c0f:ffff::1', null, null, null, 'unknown')],
  ])('%s', async (ip, expected) => {
    const outcome = await lookup.detailed.asn(ip);
    expect(outcome.result).toEqual(expected);
    expect(outcome.cached).toBe(false);
    // fetched_at: the build hour the package version encodes (2.3.2026061719), the same every time.
    expect(outcome.fetchedAt?.toISOString()).toBe('2026-06-17T19:00:00.000Z');
  });

  it('counts every range of both files but those of a reserved AS as database_records, and says where the data came from', () => {
    const { files, version } = locateAsnPackage();
    const lines = files.flatMap((file) => readFileSync(file, 'utf8').split('\n').filter(Boolean));
    // Rows whose AS is 0, private, documentation or reserved (32 in the pinned data) are left out.
    const reserved = lines.filter((line) => isReservedAsn(Number(/^[^,]*,[^,]*,(\d+),/.exec(line)![1]))).length;
    expect(reserved).toBe(32);
    expect(version).toBe(ASN_PACKAGE_VERSION);
    expect(engine.databaseRecords).toBe(lines.length - reserved);
    expect(engine.source).toMatchObject({ kind: 'npm', package: `${ASN_PACKAGE}@${ASN_PACKAGE_VERSION}`, files, databaseType: null });
    expect(engine.cymru).toBeNull();
  });

  it('gives no AS for an address whose data names a private, documentation or reserved AS (found by a reviewer)', async () => {
    for (const ip of ['23.26.105.5', '103.138.210.1', '41.106.160.1', '164.115.251.1', '2604:e840::1'])
      expect(await lookup.asn(ip), ip).toMatchObject({ asn: null, as_org: null, network: null });
  });

  it('record(): the local data for any parsed address, synchronously; null where there is none', () => {
    expect(engine.record(parseIpInput('1.1.1.1'))).toEqual({ asn: 13335, org: 'Cloudflare, Inc.', network: '1.1.1.0/24' });
    expect(engine.record(parseIpInput('2606:4700:4700::1111'))).toEqual({ asn: 13335, org: 'Cloudflare, Inc.', network: '2606:4700:4700::/48' });
    expect(engine.record(parseIpInput('1.0.1.1'))).toBeNull();
    expect(engine.record(parseIpInput('10.0.0.1'))).toBeNull();
    expect(engine.record(engine.prepare('8.8.8.8'))).toEqual({ asn: 15169, org: 'Google LLC', network: '8.8.8.0/24' });
  });

  it('agrees with record() and with the CSV rows themselves on random public addresses', () => {
    // An independent reading of the pinned CSV: the row that contains the address, by linear scan.
    const rows = readFileSync(locateAsnPackage().files[0], 'utf8').split('\n').filter(Boolean);
    const toNumber = (text: string) => text.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
    const starts = new Float64Array(rows.length);
    const ends = new Float64Array(rows.length);
    const asns = new Float64Array(rows.length);
    rows.forEach((row, i) => {
      const [start, end, asn] = row.split(',');
      [starts[i], ends[i], asns[i]] = [toNumber(start), toNumber(end), Number(asn)];
    });
    /** The AS of the row holding `value` with the latest start (the most specific), by a scan of every row. */
    const holdingAsn = (value: number): number | null => {
      let best = -1;
      for (let i = 0; i < starts.length; i++) if (starts[i] <= value && value <= ends[i] && (best === -1 || starts[i] > starts[best])) best = i;
      return best === -1 ? null : asns[best];
    };
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    let checked = 0;
    while (checked < 300) {
      const ip = [random() % 256, random() % 256, random() % 256, random() % 256].join('.');
      const input = parseIpInput(ip);
      if (!isRoutable(input)) continue;
      const value = toNumber(ip);
      const record = engine.record(input);
      expect(record?.asn ?? null, ip).toBe(holdingAsn(value));
      const result = engine.lookup(engine.prepare(ip)) as { result: AsnResult };
      expect(result.result.asn).toBe(record?.asn ?? null);
      expect(result.result.network).toBe(record?.network ?? null);
      checked++;
    }
  });

  it("answers addresses drawn from random IPv6 rows with the row's AS and the network computed from the row", () => {
    const rows = readFileSync(locateAsnPackage().files[1], 'utf8').split('\n').filter(Boolean);
    const big = (text: string) => ipaddr.IPv6.parse(text).parts.reduce((acc, part) => (acc << 16n) | BigInt(part), 0n);
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let k = 0; k < 300; k++) {
      const [start, end, asn] = rows[random() % rows.length].split(',');
      const [s, e] = [big(start), big(end)];
      // Twice each: the second lookup of a row reads its network text as kept.
      for (const value of [s + (((BigInt(random()) << 64n) | BigInt(random())) % (e - s + 1n)), s + (BigInt(random()) % (e - s + 1n))]) {
        const ip = formatIPv6BigInt(value);
        const input = parseIpInput(ip);
        if (!isRoutable(input)) continue;
        expect(engine.record(input), ip).toEqual({ asn: Number(asn), org: expect.anything(), network: ipv6Network(value, ipv6PrefixInRange(s, e, value)) });
      }
    }
  });

  it.each([
    ['', 'invalid_ip', 400],
    ['010.1.1.1', 'invalid_ip', 400],
    ['1.2.3', 'invalid_ip', 400],
    ['[::1]', 'invalid_ip', 400],
    ['fe80::1%eth0', 'invalid_ip', 400],
    ['10.0.0.1', 'ip_not_routable', 422],
    ['::1', 'ip_not_routable', 422],
    ['100.64.0.1', 'ip_not_routable', 422],
  ])('refuses %j with %s', async (ip, code, status) => {
    const error = await rejection(lookup.asn(ip));
    expect(isLookupError(error) && [error.code, error.status]).toEqual([code, status]);
  });

  it('reads the build time from the package version', () => {
    expect(new Date(versionDate('2.3.2026061719')!).toISOString()).toBe('2026-06-17T19:00:00.000Z');
    expect(versionDate('1.0.0')).toBeNull();
    expect(versionDate('2.3.2026023119')).toBeNull(); // no 31 February
  });
});

// ---------------------------------------------------------------------------------------------

/** ip-location-db's format, with the cases the real files hold and some they might. */
const IPV4_CSV = [
  '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
  '2.26.200.0,2.26.215.255,201907,"LLC ""SPUTNIK"""', // not one CIDR: two /21s
  '5.0.0.0,5.0.0.255,39000,', // no name
  '9.9.9.0,9.9.9.255,0,Reserved AS0', // AS 0 is left out
  // Private, documentation and AS_TRANS numbers name no network: left out too (found by a reviewer).
  '9.9.10.0,9.9.10.255,64512,AS64512',
  '9.9.11.0,9.9.11.255,64496,Documentation',
  '9.9.12.0,9.9.12.255,4294967294,AS4294967294',
  '9.9.13.0,9.9.13.255,23456,AS_TRANS',
  '9.9.14.0,9.9.14.255,131072,First public 32-bit AS',
  '3.0.0.0,3.0.255.255,16509,Amazon Hosting', // out of order
  '3.0.128.0,3.0.128.255,39001,Inner Telecom', // inside the previous one: wins where it is
].join('\r\n'); // CRLF line ends
const IPV6_CSV =
  ['2a00:1450::,2a00:1450:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC', '2c0f:f000::,2c0f:f000:0:5::ffff,37100,Seacom University'].join('\n') + '\n';

function writeCsv(dir: string, files: Record<string, string> = { 'asn-ipv4.csv': IPV4_CSV, 'asn-ipv6.csv': IPV6_CSV }): string[] {
  return Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  });
}

describe('asn over CSV files given by path', () => {
  const dir = newDir();
  const files = writeCsv(dir);
  const lookup = createLookup({ asn: { csv: files } });

  it.each([
    ['1.0.0.9', local('1.0.0.9', 13335, 'Cloudflare, Inc.', '1.0.0.0/24', 'hosting')],
    ['2.26.200.1', local('2.26.200.1', 201907, 'LLC "SPUTNIK"', '2.26.200.0/21', 'unknown')],
    ['2.26.215.1', local('2.26.215.1', 201907, 'LLC "SPUTNIK"', '2.26.208.0/21', 'unknown')],
    ['5.0.0.5', local('5.0.0.5', 39000, null, '5.0.0.0/24', 'unknown')],
    ['9.9.9.9', local('9.9.9.9', null, null, null, 'unknown')],
    ['9.9.10.1', local('9.9.10.1', null, null, null, 'unknown')],
    ['9.9.11.1', local('9.9.11.1', null, null, null, 'unknown')],
    ['9.9.12.1', local('9.9.12.1', null, null, null, 'unknown')],
    ['9.9.13.1', local('9.9.13.1', null, null, null, 'unknown')],
    ['9.9.14.1', local('9.9.14.1', 131072, 'First public 32-bit AS', '9.9.14.0/24', 'unknown')],
    ['3.0.0.1', local('3.0.0.1', 16509, 'Amazon Hosting', '3.0.0.0/17', 'hosting')],
    ['3.0.128.1', local('3.0.128.1', 39001, 'Inner Telecom', '3.0.128.0/24', 'isp')],
    ['3.0.129.1', local('3.0.129.1', 16509, 'Amazon Hosting', '3.0.129.0/24', 'hosting')],
    ['3.0.200.1', local('3.0.200.1', 16509, 'Amazon Hosting', '3.0.192.0/18', 'hosting')],
    ['2a00:1450:4001::1', local('2a00:1450:4001::1', 15169, 'Google LLC', '2a00:1450::/32', 'unknown')],
    // 2c0f:f000:: to 2c0f:f000:0:5::ffff is not one CIDR
    ['2c0f:f000::1', local('2c0f:f000::1', 37100, 'Seacom University', '2c0f:f000::/62', 'education')],
    ['2c0f:f000:0:4::1', local('2c0f:f000:0:4::1', 37100, 'Seacom University', '2c0f:f000:0:4::/64', 'education')],
    ['2c0f:f000:0:5::1', local('2c0f:f000:0:5::1', 37100, 'Seacom University', '2c0f:f000:0:5::/112', 'education')],
    ['2c0f:f000:0:5::1:0', local('2c0f:f000:0:5::1:0', null, null, null, 'unknown')],
  ])('%s', async (ip, expected) => {
    expect(await lookup.asn(ip)).toEqual(expected);
  });

  it('counts the ranges it kept (reserved ASes left out, the outer range cut in two), and uses the newest file mtime as fetched_at', async () => {
    const engine = lookup.engine('asn') as AsnEngine;
    expect(engine.databaseRecords).toBe(9); // 1.0.0/24, SPUTNIK, 5.0.0/24, 9.9.14/24, Amazon x2 + Inner, two IPv6
    expect(engine.source.kind).toBe('csv');
    const newest = Math.max(...files.map((file) => Math.floor(statSync(file).mtimeMs)));
    expect((await lookup.detailed.asn('1.0.0.1')).fetchedAt?.getTime()).toBe(newest);
  });

  it('takes IPv4 and IPv6 rows in one file, and a single path as a string', async () => {
    const one = join(newDir(), 'mixed.csv');
    writeFileSync(one, `${IPV4_CSV}\n${IPV6_CSV}`);
    const mixed = createLookup({ asn: { csv: one } });
    expect((await mixed.asn('2a00:1450::8')).asn).toBe(15169);
    expect((await mixed.asn('1.0.0.1')).asn).toBe(13335);
  });

  it.each([
    ['1.0.0.0,1.0.0.255,13335', ':1: expected 4 fields'],
    ['1.0.0.0,1.0.0.255,AS13335,Cloudflare', ':1: bad AS number "AS13335"'],
    ['1.0.0.0,1.0.0.255,13335,"Cloudflare', ':1: bad organization name'],
    ['1.0.0.0,1.0.0.255,13335,a,b', ':1: bad organization name'],
    ['1.0.0.0,1.0.0.255,13335,Cloudflare\n1.0.1.0,1.0.0.0,13335,Backwards', ':2: range ends before it starts'],
    ['1.0.0.0,2a00::,13335,Cloudflare', ':1: range mixes IPv4 and IPv6'],
    ['1.0.0.0,1.0.0.256,13335,Cloudflare', ':1: not an IP address range'],
    ['16777216,16777471,13335,"Cloudflare, Inc."', ':1: numeric addresses (the -num files) are not supported'],
  ])('refuses %j with dataset_invalid naming the file and line', (text, message) => {
    const path = join(newDir(), 'bad.csv');
    writeFileSync(path, text);
    const error = thrown(() => createLookup({ asn: { csv: path } }).engine('asn'));
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect((error as Error).message).toContain(`${path}${message}`);
  });

  it('says dataset_missing naming a CSV file that is not there', async () => {
    const path = join(temp, 'nowhere.csv');
    const error = await rejection(createLookup({ asn: { csv: [path] } }).asn('8.8.8.8'));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect((error as Error).message).toContain(path);
  });

  it('refuses database and csv together, and bad option values, as invalid_option', () => {
    for (const asn of [
      { csv: files, database: fixture('GeoLite2-ASN-Test.mmdb') },
      { csv: [] },
      { database: '' },
      { cacheSize: -1 },
      { cymru: { zone: 'not a zone' } },
    ]) {
      const error = thrown(() => createLookup({ asn } as never).engine('asn'));
      expect(isSeclookupError(error, 'invalid_option'), JSON.stringify(asn)).toBe(true);
    }
  });
});

describe('without data', () => {
  it('names the npm package to install, and the options, when @ip-location-db/asn cannot be found', () => {
    const elsewhere = pathToFileURL(join(newDir(), 'here.js')).href; // no node_modules above the temp dir
    for (const call of [() => locateAsnPackage(elsewhere), () => openLocalSource({}, elsewhere)]) {
      const error = thrown(call);
      expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
      expect((error as Error).message).toContain(`npm install ${ASN_PACKAGE}@${ASN_PACKAGE_VERSION}`);
      expect((error as Error).message).toContain('--asn-db FILE');
      expect((error as Error).message).toContain('--asn-csv FILE');
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('asn over a MaxMind database (MaxMind test data)', () => {
  const path = fixture('GeoLite2-ASN-Test.mmdb');
  const lookup = createLookup({ asn: { database: path } });
  const engine = lookup.engine('asn') as AsnEngine;
  /** The maxmind package's own reader on the same file: the reference for network prefixes. */
  const reference = new Reader<AsnResponse>(readFileSync(path));
  const source = JSON.parse(readFileSync(fixture('GeoLite2-ASN-Test.json'), 'utf8')) as Record<
    string,
    { autonomous_system_number: number; autonomous_system_organization?: string }
  >[];
  const networks = source.map((entry) => {
    const [network, record] = Object.entries(entry)[0];
    return { network, ...record };
  });

  it("answers every public network of the source JSON with its AS number and name, and the reader's network", async () => {
    let checked = 0;
    for (const { network, autonomous_system_number, autonomous_system_organization } of networks) {
      const address = network.split('/')[0];
      const input = parseIpInput(address);
      if (!isRoutable(input)) continue;
      const result = await lookup.asn(address);
      expect(result.asn, network).toBe(autonomous_system_number);
      expect(result.as_org, network).toBe(autonomous_system_organization ?? null);
      const [, prefix] = reference.getWithPrefixLength(input.ip);
      const first =
        input.version === 6
          ? ipaddr.IPv6.networkAddressFromCIDR(`${input.ip}/${prefix}`).toRFC5952String()
          : ipaddr.IPv4.networkAddressFromCIDR(`${input.ip}/${prefix}`).toString();
      expect(result.network, network).toBe(`${first}/${prefix}`);
      // The database's network holds the source network (the writer may merge equal neighbours).
      expect(prefix).toBeLessThanOrEqual(Number(network.split('/')[1]));
      expect(engine.record(input)).toEqual({ asn: result.asn, org: result.as_org, network: result.network });
      checked++;
    }
    expect(checked).toBeGreaterThan(400);
  });

  it.each([
    ['1.128.0.1', local('1.128.0.1', 1221, 'Telstra Pty Ltd', '1.128.0.0/11', 'unknown')],
    ['12.81.96.7', local('12.81.96.7', 7018, null, '12.81.96.0/19', 'unknown')], // a record without a name
    ['2600:7000::1', local('2600:7000::1', 6939, 'Hurricane Electric, Inc.', '2600:7000::/24', 'unknown')],
    ['8.8.8.8', local('8.8.8.8', null, null, null, 'unknown')], // not in the test database
  ])('%s', async (ip, expected) => {
    expect(await lookup.asn(ip)).toEqual(expected);
  });

  it('uses the database build time as fetched_at and its networks as database_records', async () => {
    expect((await lookup.detailed.asn('1.128.0.1')).fetchedAt?.toISOString()).toBe(reference.metadata.buildEpoch.toISOString());
    // Networks of its search tree that lead to a record (the JSON lists 720; the writer merged equal neighbours).
    expect(engine.databaseRecords).toBe(412);
    expect(engine.source).toMatchObject({ kind: 'mmdb', files: [path], databaseType: 'GeoLite2-ASN', index: null, package: null });
  });

  it.each([
    ['GeoIP2-City-Test-Invalid-Node-Count.mmdb', 'is larger than the file allows'],
    ['MaxMind-DB-test-broken-pointers-24.mmdb', 'cannot be decoded'],
    ['MaxMind-DB-test-broken-search-tree-24.mmdb', 'the search tree has a cycle'],
    ['GeoLite2-Country-Test.mmdb', 'no record has an autonomous_system_number (database_type "GeoLite2-Country": not an ASN database?)'],
  ])('refuses %s with dataset_invalid at engine build: %s', (name, message) => {
    const error = thrown(() => createLookup({ asn: { database: fixture(name) } }).engine('asn'));
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect((error as Error).message).toContain(fixture(name));
    expect((error as Error).message).toContain(message);
  });

  it('refuses a truncated or garbled copy of the ASN test database, and says dataset_missing for no file', () => {
    const bytes = readFileSync(path);
    const truncated = join(newDir(), 'truncated.mmdb');
    writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const garbled = join(newDir(), 'garbled.mmdb');
    const copy = Buffer.from(bytes);
    copy.fill(0xff, 0, 600); // the first nodes of the search tree point far outside the data
    writeFileSync(garbled, copy);
    for (const file of [truncated, garbled]) {
      const error = thrown(() => createLookup({ asn: { database: file } }).engine('asn'));
      expect(isSeclookupError(error, 'dataset_invalid'), file).toBe(true);
      expect((error as Error).message).toContain(file);
    }
    expect(
      isSeclookupError(
        thrown(() => createLookup({ asn: { database: join(temp, 'none.mmdb') } }).engine('asn')),
        'dataset_missing',
      ),
    ).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the index file', () => {
  /** An engine as a new process builds it: not from the data an earlier engine of this process shares. */
  function build(files: string[], indexDir?: string) {
    forgetSharedFileData();
    const engine = createLookup({ asn: { csv: files, indexDir } }).engine('asn') as AsnEngine;
    return { engine, info: engine.source.index! };
  }
  const answer = (engine: AsnEngine, ip: string) => (engine.lookup(engine.prepare(ip)) as { result: AsnResult }).result;

  it('is written beside the CSV files at the first build, then read (not rewritten) at the next', () => {
    const dir = newDir();
    const files = writeCsv(dir);
    const first = build(files);
    expect(first.info).toMatchObject({ origin: 'compiled', rejected: [] });
    expect(first.info.path!.startsWith(`${dir}/seclookup-asn-`)).toBe(true);
    const past = new Date('2020-01-01T00:00:00Z'); // so a rewrite would show
    utimesSync(first.info.path!, past, past);

    const second = build(files);
    expect(second.info).toEqual({ path: first.info.path, origin: 'cache', rejected: [] });
    expect(statSync(first.info.path!).mtimeMs).toBe(past.getTime());
    expect(answer(second.engine, '2.26.200.1')).toEqual(answer(first.engine, '2.26.200.1'));
    expect(second.engine.databaseRecords).toBe(first.engine.databaseRecords);
  });

  it('is rebuilt when a source file changes (stale stamp), and answers from the new data', () => {
    const dir = newDir();
    const files = writeCsv(dir);
    const first = build(files);
    expect(answer(first.engine, '1.0.0.9').asn).toBe(13335);
    writeFileSync(files[0], IPV4_CSV.replace('13335,"Cloudflare, Inc."', '39999,"Changed, Inc."'));
    const second = build(files);
    expect(second.info.origin).toBe('compiled');
    expect(second.info.rejected).toEqual([`${first.info.path}: stale: the source data changed (package version, or a file size or mtime)`]);
    expect(answer(second.engine, '1.0.0.9')).toMatchObject({ asn: 39999, as_org: 'Changed, Inc.' });
    expect(build(files).info.origin).toBe('cache');
  });

  it.each([
    ['truncated', (path: string) => truncateSync(path, statSync(path).size - 7), /^wrong length/],
    ['cut inside its header', (path: string) => truncateSync(path, 40), /^truncated \(header\)|^corrupt header/],
    ['empty', (path: string) => truncateSync(path, 0), /^not an index file/],
    [
      'corrupt in its body',
      (path: string) => {
        const bytes = readFileSync(path);
        bytes[bytes.length - 30] ^= 0x01;
        writeFileSync(path, bytes);
      },
      /^checksum mismatch/,
    ],
    [
      'of another format version',
      (path: string) => {
        const bytes = readFileSync(path);
        writeFileSync(path, Buffer.from(bytes.toString('latin1').replace(`"format":${INDEX_FORMAT},`, '"format":9,'), 'latin1'));
      },
      new RegExp(`^index format 9, expected ${INDEX_FORMAT}`),
    ],
  ])('is rebuilt when %s, never trusted', (_case, damage, reason) => {
    const dir = newDir();
    const files = writeCsv(dir);
    const first = build(files);
    damage(first.info.path!);
    const second = build(files);
    expect(second.info.origin).toBe('compiled');
    expect(second.info.rejected).toHaveLength(1);
    expect(second.info.rejected[0].slice(first.info.path!.length + 2)).toMatch(reason);
    expect(answer(second.engine, '2c0f:f000::1')).toEqual(answer(first.engine, '2c0f:f000::1'));
    expect(build(files).info.origin).toBe('cache'); // the rebuilt file is good
  });

  it('goes to indexDir when given', () => {
    const files = writeCsv(newDir());
    const indexDir = join(newDir(), 'made', 'for', 'it');
    const first = build(files, indexDir);
    expect(first.info.path!.startsWith(`${indexDir}/seclookup-asn-`)).toBe(true);
    expect(build(files, indexDir).info.origin).toBe('cache');
  });

  it('falls back to a private folder under the OS temp dir when its folder cannot be written', () => {
    const files = writeCsv(newDir());
    const blocker = join(newDir(), 'a-file');
    writeFileSync(blocker, '');
    const unwritable = join(blocker, 'index'); // below a regular file: mkdir fails, even for root
    const first = build(files, unwritable);
    try {
      const uid = process.getuid?.() ?? -1;
      expect(first.info.path!.startsWith(join(tmpdir(), `seclookup-${uid}`, 'seclookup-asn-'))).toBe(true);
      expect(statSync(join(tmpdir(), `seclookup-${uid}`)).mode & 0o077).toBe(0);
      expect(build(files, unwritable).info).toEqual({ path: first.info.path, origin: 'cache', rejected: [] });
    } finally {
      unlinkSync(first.info.path!);
    }
  });

  it('never reads or writes a fallback folder that others can write or that is a symlink; then the index lives in memory', () => {
    const files = writeCsv(newDir());
    const blocker = join(newDir(), 'a-file');
    writeFileSync(blocker, '');
    const unwritable = join(blocker, 'index');
    // A valid index planted in a world-writable folder.
    const open = newDir();
    chmodSync(open, 0o777);
    const planted = loadAsnIndex({ files, packageId: null, indexDir: open });
    expect(planted.info.path!.startsWith(open)).toBe(true);
    const viaOpen = loadAsnIndex({ files, packageId: null, indexDir: unwritable, fallbackDir: open });
    expect(viaOpen.info).toEqual({ path: null, origin: 'compiled', rejected: [] });

    const target = newDir();
    chmodSync(target, 0o700);
    copyFileSync(planted.info.path!, join(target, planted.info.path!.slice(open.length + 1)));
    const link = join(newDir(), 'link');
    symlinkSync(target, link);
    const viaLink = loadAsnIndex({ files, packageId: null, indexDir: unwritable, fallbackDir: link });
    expect(viaLink.info).toEqual({ path: null, origin: 'compiled', rejected: [] });

    // A private folder of ours is used.
    const mine = join(newDir(), 'mine');
    const viaMine = loadAsnIndex({ files, packageId: null, indexDir: unwritable, fallbackDir: mine });
    expect(viaMine.info.path!.startsWith(`${mine}/`)).toBe(true);
    expect(statSync(mine).mode & 0o777).toBe(0o700);
    expect(existsSync(viaMine.info.path!)).toBe(true);
  });
});
