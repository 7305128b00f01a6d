/**
 * asn's HTTP forms through api.handle (SPEC: GET ?ip= and GET /lookup/{ip}, IPv6 URL-encoded),
 * its input errors (400 invalid_ip, 422 ip_not_routable, neither billed) and its status route
 * with database_records, over the default data and over the MaxMind test database.
 */
import { describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import type { AsnEngine } from '../../src/products/asn/types.js';
import { createApiStack } from '../api/harness.js';

const stack = await createApiStack();
const keys = await stack.keys('asn');
const CLOUDFLARE = { asn: 13335, as_org: 'Cloudflare, Inc.', country_code: null, registry: null, allocated: null, network_type: 'hosting' };

describe('asn lookup forms', () => {
  it.each([
    ['GET ?ip=', '/v1/asn/lookup?ip=1.1.1.1', '1.1.1.1', '1.1.1.0/24'],
    ['GET /lookup/{ip}', '/v1/asn/lookup/1.1.1.1', '1.1.1.1', '1.1.1.0/24'],
    ['GET /lookup/{IPv6, encoded}', `/v1/asn/lookup/${encodeURIComponent('2606:4700:4700::1111')}`, '2606:4700:4700::1111', '2606:4700:4700::/48'],
    [
      'GET ?ip= IPv6, upper case and unabbreviated',
      `/v1/asn/lookup?ip=${encodeURIComponent('2606:4700:4700:0:0:0:0:1111'.toUpperCase())}`,
      '2606:4700:4700::1111',
      '2606:4700:4700::/48',
    ],
    ['GET ?ip= IPv4-mapped IPv6', `/v1/asn/lookup?ip=${encodeURIComponent('::ffff:1.1.1.1')}`, '1.1.1.1', '1.1.1.0/24'],
    ['GET ?ip= with surrounding spaces', '/v1/asn/lookup?ip=%201.1.1.1%20', '1.1.1.1', '1.1.1.0/24'],
  ])('%s answers Cloudflare with fetched_at', async (_form, path, ip, network) => {
    const reply = await stack.call(path, { key: keys.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      success: true,
      request_id: reply.body.request_id,
      cached: false,
      fetched_at: '2026-06-17 19:00:00.000',
      ip,
      network,
      ...CLOUDFLARE,
    });
  });

  it('answers a public address without a record with nulls and network_type unknown', async () => {
    const reply = await stack.call('/v1/asn/lookup/1.0.1.1', { key: keys.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      success: true,
      ip: '1.0.1.1',
      asn: null,
      as_org: null,
      network: null,
      country_code: null,
      registry: null,
      allocated: null,
      network_type: 'unknown',
    });
  });

  it.each([
    ['no ip', '/v1/asn/lookup', 400, 'invalid_ip'],
    ['an empty ip', '/v1/asn/lookup?ip=', 400, 'invalid_ip'],
    ['a leading zero (octal to some parsers)', '/v1/asn/lookup?ip=010.1.1.1', 400, 'invalid_ip'],
    ['a shortened IPv4', '/v1/asn/lookup/1.2.3', 400, 'invalid_ip'],
    ['a bracketed IPv6', `/v1/asn/lookup/${encodeURIComponent('[::1]')}`, 400, 'invalid_ip'],
    ['an IPv6 zone id', '/v1/asn/lookup/fe80::1%25eth0', 400, 'invalid_ip'],
    ['a CIDR', `/v1/asn/lookup?ip=${encodeURIComponent('1.1.1.0/24')}`, 400, 'invalid_ip'],
    ['an integer', '/v1/asn/lookup?ip=16843009', 400, 'invalid_ip'],
    ['broken percent-encoding in the path', '/v1/asn/lookup/1.1.1.1%E0%A4%A', 400, 'invalid_ip'],
    ['a private ip', '/v1/asn/lookup?ip=10.0.0.1', 422, 'ip_not_routable'],
    ['the IPv6 loopback', `/v1/asn/lookup/${encodeURIComponent('::1')}`, 422, 'ip_not_routable'],
    ['CGNAT', '/v1/asn/lookup/100.64.0.1', 422, 'ip_not_routable'],
    ['documentation space', `/v1/asn/lookup?ip=${encodeURIComponent('2001:db8::1')}`, 422, 'ip_not_routable'],
  ])('answers %s with %i %s, unbilled', async (_name, path, status, code) => {
    const before = await stack.meter.quota(keys.subscriptionId, 10_000, Date.now());
    const reply = await stack.call(path, { key: keys.secretKey });
    expect([reply.status, reply.body.error_code, reply.body.success]).toEqual([status, code, false]);
    expect(await stack.meter.quota(keys.subscriptionId, 10_000, Date.now())).toEqual(before);
  });

  it('bills a successful lookup once', async () => {
    const before = await stack.meter.quota(keys.subscriptionId, 10_000, Date.now());
    expect((await stack.call('/v1/asn/lookup?ip=8.8.8.8', { key: keys.secretKey })).status).toBe(200);
    const after = await stack.meter.quota(keys.subscriptionId, 10_000, Date.now());
    expect(after.remaining).toBe(before.remaining! - 1);
  });
});

describe('asn status', () => {
  it('reports database_records: the ranges of the npm data', async () => {
    const reply = await stack.call('/v1/asn/status', { key: keys.publicKey });
    const engine = stack.lookup.engine('asn') as AsnEngine;
    expect(engine.databaseRecords).toBeGreaterThan(500_000);
    expect(reply.body).toMatchObject({ success: true, product: 'asn', status: 'active', database_records: engine.databaseRecords });
  });

  it('reports the networks of a MaxMind database', async () => {
    const mmdb = await createApiStack({
      lookup: createLookup({ asn: { database: new URL('../fixtures/maxmind/GeoLite2-ASN-Test.mmdb', import.meta.url).pathname } }),
    });
    const mmdbKeys = await mmdb.keys('asn');
    expect((await mmdb.call('/v1/asn/status', { key: mmdbKeys.publicKey })).body).toMatchObject({ product: 'asn', database_records: 412 });
    const reply = await mmdb.call(`/v1/asn/lookup/${encodeURIComponent('2600:7000::1')}`, { key: mmdbKeys.secretKey });
    expect(reply.body).toMatchObject({ asn: 6939, as_org: 'Hurricane Electric, Inc.', network: '2600:7000::/24', fetched_at: '2026-02-04 22:49:29.000' });
  });
});
