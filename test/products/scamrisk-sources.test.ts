/**
 * scamrisk's engine-backed sources against real engines: riskscore, asn and geoip on the bundled
 * data (no network); emailval, emailauth and dnsbl against a loopback DNS server; whois against a
 * loopback RDAP server. The identifiers come from the data files, and each signal is checked with
 * the source that produced it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { createMemoryReportStore } from '../../src/products/scamrisk/reports.js';
import { FROZEN_NOW } from '../api/harness.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { datacenterIPv4, torExitIPv4 } from './riskscore-helpers.js';

let dns: DnsTestServer;
let lookup: Lookup;
beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      'shop.test': [{ type: 'MX', priority: 10, exchange: 'mx.shop.test' }],
      'mx.shop.test': [{ type: 'A', address: '192.0.2.25' }],
    },
  });
  lookup = createLookup({
    now: () => FROZEN_NOW,
    dns: { servers: [dns.address], timeouts: { connectMs: 300, totalMs: 500 }, attempts: 1 },
    // whois, emailauth and dnsbl would ask real registries and blocklists: left out here.
    scamrisk: { disable: ['whois', 'emailauth', 'dnsbl'], reports: createMemoryReportStore({ now: () => FROZEN_NOW }) },
  });
});
afterAll(() => dns.close());

const codes = (result: { signals: { code: string; source?: string }[] }) => result.signals.map((s) => `${s.source}:${s.code}`);

describe('IP identifiers through riskscore and asn', () => {
  it('a Tor exit from the bundled list gets tor_exit from riskscore', async () => {
    const result = await lookup.scamrisk({ type: 'ip', value: torExitIPv4() });
    expect(codes(result)).toContain('riskscore:tor_exit');
    expect(result.assessment.coverage.sources_responded).toBeGreaterThanOrEqual(3); // lists, reports, asn, riskscore
    expect(result.assessment.risk_level).not.toBe('minimal');
  });

  it('a datacenter address gets hosting_network from riskscore', async () => {
    expect((await lookup.riskscore(datacenterIPv4())).intelligence.flags.is_hosting).toBe(true);
    const dc = await lookup.scamrisk({ ip: datacenterIPv4() });
    expect(codes(dc)).toContain('riskscore:hosting_network');
    expect(dc.assessment.risk_score).toBeGreaterThan(0);
  });

  it('an address on no list gets no riskscore signal', async () => {
    const plain = await lookup.scamrisk({ ip: '84.128.0.1' }); // Deutsche Telekom, a residential ISP
    expect((await lookup.riskscore('84.128.0.1')).intelligence.verdict).toBe('clean');
    expect(codes(plain).filter((c) => c.startsWith('riskscore:'))).toEqual([]);
  });
});

describe('domain and IP identifiers through whois, emailauth and dnsbl', () => {
  const DAY = 86_400_000;
  let zoneDns: DnsTestServer;
  let rdap: RdapTestServer;
  let networked: Lookup;
  const registered = (name: string, daysAgo: number) =>
    rdapAnswer.json({
      objectClassName: 'domain',
      ldhName: name,
      events: [{ eventAction: 'registration', eventDate: new Date(FROZEN_NOW - daysAgo * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z') }],
    });
  beforeAll(async () => {
    rdap = await startRdapServer({ 'fresh-shop.com': registered('fresh-shop.com', 5), 'old-shop.com': registered('old-shop.com', 4000) });
    zoneDns = await startDnsServer({
      zone: {
        'rdap.test': [{ type: 'A', address: '127.0.0.1' }],
        'old-shop.com': [{ type: 'TXT', data: 'v=spf1 -all' }],
        '_dmarc.old-shop.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
        // 84.128.0.1 on Spamhaus ZEN (SBL, a documented code): the reversed name under the zone.
        '1.0.128.84.zen.spamhaus.org': [{ type: 'A', address: '127.0.0.2' }],
      },
    });
    networked = createLookup({
      now: () => FROZEN_NOW,
      dns: { servers: [zoneDns.address], timeouts: { connectMs: 300, totalMs: 500 }, attempts: 1 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { com: `http://rdap.test:${new URL(rdap.url).port}/rdap/` }, timeouts: { connectMs: 300, totalMs: 600 } },
      scamrisk: { reports: createMemoryReportStore({ now: () => FROZEN_NOW }) },
    });
  });
  afterAll(async () => {
    await zoneDns.close();
    await rdap.close();
  });

  it('a domain registered 5 days ago gets young_domain; an address there, with no SPF or DMARC, missing_email_auth too', async () => {
    const domain = await networked.scamrisk({ domain: 'fresh-shop.com' });
    expect(codes(domain)).toContain('whois:young_domain');
    expect(domain.signals.find((s) => s.code === 'young_domain')).toMatchObject({ detail: 'registered 5 days ago' });
    const email = await networked.scamrisk({ email: 'sales@fresh-shop.com' });
    expect(codes(email)).toEqual(expect.arrayContaining(['whois:young_domain', 'emailauth:missing_email_auth']));
  });

  it('an old domain with SPF and DMARC gets neither', async () => {
    for (const request of [{ domain: 'old-shop.com' }, { email: 'sales@old-shop.com' }]) {
      const result = await networked.scamrisk(request);
      expect(codes(result).filter((c) => c.startsWith('whois:') || c.startsWith('emailauth:'))).toEqual([]);
    }
  });

  it('an address a DNSBL lists gets dnsbl_listed', async () => {
    const result = await networked.scamrisk({ ip: '84.128.0.1' });
    expect(codes(result)).toContain('dnsbl:dnsbl_listed');
  });
});

describe('e-mail identifiers through emailval', () => {
  it('a disposable domain with no mail server gets disposable_email and no_mx', async () => {
    const result = await lookup.scamrisk({ email: 'someone@mailinator.com' });
    expect(codes(result)).toEqual(expect.arrayContaining(['emailval:disposable_email', 'emailval:no_mx']));
  });

  it('an ordinary address with an MX gets neither', async () => {
    const result = await lookup.scamrisk({ email: 'jane@shop.test' });
    expect(codes(result).filter((c) => c.startsWith('emailval:'))).toEqual([]);
    expect(result.assessment.recommendation).toBe('allow');
  });
});
