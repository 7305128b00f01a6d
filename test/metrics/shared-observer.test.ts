/**
 * One metrics set given to several lookups (the `watchDatasets` case, or an app with a lookup per
 * tenant): each upstream call is counted once, against a real loopback DNS server's own count.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { createMetrics } from '../../src/metrics/index.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { sample } from './scrape.js';

let dns: DnsTestServer;
beforeAll(async () => {
  dns = await startDnsServer({
    zone: { 'example.com': [{ type: 'TXT', data: 'v=spf1 -all' }], '_dmarc.example.com': [{ type: 'TXT', data: 'v=DMARC1; p=reject' }] },
  });
});
afterAll(async () => dns?.close());

it('two lookups sharing one metrics observer count each upstream call once, and the last close stops the counting', async () => {
  const metrics = createMetrics();
  const dnsOptions = { servers: [dns.address], attempts: 1 };
  const a = createLookup({ observer: metrics.observer, dns: dnsOptions });
  const b = createLookup({ observer: metrics.observer, dns: dnsOptions });
  dns.resetCounts();
  await a.emailauth('example.com');
  expect(dns.total()).toBeGreaterThan(0);
  expect(sample(await metrics.metrics(), 'seclookup_upstream_requests_total', { kind: 'dns' })).toBe(dns.total());
  // One lookup closed: the other still counts, once.
  await a.close();
  await b.emailauth('second-domain.com');
  expect(sample(await metrics.metrics(), 'seclookup_upstream_requests_total', { kind: 'dns' })).toBe(dns.total());
  // Both closed: a third lookup without the observer is not counted.
  await b.close();
  const before = dns.total();
  const c = createLookup({ dns: dnsOptions });
  await c.emailauth('third-domain.com');
  expect(dns.total()).toBeGreaterThan(before);
  expect(sample(await metrics.metrics(), 'seclookup_upstream_requests_total', { kind: 'dns' })).toBe(before);
  await c.close();
});
