/**
 * 6to4 (2002::/16), Teredo (2001::/32) and the NAT64 well-known prefix (64:ff9b::/96) stand for
 * an IPv4 address, and the location, network and reputation products answer for that IPv4 (as
 * for `::ffff:a.b.c.d`), over the real data: geoip, timezone, asn, riskscore (local lists and
 * an upstream), the asn DNS source. `ip` stays the IPv6 input, and geoip's `connection.type` is
 * `IPv6`. Before, every 6to4 and Teredo address got the relay's record (DB-IP's one 2002::/16
 * and 2001::/32 entries: Hurricane Electric, Los Angeles; AS6939 and a 2002::/16 listed whole
 * as Vultr cloud space in riskscore) and a NAT64 address no record at all. dnsbl keeps refusing
 * them (IPv4 only, as documented).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { parseIpInput } from '../../src/lib/ip-input.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { configuredSlots } from '../../src/products/geoip/database.js';
import { createGeoIpEngine } from '../../src/products/geoip/engine.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';
import { MAXMIND } from './geoip-fixtures.js';
import { datacenterIPv4, topIpsum, torExitIPv4 } from './riskscore-helpers.js';

/** The three forms of an IPv4 address, written here independently of the code under test. */
function forms(ipv4: string): { sixToFour: string; teredo: string; teredoOtherServer: string; nat64: string } {
  const [a, b, c, d] = ipv4.split('.').map(Number);
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  // RFC 4380: the client's address is stored with every bit inverted; the server's is in the clear.
  const hiInverted = (((a << 8) | b) ^ 0xffff).toString(16);
  const loInverted = (((c << 8) | d) ^ 0xffff).toString(16);
  return {
    sixToFour: `2002:${hi}:${lo}::1`,
    teredo: `2001:0:4136:e378:8000:63bf:${hiInverted}:${loInverted}`,
    teredoOtherServer: `2001:0:5ef5:79fd:0:1234:${hiInverted}:${loInverted}`,
    nat64: `64:ff9b::${hi}:${lo}`,
  };
}

const canonical = (ip: string) => parseIpInput(ip).ip;

async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    if (isLookupError(error)) return error.code;
    throw error;
  }
}

let lookup: Lookup;
beforeAll(() => {
  lookup = createLookup();
});

// Public addresses with a location and an AS (8.8.8.8, 1.1.1.1), one DB-IP places but no AS
// covers (93.184.216.34), and addresses on the riskscore lists.
const samples = () => ['8.8.8.8', '1.1.1.1', '93.184.216.34', torExitIPv4(), topIpsum().ip, datacenterIPv4()];

describe('geoip, timezone, asn and riskscore answer for the embedded IPv4', () => {
  it.each(['sixToFour', 'teredo', 'teredoOtherServer', 'nat64'] as const)('%s: every product, the IPv4 answer with the input as ip', async (form) => {
    for (const ipv4 of samples()) {
      const ip = forms(ipv4)[form];
      const as = canonical(ip);
      const geo4 = await lookup.geoip(ipv4);
      expect(await lookup.geoip(ip), `geoip ${ip}`).toEqual({ ...geo4, ip: as, connection: { ...geo4.connection, type: 'IPv6' } });
      expect(await lookup.timezone(ip), `timezone ${ip}`).toEqual({ ...(await lookup.timezone(ipv4)), ip: as });
      expect(await lookup.asn(ip), `asn ${ip}`).toEqual({ ...(await lookup.asn(ipv4)), ip: as });
      expect(await lookup.riskscore(ip), `riskscore ${ip}`).toEqual({ ...(await lookup.riskscore(ipv4)), ip: as });
    }
  });

  it("6to4 2002:808:808::1 is Google's 8.8.8.8, not the relay operator (Hurricane Electric AS6939)", async () => {
    const geo = await lookup.geoip('2002:808:808::1');
    expect(geo).toMatchObject({ ip: '2002:808:808::1', country: { code: 'US' }, connection: { asn: 15169, type: 'IPv6' } });
    expect(geo.city).not.toMatch(/Playa Vista/);
    expect(await lookup.asn('2002:0808:0808::1')).toMatchObject({ ip: '2002:808:808::1', asn: 15169, network: '8.8.8.0/24' });
  });

  it('Teredo: the client address (last 32 bits inverted), whatever the server', async () => {
    // RFC 4380 section 4: client 1.1.1.1 is fefe:fefe; server 65.54.227.120 is 4136:e378.
    const viaOne = await lookup.geoip('2001:0:4136:e378:8000:63bf:fefe:fefe');
    const viaOther = await lookup.geoip('2001:0:5ef5:79fd:0:1234:fefe:fefe');
    const direct = await lookup.geoip('1.1.1.1');
    for (const r of [viaOne, viaOther]) expect({ ...r, ip: '1.1.1.1', connection: { ...r.connection, type: 'IPv4' } }).toEqual(direct);
    expect((await lookup.asn('2001:0:4136:e378:8000:63bf:fefe:fefe')).asn).toBe(13335);
  });

  it('NAT64 64:ff9b::808:808 is found (it was 404 for geoip, nulls for timezone and asn)', async () => {
    expect((await lookup.geoip('64:ff9b::8.8.8.8')).connection.asn).toBe(15169);
    expect((await lookup.timezone('64:ff9b::808:808')).timezone.id).toBe('America/Los_Angeles');
    expect((await lookup.asn('64:ff9b::808:808')).network).toBe('8.8.8.0/24');
  });

  it('riskscore: a 6to4 address is judged by its IPv4, not by a list that holds all of 2002::/16', async () => {
    // 93.184.216.34 is on no list; the bundled Vultr list has 2002::/16 whole.
    const clean = await lookup.riskscore('2002:5db8:d822::1');
    expect(clean.intelligence.verdict).toBe('clean');
    expect(clean.intelligence.flags.is_hosting).toBe(false);
    expect(clean.network.asn).toBeNull();
    // A Tor exit behind 6to4, Teredo or NAT64 is still the Tor exit.
    const tor = forms(torExitIPv4());
    for (const ip of [tor.sixToFour, tor.teredo, tor.nat64]) expect((await lookup.riskscore(ip)).intelligence.flags.is_tor, ip).toBe(true);
  });

  it('the other IPv6 addresses are looked up as themselves (no embedded IPv4 read)', async () => {
    expect(await lookup.asn('2606:4700:4700::1111')).toMatchObject({ asn: 13335 });
    // 2001:4860::/32 is not Teredo (2001:0::/32 only): Google's own IPv6 network.
    expect((await lookup.asn('2001:4860:4860::8888')).network).not.toMatch(/\./);
  });

  it('an IPv4-only geoip file answers 6to4, Teredo and NAT64 addresses (it had nothing for IPv6)', () => {
    const ipv4File = configuredSlots(undefined).slots.find((s) => s.role === 'ipv4')!.path;
    const engine = createGeoIpEngine({ options: { databases: { ipv4: ipv4File }, asn: false, watch: false }, dns: () => null as never, engine: () => null });
    try {
      const direct = engine.locate(engine.prepare('8.8.8.8'));
      expect(direct).not.toBeNull();
      for (const ip of Object.values(forms('8.8.8.8'))) expect(engine.locate(engine.prepare(ip)), ip).toEqual(direct);
    } finally {
      engine.close();
    }
  });

  // MaxMind DB files alias 2002::/16 and 2001::/32 to their IPv4 tree, but by the bits after the
  // prefix: 6to4's IPv4, and for Teredo the *server's* address (65.54.227.120 here, not in the
  // test file: 404 before). The client's address is the one that says where the host is.
  it("a MaxMind file: 6to4, Teredo (the client's address) and NAT64 answer as the IPv4 does", async () => {
    const maxmind = createLookup({ geoip: { database: MAXMIND.city, asn: false, watch: false } });
    const direct = await maxmind.geoip('81.2.69.142');
    for (const ip of Object.values(forms('81.2.69.142'))) {
      const r = await maxmind.geoip(ip);
      expect({ ...r, ip: direct.ip, connection: { ...r.connection, type: 'IPv4' } }, ip).toEqual(direct);
    }
  });

  it('routability still follows the embedded IPv4: private inside is 422 everywhere', async () => {
    for (const ip of Object.values(forms('192.168.1.1'))) {
      for (const product of ['geoip', 'timezone', 'asn', 'riskscore'] as const)
        expect(await codeOf(lookup[product](ip)), `${product} ${ip}`).toBe('ip_not_routable');
    }
  });
});

describe('dnsbl keeps checking IPv4 text only', () => {
  it('refuses 6to4, Teredo and NAT64 addresses with 422, as any IPv6 address', async () => {
    for (const ip of Object.values(forms('8.8.8.8'))) expect(await codeOf(lookup.dnsbl(ip)), ip).toBe('ip_not_routable');
  });
});

describe('the asn DNS source is asked about the embedded IPv4', () => {
  const ZONE4 = 'origin.asn.cymru.test';
  const ZONE6 = 'origin6.asn.cymru.test';
  let server: DnsTestServer;
  beforeAll(async () => {
    server = await startDnsServer({
      zone: { [`8.8.8.8.${ZONE4}`]: [{ type: 'TXT', data: '15169 | 8.8.8.0/24 | US | arin | 2023-12-28', ttl: 600 }] },
    });
  });
  afterAll(() => server.close());

  it('6to4, Teredo, NAT64: the IPv4 name, its prefix, country and registry', async () => {
    const withDns = createLookup({
      dns: { servers: [server.address], timeouts: { totalMs: 300 }, attempts: 1 },
      asn: { cymru: { zone: ZONE4, zone6: ZONE6 } },
    });
    for (const ip of Object.values(forms('8.8.8.8'))) {
      expect(await withDns.asn(ip), ip).toMatchObject({ ip: canonical(ip), asn: 15169, network: '8.8.8.0/24', country_code: 'US', registry: 'arin' });
    }
  });
});

describe('riskscore upstream is asked about the embedded IPv4', () => {
  let server: HttpFixture;
  beforeAll(async () => {
    const body = JSON.parse(readFileSync(new URL('../fixtures/riskscore/ipinfo-8.8.8.8.json', import.meta.url), 'utf8'));
    server = await startHttpFixture({ '/ipinfo/8.8.8.8': respond.json(body) });
  });
  afterAll(() => server.close());

  it('ipinfo gets /8.8.8.8 for 2002:808:808::1; the answer keeps the input as ip', async () => {
    const upstream = createLookup({ riskscore: { provider: 'ipinfo', url: `${server.url}/ipinfo`, key: 'sekret-key-0123456789' } });
    const r = await upstream.riskscore('2002:808:808::1');
    expect(r).toMatchObject({ ip: '2002:808:808::1', provider: 'ipinfo', location: { country: { code: 'US' } } });
    expect(server.hits.get('/ipinfo/8.8.8.8')).toBe(1);
  });
});
