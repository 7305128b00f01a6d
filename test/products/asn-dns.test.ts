/**
 * asn with its optional DNS source (Team Cymru's origin.asn.cymru.com TXT format) against real
 * DNS servers on loopback (test/servers/dns-server.ts): answers merged with the local data,
 * several records, IPv6 nibble names, NXDOMAIN, unusable TXT, and servers that stay silent,
 * answer SERVFAIL, answer garbage or answer late. Then the same through the HTTP API, where the
 * failure with no local record is a real 502 that costs no quota.
 */
import ipaddr from 'ipaddr.js';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { createLookup, type LookupOptions } from '../../src/lookup.js';
import type { AsnEngine, AsnResult } from '../../src/products/asn/types.js';
import { createApiStack } from '../api/harness.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';

const ZONE4 = 'origin.asn.cymru.test';
const ZONE6 = 'origin6.asn.cymru.test';
/** When the test DNS answers were fetched, by the resolver's clock. */
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
/** fetched_at of local answers: the npm package's build hour. */
const DATA_TIME = '2026-06-17T19:00:00.000Z';

/** The query name, made here independently of the engine: reversed octets, or 32 reversed nibbles. */
function nameOf(ip: string): string {
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return `${ip.split('.').reverse().join('.')}.${ZONE4}`;
  const hex = (address as ipaddr.IPv6).parts.map((part) => part.toString(16).padStart(4, '0')).join('');
  return `${hex.split('').reverse().join('.')}.${ZONE6}`;
}

const txt = (...data: string[]) => data.map((text) => ({ type: 'TXT' as const, data: text, ttl: 600 }));

const ZONE: Zone = {
  [nameOf('1.1.1.1')]: txt('13335 | 1.1.1.0/24 | AU | apnic | 2011-08-11'),
  // Nested prefixes: the most specific wins.
  [nameOf('8.8.8.8')]: txt('15169 | 8.0.0.0/9 | US | arin | 1992-12-01', '15169 | 8.8.8.0/24 | US | arin | 2023-12-28'),
  // The DNS source says another AS than the local data (15169): its name comes from the local data's other ranges.
  [nameOf('8.8.4.4')]: txt('13335 | 8.8.4.0/24 | US | ARIN | 2023-12-28'),
  // Several origins for one prefix (MOAS): the first; empty fields are null.
  [nameOf('9.9.9.9')]: txt('19281 64512 | 9.9.9.0/24 |  |  | '),
  [nameOf('2606:4700:4700::1111')]: txt('13335 | 2606:4700::/32 | US | arin | 2011-11-01'),
  // Unusable: not the format; a prefix that does not hold the address.
  [nameOf('5.0.0.1')]: txt('hello world'),
  [nameOf('53.0.0.1')]: txt('31399 | 54.0.0.0/8 | DE | ripencc | 1992-01-01'),
  // A private AS as the origin names no network: unusable as well.
  [nameOf('9.9.9.10')]: txt('64512 | 9.9.9.0/24 | US | arin | 2020-01-01'),
  [nameOf('1.0.8.1')]: txt('not | usable'), // no local record either
};

const server = await startDnsServer({ zone: ZONE });
const silent = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
const servfail = await startDnsServer({ zone: ZONE, behaviour: 'servfail' });
const garbage = await startDnsServer({ zone: ZONE, behaviour: 'garbage' });
const slow = await startDnsServer({ zone: ZONE, behaviour: 'slow', delayMs: 1_000 });
afterAll(() => Promise.all([server, silent, servfail, garbage, slow].map((s) => s.close())));
beforeEach(() => server.resetCounts());

function lookupOn(dns: DnsTestServer, options: Partial<LookupOptions> = {}, cymru: object = {}) {
  return createLookup({
    dns: { servers: [dns.address], timeouts: { totalMs: 300 }, attempts: 1, now: () => NOW },
    now: () => NOW,
    asn: { cymru: { zone: ZONE4, zone6: ZONE6, ...cymru } },
    ...options,
  });
}

const full = (ip: string, fields: Partial<AsnResult>): AsnResult => ({
  ip,
  asn: null,
  as_org: null,
  network: null,
  country_code: null,
  registry: null,
  allocated: null,
  network_type: 'unknown',
  ...fields,
});

describe('asn with the DNS source answering', () => {
  const lookup = lookupOn(server);

  it.each([
    [
      '1.1.1.1',
      full('1.1.1.1', {
        asn: 13335,
        as_org: 'Cloudflare, Inc.',
        network: '1.1.1.0/24',
        country_code: 'AU',
        registry: 'apnic',
        allocated: '2011-08-11',
        network_type: 'hosting',
      }),
    ],
    ['8.8.8.8', full('8.8.8.8', { asn: 15169, as_org: 'Google LLC', network: '8.8.8.0/24', country_code: 'US', registry: 'arin', allocated: '2023-12-28' })],
    [
      '8.8.4.4',
      full('8.8.4.4', {
        asn: 13335,
        as_org: 'Cloudflare, Inc.',
        network: '8.8.4.0/24',
        country_code: 'US',
        registry: 'arin',
        allocated: '2023-12-28',
        network_type: 'hosting',
      }),
    ],
    ['9.9.9.9', full('9.9.9.9', { asn: 19281, as_org: 'Quad9', network: '9.9.9.0/24' })],
    [
      '2606:4700:4700::1111',
      full('2606:4700:4700::1111', {
        asn: 13335,
        as_org: 'Cloudflare, Inc.',
        network: '2606:4700::/32',
        country_code: 'US',
        registry: 'arin',
        allocated: '2011-11-01',
        network_type: 'hosting',
      }),
    ],
    // NXDOMAIN: the DNS source has no route; the local data's answer, DNS fields null.
    ['1.0.0.1', full('1.0.0.1', { asn: 13335, as_org: 'Cloudflare, Inc.', network: '1.0.0.0/24', network_type: 'hosting' })],
    // NXDOMAIN and no local record: an answer with nulls.
    ['1.0.1.1', full('1.0.1.1', {})],
  ])('%s', async (ip, expected) => {
    const outcome = await lookup.detailed.asn(ip);
    expect(outcome.result).toEqual(expected);
    expect(outcome.cached).toBe(false);
    expect(outcome.fetchedAt?.getTime()).toBe(NOW); // when the DNS answer was fetched
    expect(server.queries.get(`${nameOf(ip)} TXT`)).toBe(1);
  });

  it('keeps answers in the result cache while the DNS answer is fresh: one query for repeated lookups', async () => {
    const fresh = lookupOn(server);
    const first = await fresh.detailed.asn('1.1.1.1');
    const second = await fresh.detailed.asn('1.1.1.1');
    expect(second.cached).toBe(true);
    expect(second.result).toEqual(first.result);
    expect(second.fetchedAt?.getTime()).toBe(NOW);
    expect(JSON.parse(second.json!)).toEqual(first.result);
    expect(server.queries.get(`${nameOf('1.1.1.1')} TXT`)).toBe(1);
    // A result handed out cannot change the cached one.
    second.result.asn = 1;
    expect((await fresh.asn('1.1.1.1')).asn).toBe(13335);
  });

  it('record() never asks the DNS source', () => {
    const engine = lookupOn(server).engine('asn') as AsnEngine;
    expect(engine.cymru).toEqual({ zone: ZONE4, zone6: ZONE6 });
    expect(engine.record(engine.prepare('1.1.1.1'))).toEqual({ asn: 13335, org: 'Cloudflare, Inc.', network: '1.1.1.0/24' });
    expect(server.total()).toBe(0);
  });

  it('uses the local data when the TXT records are unusable, and does not cache that answer', async () => {
    const fresh = lookupOn(server);
    for (const [ip, asn] of [
      ['5.0.0.1', 29256],
      ['53.0.0.1', 31399],
      ['9.9.9.10', 19281],
    ] as const) {
      const outcome = await fresh.detailed.asn(ip);
      expect(outcome.result).toMatchObject({ asn, country_code: null, registry: null, allocated: null });
      expect(outcome.fetchedAt?.toISOString()).toBe(DATA_TIME);
      // Not from the result cache (the resolver's own cache may hold the DNS answer).
      expect((await fresh.detailed.asn(ip)).cached).toBe(false);
    }
  });

  it('fails with 502 lookup_failed when the TXT records are unusable and there is no local record', async () => {
    const error = await lookupOn(server)
      .asn('1.0.8.1')
      .catch((e: unknown) => e);
    expect(isLookupError(error) && [error.code, error.status]).toEqual(['lookup_failed', 502]);
    expect((error as Error).message).toContain('none usable');
  });
});

describe('asn with the DNS source failing', () => {
  it.each([
    ['silent', silent],
    ['SERVFAIL', servfail],
    ['garbage', garbage],
  ])('%s: the local answer with the DNS fields null, not cached; 502 when there is no local record', async (_name, dns) => {
    const lookup = lookupOn(dns);
    const outcome = await lookup.detailed.asn('1.1.1.1');
    expect(outcome.result).toEqual(full('1.1.1.1', { asn: 13335, as_org: 'Cloudflare, Inc.', network: '1.1.1.0/24', network_type: 'hosting' }));
    expect(outcome.fetchedAt?.toISOString()).toBe(DATA_TIME);
    const before = dns.total();
    expect((await lookup.detailed.asn('1.1.1.1')).cached).toBe(false);
    expect(dns.total()).toBe(before + 1); // asked again: a failure is not remembered

    const error = await lookup.asn('1.0.1.1').catch((e: unknown) => e);
    expect(isLookupError(error) && [error.code, error.status]).toEqual(['lookup_failed', 502]);
  });

  it('cymru.timeoutMs cuts a slow server short (the resolver alone would have waited for its answer)', async () => {
    const lookup = lookupOn(slow, { dns: { servers: [slow.address], timeouts: { totalMs: 5_000 }, attempts: 1, now: () => NOW } }, { timeoutMs: 100 });
    const result = await lookup.asn('1.1.1.1');
    expect(result).toMatchObject({ asn: 13335, country_code: null, registry: null });
  });
});

describe('asn with the DNS source, over HTTP', () => {
  it('answers GET with the DNS fields and fetched_at, and a real 502 lookup_failed that costs no quota', async () => {
    const stack = await createApiStack({ lookup: lookupOn(server) });
    const keys = await stack.keys('asn');
    const ok = await stack.call('/v1/asn/lookup?ip=1.1.1.1', { key: keys.secretKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      success: true,
      request_id: ok.body.request_id,
      cached: false,
      fetched_at: '2026-11-23 12:00:00.000',
      ...full('1.1.1.1', {
        asn: 13335,
        as_org: 'Cloudflare, Inc.',
        network: '1.1.1.0/24',
        country_code: 'AU',
        registry: 'apnic',
        allocated: '2011-08-11',
        network_type: 'hosting',
      }),
    });
    expect((await stack.call('/v1/asn/lookup/1.1.1.1', { key: keys.secretKey })).body).toMatchObject({ cached: true, asn: 13335 });

    const failing = await createApiStack({ lookup: lookupOn(silent) });
    const failingKeys = await failing.keys('asn');
    const before = await failing.meter.quota(failingKeys.subscriptionId, 10_000, Date.now());
    const reply = await failing.call('/v1/asn/lookup/1.0.1.1', { key: failingKeys.secretKey });
    expect([reply.status, reply.body.error_code, reply.body.success]).toEqual([502, 'lookup_failed', false]);
    expect(await failing.meter.quota(failingKeys.subscriptionId, 10_000, Date.now())).toEqual(before);
    // With a local record, the same silent server still gets an answer (billed).
    const local = await failing.call('/v1/asn/lookup/1.1.1.1', { key: failingKeys.secretKey });
    expect(local.body).toMatchObject({ success: true, asn: 13335, registry: null, fetched_at: '2026-06-17 19:00:00.000' });
  });
});
