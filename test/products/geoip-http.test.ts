/**
 * geoip and timezone through the HTTP API (api.handle over a memory meter): SPEC's two GET forms
 * (IPv6 URL-encoded in the path), the envelope's cached and fetched_at, every error code
 * triggered for real (a malformed address, a private one, an address the database does not
 * know, a database that fails when read), which of them are billed, and the status route.
 */
import { describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import type { IssuedKeys } from '../../src/metering/keys.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { MAXMIND } from './geoip-fixtures.js';

const NO_ASN = { asn: false as const, watch: false };
/** DB-IP City Lite (the default) for 8.8.8.8, as the API answers it. */
const GOOGLE_DNS = {
  ip: '8.8.8.8',
  provider: 'DB-IP City Lite',
  continent: 'North America',
  country: { code: 'US', name: 'United States' },
  region: 'California',
  city: 'Mountain View',
  postal: null,
  location: { latitude: 37.422, longitude: -122.085 },
  timezone: { id: 'America/Los_Angeles' },
  connection: { isp: null, org: null, asn: null, domain: null, type: 'IPv4' },
  is_eu: false,
};

const stack = await createApiStack({ lookup: createLookup({ geoip: NO_ASN }) });
const geo = await stack.keys('geoip');
const tz = await stack.keys('timezone');

/** The subscription's quota before and after `call`, and the reply. */
async function billed(target: ApiStack, keys: IssuedKeys, path: string) {
  const quota = () => target.meter.quota(keys.subscriptionId, 10_000, Date.now()).then((q) => q.remaining);
  const before = await quota();
  const reply = await target.call(path, { key: keys.secretKey });
  return { reply, used: before! - (await quota())! };
}

describe('geoip over HTTP', () => {
  it.each([
    ['GET ?ip=', '/v1/geoip/lookup?ip=8.8.8.8'],
    ['GET /lookup/{ip}', '/v1/geoip/lookup/8.8.8.8'],
    ['GET ?ip= IPv4-mapped IPv6', `/v1/geoip/lookup?ip=${encodeURIComponent('::ffff:8.8.8.8')}`],
    ['GET /lookup/{IPv4-mapped, encoded}', `/v1/geoip/lookup/${encodeURIComponent('::ffff:8.8.8.8')}`],
  ])('%s answers the result with cached and fetched_at (the file build time), billed once', async (_form, path) => {
    const { reply, used } = await billed(stack, geo, path);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: true, request_id: reply.body.request_id, cached: true, fetched_at: '2026-06-05 13:42:02.000', ...GOOGLE_DNS });
    expect(used).toBe(1);
  });

  it('takes an IPv6 address URL-encoded in the path', async () => {
    const reply = await stack.call(`/v1/geoip/lookup/${encodeURIComponent('2a00:1450:4001::1')}`, { key: geo.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      ip: '2a00:1450:4001::1',
      country: { code: 'DE' },
      city: 'Frankfurt am Main',
      is_eu: true,
      connection: { type: 'IPv6' },
      fetched_at: '2026-06-05 13:43:16.000',
    });
  });

  it.each([
    ['no ip', '/v1/geoip/lookup', 400, 'invalid_ip'],
    ['an empty ip', '/v1/geoip/lookup?ip=', 400, 'invalid_ip'],
    ['a malformed ip', '/v1/geoip/lookup/1.2.3', 400, 'invalid_ip'],
    ['broken percent-encoding in the path', '/v1/geoip/lookup/%E0%A4%A', 400, 'invalid_ip'],
    ['a private ip', '/v1/geoip/lookup?ip=10.0.0.1', 422, 'ip_not_routable'],
    ['an IPv6 loopback in the path', `/v1/geoip/lookup/${encodeURIComponent('::1')}`, 422, 'ip_not_routable'],
    ['an address the database has no record for', `/v1/geoip/lookup/${encodeURIComponent('3ffe::1')}`, 404, 'ip_not_found'],
  ])('answers %s with %i %s, unbilled', async (_name, path, status, code) => {
    const { reply, used } = await billed(stack, geo, path);
    expect([reply.status, reply.body.error_code, reply.body.success]).toEqual([status, code, false]);
    expect(used).toBe(0);
  });

  it('answers 502 lookup_failed, unbilled, when the database fails while read', async () => {
    const broken = await createApiStack({ lookup: createLookup({ geoip: { ...NO_ASN, database: MAXMIND.brokenPointers } }) });
    const keys = await broken.keys('geoip');
    const { reply, used } = await billed(broken, keys, '/v1/geoip/lookup?ip=1.1.1.16');
    expect([reply.status, reply.body.error_code]).toEqual([502, 'lookup_failed']);
    expect(used).toBe(0);
    // A lookup failure, not a server error: nothing goes to onError.
    expect(broken.errors).toEqual([]);
  });

  it('reports database_records on the status route: the search-tree nodes of both files', async () => {
    const reply = await stack.call('/v1/geoip/status', { key: geo.publicKey });
    expect(reply.body).toMatchObject({ success: true, product: 'geoip', database_records: 14_759_036 });
    const maxmind = await createApiStack({ lookup: createLookup({ geoip: { ...NO_ASN, database: MAXMIND.city } }) });
    const keys = await maxmind.keys('geoip');
    expect((await maxmind.call('/v1/geoip/status', { key: keys.publicKey })).body).toMatchObject({ database_records: 1547 });
  });
});

describe('timezone over HTTP', () => {
  it.each([
    ['GET ?ip=', '/v1/timezone/lookup?ip=1.1.1.1', '1.1.1.1'],
    ['GET /lookup/{ip}', '/v1/timezone/lookup/1.1.1.1', '1.1.1.1'],
    ['GET /lookup/{IPv6, encoded}', `/v1/timezone/lookup/${encodeURIComponent('2a00:1450:4001::1')}`, '2a00:1450:4001::1'],
  ])('%s answers zone, offset, abbreviation, country and city, without fetched_at', async (_form, path, ip) => {
    const { reply, used } = await billed(stack, tz, path);
    expect(reply.status).toBe(200);
    const { success, request_id, cached, timezone, ...rest } = reply.body as Record<string, unknown> & { timezone: Record<string, unknown> };
    expect({ success, cached, hasRequestId: typeof request_id === 'string' }).toEqual({ success: true, cached: false, hasRequestId: true });
    expect(reply.body).not.toHaveProperty('fetched_at');
    expect(timezone.utc_offset).toMatch(/^[+-]\d{2}:\d{2}$/);
    if (ip === '1.1.1.1') {
      expect(rest).toEqual({ ip, country: { code: 'AU' }, city: 'Sydney' });
      expect(timezone.id).toBe('Australia/Sydney');
      expect(['+10:00', '+11:00']).toContain(timezone.utc_offset);
      expect(['AEST', 'AEDT']).toContain(timezone.abbreviation);
    } else {
      expect(rest).toEqual({ ip, country: { code: 'DE' }, city: 'Frankfurt am Main' });
      expect(timezone.id).toBe('Europe/Berlin');
      expect(['CET', 'CEST']).toContain(timezone.abbreviation);
    }
    expect(used).toBe(1);
  });

  it.each([
    ['no ip', '/v1/timezone/lookup', 400, 'invalid_ip'],
    ['a malformed ip', '/v1/timezone/lookup?ip=256.1.1.1', 400, 'invalid_ip'],
    ['a private ip', '/v1/timezone/lookup?ip=192.168.1.1', 422, 'ip_not_routable'],
    ['a CGNAT ip in the path', '/v1/timezone/lookup/100.64.0.1', 422, 'ip_not_routable'],
  ])('answers %s with %i %s, unbilled', async (_name, path, status, code) => {
    const { reply, used } = await billed(stack, tz, path);
    expect([reply.status, reply.body.error_code]).toEqual([status, code]);
    expect(used).toBe(0);
  });

  it('answers an address the database does not know with nulls (SPEC has no 404 for timezone), billed', async () => {
    const { reply, used } = await billed(stack, tz, `/v1/timezone/lookup/${encodeURIComponent('3ffe::1')}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ ip: '3ffe::1', timezone: { id: null, utc_offset: null, abbreviation: null }, country: { code: null }, city: null });
    expect(used).toBe(1);
  });

  it('answers 502 lookup_failed, unbilled, when the database fails while read', async () => {
    const broken = await createApiStack({ lookup: createLookup({ geoip: { ...NO_ASN, database: MAXMIND.brokenPointers } }) });
    const keys = await broken.keys('timezone');
    const { reply, used } = await billed(broken, keys, '/v1/timezone/lookup?ip=1.1.1.16');
    expect([reply.status, reply.body.error_code]).toEqual([502, 'lookup_failed']);
    expect(used).toBe(0);
  });

  it('has no database_records on its status route', async () => {
    const reply = await stack.call('/v1/timezone/status', { key: tz.publicKey });
    expect(reply.body).toMatchObject({ success: true, product: 'timezone' });
    expect(reply.body).not.toHaveProperty('database_records');
  });
});
