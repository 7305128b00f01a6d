/**
 * `seclookup lookup domainrep` as an operator runs it, against loopback servers: --dns names the
 * test DNS server (the domain, its mail records and the blocklist zones), --allow-private-targets
 * lets whois reach the loopback RDAP server named by --whois-rdap-servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { runCli } from './harness.js';

let dns: DnsTestServer;
let rdap: RdapTestServer;

beforeAll(async () => {
  dns = await startDnsServer({
    zone: {
      'rdap.registry.test': [{ type: 'A', address: '127.0.0.1' }],
      'example.com': [
        { type: 'A', address: '203.0.113.10' },
        { type: 'TXT', data: 'v=spf1 -all' },
      ],
      '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }],
      'example.com.dbl.spamhaus.org': [{ type: 'A', address: '127.0.1.2' }],
    },
  });
  rdap = await startRdapServer({ 'example.com': rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json') });
});
afterAll(async () => {
  await Promise.all([dns?.close(), rdap?.close()]);
});

const loopback = () => [
  '--dns',
  dns.address,
  '--allow-private-targets',
  '127.0.0.0/8',
  '--whois-rdap-servers',
  `com=http://rdap.registry.test:${new URL(rdap.url).port}/rdap/`,
];

describe('seclookup lookup domainrep', () => {
  it('scores example.com against the loopback servers and prints the result', async () => {
    const result = await runCli(['lookup', 'domainrep', 'example.com', ...loopback()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body).toMatchObject({ domain: 'example.com', score: 25, level: 'low' }); // DBL 35, registered 1997: -10
    expect(body.signals.slice(0, 4)).toEqual([
      { code: 'domain_age', detail: expect.stringMatching(/^registered \d+ years ago \(1997-06-03\)$/), weight: -10 },
      { code: 'email_auth', detail: 'example.com publishes SPF and DMARC (emailauth score 75)', weight: 0 },
      { code: 'dns_resolution', detail: 'example.com resolves (A)', weight: 0 },
      { code: 'blocklist', detail: 'listed on Spamhaus DBL (dbl.spamhaus.org): 127.0.1.2 low-reputation domain (spam)', weight: 35 },
    ]);
  });

  it('exits 1 with invalid_domain on stderr for an IP address', async () => {
    const result = await runCli(['lookup', 'domainrep', '192.0.2.1']);
    expect([result.code, JSON.parse(result.stderr).error_code]).toEqual([1, 'invalid_domain']);
    const help = await runCli(['lookup', '--help']);
    expect(help.stdout).toContain('seclookup lookup domainrep example.com');
  });
});
