/**
 * The whois engine end to end against loopback servers: a DNS server (the names of the RDAP
 * and WHOIS servers), an RDAP server serving real registry and registrar answers
 * (test/fixtures/rdap), and a WHOIS server on 127.0.0.1 (registries) and 127.0.0.2 (a
 * registrar named by a referral) serving real port-43 answers (test/fixtures/whois); plus
 * hostile behaviours of both. The outbound guard lets 127.0.0.0/8 through for these tests only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLookupError, LookupError } from '../../src/errors.js';
import { createMemoryCache, type CacheStore } from '../../src/lib/cache.js';
import { packageVersion } from '../../src/lib/datasets.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { eppStatus } from '../../src/products/whois/rdap.js';
import { bootstrapProblem } from '../../src/products/whois/servers.js';
import { createApiStack } from '../api/harness.js';
import type { WhoisEngineOptions } from '../../src/products/whois/types.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { startWhoisServer, whoisAnswer, type WhoisBehaviour, type WhoisTestServer } from '../servers/whois-server.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const FIXTURES = join(import.meta.dirname, '../fixtures/rdap');
const fixture = (path: string) => JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as Record<string, unknown>;

let dns: DnsTestServer;
let silentDns: DnsTestServer;
let rdap: RdapTestServer;
let whois: WhoisTestServer;
let rdapHost: string;
/** WHOIS answers by `<host> <query>` (host 127.0.0.1 = registries and IANA, 127.0.0.2 = a registrar). */
const WHOIS_ANSWERS = new Map<string, WhoisBehaviour>();

/** A fixture's RDAP object about another name (the engine refuses an answer about a name it did not ask for). */
const renamed = (path: string, name: string) => rdapAnswer.json({ ...fixture(path), ldhName: name });

/** The registry's thin .com answer: no registrar entity, and a link to the registrar's record. */
function thinRegistryAnswer(name: string, registrarLink: string) {
  const registry = fixture('domain/google.com.registry-verisign.json');
  return {
    ...registry,
    ldhName: name.toUpperCase(),
    entities: [],
    links: [
      ...(registry.links as object[]).filter((l) => (l as { rel: string }).rel === 'self'),
      { rel: 'related', type: 'application/rdap+json', href: registrarLink },
    ],
  };
}

beforeAll(async () => {
  rdap = await startRdapServer();
  whois = await startWhoisServer({
    hosts: ['127.0.0.1', '127.0.0.2'],
    answer: (query, host) => WHOIS_ANSWERS.get(`${host} ${query}`) ?? whoisAnswer.text(`No match for "${query}".\r\n`),
  });
  const port = new URL(rdap.url).port;
  rdapHost = `rdap.registry.test:${port}`;
  dns = await startDnsServer({
    zone: {
      'rdap.registry.test': [{ type: 'A', address: '127.0.0.1' }],
      'rdap.registrar.test': [{ type: 'A', address: '127.0.0.1' }],
      'whois.registry.test': [{ type: 'A', address: '127.0.0.1' }],
      'whois.registrar.test': [{ type: 'A', address: '127.0.0.2' }],
      'private.test': [{ type: 'A', address: '10.1.2.3' }],
      // The real names of servers with their own query formats, here on loopback.
      'whois.denic.de': [{ type: 'A', address: '127.0.0.1' }],
      'whois.jprs.jp': [{ type: 'A', address: '127.0.0.1' }],
    },
  });
  silentDns = await startDnsServer({ behaviour: 'silent' });

  const file = (name: string) => rdapAnswer.file(`domain/${name}`);
  rdap.set('google.com', file('google.com.registry-verisign.json'));
  rdap.set('thin.com', rdapAnswer.json(thinRegistryAnswer('thin.com', `http://rdap.registrar.test:${port}/registrar/domain/THIN.COM`)));
  rdap.set('/registrar/domain/THIN.COM', renamed('domain/google.com.registrar-markmonitor.json', 'thin.com'));
  rdap.set('thin-broken.com', rdapAnswer.json(thinRegistryAnswer('thin-broken.com', `http://rdap.registrar.test:${port}/registrar/hang`)));
  rdap.set('/registrar/hang', rdapAnswer.hang());
  rdap.set('thin-other.com', rdapAnswer.json(thinRegistryAnswer('thin-other.com', `http://rdap.registrar.test:${port}/registrar/domain/THIN.COM`)));
  rdap.set('moved.com', rdapAnswer.redirect(`http://rdap.registrar.test:${port}/elsewhere/moved.com`, 301));
  rdap.set('/elsewhere/moved.com', renamed('domain/google.com.registry-verisign.json', 'MOVED.COM'));
  rdap.set('relative.com', rdapAnswer.redirect('/elsewhere/relative.com', 307));
  rdap.set('/elsewhere/relative.com', renamed('domain/google.com.registry-verisign.json', 'relative.com.'));
  rdap.set('other.com', file('google.com.registry-verisign.json'));
  rdap.set('loop.com', rdapAnswer.redirect('/rdap/domain/loop.com'));
  rdap.set('to-private.com', rdapAnswer.redirect('http://private.test/rdap/domain/google.com'));
  rdap.set('to-ftp.com', rdapAnswer.redirect('ftp://rdap.registry.test/x'));
  rdap.set('hang.com', rdapAnswer.hang());
  rdap.set('early.com', rdapAnswer.closeEarly());
  rdap.set('endless.com', rdapAnswer.endless());
  rdap.set('drip.com', rdapAnswer.drip());
  rdap.set('garbage.com', rdapAnswer.garbage());
  rdap.set('error.com', rdapAnswer.file('other/error-501.rir-ripe.json'));
  rdap.set('help.com', rdapAnswer.file('other/help.registry-afnic.json'));
  rdap.set('broken.com', renamed('synthetic/bad_response_02.json', 'broken.com'));
  rdap.set('busy.com', rdapAnswer.error(503));
  rdap.set('example.cz', file('example.cz.registry-cznic.json'));
  rdap.set('norway.no', file('norway.no.registry-norid.json'));
  rdap.set('lemonde.fr', file('lemonde.fr.registry-afnic.json'));
  rdap.set('example.com', rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json'));
  rdap.set(
    'redacted.com',
    rdapAnswer.json({
      ...fixture('domain/themarquetry.com.registry-verisign.json'),
      ldhName: 'REDACTED.COM',
      links: [],
      entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: ['vcard', [['fn', {}, 'text', 'REDACTED FOR PRIVACY']]] }],
    }),
  );

  // RFC 9083 5.1 lets entities nest: here the registrar is inside the registrant.
  const vcard = (fn: string) => [
    'vcard',
    [
      ['version', {}, 'text', '4.0'],
      ['fn', {}, 'text', fn],
    ],
  ];
  rdap.set(
    'nested.com',
    rdapAnswer.json({
      ...fixture('domain/themarquetry.com.registry-verisign.json'),
      ldhName: 'NESTED.COM',
      links: [],
      entities: [
        {
          objectClassName: 'entity',
          roles: ['registrant'],
          vcardArray: vcard('Someone'),
          entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: vcard('GoDaddy.com, LLC') }],
        },
      ],
    }),
  );
  // RFC 8259 8.1: a parser may ignore a byte order mark before the JSON.
  const withBom = Buffer.from(`\ufeff${JSON.stringify({ ...fixture('domain/themarquetry.com.registry-verisign.json'), ldhName: 'BOM.COM', links: [] })}`);
  rdap.set('bom.com', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rdap+json', 'content-length': withBom.length });
    res.end(withBom);
  });

  const registry = (query: string, behaviour: WhoisBehaviour) => WHOIS_ANSWERS.set(`127.0.0.1 ${query}`, behaviour);
  registry('-T dn,ace google.de', whoisAnswer.sample('google.de'));
  registry('yahoo.co.jp/e', whoisAnswer.sample('yahoo.co.jp'));
  registry('amazon.co.uk', whoisAnswer.sample('amazon.co.uk'));
  registry(
    'thin.net',
    whoisAnswer.text(
      'Domain Name: THIN.NET\r\nRegistrar WHOIS Server: whois.registrar.test\r\nUpdated Date: 2026-01-02T03:04:05Z\r\nName Server: NS1.THIN.NET\r\n',
    ),
  );
  WHOIS_ANSWERS.set(
    '127.0.0.2 thin.net',
    whoisAnswer.text(
      'Domain Name: thin.net\nRegistrar: Example Registrar, LLC\nCreation Date: 2001-01-01T00:00:00Z\nUpdated Date: 2020-05-05T00:00:00Z\nRegistrar Registration Expiration Date: 2030-01-01T00:00:00Z\nName Server: ns9.elsewhere.example\n',
    ),
  );
  registry('lost.net', whoisAnswer.text('Domain Name: LOST.NET\r\nRegistrar WHOIS Server: whois.registrar.test\r\nUpdated Date: 2026-01-02T03:04:05Z\r\n'));
  WHOIS_ANSWERS.set('127.0.0.2 lost.net', whoisAnswer.hang());
  registry('it', whoisAnswer.text('% IANA WHOIS server\n\nrefer:        whois.registry.test\n\ndomain:       IT\n'));
  registry('google.it', whoisAnswer.sample('google.it'));
  registry('ro', whoisAnswer.text('% IANA WHOIS server\n\ndomain:       RO\n\nstatus:       ACTIVE\n'));
  registry('hang.pl', whoisAnswer.hang());
  registry('early.pl', whoisAnswer.close());
  registry('endless.pl', whoisAnswer.endless());
  registry('drip.pl', whoisAnswer.drip());
  registry('garbage.pl', whoisAnswer.text(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0xfe])));
  registry('ratelimit.pl', whoisAnswer.text('Query rate limit exceeded. Try again later.\n'));
  registry('latin1.pl', whoisAnswer.text(Buffer.from('DOMAIN NAME: latin1.pl\nREGISTRAR:\nCafé Registrar Sp. z o.o.\n', 'latin1')));
});

afterAll(async () => {
  await Promise.all([rdap?.close(), whois?.close(), dns?.close(), silentDns?.close()]);
});

function engineOptions(extra: WhoisEngineOptions = {}): WhoisEngineOptions {
  const port = whois.port;
  return {
    rdapServers: {
      de: null,
      com: `http://${rdapHost}/rdap/`,
      cz: `http://${rdapHost}/rdap/`,
      no: `http://127.0.0.1:${new URL(rdap.url).port}/rdap/`,
      fr: rdap.base,
      net: null,
      uk: null,
      pl: null,
      ro: null,
      it: null,
      org: 'http://10.0.0.1/rdap/',
      info: `http://private.test:${new URL(rdap.url).port}/rdap/`,
    },
    whoisServers: {
      de: `whois.denic.de:${port}`,
      jp: `whois.jprs.jp:${port}`,
      uk: `whois.registry.test:${port}`,
      net: `whois.registry.test:${port}`,
      pl: `127.0.0.1:${port}`,
      it: null,
      ro: null,
      lu: 'private.test',
    },
    ianaServer: `127.0.0.1:${port}`,
    whoisPort: port,
    timeouts: { connectMs: 400, totalMs: 800 },
    lookupTimeoutMs: 2_500,
    maxBytes: 256 * 1024,
    ...extra,
  };
}

function lookupWith(extra: WhoisEngineOptions = {}, dnsServer = () => dns): Lookup {
  return createLookup({
    dns: { servers: [dnsServer().address], timeouts: { connectMs: 200, totalMs: 300 }, attempts: 1 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    now: () => NOW,
    whois: engineOptions(extra),
  });
}

async function failure(promise: Promise<unknown>): Promise<LookupError> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return error;
    throw error;
  }
  throw new Error('expected the lookup to fail');
}

const DAY = 86_400_000;

describe('RDAP', () => {
  it('maps a registry answer: events, EPP status, nameservers, registrar, age; Accept says RDAP', async () => {
    const outcome = await lookupWith().detailed.whois('WWW.Google.COM.');
    expect(outcome.cached).toBe(false);
    expect(outcome.fetchedAt?.getTime()).toBe(NOW);
    expect(outcome.result).toEqual({
      domain: 'google.com',
      registrar: 'MarkMonitor Inc.',
      created_at: '1997-09-15T04:00:00Z',
      updated_at: null, // this 2021 Verisign answer has no "last changed"; "last update of RDAP database" is ignored
      expires_at: '2028-09-14T04:00:00Z',
      domain_age_days: Math.floor((NOW - Date.UTC(1997, 8, 15, 4)) / DAY),
      status: [
        'clientDeleteProhibited',
        'clientTransferProhibited',
        'clientUpdateProhibited',
        'serverDeleteProhibited',
        'serverTransferProhibited',
        'serverUpdateProhibited',
      ],
      nameservers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      source: 'rdap',
    });
    expect(rdap.accepts.at(-1)).toContain('application/rdap+json');
  });

  it('reads other registries: CZ.NIC (registrar handle), Norid (no expiry), AFNIC (registry-specific status kept)', async () => {
    const lookup = lookupWith();
    expect(await lookup.whois('example.cz')).toMatchObject({
      registrar: 'REG-INTERNET-CZ',
      created_at: '2004-08-30T22:55:00Z',
      expires_at: '2019-08-30T12:00:00Z',
      updated_at: null,
      status: ['ok'],
    });
    expect(await lookup.whois('norway.no')).toMatchObject({ registrar: 'Domeneshop AS', expires_at: null, updated_at: '2021-01-14T05:16:59Z', status: [] });
    expect((await lookup.whois('lemonde.fr')).status).toEqual([
      'serverUpdateProhibited',
      'serverTransferProhibited',
      'serverDeleteProhibited',
      'server recover prohibited',
    ]);
  });

  it('gives a redacted registrar as null, never the placeholder', async () => {
    expect((await lookupWith().whois('redacted.com')).registrar).toBeNull();
    expect((await lookupWith().whois('example.com')).registrar).toBe('Example Registrar Inc.');
  });

  it('finds a registrar entity nested in another entity (RFC 9083 5.1), without following any link', async () => {
    const result = await lookupWith().whois('nested.com');
    expect(result.registrar).toBe('GoDaddy.com, LLC');
  });

  it('reads an answer that starts with a byte order mark (RFC 8259 8.1)', async () => {
    const result = await lookupWith().whois('bom.com');
    expect(result).toMatchObject({ domain: 'bom.com', registrar: 'Hosting Concepts B.V. d/b/a Registrar.eu' });
  });

  it('follows the registrar link of a thin answer: the registrar fills gaps, registry facts stay', async () => {
    const result = await lookupWith().whois('thin.com');
    expect(rdap.hits.get('/registrar/domain/THIN.COM')).toBe(1);
    expect(result).toMatchObject({
      registrar: 'MarkMonitor Inc.', // from the registrar (its jCard org)
      created_at: '1997-09-15T04:00:00Z', // the registry's, not the registrar's 07:00
      expires_at: '2028-09-14T04:00:00Z',
      updated_at: '2019-09-09T15:39:04Z', // only the registrar has it
    });
    expect(result.status).toHaveLength(6);
  });

  it('keeps the registry facts when the registrar step fails, and keeps that result only briefly', async () => {
    const store = createMemoryCache(); // shared with the DNS resolver, as createLookup({ cache }) does
    const ttls = new Map<string, number>();
    const recording: CacheStore = {
      get: (key) => store.get(key),
      delete: (key) => store.delete(key),
      set: (key, value, ttlMs) => (ttls.set(key, ttlMs), store.set(key, value, ttlMs)),
    };
    const lookup = createLookup({
      dns: { servers: [dns.address], attempts: 1 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      cache: recording,
      whois: engineOptions({ timeouts: { connectMs: 200, totalMs: 300 }, shortTtlMs: 120_000 }),
    });
    expect(await lookup.whois('thin-broken.com')).toMatchObject({ registrar: null, created_at: '1997-09-15T04:00:00Z' });
    await lookup.whois('google.com');
    await failure(lookup.whois('nosuch-example.com'));
    const prefix = `whois:${packageVersion()}:`;
    expect(Object.fromEntries([...ttls].filter(([key]) => key.startsWith('whois:')))).toEqual({
      [`${prefix}thin-broken.com`]: 120_000,
      [`${prefix}google.com`]: 3_600_000,
      [`${prefix}nosuch-example.com`]: 120_000,
    });
  });

  it('does not take a registrar record about another name', async () => {
    expect(await lookupWith().whois('thin-other.com')).toMatchObject({ registrar: null, updated_at: null, created_at: '1997-09-15T04:00:00Z' });
  });

  it('does not follow the link of a complete answer', async () => {
    await lookupWith().whois('google.com');
    expect(rdap.hits.get('/rdap/domain/GOOGLE.COM') ?? 0).toBe(0);
  });

  it('follows redirects (absolute to another host, relative), each through the guard', async () => {
    const lookup = lookupWith();
    expect(await lookup.whois('moved.com')).toMatchObject({ domain: 'moved.com', registrar: 'MarkMonitor Inc.' });
    expect(await lookup.whois('relative.com')).toMatchObject({ domain: 'relative.com', registrar: 'MarkMonitor Inc.' });
  });

  it('answers 404 domain_not_found for an RDAP 404, and caches it briefly', async () => {
    const lookup = lookupWith();
    const error = await failure(lookup.whois('nosuch-example.com'));
    expect([error.code, error.status]).toEqual(['domain_not_found', 404]);
    const before = rdap.hits.get('/rdap/domain/nosuch-example.com');
    expect((await failure(lookup.whois('nosuch-example.com'))).code).toBe('domain_not_found');
    expect(rdap.hits.get('/rdap/domain/nosuch-example.com')).toBe(before);
  });

  it('fails with 502 lookup_failed on every hostile server, each within its deadline, and caches none', async () => {
    const lookup = lookupWith({ maxRedirects: 2 });
    const started = performance.now();
    const cases = [
      'other.com',
      'loop.com',
      'to-private.com',
      'to-ftp.com',
      'hang.com',
      'early.com',
      'endless.com',
      'drip.com',
      'garbage.com',
      'error.com',
      'help.com',
      'busy.com',
      'anything.org',
      'anything.info',
    ];
    const errors = await Promise.all(cases.map((domain) => failure(lookup.whois(domain))));
    const elapsed = performance.now() - started;
    const byDomain = Object.fromEntries(cases.map((domain, i) => [domain, errors[i]]));
    for (const [domain, error] of Object.entries(byDomain)) expect([domain, error.code, error.status]).toEqual([domain, 'lookup_failed', 502]);
    expect(byDomain['other.com'].message).toContain('answered about "google.com", not other.com');
    expect(byDomain['loop.com'].message).toContain('more than 2 redirects');
    expect(byDomain['to-private.com'].message).toContain('not a public address');
    expect(byDomain['hang.com'].message).toMatch(/timeout after \d+ ms/);
    expect(byDomain['endless.com'].message).toContain('larger than');
    expect(byDomain['drip.com'].message).toMatch(/timeout/);
    expect(byDomain['garbage.com'].message).toContain('not JSON');
    expect(byDomain['error.com'].message).toContain('not a domain object');
    expect(byDomain['busy.com'].message).toContain('HTTP 503');
    expect(byDomain['anything.org'].message).toContain('10.0.0.1 is not a public address');
    expect(byDomain['anything.info'].message).toContain('private.test (10.1.2.3) is not a public address');
    expect(elapsed).toBeLessThan(2_500);

    // Never cached: the server is asked again, and a repaired server answers.
    rdap.set('hang.com', renamed('domain/google.com.registry-verisign.json', 'hang.com'));
    expect((await lookup.detailed.whois('hang.com')).cached).toBe(false);
    rdap.set('hang.com', rdapAnswer.hang());
  });

  it('reads a broken but domain-shaped object for what is valid in it', async () => {
    expect(await lookupWith().whois('broken.com')).toMatchObject({ registrar: null, nameservers: [], created_at: '2023-07-05T00:00:00Z', status: ['ok'] });
  });

  it('maps RDAP status values to EPP codes (RFC 8056) and keeps the others', () => {
    expect(['client transfer prohibited', 'Server Hold', 'active', 'associated', 'pending  delete', 'locked', 'validated'].map(eppStatus)).toEqual([
      'clientTransferProhibited',
      'serverHold',
      'ok',
      'linked',
      'pendingDelete',
      'locked',
      'validated',
    ]);
  });
});

describe('WHOIS (port 43)', () => {
  it('asks each server in its own way (DENIC -T dn,ace, JPRS /e) and parses the answer', async () => {
    const lookup = lookupWith();
    expect(await lookup.whois('google.de')).toEqual({
      domain: 'google.de',
      registrar: null,
      created_at: null,
      updated_at: '2018-03-12T20:44:25Z',
      expires_at: null,
      domain_age_days: null,
      status: ['connect'],
      nameservers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      source: 'whois',
    });
    expect(await lookup.whois('yahoo.co.jp')).toMatchObject({
      created_at: '2019-09-27T00:00:00Z',
      updated_at: '2024-09-30T16:00:44Z',
      status: ['Connected (2025/09/30)'],
    });
    expect(whois.queries.map((q) => q.query)).toEqual(expect.arrayContaining(['-T dn,ace google.de', 'yahoo.co.jp/e']));
  });

  it('reaches a server by name through the guard (.uk, a heading-block answer)', async () => {
    expect(await lookupWith().whois('www.amazon.co.uk')).toMatchObject({
      domain: 'amazon.co.uk',
      registrar: 'Amazon.com, Inc.',
      created_at: null,
      expires_at: '2020-12-05T00:00:00Z',
      status: ['Registered until expiry date.'],
    });
  });

  it("follows a thin registry's Registrar WHOIS Server once; the registrar fills gaps only", async () => {
    const result = await lookupWith().whois('thin.net');
    expect(result).toMatchObject({
      registrar: 'Example Registrar, LLC',
      created_at: '2001-01-01T00:00:00Z',
      expires_at: '2030-01-01T00:00:00Z',
      updated_at: '2026-01-02T03:04:05Z', // the registry's, not the registrar's 2020-05-05
      nameservers: ['ns1.thin.net'], // the registry's list stands
    });
    expect(whois.queries.filter((q) => q.query === 'thin.net').map((q) => q.host)).toEqual(['127.0.0.1', '127.0.0.2']);
  });

  it('keeps the registry facts when the referral fails', async () => {
    expect(await lookupWith({ timeouts: { connectMs: 200, totalMs: 300 } }).whois('lost.net')).toMatchObject({
      registrar: null,
      updated_at: '2026-01-02T03:04:05Z',
    });
  });

  it('asks whois.iana.org for a TLD with no listed server (refer:), once per TLD', async () => {
    const lookup = lookupWith();
    expect(await lookup.whois('google.it')).toMatchObject({
      registrar: 'MarkMonitor International Limited',
      created_at: '1999-12-10T00:00:00Z',
      status: ['ok'],
    });
    const before = whois.queries.filter((q) => q.query === 'it').length;
    expect((await lookup.detailed.whois('google.it')).cached).toBe(true);
    expect(whois.queries.filter((q) => q.query === 'it').length).toBe(before);
    const error = await failure(lookup.whois('google.ro'));
    expect([error.code, error.message]).toEqual(['lookup_failed', 'no RDAP or WHOIS server is known for .ro']);
  });

  it('a notice from whois.iana.org instead of its record (rate limit, error) is not taken for a TLD without a server for a day', async () => {
    const clock = { now: NOW };
    const lookup = createLookup({
      dns: { servers: [dns.address], timeouts: { connectMs: 200, totalMs: 300 }, attempts: 1 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      now: () => clock.now,
      // No RDAP and no listed WHOIS server for .ee: whois.iana.org is asked.
      whois: engineOptions({ rdapServers: { ee: null }, whoisServers: { ee: null } }),
    });
    const iana = (answer: WhoisBehaviour) => WHOIS_ANSWERS.set('127.0.0.1 ee', answer);
    const asked = () => whois.queries.filter((q) => q.query === 'ee').length;
    iana(whoisAnswer.text('%ERROR:101: no entries found\n% Too many requests, try again later\n'));
    const before = asked();
    const error = await failure(lookup.whois('eesti.ee'));
    expect([error.code, error.message]).toEqual(['lookup_failed', 'whois.iana.org gave no record of .ee: "Too many requests, try again later"']);
    // Within the minute: the same answer, IANA not asked again.
    expect((await failure(lookup.whois('other.ee'))).message).toBe(error.message);
    expect(asked()).toBe(before + 1);
    // A minute on, IANA answers its record: the TLD's server is used.
    iana(whoisAnswer.text('% IANA WHOIS server\n\nrefer:        whois.registry.test\n\ndomain:       EE\n'));
    WHOIS_ANSWERS.set('127.0.0.1 eesti.ee', whoisAnswer.text('Domain:\nname: eesti.ee\nRegistrar:\nname: Zone Media OU\n'));
    clock.now += 60_001;
    expect(await lookup.whois('eesti.ee')).toMatchObject({ domain: 'eesti.ee' });
    expect(asked()).toBe(before + 2);
  });

  it('answers 404 domain_not_found for a registry\'s "No match"', async () => {
    const error = await failure(lookupWith().whois('nosuch-example.de'));
    expect([error.code, error.status]).toEqual(['domain_not_found', 404]);
  });

  it('fails with 502 on hostile servers (silent, closing, endless, dripping, garbage, unreadable, refused), quickly', async () => {
    const lookup = lookupWith();
    const cases = ['hang.pl', 'early.pl', 'endless.pl', 'drip.pl', 'garbage.pl', 'ratelimit.pl', 'example.lu'];
    const started = performance.now();
    const errors = await Promise.all(cases.map((domain) => failure(lookup.whois(domain))));
    expect(performance.now() - started).toBeLessThan(2_500);
    const byDomain = Object.fromEntries(cases.map((domain, i) => [domain, errors[i]]));
    for (const [domain, error] of Object.entries(byDomain)) expect([domain, error.code]).toEqual([domain, 'lookup_failed']);
    expect(byDomain['hang.pl'].message).toMatch(/timeout after 800 ms/);
    expect(byDomain['early.pl'].message).toContain('closed the connection without an answer');
    expect(byDomain['endless.pl'].message).toContain('answer larger than 256 KB'.replace('256 KB', '262144 bytes'));
    expect(byDomain['ratelimit.pl'].message).toContain('refused the query (rate limit): "Query rate limit exceeded. Try again later."');
    expect(byDomain['example.lu'].message).toContain('private.test (10.1.2.3) is not a public address');
  });

  it('reads a Latin-1 answer', async () => {
    expect((await lookupWith().whois('latin1.pl')).registrar).toBe('Café Registrar Sp. z o.o.');
  });
});

describe('cache, sharing and input', () => {
  it('serves a repeat from the cache with cached: true and the original fetched_at', async () => {
    let clock = NOW;
    const lookup = createLookup({
      dns: { servers: [dns.address], attempts: 1 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      now: () => clock,
      whois: engineOptions(),
    });
    const first = await lookup.detailed.whois('example.cz');
    const hits = rdap.hits.get('/rdap/domain/example.cz');
    clock += 60_000;
    const second = await lookup.detailed.whois('EXAMPLE.cz');
    expect([first.cached, second.cached]).toEqual([false, true]);
    expect(second.fetchedAt?.getTime()).toBe(NOW);
    expect(second.result).toEqual(first.result);
    expect(rdap.hits.get('/rdap/domain/example.cz')).toBe(hits);
  });

  it('asks the server once for concurrent lookups of one domain', async () => {
    const lookup = lookupWith();
    const before = rdap.hits.get('/rdap/domain/norway.no') ?? 0;
    const results = await Promise.all(Array.from({ length: 5 }, () => lookup.whois('norway.no')));
    expect(new Set(results.map((r) => r.registrar))).toEqual(new Set(['Domeneshop AS']));
    expect(rdap.hits.get('/rdap/domain/norway.no')).toBe(before + 1);
  });

  it.each([
    ['empty', ''],
    ['an IPv4 address', '93.184.215.14'],
    ['an IPv6 address', '2001:db8::1'],
    ['an unknown TLD', 'example.notatld'],
    ['a bare public suffix', 'co.uk'],
    ['a URL', 'https://example.com/'],
    ['a label too long', `${'a'.repeat(64)}.com`],
  ])('refuses %s with 400 invalid_domain before any I/O', async (_name, input) => {
    const error = await failure(lookupWith().whois(input));
    expect([error.code, error.status]).toEqual(['invalid_domain', 400]);
  });

  it('converts IDN to punycode and looks up the registrable domain', async () => {
    rdap.set('xn--bcher-kva.com', renamed('domain/google.com.registry-verisign.json', 'XN--BCHER-KVA.COM'));
    expect((await lookupWith().whois('shop.BÜCHER.com')).domain).toBe('xn--bcher-kva.com');
  });
});

describe('without a network', () => {
  it('answers a clean 502 quickly when the DNS server never answers', async () => {
    const lookup = lookupWith({}, () => silentDns);
    const started = performance.now();
    const errors = await Promise.all([failure(lookup.whois('google.com')), failure(lookup.whois('amazon.co.uk'))]);
    expect(errors.map((e) => e.code)).toEqual(['lookup_failed', 'lookup_failed']);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('answers a clean 502 at once when the guard refuses the server (no allowance for loopback)', async () => {
    const lookup = createLookup({ dns: { servers: [dns.address], attempts: 1 }, whois: engineOptions() });
    const started = performance.now();
    const error = await failure(lookup.whois('google.de'));
    expect(error.code).toBe('lookup_failed');
    expect(error.message).toContain('whois.denic.de (127.0.0.1) is not a public address: loopback');
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('bounds the whole lookup by lookupTimeoutMs', async () => {
    const lookup = lookupWith({ timeouts: { connectMs: 1_000, totalMs: 2_000 }, lookupTimeoutMs: 300 });
    const started = performance.now();
    const error = await failure(lookup.whois('hang.com'));
    expect(error.code).toBe('lookup_failed');
    expect(performance.now() - started).toBeLessThan(700);
  });
});

describe('options and status', () => {
  it('counts the TLDs with a known server for database_records', () => {
    const engine = createLookup().engine('whois');
    expect(engine.knownTlds).toBeGreaterThanOrEqual(1190);
    expect(engine.bootstrapPublication).toBe('2025-06-27T17:00:02Z');
  });

  it("checks a bootstrap document's shape (RFC 9224)", () => {
    expect(bootstrapProblem({ services: [[['com'], ['https://rdap.example/']]] })).toBeNull();
    expect(bootstrapProblem({ services: 'none' })).toBe('no "services" array');
    expect(bootstrapProblem({ services: [[['com'], ['ftp://rdap.example/']]] })).toBe('services[0] lists a URL that is not http(s)');
    expect(bootstrapProblem({ services: [[['c m'], ['https://rdap.example/']]] })).toBe('services[0] lists a TLD that is not a DNS label');
    expect(bootstrapProblem([1])).toBe('not a JSON object');
  });

  it('refuses bad options at construction of the engine', () => {
    expect(() => createLookup({ whois: { rdapServers: { com: 'ftp://x/' } } }).engine('whois')).toThrow(/http\(s\) URL/);
    expect(() => createLookup({ whois: { whoisServers: { de: 'whois.denic.de:99999' } } }).engine('whois')).toThrow(/bad port/);
    expect(() => createLookup({ whois: { maxRedirects: -1 } }).engine('whois')).toThrow(/maxRedirects/);
  });
});

describe('whois over HTTP (the API harness)', () => {
  const FETCHED_AT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

  it.each([
    ['GET ?domain=', '/v1/whois/lookup?domain=google.com'],
    ['GET /lookup/{domain}', '/v1/whois/lookup/www.google.com'],
  ])('%s answers 200 with the result, cached and fetched_at', async (_form, path) => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('whois');
    const reply = await stack.call(path, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    const { request_id, cached, fetched_at, ...result } = reply.body;
    expect(result).toEqual({ success: true, ...(await lookupWith().whois('google.com')) });
    expect([typeof request_id, cached]).toEqual(['string', false]);
    expect(fetched_at).toBe('2026-11-23 12:00:00.000');
    expect(fetched_at).toMatch(FETCHED_AT);
    const again = await stack.call(path, { key: keys.secretKey });
    expect(again.body).toMatchObject({ cached: true, fetched_at });
  });

  it.each([
    ['no domain', '/v1/whois/lookup'],
    ['an empty domain', '/v1/whois/lookup?domain='],
    ['an IP address', '/v1/whois/lookup/93.184.215.14'],
    ['an unknown TLD', '/v1/whois/lookup?domain=example.notatld'],
    ['broken percent-encoding', '/v1/whois/lookup/exa%E0%A4%A'],
  ])('answers %s with 400 invalid_domain', async (_name, path) => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('whois');
    const reply = await stack.call(path, { key: keys.secretKey });
    expect([reply.status, reply.body.success, reply.body.error_code]).toEqual([400, false, 'invalid_domain']);
  });

  it('answers 404 domain_not_found (RDAP and WHOIS) and 502 lookup_failed, refunding the quota of both', async () => {
    const stack = await createApiStack({ lookup: lookupWith() });
    const keys = await stack.keys('whois');
    const quota = () => stack.meter.quota(keys.subscriptionId, 10_000, Date.now());
    const before = await quota();
    for (const [path, status, code] of [
      ['/v1/whois/lookup/nosuch-example.com', 404, 'domain_not_found'],
      ['/v1/whois/lookup?domain=nosuch-example.co.uk', 404, 'domain_not_found'],
      ['/v1/whois/lookup/garbage.com', 502, 'lookup_failed'],
      ['/v1/whois/lookup?domain=hang.pl', 502, 'lookup_failed'],
    ] as const) {
      const reply = await stack.call(path, { key: keys.secretKey });
      expect([path, reply.status, reply.body.success, reply.body.error_code]).toEqual([path, status, false, code]);
      expect(typeof reply.body.error).toBe('string');
    }
    expect(await quota()).toEqual(before);
  });

  it('reports database_records: the TLDs with a known RDAP or WHOIS server', async () => {
    const lookup = createLookup();
    const stack = await createApiStack({ lookup });
    const keys = await stack.keys('whois');
    const reply = await stack.call('/v1/whois/status', { key: keys.publicKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, product: 'whois', database_records: lookup.engine('whois').knownTlds });
    expect(reply.body.database_records).toBeGreaterThan(1190);
  });
});
