/**
 * dnsbl engine lookups answered from its result cache (string in, result out: prepare, cache
 * hit, copy), over 4,096 public addresses and three zones served by the loopback DNS server
 * of the tests, a quarter of the addresses listed somewhere. Warmed first, then measured
 * synchronously: with the in-process cache a hit never makes a promise.
 */
import { isPromise } from '../../src/lib/outcome.js';
import { createLookup } from '../../src/lookup.js';
import { startDnsServer, type Zone } from '../../test/servers/dns-server.js';
import { absoluteRow, measure, seededRandom, type BenchRow } from '../harness.js';
import type { DnsblZone } from '../../src/products/dnsbl/types.js';

const SUITE = 'dnsbl engine';
const ADDRESSES = 4_096; // a power of two: the index is a mask

const ZONES: DnsblZone[] = ['zen', 'spam', 'extra'].map((label) => ({
  zone: `${label}.bench.test`,
  name: `Bench ${label}`,
  listing_codes: [
    { code: '127.0.0.2', meaning: 'listed' },
    { code: '127.0.0.4', meaning: 'listed (exploited host)' },
  ],
}));

/** Random public IPv4 addresses (first octet 11 to 99: no private, loopback or CGNAT ranges). */
function publicAddresses(count: number, rand: () => number): string[] {
  const out = new Set<string>();
  while (out.size < count) out.add([11 + Math.floor(rand() * 89), ...Array.from({ length: 3 }, () => Math.floor(rand() * 256))].join('.'));
  return [...out];
}

export async function run(): Promise<BenchRow[]> {
  const ips = publicAddresses(ADDRESSES, seededRandom(20261123));
  const zone: Zone = {};
  ips.forEach((ip, i) => {
    if (i % 4 !== 0) return;
    const reversed = ip.split('.').reverse().join('.');
    zone[`${reversed}.${ZONES[i % 3].zone}`] = [{ type: 'A', address: i % 8 === 0 ? '127.0.0.2' : '127.0.0.4', ttl: 3_600 }];
  });
  const server = await startDnsServer({ zone, negativeTtl: 3_600, defaultTtl: 3_600 });
  try {
    const engine = createLookup({ dns: { servers: [server.address] }, dnsbl: { zones: ZONES } }).engine('dnsbl');
    for (const ip of ips) await engine.lookup(engine.prepare(ip));

    let misses = 0;
    const cached = measure(
      (i) => {
        const outcome = engine.lookup(engine.prepare(ips[i & (ADDRESSES - 1)]));
        if (isPromise(outcome) || !outcome.cached) misses++;
        return outcome;
      },
      { durationMs: 1_000, batch: 1_000 },
    );
    if (misses > 0) throw new Error(`cached dnsbl bench is not cached: ${misses} lookups missed the cache`);
    return [
      absoluteRow(
        {
          suite: SUITE,
          case: `cached lookups (string in, result out): ${ADDRESSES.toLocaleString('en-US')} public IPv4, 3 zones, 25% listed`,
          opsPerSec: cached,
          target: '>= 1,000,000/s',
        },
        1_000_000,
      ),
    ];
  } finally {
    await server.close();
  }
}
