/**
 * The shared DNS resolver (src/lib/dns) against the loopback DNS server of the tests
 * (test/servers/dns-server.ts), started inside the bench on 127.0.0.1:
 *
 * 1. raw cost of a cold query (cache off: `cache: { maxEntries: 0 }`), one at a time, against
 *    Node's `dns.promises.Resolver` (c-ares, no cache) on the same server, interleaved rounds,
 *    as a ratio. Informational: both sides include the server's own work, in this process.
 * 2. cold query latency p50 / p99 of the resolver, queries alternating with Node's.
 * 3. cached `resolve()` calls per second.
 * 4. 1,000 concurrent identical questions make exactly one upstream query (the server's
 *    counter; the bench throws otherwise).
 */
import { Resolver } from 'node:dns/promises';
import { createDnsResolver, type DnsResolver } from '../src/lib/dns/index.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../test/servers/dns-server.js';
import { absoluteRow, measureAsync, ratioRow, type BenchRow, type MeasureOptions } from './harness.js';

const SUITE = 'dns resolver';
/** Distinct names, so nothing but the server could cache an answer. */
const NAMES = Array.from({ length: 1_024 }, (_, i) => `h${i}.bench.test`);
const ZONE: Zone = Object.fromEntries(NAMES.map((name, i) => [name, [{ type: 'A', address: `10.0.${i >> 8}.${i & 0xff}` }]]));
const ROUNDS = 5;
const ROUND: MeasureOptions = { durationMs: 600, batch: 64, warmupBatches: 4 };

export async function run(): Promise<BenchRow[]> {
  const server = await startDnsServer({ zone: ZONE });
  try {
    const node = new Resolver({ timeout: 2_000, tries: 2 });
    node.setServers([server.address]);
    const cold = createDnsResolver({ servers: [server.address], cache: { maxEntries: 0 } });
    return [await coldVersusNode(cold, node), await coldLatency(cold, node), await cachedResolves(server), await singleFlight(server)];
  } finally {
    await server.close();
  }
}

/** Row 1: cold queries per second, ours and Node's, best of interleaved rounds. */
async function coldVersusNode(cold: DnsResolver, node: Resolver): Promise<BenchRow> {
  let ours = 0;
  let theirs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    theirs = Math.max(theirs, await measureAsync((i) => node.resolve4(NAMES[i % NAMES.length], { ttl: true }), ROUND));
    ours = Math.max(ours, await measureAsync((i) => cold.resolve(NAMES[i % NAMES.length], 'A'), ROUND));
  }
  return ratioRow(
    {
      suite: SUITE,
      case: 'cold A query, cache off, one at a time, loopback server in this process',
      baseline: "Node's dns.promises.Resolver (c-ares) on the same server",
      opsPerSec: ours,
      baselineOpsPerSec: theirs,
      target: '>= 0.80x (info)',
    },
    0.8,
  );
}

/** Row 2: per-query latency of cold queries, ours alternating with Node's so both see the same machine. */
async function coldLatency(cold: DnsResolver, node: Resolver): Promise<BenchRow> {
  const QUERIES = 4_000;
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const name = NAMES[i % NAMES.length];
    let start = process.hrtime.bigint();
    await cold.resolve(name, 'A');
    ours.push(Number(process.hrtime.bigint() - start) / 1_000);
    start = process.hrtime.bigint();
    await node.resolve4(name, { ttl: true });
    theirs.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
  const [p50, p99] = percentiles(ours, [0.5, 0.99]);
  const [nodeP50, nodeP99] = percentiles(theirs, [0.5, 0.99]);
  const mean = ours.reduce((sum, us) => sum + us, 0) / ours.length;
  return {
    suite: SUITE,
    case: `cold A query latency, ${QUERIES.toLocaleString('en-US')} sequential: p50 ${p50.toFixed(0)} µs, p99 ${p99.toFixed(0)} µs (Node: p50 ${nodeP50.toFixed(0)} µs, p99 ${nodeP99.toFixed(0)} µs)`,
    baseline: '',
    opsPerSec: 1e6 / mean,
    baselineOpsPerSec: null,
    ratio: null,
    target: 'p99 < 2,000 µs on loopback',
    met: p99 < 2_000,
  };
}

/** Row 3: resolve() answered from the resolver's own cache. */
async function cachedResolves(server: DnsTestServer): Promise<BenchRow> {
  const dns = createDnsResolver({ servers: [server.address] });
  for (const name of NAMES) await dns.resolve(name, 'A');
  const before = server.total();
  let best = 0;
  for (let round = 0; round < 3; round++) {
    best = Math.max(best, await measureAsync((i) => dns.resolve(NAMES[i & (NAMES.length - 1)], 'A'), { durationMs: 1_000, batch: 1_000, warmupBatches: 10 }));
  }
  if (server.total() !== before) throw new Error(`cached resolve bench is not cached: ${server.total() - before} upstream queries`);
  return absoluteRow(
    { suite: SUITE, case: `cached resolve(), ${NAMES.length.toLocaleString('en-US')} names, default cache`, opsPerSec: best, target: '(info)' },
    0,
  );
}

/** Row 4: single-flight, read from the server's own counter. */
async function singleFlight(server: DnsTestServer): Promise<BenchRow> {
  const CONCURRENT = 1_000;
  const dns = createDnsResolver({ servers: [server.address] });
  server.resetCounts();
  const start = process.hrtime.bigint();
  const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => dns.resolve(NAMES[7], 'A')));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const upstream = server.total();
  if (upstream !== 1 || dns.queriesSent !== 1 || answers.some((a) => a.records[0] !== '10.0.0.7')) {
    throw new Error(`single-flight failed: ${CONCURRENT} concurrent identical lookups made ${upstream} upstream queries (resolver counted ${dns.queriesSent})`);
  }
  return {
    suite: SUITE,
    case: `${CONCURRENT.toLocaleString('en-US')} concurrent identical cold lookups: ${upstream} upstream query (server's counter)`,
    baseline: '',
    opsPerSec: CONCURRENT / seconds,
    baselineOpsPerSec: null,
    ratio: null,
    target: 'exactly 1 upstream query',
    met: upstream === 1,
  };
}

/** Nearest-rank percentiles of `values` (microseconds). */
function percentiles(values: number[], ranks: number[]): number[] {
  const sorted = [...values].sort((x, y) => x - y);
  return ranks.map((rank) => sorted[Math.min(sorted.length - 1, Math.ceil(rank * sorted.length) - 1)]);
}
