/**
 * geoip's `lazy` option (what `seclookup lookup geoip` uses): each file is read by the first
 * lookup that needs it, so an IPv4 lookup never reads the IPv6 file, with the same answers as
 * an engine that read both at start. A file that is not there still fails at start; one that is
 * there but does not read (the asnDatabase file included) fails the lookup that reads it.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createLookup } from '../../src/lookup.js';
import { createGeoIpEngine, type GeoIpEngine } from '../../src/products/geoip/engine.js';
import type { GeoIpEngineOptions } from '../../src/products/geoip/types.js';
import { createApiStack } from '../api/harness.js';
import { MAXMIND, sourceNetworks } from './geoip-fixtures.js';
import { thrown } from '../thrown.js';

const temp = mkdtempSync(join(tmpdir(), 'seclookup-geoip-lazy-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Separate copies per family, so which one is read can be told apart. */
const IPV4 = join(temp, 'v4.mmdb');
const IPV6 = join(temp, 'v6.mmdb');
copyFileSync(MAXMIND.city, IPV4);
copyFileSync(MAXMIND.city, IPV6);
/** Not an MMDB file: reading it fails with dataset_invalid. */
const NOT_MMDB = join(temp, 'not-a-database.mmdb');
writeFileSync(NOT_MMDB, 'this is not a MaxMind database\n');

function engine(options: GeoIpEngineOptions): GeoIpEngine {
  return createGeoIpEngine({
    options: { watch: false, asn: false, ...options },
    dns: () => {
      throw new Error('no DNS here');
    },
    engine: () => null,
  });
}

function answer(geoip: GeoIpEngine, ip: string): unknown {
  try {
    const outcome = geoip.lookup(geoip.prepare(ip));
    return 'result' in outcome ? outcome.result : outcome;
  } catch (error) {
    return { thrown: (error as { code?: string }).code };
  }
}

describe('geoip lazy: a file is read by the first lookup that needs it', () => {
  it('an IPv4 lookup never reads the IPv6 file (a broken one fails an eager start, not a lazy IPv4 answer)', () => {
    const pair = { databases: { ipv4: IPV4, ipv6: NOT_MMDB } };
    const eagerError = thrown(() => engine(pair));
    expect(isSeclookupError(eagerError, 'dataset_invalid')).toBe(true);
    expect(eagerError.message).toContain(NOT_MMDB);

    const lazy = engine({ ...pair, lazy: true });
    const reference = engine({ databases: { ipv4: IPV4, ipv6: IPV6 } });
    expect(answer(lazy, '81.2.69.142')).toMatchObject({ city: 'London', country: { code: 'GB' } });
    expect(answer(lazy, '81.2.69.142')).toEqual(answer(reference, '81.2.69.142'));
    // The first IPv6 lookup reads the IPv6 file, and says what is wrong with it.
    const v6Error = thrown(() => lazy.lookup(lazy.prepare('2001:218::1')));
    expect(isSeclookupError(v6Error, 'dataset_invalid')).toBe(true);
    expect(v6Error.message).toContain(NOT_MMDB);
  });

  it('the same answers, fetchedAt, provider and info as an engine that read both files at start', () => {
    const options = { databases: { ipv4: IPV4, ipv6: IPV6 } };
    const [eager, lazy] = [engine(options), engine({ ...options, lazy: true })];
    const addresses = sourceNetworks('GeoIP2-City-Test').map((network) => network.ip);
    expect(addresses.some((ip) => ip.includes(':'))).toBe(true);
    expect(addresses.some((ip) => !ip.includes(':'))).toBe(true);
    for (const ip of [...addresses, '8.8.8.8', '2001:4860:4860::8888']) {
      expect(answer(lazy, ip), ip).toEqual(answer(eager, ip));
      try {
        const [a, b] = [lazy.lookup(lazy.prepare(ip)), eager.lookup(eager.prepare(ip))];
        expect('fetchedAt' in a && a.fetchedAt).toEqual('fetchedAt' in b && b.fetchedAt);
      } catch {
        // not found in either: compared above
      }
    }
    const { loadedAt: _a, ...lazyInfo } = lazy.info();
    const { loadedAt: _b, ...eagerInfo } = eager.info();
    expect(lazyInfo).toEqual(eagerInfo);
    expect(lazy.databaseRecords).toBe(eager.databaseRecords);
  });

  it('one file for both families: read on the first lookup, IPv6 answered only when it holds IPv6', () => {
    const lazy = engine({ database: IPV4, lazy: true });
    const eager = engine({ database: IPV4 });
    for (const ip of ['81.2.69.142', '2001:218::1', '2a02:d280::1']) expect(answer(lazy, ip), ip).toEqual(answer(eager, ip));
  });

  it('a file that is not there still fails at start, naming it', () => {
    const missing = join(temp, 'no-such.mmdb');
    const error = thrown(() => engine({ databases: { ipv4: IPV4, ipv6: missing }, lazy: true }));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect(error.message).toContain(missing);
  });
});

describe('geoip lazy: an asnDatabase that does not read fails the lookup, never answers nulls', () => {
  // 81.2.69.142 is London in the City file, which has no ASN fields: the ASN file is read for it.
  // (`asn: undefined` lifts engine()'s `asn: false`: the asnDatabase file is the source.)
  const ASN_OPTIONS = { database: IPV4, asn: undefined };

  it('not an MMDB file (/etc/passwd-like): dataset_invalid naming the file, as an eager start says', () => {
    const eagerError = thrown(() => engine({ ...ASN_OPTIONS, asnDatabase: NOT_MMDB }));
    expect(isSeclookupError(eagerError, 'dataset_invalid')).toBe(true);
    const lazy = engine({ ...ASN_OPTIONS, asnDatabase: NOT_MMDB, lazy: true });
    const error = thrown(() => lazy.lookup(lazy.prepare('81.2.69.142')));
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect(error.message).toBe(eagerError.message);
    expect(error.message).toContain(`${NOT_MMDB} is not a readable MMDB database`);
  });

  it('a folder: dataset_missing naming it (cannot be read)', () => {
    const lazy = engine({ ...ASN_OPTIONS, asnDatabase: temp, lazy: true });
    const error = thrown(() => lazy.lookup(lazy.prepare('81.2.69.142')));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect(error.message).toContain(`cannot read ${temp}`);
  });

  it('through the API: a 500 without the path for the client, the file named to the operator (onError)', async () => {
    const lookup = createLookup({ geoip: { database: IPV4, asnDatabase: NOT_MMDB, lazy: true, watch: false } });
    const stack = await createApiStack({ lookup });
    const keys = await stack.keys('geoip');
    const reply = await stack.call('/v1/geoip/lookup?ip=81.2.69.142', { key: keys.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([500, 'internal_error']);
    expect(reply.raw).not.toContain(temp);
    expect(isSeclookupError(stack.errors[0]?.error, 'dataset_invalid')).toBe(true);
    expect((stack.errors[0].error as Error).message).toContain(NOT_MMDB);
  });
});
