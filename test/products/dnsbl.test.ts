/**
 * dnsbl against real DNS servers on loopback (test/servers/dns-server.ts) serving test zones
 * configured through options: listings with several codes, Spamhaus's 127.255.255.254
 * refusal, an answer outside 127.0.0.0/8, an undefined code, NXDOMAIN for clean addresses, a
 * zone whose names make the server fail (a CNAME loop answers SERVFAIL), and whole servers that
 * stay silent, answer SERVFAIL or answer slowly. Then the zones file and options, and the HTTP
 * forms through api.handle.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isSeclookupError, LookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup, type LookupOptions } from '../../src/lookup.js';
import { loadDnsblZones } from '../../src/products/dnsbl/zones.js';
import type { DnsblResult, DnsblZone } from '../../src/products/dnsbl/types.js';
import type { IssuedKeys } from '../../src/metering/keys.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { startDnsServer, type DnsRecord, type DnsTestServer, type Zone } from '../servers/dns-server.js';

// --- fixture: three test zones ------------------------------------------------------------------

const ZEN: DnsblZone = {
  zone: 'zen.dnsbl.test',
  name: 'Test ZEN',
  listing_codes: [
    { code: '127.0.0.2', meaning: 'SBL' },
    { code: '127.0.0.3', meaning: 'CSS' },
    { code: '127.0.0.4', meaning: 'XBL' },
    { code: '127.0.0.10', meaning: 'PBL' },
  ],
  error_codes: [
    { code: '127.255.255.254', meaning: 'query refused: public resolver' },
    { code: '127.255.255.255', meaning: 'query refused: excessive number of queries' },
  ],
};
const SPAMLIST: DnsblZone = { zone: 'spam.dnsbl.test', name: 'Test spam list', listing_codes: [{ code: '127.0.0.2', meaning: 'spam source' }] };
/** Answers SERVFAIL for the addresses below whose names loop (CNAME to themselves). */
const BROKEN: DnsblZone = { zone: 'broken.dnsbl.test', name: 'Test broken list', listing_codes: [{ code: '127.0.0.2', meaning: 'listed' }] };
const ZONES = [ZEN, SPAMLIST, BROKEN];

/** Public addresses, each set up for one case. */
const IP = {
  listed: '1.2.3.4', // ZEN: 127.0.0.4 and 127.0.0.2 (unsorted, with 127.0.0.99 undefined); SPAMLIST: 127.0.0.2
  clean: '8.8.4.4', // NXDOMAIN everywhere
  refused: '5.6.7.8', // ZEN: 127.255.255.254; SPAMLIST: 127.0.0.2
  foreign: '9.9.9.10', // ZEN: 192.0.2.1 (outside 127/8); SPAMLIST: NXDOMAIN
  unknown: '11.22.33.44', // ZEN: 127.0.0.1 only (undefined); SPAMLIST: NXDOMAIN
  broken: '12.34.56.78', // BROKEN: SERVFAIL; ZEN: 127.0.0.3; SPAMLIST: NXDOMAIN
  shortTtl: '23.45.67.89', // ZEN: 127.0.0.10 with TTL 1 s; SPAMLIST: 127.0.0.2 with TTL 300 s
};

const reversed = (ip: string) => ip.split('.').reverse().join('.');
const a = (address: string, ttl?: number): DnsRecord => ({ type: 'A', address, ttl });
const name = (ip: string, zone: DnsblZone) => `${reversed(ip)}.${zone.zone}`;

const TEST_ZONE: Zone = {
  [name(IP.listed, ZEN)]: [a('127.0.0.4'), a('127.0.0.2'), a('127.0.0.99')],
  [name(IP.listed, SPAMLIST)]: [a('127.0.0.2')],
  [name(IP.refused, ZEN)]: [a('127.255.255.254')],
  [name(IP.refused, SPAMLIST)]: [a('127.0.0.2')],
  [name(IP.foreign, ZEN)]: [a('192.0.2.1')],
  [name(IP.unknown, ZEN)]: [a('127.0.0.1')],
  [name(IP.broken, BROKEN)]: [{ type: 'CNAME', target: name(IP.broken, BROKEN) }],
  [name(IP.broken, ZEN)]: [a('127.0.0.3')],
  [name(IP.shortTtl, ZEN)]: [a('127.0.0.10', 1)],
  [name(IP.shortTtl, SPAMLIST)]: [a('127.0.0.2', 300)],
};

const server = await startDnsServer({ zone: TEST_ZONE });
const silent = await startDnsServer({ zone: TEST_ZONE, behaviour: 'silent' });
const servfail = await startDnsServer({ zone: TEST_ZONE, behaviour: 'servfail' });
const slow = await startDnsServer({ zone: TEST_ZONE, behaviour: 'slow', delayMs: 1_000 });
afterAll(() => Promise.all([server, silent, servfail, slow].map((s) => s.close())));
beforeEach(() => server.resetCounts());

/**
 * A lookup over the test zones on `dnsServer`: a tight resolver deadline for the silent server,
 * where the deadline is the point; a loose one for servers that answer, so that a loaded machine
 * cannot turn their answers into timeouts.
 */
function lookupOn(dnsServer: DnsTestServer, options: Partial<LookupOptions> = {}) {
  const totalMs = dnsServer === silent ? 300 : 5_000;
  return createLookup({ dns: { servers: [dnsServer.address], timeouts: { totalMs }, attempts: 1 }, dnsbl: { zones: ZONES }, ...options });
}

async function failure(promise: Promise<unknown>): Promise<LookupError> {
  const error = await promise.then(
    () => expect.unreachable('expected a LookupError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LookupError);
  return error as LookupError;
}

// --- answers ------------------------------------------------------------------------------------

describe('dnsbl: listed and not listed', () => {
  it('lists an address with every listing code each zone answered, sorted, with their meanings', async () => {
    const lookup = lookupOn(server);
    expect(await lookup.dnsbl(IP.listed)).toEqual({
      ip: IP.listed,
      listed: true,
      list_count: 2,
      lists: [
        // 127.0.0.99 is not a code ZEN defines: left out beside real listing codes
        { zone: 'zen.dnsbl.test', name: 'Test ZEN', responses: ['127.0.0.2', '127.0.0.4'], meanings: ['SBL', 'XBL'] },
        { zone: 'spam.dnsbl.test', name: 'Test spam list', responses: ['127.0.0.2'], meanings: ['spam source'] },
      ],
      checked: 3,
      failed_zones: [],
    } satisfies DnsblResult);
  });

  it('asks one A question per zone, octets reversed', async () => {
    await lookupOn(server).dnsbl(IP.listed);
    expect(Object.fromEntries(server.queries)).toEqual({
      '4.3.2.1.zen.dnsbl.test A': 1,
      '4.3.2.1.spam.dnsbl.test A': 1,
      '4.3.2.1.broken.dnsbl.test A': 1,
    });
  });

  it('NXDOMAIN in every zone is not listed, every zone checked', async () => {
    expect(await lookupOn(server).dnsbl(IP.clean)).toEqual({ ip: IP.clean, listed: false, list_count: 0, lists: [], checked: 3, failed_zones: [] });
  });

  it('answers IPv4-mapped IPv6 and surrounding whitespace as the IPv4 address', async () => {
    const lookup = lookupOn(server);
    expect((await lookup.dnsbl(`::ffff:${IP.listed}`)).ip).toBe(IP.listed);
    expect((await lookup.dnsbl('::FFFF:0102:0304')).list_count).toBe(2);
    expect((await lookup.dnsbl(` ${IP.listed}\n`)).ip).toBe(IP.listed);
  });

  it('sets fetchedAt to when the oldest DNS answer behind the result was fetched', async () => {
    const lookup = lookupOn(server);
    const first = await lookup.detailed.dnsbl(IP.listed, { zones: 'spam.dnsbl.test' });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const before = Date.now();
    const full = await lookup.detailed.dnsbl(IP.listed);
    expect(full.cached).toBe(false);
    // spam.dnsbl.test's answer came from the resolver's cache, fetched by the first lookup
    expect(full.fetchedAt).toEqual(first.fetchedAt);
    expect(full.fetchedAt!.getTime()).toBeLessThan(before);
  });
});

describe('dnsbl: answers that are not listings', () => {
  it("a zone's error code (Spamhaus's public-resolver refusal) is a failed zone, not a listing", async () => {
    expect(await lookupOn(server).dnsbl(IP.refused)).toEqual({
      ip: IP.refused,
      listed: true,
      list_count: 1,
      lists: [{ zone: 'spam.dnsbl.test', name: 'Test spam list', responses: ['127.0.0.2'], meanings: ['spam source'] }],
      checked: 3,
      failed_zones: [
        {
          zone: 'zen.dnsbl.test',
          name: 'Test ZEN',
          reason: 'zone_error',
          message: 'answered 127.255.255.254 (query refused: public resolver): not a listing',
          responses: ['127.255.255.254'],
        },
      ],
    });
  });

  it('127.255.255.0/24 is an error even for a zone that documents no error codes', async () => {
    const lookup = createLookup({ dns: { servers: [server.address] }, dnsbl: { zones: [{ ...ZEN, error_codes: undefined }, SPAMLIST] } });
    const result = await lookup.dnsbl(IP.refused);
    expect(result.failed_zones).toEqual([expect.objectContaining({ zone: 'zen.dnsbl.test', reason: 'zone_error', responses: ['127.255.255.254'] })]);
  });

  it('an answer outside 127.0.0.0/8 is invalid_answer: the zone is unknown, never listed', async () => {
    const result = await lookupOn(server).dnsbl(IP.foreign);
    expect(result).toMatchObject({ listed: false, list_count: 0, lists: [], checked: 3 });
    expect(result.failed_zones).toEqual([
      {
        zone: 'zen.dnsbl.test',
        name: 'Test ZEN',
        reason: 'invalid_answer',
        message: 'answered 192.0.2.1, outside 127.0.0.0/8: not a DNSBL answer',
        responses: ['192.0.2.1'],
      },
    ]);
  });

  it('only codes the zone does not define is unknown_code', async () => {
    const result = await lookupOn(server).dnsbl(IP.unknown);
    expect(result).toMatchObject({ listed: false, checked: 3 });
    expect(result.failed_zones).toEqual([
      {
        zone: 'zen.dnsbl.test',
        name: 'Test ZEN',
        reason: 'unknown_code',
        message: 'answered 127.0.0.1, which the zone does not define as a listing',
        responses: ['127.0.0.1'],
      },
    ]);
  });

  it('a zone whose server answers SERVFAIL is server_error while the others answer', async () => {
    const result = await lookupOn(server).dnsbl(IP.broken);
    expect(result).toEqual({
      ip: IP.broken,
      listed: true,
      list_count: 1,
      lists: [{ zone: 'zen.dnsbl.test', name: 'Test ZEN', responses: ['127.0.0.3'], meanings: ['CSS'] }],
      checked: 3,
      failed_zones: [
        {
          zone: 'broken.dnsbl.test',
          name: 'Test broken list',
          reason: 'server_error',
          message: 'the DNS server answered with an error (SERVFAIL or REFUSED) or an unreadable message',
        },
      ],
    });
  });
});

describe('dnsbl: every zone failing is 502 lookup_failed', () => {
  it('a DNS server that never answers: 502, bounded by the resolver deadline', async () => {
    const started = performance.now();
    const error = await failure(lookupOn(silent).dnsbl(IP.listed));
    const elapsed = performance.now() - started;
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toBe('every DNSBL zone failed (zen.dnsbl.test: timeout; spam.dnsbl.test: timeout; broken.dnsbl.test: timeout); retry later');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_500); // zones run in parallel: one deadline, not three
  });

  it('a DNS server that answers SERVFAIL: 502, and the message names no server', async () => {
    const error = await failure(lookupOn(servfail).dnsbl(IP.listed));
    expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect(error.message).toContain('zen.dnsbl.test: server_error');
    expect(error.message).not.toContain(servfail.address);
    expect(error.message).not.toContain('127.0.0.1');
  });

  it('zoneTimeoutMs cuts a slow zone before the resolver gives up', async () => {
    const lookup = createLookup({ dns: { servers: [slow.address], timeouts: { totalMs: 5_000 } }, dnsbl: { zones: ZONES, zoneTimeoutMs: 100 } });
    const started = performance.now();
    const error = await failure(lookup.dnsbl(IP.listed));
    expect(error.code).toBe('lookup_failed');
    expect(error.message).toContain('zen.dnsbl.test: timeout');
    expect(performance.now() - started).toBeLessThan(900);
  });

  it('every zone answering an error code is 502 too', async () => {
    const error = await failure(lookupOn(server, { dnsbl: { zones: [ZEN] } }).dnsbl(IP.refused));
    expect(error.message).toBe('every DNSBL zone failed (zen.dnsbl.test: zone_error); retry later');
  });
});

// --- cache --------------------------------------------------------------------------------------

describe('dnsbl: cache', () => {
  it('answers a repeated lookup from the cache without a query, with the same fetchedAt', async () => {
    const lookup = lookupOn(server);
    const first = await lookup.detailed.dnsbl(IP.listed);
    const queries = server.total();
    const second = await lookup.detailed.dnsbl(IP.listed);
    expect(second).toEqual({ ...first, cached: true });
    expect(server.total()).toBe(queries);
    expect(second.json).toBe(JSON.stringify(second.result));
  });

  it('hands out copies: changing a result does not change the next one', async () => {
    const lookup = lookupOn(server);
    const first = await lookup.dnsbl(IP.listed);
    first.lists[0].responses.push('127.0.0.66');
    first.failed_zones.push({ zone: 'x', name: 'x', reason: 'timeout', message: 'x' });
    const again = await lookup.dnsbl(IP.listed);
    expect(again.lists[0].responses).toEqual(['127.0.0.2', '127.0.0.4']);
    expect(again.failed_zones).toEqual([]);
  });

  it('keeps a result only until its shortest DNS TTL ends', async () => {
    // createLookup's clock drives the DNS cache and the result cache: moved on, not waited for.
    const clock = { now: Date.now() };
    const lookup = lookupOn(server, { dns: { servers: [server.address], cache: { minTtl: 1 } }, now: () => clock.now });
    expect((await lookup.detailed.dnsbl(IP.shortTtl)).cached).toBe(false);
    expect((await lookup.detailed.dnsbl(IP.shortTtl)).cached).toBe(true);
    clock.now += 1_100; // ZEN's answer has TTL 1 s, SPAMLIST's 300 s
    server.resetCounts();
    const later = await lookup.detailed.dnsbl(IP.shortTtl);
    expect(later.cached).toBe(false);
    expect(server.queries.get(`${name(IP.shortTtl, ZEN)} A`)).toBe(1);
  });

  it('does not keep a result with a failed zone: the next lookup asks that zone again, and only that one', async () => {
    const lookup = lookupOn(server);
    expect((await lookup.detailed.dnsbl(IP.broken)).cached).toBe(false);
    server.resetCounts();
    const again = await lookup.detailed.dnsbl(IP.broken);
    expect(again.cached).toBe(false);
    expect(Object.fromEntries(server.queries)).toEqual({ [`${name(IP.broken, BROKEN)} A`]: 1 });
  });

  it('caches each zone selection under its own key', async () => {
    const lookup = lookupOn(server);
    await lookup.dnsbl(IP.listed);
    const narrowed = await lookup.detailed.dnsbl(IP.listed, { zones: 'spam.dnsbl.test' });
    expect(narrowed.cached).toBe(false);
    expect(narrowed.result.checked).toBe(1);
    // naming every zone is the full set, already cached
    expect((await lookup.detailed.dnsbl(IP.listed, { zones: ['broken.dnsbl.test', 'ZEN.dnsbl.test.', 'spam.dnsbl.test'] })).cached).toBe(true);
  });

  it('1,000 concurrent lookups of one address ask each zone once', async () => {
    const lookup = lookupOn(server);
    const results = await Promise.all(Array.from({ length: 1_000 }, () => lookup.dnsbl(IP.clean)));
    expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(server.total()).toBe(ZONES.length);
  });
});

// --- input --------------------------------------------------------------------------------------

describe('dnsbl: input errors (no DNS query is made)', () => {
  const lookup = lookupOn(server);

  it.each([
    ['an empty string', ''],
    ['a non-string', 42 as unknown as string],
    ['three octets', '1.2.3'],
    ['a leading zero', '01.2.3.4'],
    ['an octet over 255', '1.2.3.256'],
    ['a name', 'example.com'],
    ['an IP with a port', '1.2.3.4:25'],
    ['a CIDR', '1.2.3.0/24'],
  ])('%s is 400 invalid_ip', async (_case, input) => {
    const error = await failure(lookup.dnsbl(input));
    expect([error.code, error.status]).toEqual(['invalid_ip', 400]);
    expect(server.total()).toBe(0);
  });

  it.each([
    ['public IPv6', '2001:4860:4860::8888'],
    ['IPv6 loopback', '::1'],
    ['private 10/8', '10.1.2.3'],
    ['private 192.168/16', '192.168.1.1'],
    ['private 172.16/12', '172.16.5.4'],
    ['loopback (the DNSBL test point itself)', '127.0.0.2'],
    ['CGNAT', '100.64.0.1'],
    ['link-local', '169.254.1.1'],
    ['documentation', '203.0.113.10'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['this network', '0.0.0.0'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
  ])('%s is 422 ip_not_routable', async (_case, input) => {
    const error = await failure(lookup.dnsbl(input));
    expect([error.code, error.status]).toEqual(['ip_not_routable', 422]);
    expect(server.total()).toBe(0);
  });

  it('says why an IPv6 address is refused', async () => {
    expect((await failure(lookup.dnsbl('2001:4860:4860::8888'))).message).toBe(
      '2001:4860:4860::8888 is an IPv6 address; DNSBL zones are checked for public IPv4 addresses only',
    );
  });

  it('the zones option: an unknown zone is 400 invalid_request, checked after invalid_ip and before ip_not_routable', async () => {
    const unknown = await failure(lookup.dnsbl(IP.listed, { zones: 'spam.dnsbl.test,nosuch.example' }));
    expect([unknown.code, unknown.status]).toEqual(['invalid_request', 400]);
    expect(unknown.message).toBe('unknown DNSBL zone "nosuch.example"; configured: zen.dnsbl.test, spam.dnsbl.test, broken.dnsbl.test');
    expect((await failure(lookup.dnsbl('1.2.3', { zones: 'nosuch.example' }))).code).toBe('invalid_ip');
    expect((await failure(lookup.dnsbl('10.0.0.1', { zones: 'nosuch.example' }))).code).toBe('invalid_request');
    expect((await failure(lookup.dnsbl('::1', { zones: 'nosuch.example' }))).code).toBe('invalid_request');
    expect((await failure(lookup.dnsbl(IP.listed, { zones: 7 as unknown as string }))).code).toBe('invalid_request');
    expect(server.total()).toBe(0);
  });

  it('the zones option narrows the zones queried; an empty one means all', async () => {
    const lookup = lookupOn(server);
    expect(await lookup.dnsbl(IP.listed, { zones: ' SPAM.dnsbl.test ' })).toMatchObject({ checked: 1, list_count: 1, lists: [{ zone: 'spam.dnsbl.test' }] });
    expect(Object.fromEntries(server.queries)).toEqual({ '4.3.2.1.spam.dnsbl.test A': 1 });
    expect((await lookup.dnsbl(IP.listed, { zones: '' })).checked).toBe(3);
    expect((await lookup.dnsbl(IP.listed, { zones: [] })).checked).toBe(3);
  });
});

// --- zones configuration ------------------------------------------------------------------------

describe('dnsbl: zones', () => {
  const temp: string[] = [];
  afterAll(() => temp.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A data folder whose dnsbl/zones.json holds `content`. */
  function dataDirWith(content: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-dnsbl-'));
    temp.push(dir);
    mkdirSync(join(dir, 'dnsbl'));
    writeFileSync(join(dir, 'dnsbl', 'zones.json'), content);
    return dir;
  }

  function optionError(zones: unknown[]): Error & { code?: string } {
    try {
      createLookup({ dns: { servers: [server.address] }, dnsbl: { zones: zones as DnsblZone[] } }).engine('dnsbl');
    } catch (error) {
      return error as Error & { code?: string };
    }
    throw new Error('expected the zones option to be refused');
  }

  it('bundles well-known zones, each with documented listing codes in 127.0.0.0/8', () => {
    const { zones } = loadDnsblZones(bundledDataDir());
    expect(zones.map((z) => z.zone)).toEqual(['zen.spamhaus.org', 'bl.spamcop.net', 'b.barracudacentral.org', 'psbl.surriel.com', 'bl.mailspike.net']);
    for (const zone of zones) {
      expect(zone.policy_url).toMatch(/^https?:\/\//);
      expect(zone.codes_url).toMatch(/^https?:\/\//);
      expect(zone.listing_codes.every((c) => c.code.startsWith('127.') && !c.code.startsWith('127.255.255.'))).toBe(true);
    }
    const zen = zones[0];
    expect(zen.listing_codes.map((c) => c.code)).toEqual([
      '127.0.0.2',
      '127.0.0.3',
      '127.0.0.4',
      '127.0.0.5',
      '127.0.0.6',
      '127.0.0.7',
      '127.0.0.9',
      '127.0.0.10',
      '127.0.0.11',
      '127.0.0.30',
    ]);
    expect(zen.error_codes?.map((c) => c.code)).toEqual(['127.255.255.252', '127.255.255.254', '127.255.255.255']);
    expect(zen.usage_note).toContain('public');
  });

  it('uses the bundled zones by default, and its status counts them as database_records', async () => {
    const stack = await createApiStack({ lookup: createLookup({ dns: { servers: [server.address] } }) });
    const keys = await stack.keys('dnsbl');
    const status = await stack.call('/v1/dnsbl/status', { key: keys.publicKey });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ success: true, product: 'dnsbl', database_records: 5 });
  });

  it('picks bundled zones by name and takes new ones in full, in the order given', () => {
    const engine = createLookup({ dns: { servers: [server.address] }, dnsbl: { zones: ['BL.SPAMCOP.NET.', SPAMLIST] } }).engine('dnsbl');
    expect(engine.zones.map((z) => z.zone)).toEqual(['bl.spamcop.net', 'spam.dnsbl.test']);
    expect(engine.zones[0].listing_codes).toEqual([{ code: '127.0.0.2', meaning: expect.stringContaining('SpamCop') }]);
  });

  it('reads the zones file of the data folder', async () => {
    const dir = dataDirWith(JSON.stringify({ generated: '2026-11-23', zones: [SPAMLIST] }));
    const lookup = createLookup({ dataDir: dir, dns: { servers: [server.address] } });
    expect(await lookup.dnsbl(IP.listed)).toMatchObject({ listed: true, checked: 1, lists: [{ zone: 'spam.dnsbl.test' }] });
  });

  it('names the file when it is missing or broken', () => {
    const missing = mkdtempSync(join(tmpdir(), 'seclookup-dnsbl-'));
    temp.push(missing);
    const cases: [string, string, string][] = [
      [missing, 'dataset_missing', 'zones.json'],
      [dataDirWith('{ nope'), 'dataset_invalid', 'not valid JSON'],
      [dataDirWith(JSON.stringify({ generated: '2026-11-23', zones: [] })), 'dataset_invalid', '"zones" must be a non-empty array'],
      [
        dataDirWith(JSON.stringify({ generated: '2026-11-23', zones: [{ ...SPAMLIST, listing_codes: [{ code: '127.255.255.254', meaning: 'x' }] }] })),
        'dataset_invalid',
        'outside 127.255.255.0/24',
      ],
    ];
    for (const [dir, code, text] of cases) {
      let error: unknown;
      try {
        createLookup({ dataDir: dir }).engine('dnsbl');
      } catch (e) {
        error = e;
      }
      expect(isSeclookupError(error, code as 'dataset_invalid')).toBe(true);
      expect((error as Error).message).toContain(text);
      expect((error as Error).message).toContain(join(dir, 'dnsbl', 'zones.json'));
    }
  });

  it.each([
    ['no zones', [], '"zones" must be a non-empty array'],
    ['an unknown zone name', ['nosuch.example'], '"nosuch.example" is not defined in'],
    ['a listing code outside 127/8', [{ ...SPAMLIST, listing_codes: [{ code: '10.0.0.2', meaning: 'x' }] }], 'listing code 10.0.0.2 must be in 127.0.0.0/8'],
    ['a listing code in 127.255.255.0/24', [{ ...SPAMLIST, listing_codes: [{ code: '127.255.255.254', meaning: 'x' }] }], 'outside 127.255.255.0/24'],
    ['no listing codes', [{ ...SPAMLIST, listing_codes: [] }], '"listing_codes" must be a non-empty array'],
    ['a code that is not an address', [{ ...SPAMLIST, listing_codes: [{ code: '127.0.0', meaning: 'x' }] }], 'is not an IPv4 address'],
    ['a code both listing and error', [{ ...SPAMLIST, error_codes: [{ code: '127.0.0.2', meaning: 'x' }] }], 'both a listing code and an error code'],
    ['a bad zone name', [{ ...SPAMLIST, zone: 'bad zone.test' }], 'is not a valid DNS name'],
    ['a one-label zone', [{ ...SPAMLIST, zone: 'localhost' }], 'at least two labels'],
    ['a zone twice', [SPAMLIST, { ...SPAMLIST, zone: 'SPAM.dnsbl.test' }], 'is listed twice'],
    ['no name', [{ ...SPAMLIST, name: ' ' }], '"name" must be a non-empty string'],
  ])('refuses %s with invalid_option', (_case, zones, text) => {
    const error = optionError(zones);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('invalid_option');
    expect(error.message).toContain(text);
  });

  it('refuses a bad zoneTimeoutMs or cacheSize', () => {
    for (const dnsbl of [{ zoneTimeoutMs: 0 }, { zoneTimeoutMs: 1.5 }, { cacheSize: -1 }]) {
      expect(() => createLookup({ dnsbl: { zones: ZONES, ...dnsbl } }).engine('dnsbl')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    }
  });

  it('runs uncached with cacheSize 0', async () => {
    const lookup = lookupOn(server, { dnsbl: { zones: ZONES, cacheSize: 0 } });
    await lookup.dnsbl(IP.listed);
    expect((await lookup.detailed.dnsbl(IP.listed)).cached).toBe(false);
  });
});

// --- HTTP forms through api.handle ---------------------------------------------------------------

describe('dnsbl: HTTP forms', () => {
  let stack: ApiStack;
  let keys: IssuedKeys;
  let failing: ApiStack;
  let failingKeys: IssuedKeys;
  beforeAll(async () => {
    stack = await createApiStack({ lookup: lookupOn(server) });
    keys = await stack.keys('dnsbl');
    failing = await createApiStack({ lookup: lookupOn(servfail) });
    failingKeys = await failing.keys('dnsbl');
  });
  const quota = (s: ApiStack, subscriptionId: string) => s.meter.quota(subscriptionId, 10_000, Date.now());

  it.each([
    ['GET ?ip=', `/v1/dnsbl/lookup?ip=${IP.listed}`],
    ['GET /lookup/{ip}', `/v1/dnsbl/lookup/${IP.listed}`],
    ['GET /lookup/{IPv4-mapped IPv6, encoded}', `/v1/dnsbl/lookup/${encodeURIComponent(`::ffff:${IP.listed}`)}`],
    ['GET ?ip= with a zones parameter, which HTTP ignores', `/v1/dnsbl/lookup?ip=${IP.listed}&zones=spam.dnsbl.test`],
  ])('%s checks every configured zone', async (_form, path) => {
    const reply = await stack.call(path, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, ip: IP.listed, listed: true, list_count: 2, checked: 3, failed_zones: [] });
    expect(typeof reply.body.cached).toBe('boolean');
    expect(reply.body.fetched_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    expect(Object.keys(reply.body)).toEqual([
      'success',
      'request_id',
      'cached',
      'fetched_at',
      'ip',
      'listed',
      'list_count',
      'lists',
      'checked',
      'failed_zones',
    ]);
  });

  it('answers a repeated lookup from the cache with the same fetched_at', async () => {
    const first = await stack.call(`/v1/dnsbl/lookup?ip=${IP.clean}`, { key: keys.secretKey });
    const second = await stack.call(`/v1/dnsbl/lookup?ip=${IP.clean}`, { key: keys.secretKey });
    expect([first.body.cached, second.body.cached]).toEqual([false, true]);
    expect(second.body.fetched_at).toBe(first.body.fetched_at);
    expect(second.body).toMatchObject({ listed: false, lists: [], checked: 3 });
  });

  it.each([
    ['no ip', '/v1/dnsbl/lookup', 400, 'invalid_ip'],
    ['an empty ip', '/v1/dnsbl/lookup?ip=', 400, 'invalid_ip'],
    ['a malformed ip', '/v1/dnsbl/lookup?ip=1.2.3', 400, 'invalid_ip'],
    ['broken percent-encoding in the path', '/v1/dnsbl/lookup/1.2.3.%E0%A4%A', 400, 'invalid_ip'],
    ['an IPv6 address in the path', `/v1/dnsbl/lookup/${encodeURIComponent('2001:4860:4860::8888')}`, 422, 'ip_not_routable'],
    ['a private ip', '/v1/dnsbl/lookup?ip=192.168.0.10', 422, 'ip_not_routable'],
    ['a loopback ip', '/v1/dnsbl/lookup/127.0.0.2', 422, 'ip_not_routable'],
    ['a CGNAT ip', '/v1/dnsbl/lookup?ip=100.100.1.1', 422, 'ip_not_routable'],
  ])('answers %s with %i %s, unbilled', async (_case, path, status, code) => {
    const before = await quota(stack, keys.subscriptionId);
    const reply = await stack.call(path, { key: keys.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([status, code]);
    expect(await quota(stack, keys.subscriptionId)).toEqual(before);
  });

  it('answers 502 lookup_failed when every zone fails, and gives the quota unit back', async () => {
    const before = await quota(failing, failingKeys.subscriptionId);
    const reply = await failing.call(`/v1/dnsbl/lookup/${IP.listed}`, { key: failingKeys.secretKey });
    expect([reply.status, reply.body.success, reply.body.error_code]).toEqual([502, false, 'lookup_failed']);
    expect(reply.body.error).toContain('every DNSBL zone failed');
    expect(await quota(failing, failingKeys.subscriptionId)).toEqual(before);
  });

  it('reports the configured zone count as database_records', async () => {
    const reply = await stack.call('/v1/dnsbl/status', { key: keys.publicKey });
    expect(reply.body).toMatchObject({ success: true, product: 'dnsbl', database_records: 3 });
  });
});
