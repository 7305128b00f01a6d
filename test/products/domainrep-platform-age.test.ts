/**
 * domainrep: the registration age of a site under a private suffix
 * (`evil-login.herokuapp.com`) is the hosting platform's, so an old platform must not lend the
 * customer's site the "registered 5 years or more" trust weight (-10). Loopback DNS and RDAP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup, type Lookup } from '../../src/lookup.js';
import type { DomainRepResult } from '../../src/products/domainrep/types.js';
import { startDnsServer, type DnsRecord, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';

const DAY = 86_400_000;
let dns: DnsTestServer;
let rdap: RdapTestServer;

const A = (address = '203.0.113.10'): DnsRecord => ({ type: 'A', address });
function registration(name: string, daysAgo: number) {
  const eventDate = new Date(Date.now() - daysAgo * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return rdapAnswer.json({ objectClassName: 'domain', ldhName: name, status: ['active'], events: [{ eventAction: 'registration', eventDate }] });
}

beforeAll(async () => {
  dns = await startDnsServer({
    zone: { 'rdap.test': [A('127.0.0.1')], 'evil-login.herokuapp.com': [A()], 'herokuapp.com': [A()], 'oldsite.com': [A()] },
    behaviours: {},
  });
  rdap = await startRdapServer({
    'herokuapp.com': registration('herokuapp.com', 15 * 365),
    'oldsite.com': registration('oldsite.com', 15 * 365),
  });
});
afterAll(async () => {
  await Promise.all([dns?.close(), rdap?.close()]);
});

function lookupWith(): Lookup {
  const base = `http://rdap.test:${new URL(rdap.url).port}/rdap/`;
  return createLookup({
    dns: { servers: [dns.address], timeouts: { connectMs: 200, totalMs: 3_000 }, attempts: 1 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: { rdapServers: { com: base }, timeouts: { connectMs: 1_000, totalMs: 3_000 }, lookupTimeoutMs: 5_000 },
  });
}
const age = (result: DomainRepResult) => result.signals.filter((s) => s.code === 'domain_age');

describe('domain_age of a site under a private suffix', () => {
  it("gives a customer's site no trust from the hosting platform's old registration, and says whose date it is", async () => {
    const result = await lookupWith().domainrep('evil-login.herokuapp.com');
    expect(age(result)).toHaveLength(1);
    expect(age(result)[0].weight).toBe(0);
    expect(age(result)[0].detail).toMatch(/^herokuapp\.com, the platform evil-login\.herokuapp\.com is hosted on, was registered 15 years ago/);
  });

  it('still counts an old registration for the registrable domain itself and for an ordinary site', async () => {
    const lookup = lookupWith();
    expect(age(await lookup.domainrep('herokuapp.com'))[0]).toMatchObject({ weight: -10, detail: expect.stringMatching(/^registered 15 years ago/) });
    expect(age(await lookup.domainrep('oldsite.com'))[0]).toMatchObject({ weight: -10 });
  });
});
