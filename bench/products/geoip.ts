/**
 * geoip engine lookups (string in, result out: parse, routable check, tree walk, record, result)
 * against maxmind's raw `Reader.get` on the same DB-IP City Lite files for the same random
 * public addresses (90% IPv4, 10% IPv6, each family to its own file for both). Target: the
 * engine at least 0.8x the raw reader, in two workloads:
 *
 * - warm: 1,024 addresses over and over (the engine's decoded-record cache holds them);
 * - cold: 100,000 distinct addresses, each looked up once per round, a fresh engine per round
 *   (addresses are distinct, records less so: a city's record serves many networks), and the
 *   same with the engine's record memo off, where every lookup decodes its record.
 *
 * The raw reader is `new Reader(buffer)` as documented, without a cache of decoded records
 * (maxmind's `open()` would add a 10,000-entry LRU).
 */
import { readFileSync } from 'node:fs';
import { Reader, type Response } from 'maxmind';
import { isPublicIPv4Number } from '../../src/lib/ip.js';
import { formatIp, isPublicIp, parseIp } from '../../src/lib/ip.js';
import { compare, ratioRow, seededRandom, type BenchRow } from '../harness.js';
import { readyJsonRow } from '../json-row.js';
import { configuredSlots } from '../../src/products/geoip/database.js';
import { createGeoIpEngine, type GeoIpEngine } from '../../src/products/geoip/engine.js';

const SUITE = 'geoip engine';
const WARM_SIZE = 1024; // a power of two: the index is a mask
const COLD_SIZE = 100_000;

function newEngine(cacheSize?: number): GeoIpEngine {
  return createGeoIpEngine({
    options: { asn: false, watch: false, cacheSize },
    dns: () => {
      throw new Error('no DNS in this bench');
    },
    engine: () => null,
  });
}

/** Random public addresses both files have a record for, 90% IPv4. */
export function publicAddresses(count: number, seed: number, has: (ip: string) => boolean): string[] {
  const rand = seededRandom(seed);
  const byte = () => Math.floor(rand() * 256);
  const out: string[] = [];
  const seen = new Set<string>();
  while (out.length < count) {
    let ip: string;
    if (out.length % 10 === 9) {
      const address = parseIp(
        `2${(Math.floor(rand() * 0xfff) + 0x001).toString(16).padStart(3, '0')}:${byte().toString(16)}${byte().toString(16)}::${byte().toString(16)}`,
      )!;
      if (!isPublicIp(address)) continue;
      ip = formatIp(address);
    } else {
      const value = ((byte() << 24) >>> 0) + (byte() << 16) + (byte() << 8) + byte();
      if (!isPublicIPv4Number(value)) continue;
      ip = `${value >>> 24}.${(value >>> 16) & 0xff}.${(value >>> 8) & 0xff}.${value & 0xff}`;
    }
    if (seen.has(ip) || !has(ip)) continue;
    seen.add(ip);
    out.push(ip);
  }
  return out;
}

/** Calls per second of `fn` over every item once. */
function onePass(items: readonly string[], fn: (ip: string) => unknown): number {
  let sink: unknown;
  const start = process.hrtime.bigint();
  for (const ip of items) sink = fn(ip);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (sink === Symbol.for('never')) console.log(sink);
  return items.length / seconds;
}

export async function run(): Promise<BenchRow[]> {
  const { slots } = configuredSlots(undefined);
  const raw4 = new Reader<Response>(readFileSync(slots.find((s) => s.role === 'ipv4')!.path));
  const raw6 = new Reader<Response>(readFileSync(slots.find((s) => s.role === 'ipv6')!.path));
  const rawGet = (ip: string) => (ip.includes(':') ? raw6 : raw4).get(ip);

  const warm = publicAddresses(WARM_SIZE, 7, (ip) => rawGet(ip) !== null);
  const cold = publicAddresses(COLD_SIZE, 11, (ip) => rawGet(ip) !== null);

  // Same answers as the raw reader, or the numbers mean nothing.
  const check = newEngine();
  for (const ip of warm) {
    const raw = rawGet(ip) as { city?: string };
    const outcome = check.lookup(check.prepare(ip));
    const city = 'result' in outcome ? outcome.result.city : undefined;
    if ((raw.city || null) !== city) throw new Error(`geoip bench: engine and raw reader disagree on ${ip}: ${city} vs ${raw.city}`);
  }

  const engine = newEngine();
  const options = { durationMs: 1000, batch: 1000, warmupBatches: 50 };
  const warmResult = compare(
    (i) => {
      const query = engine.prepare(warm[i & (WARM_SIZE - 1)]);
      return engine.lookup(query);
    },
    (i) => rawGet(warm[i & (WARM_SIZE - 1)]),
    3,
    options,
  );

  const warmOutcome = (i: number) => engine.lookup(engine.prepare(warm[i & (WARM_SIZE - 1)])) as { result: object; json?: string };
  const readyJson = readyJsonRow(SUITE, `${WARM_SIZE} public IPs repeated (90% v4 / 10% v6)`, warmOutcome, options);

  // Cold: each round a fresh engine (empty caches) and one pass over addresses it has never seen.
  // Also with the record memo off (cacheSize 0): every lookup decodes its record, the worst case.
  let coldEngine = 0;
  let coldUncached = 0;
  let coldRaw = 0;
  for (let round = 0; round < 3; round++) {
    coldRaw = Math.max(coldRaw, onePass(cold, rawGet));
    const fresh = newEngine();
    coldEngine = Math.max(
      coldEngine,
      onePass(cold, (ip) => fresh.lookup(fresh.prepare(ip))),
    );
    const uncached = newEngine(0);
    coldUncached = Math.max(
      coldUncached,
      onePass(cold, (ip) => uncached.lookup(uncached.prepare(ip))),
    );
  }

  const baseline = 'raw maxmind Reader.get (new Reader(buffer), no cache) on the same files';
  return [
    ratioRow(
      {
        suite: SUITE,
        case: `warm: ${WARM_SIZE} public IPs repeated (90% v4 / 10% v6), full lookups string in, result out`,
        baseline,
        opsPerSec: warmResult.candidate,
        baselineOpsPerSec: warmResult.baseline,
        target: '>= 0.80x',
      },
      0.8,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `cold: ${COLD_SIZE.toLocaleString('en-US')} distinct public IPs, each once, fresh engine per round`,
        baseline,
        opsPerSec: coldEngine,
        baselineOpsPerSec: coldRaw,
        target: '>= 0.80x',
      },
      0.8,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `cold, record memo off (cacheSize 0): every record decoded and read`,
        baseline,
        opsPerSec: coldUncached,
        baselineOpsPerSec: coldRaw,
        target: '>= 0.80x',
      },
      0.8,
    ),
    readyJson,
  ];
}
