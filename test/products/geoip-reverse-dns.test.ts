/**
 * connection.domain from reverse DNS, against loopback DNS servers (test/servers/dns-server.ts):
 * off by default (no query at all); on, the PTR's registrable domain, from the resolver's
 * cache the second time; and a server that is silent, fails or has no PTR gives null, with the
 * geo answer intact.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { domainOfHost, ptrName } from '../../src/products/geoip/reverse-dns.js';
import { parseIpInput } from '../../src/lib/ip-input.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';

const PTR_V4 = '8.8.8.8.in-addr.arpa';
const PTR_V6 = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.4.0.5.4.1.0.0.a.2.ip6.arpa';
const ZONE: Zone = {
  [PTR_V4]: [{ type: 'PTR', target: 'dns.google' }],
  [PTR_V6]: [{ type: 'PTR', target: 'fra16s48-in-x01.1e100.net' }],
  '1.1.1.1.in-addr.arpa': [{ type: 'PTR', target: 'one.one.one.one' }],
};

const server = await startDnsServer({ zone: ZONE });
const silent = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
const servfail = await startDnsServer({ zone: ZONE, behaviour: 'servfail' });
afterAll(() => Promise.all([server, silent, servfail].map((s) => s.close())));
beforeEach(() => [server, silent, servfail].forEach((s) => s.resetCounts()));

function lookupOn(dns: DnsTestServer, reverseDns: boolean | { timeoutMs: number } | undefined) {
  return createLookup({ dns: { servers: [dns.address], attempts: 1, timeouts: { totalMs: 2_000 } }, geoip: { asn: false, watch: false, reverseDns } });
}

describe('reverse DNS for connection.domain', () => {
  it('is off by default: domain null and no query sent', async () => {
    const lookup = lookupOn(server, undefined);
    const outcome = await lookup.detailed.geoip('8.8.8.8');
    expect(outcome.result.connection.domain).toBeNull();
    expect(outcome.cached).toBe(true);
    expect(server.total()).toBe(0);
  });

  it('on: the registrable domain of the PTR name, IPv4 and IPv6; fresh, then from the resolver cache', async () => {
    const lookup = lookupOn(server, true);
    const first = await lookup.detailed.geoip('8.8.8.8');
    expect(first.result).toMatchObject({ country: { code: 'US' }, city: 'Mountain View', connection: { domain: 'dns.google', type: 'IPv4' } });
    expect(first.cached).toBe(false);
    const second = await lookup.detailed.geoip('8.8.8.8');
    expect([second.result.connection.domain, second.cached]).toEqual(['dns.google', true]);
    expect(server.queries.get(`${PTR_V4} PTR`)).toBe(1);

    expect((await lookup.geoip('2a00:1450:4001::1')).connection).toMatchObject({ domain: '1e100.net', type: 'IPv6' });
    // one.one.one.one: .one is a TLD, so its registrable domain is one.one.
    expect((await lookup.geoip('1.1.1.1')).connection.domain).toBe('one.one');
  });

  it('an address without a PTR record (NXDOMAIN) has domain null', async () => {
    const lookup = lookupOn(server, true);
    expect(await lookup.geoip('9.9.9.9')).toMatchObject({ country: { code: expect.any(String) }, connection: { domain: null } });
    expect(server.queries.get('9.9.9.9.in-addr.arpa PTR')).toBe(1);
  });

  it('a silent DNS server: the answer comes without waiting for the resolver, domain null', async () => {
    const lookup = lookupOn(silent, { timeoutMs: 100 });
    const outcome = await lookup.detailed.geoip('8.8.8.8');
    expect(outcome.result).toMatchObject({ country: { code: 'US' }, connection: { domain: null } });
    expect(outcome.cached).toBe(false);
    expect(silent.queries.get(`${PTR_V4} PTR`)).toBe(1);
  });

  it('a failing DNS server (SERVFAIL): domain null, the geo answer intact', async () => {
    const lookup = lookupOn(servfail, true);
    expect(await lookup.geoip('8.8.8.8')).toMatchObject({ city: 'Mountain View', connection: { domain: null } });
  });

  it('a database that carries a domain (GeoIP2 Enterprise traits) is answered without a PTR query', async () => {
    const lookup = createLookup({
      dns: { servers: [server.address], attempts: 1 },
      geoip: { asn: false, watch: false, reverseDns: true, database: new URL('../fixtures/maxmind/GeoIP2-Enterprise-Test.mmdb', import.meta.url).pathname },
    });
    expect((await lookup.geoip('74.209.24.1')).connection.domain).toBe('frpt.net');
    expect(server.total()).toBe(0);
  });

  it('names the PTR question and reads registrable domains', () => {
    expect(ptrName(parseIpInput('8.8.4.4'))).toBe('4.4.8.8.in-addr.arpa');
    expect(ptrName(parseIpInput('2a00:1450:4001::1'))).toBe(PTR_V6);
    expect(['ec2-3-5-7-9.compute-1.amazonaws.com', 'DNS.Google.', 'host.example.co.uk', 'localhost', 'co.uk', '192.0.2.1'].map(domainOfHost)).toEqual([
      'amazonaws.com',
      'dns.google',
      'example.co.uk',
      null,
      null,
      null,
    ]);
  });
});
