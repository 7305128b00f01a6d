/**
 * An RDAP server's redirects and registrar links are input too. A registry redirect whose
 * Location is not a URL, or not an http(s) one, or that loops, fails the whois lookup with 502
 * `lookup_failed` (never a 500), and domainrep scores without its domain_age signal. A registrar
 * link that is not a URL is skipped, one that leads to such a redirect is a failed registrar
 * step: either way whois answers the registry's facts, and domainrep scores them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup, type LookupOptions } from '../../src/lookup.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { rdapAnswer, startRdapServer, type RdapHandler, type RdapTestServer } from '../servers/rdap-server.js';

let rdap: RdapTestServer;
let dns: DnsTestServer;
let stack: ApiStack;
let whoisKey: string;
let domainrepKey: string;

/** A thin registry answer (no registrar, no dates) whose registrar link is `href`. */
function thinWithLink(name: string, href: string): RdapHandler {
  return rdapAnswer.json({
    objectClassName: 'domain',
    ldhName: name,
    status: ['active'],
    links: [{ rel: 'related', type: 'application/rdap+json', href }],
  });
}

/** Registry answers that redirect badly, by the name that answers with them. */
const REDIRECTS: Record<string, (base: string) => RdapHandler> = {
  'bad-ipv6-redirect.com': () => rdapAnswer.redirect('http://[::1/rdap/'),
  'no-host-redirect.com': () => rdapAnswer.redirect('http://'),
  'bad-port-redirect.com': () => rdapAnswer.redirect('http://127.0.0.1:99999/rdap/'),
  'space-redirect.com': () => rdapAnswer.redirect('http://a b/'),
  'ftp-redirect.com': () => rdapAnswer.redirect('ftp://127.0.0.1/rdap/'),
  'javascript-redirect.com': () => rdapAnswer.redirect('javascript:alert(1)'),
  'loop-redirect.com': () => rdapAnswer.redirect('/rdap/domain/loop-redirect.com'),
};

/** Thin registry answers whose registrar link is hostile. */
const LINKS: Record<string, (base: string) => RdapHandler> = {
  'bad-link.com': () => thinWithLink('bad-link.com', 'http://[zz/domain/bad-link.com'),
  'bad-port-link.com': () => thinWithLink('bad-port-link.com', 'https://127.0.0.1:70000/domain/bad-port-link.com'),
  'percent-host-link.com': () => thinWithLink('percent-host-link.com', 'http://%zz/domain/percent-host-link.com'),
  'redirecting-link.com': (base) => thinWithLink('redirecting-link.com', `${base}domain/to-bad-location.com`),
};

beforeAll(async () => {
  rdap = await startRdapServer();
  for (const [name, handler] of Object.entries({ ...REDIRECTS, ...LINKS })) rdap.set(name, handler(rdap.base));
  rdap.set('to-bad-location.com', rdapAnswer.redirect('http://[::1/'));
  const zone = Object.fromEntries([...Object.keys(REDIRECTS), ...Object.keys(LINKS)].map((name) => [name, [{ type: 'A' as const, address: '203.0.113.10' }]]));
  dns = await startDnsServer({ zone });
  const options: LookupOptions = {
    dns: { servers: [dns.address], timeouts: { connectMs: 1_000, totalMs: 3_000 }, attempts: 1 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: { rdapServers: { com: rdap.base }, timeouts: { connectMs: 1_000, totalMs: 3_000 }, lookupTimeoutMs: 5_000 },
    domainrep: { zones: [] },
  };
  stack = await createApiStack({ lookup: createLookup(options) });
  whoisKey = (await stack.keys('whois', { plan: 'enterprise' })).secretKey;
  domainrepKey = (await stack.keys('domainrep', { plan: 'enterprise' })).secretKey;
});

afterAll(async () => {
  await Promise.all([rdap?.close(), dns?.close()]);
});

describe('hostile RDAP redirects and registrar links', () => {
  it.each(Object.keys(REDIRECTS))('whois answers 502 lookup_failed for %s, and reports no internal error', async (name) => {
    const errorsBefore = stack.errors.length;
    const reply = await stack.call(`/v1/whois/lookup/${name}`, { key: whoisKey });
    expect({ status: reply.status, code: reply.body.error_code }).toEqual({ status: 502, code: 'lookup_failed' });
    expect(stack.errors.slice(errorsBefore)).toEqual([]);
  });

  it.each(Object.keys(REDIRECTS))('domainrep scores %s without its domain_age signal', async (name) => {
    const errorsBefore = stack.errors.length;
    const reply = await stack.call(`/v1/domainrep/lookup/${name}`, { key: domainrepKey });
    expect(stack.errors.slice(errorsBefore)).toEqual([]);
    expect(reply.status).toBe(200);
    const signals = (reply.body as unknown as { signals: { code: string; detail: string; weight: number }[] }).signals;
    expect(signals.find((s) => s.code === 'domain_age')).toEqual({ code: 'domain_age', detail: expect.stringMatching(/^unavailable: whois: /), weight: 0 });
    expect(signals.find((s) => s.code === 'dns_resolution')).toEqual({ code: 'dns_resolution', detail: expect.stringContaining('resolves'), weight: 0 });
  });

  it.each(Object.keys(LINKS))('whois answers the registry facts of %s when its registrar link is hostile', async (name) => {
    const errorsBefore = stack.errors.length;
    const reply = await stack.call(`/v1/whois/lookup/${name}`, { key: whoisKey });
    expect(stack.errors.slice(errorsBefore)).toEqual([]);
    expect([reply.status, reply.body.domain, reply.body.status, reply.body.registrar, reply.body.created_at]).toEqual([200, name, ['ok'], null, null]);
  });

  it.each(Object.keys(LINKS))('domainrep scores %s with the registry facts (no creation date)', async (name) => {
    const errorsBefore = stack.errors.length;
    const reply = await stack.call(`/v1/domainrep/lookup/${name}`, { key: domainrepKey });
    expect(stack.errors.slice(errorsBefore)).toEqual([]);
    expect(reply.status).toBe(200);
    const signals = (reply.body as unknown as { signals: { code: string; detail: string; weight: number }[] }).signals;
    expect(signals.find((s) => s.code === 'domain_age')?.detail).not.toMatch(/^unavailable/);
  });
});
