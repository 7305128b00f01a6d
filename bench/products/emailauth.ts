/**
 * emailauth engine, against the loopback DNS server of the tests (started here in a child
 * process, so no packet leaves the machine and its CPU is not the bench's), over a zone of 2,000 domains that each publish SPF, DMARC and a 2048-bit
 * DKIM key (two character-strings).
 *
 * - cached: lookups of already-looked-up domains through `engine.lookup` (normalization with
 *   IDN mapping and the public-suffix check, then the in-process cache): the hot path.
 * - cold: each domain once through a fresh engine and resolver, so every lookup sends its 11
 *   TXT queries (the domain, `_dmarc`, nine selectors) and waits for them: latency p50 / p99,
 *   one lookup at a time, with the CPU our side spent, and throughput with 8 lookups in flight
 *   (bound by the one test server process, which answers a query in about 0.45 ms).
 *
 * Accuracy rows (measured, not timed): the openspf RFC 7208 and RFC 4408 SPF suites run as
 * record checks (test/products/emailauth-spf-suite.ts) and the DMARC discovery vectors
 * (test/products/emailauth-dmarc-vectors.ts), against an in-process loopback DNS server. In those
 * rows `ops/s` is the cases passed, `baseline ops/s` the cases that apply, and `ratio` the pass rate.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { isDeepStrictEqual } from 'node:util';
import { DMARC_VECTORS, expectedDmarc, runDmarcVectors } from '../../test/products/emailauth-dmarc-vectors.js';
import { passRate, runSuite } from '../../test/products/emailauth-spf-suite.js';
import { startDnsServer, type Zone } from '../../test/servers/dns-server.js';
import { DKIM_KEYS } from '../../test/servers/email-zone.js';
import { absoluteRow, measure, type BenchRow } from '../harness.js';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { isPromise, type MaybePromise } from '../../src/lib/outcome.js';
import { createEmailAuthEngine, type EmailAuthEngine } from '../../src/products/emailauth/engine.js';

const SUITE = 'emailauth engine';
const DOMAINS = 2_000;
const IN_FLIGHT = 8;

function benchZone(domains: string[]): Zone {
  const zone: Zone = {};
  for (const domain of domains) {
    zone[domain] = [{ type: 'TXT', data: 'v=spf1 include:_spf.example.net ~all' }];
    zone[`_dmarc.${domain}`] = [{ type: 'TXT', data: `v=DMARC1; p=reject; rua=mailto:dmarc@${domain}` }];
    zone[`google._domainkey.${domain}`] = [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }];
  }
  return zone;
}

/** The loopback DNS server in its own process (emailauth-dns-server.ts), serving `zone`. */
async function startDnsProcess(zone: Zone): Promise<{ address: string; close(): Promise<void> }> {
  const child = fork(new URL('./emailauth-dns-server.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  child.send(zone);
  const [{ address }] = (await once(child, 'message')) as [{ address: string }];
  return {
    async close() {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
    address,
  };
}

/** The engine over its in-process cache answers a hit synchronously; the bench measures exactly that. */
function syncOutcome<T>(outcome: MaybePromise<T>): T {
  if (isPromise(outcome)) throw new Error('a cached emailauth lookup answered with a promise');
  return outcome;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A pass-rate row: passed over applicable cases as ops and baseline, so the ratio is the rate. */
function accuracyRow(testCase: string, passed: number, applicable: number, minRate: number): BenchRow {
  const rate = passed / applicable;
  return {
    suite: 'emailauth accuracy',
    case: `${testCase}: ${passed} of ${applicable} (${(100 * rate).toFixed(1)}%)`,
    baseline: 'applicable cases',
    opsPerSec: passed,
    baselineOpsPerSec: applicable,
    ratio: rate,
    target: `>= ${minRate}x`,
    met: rate >= minRate,
  };
}

async function accuracyRows(): Promise<BenchRow[]> {
  const server = await startDnsServer();
  try {
    const rows: BenchRow[] = [];
    for (const suite of ['rfc7208', 'rfc4408'] as const) {
      const runs = await runSuite(suite, server);
      const { applicable, passed } = passRate(runs);
      rows.push(accuracyRow(`SPF ${suite} suite as record checks (${runs.length - applicable} evaluation-only cases excluded)`, passed, applicable, 0.995));
    }
    const vectors = await runDmarcVectors(server);
    const right = vectors.filter((v) => isDeepStrictEqual(v.dmarc, expectedDmarc(v.vector))).length;
    rows.push(accuracyRow('DMARC discovery vectors (DMARCbis tree walk)', right, DMARC_VECTORS.length, 1));
    return rows;
  } finally {
    await server.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const accuracy = await accuracyRows();
  const domains = Array.from({ length: DOMAINS }, (_, i) => `d${i}.example.com`);
  const server = await startDnsProcess(benchZone(domains));
  const engineFor = (): EmailAuthEngine => createEmailAuthEngine({ dns: createDnsResolver({ servers: [server.address] }) });
  try {
    // Cold, one at a time: the latency a client waits for an unseen domain.
    const sequential = engineFor();
    const latencies: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (const domain of domains.slice(0, DOMAINS / 2)) {
      const started = process.hrtime.bigint();
      const { result } = await sequential.lookup(sequential.prepare(domain));
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (result.score !== 100) throw new Error(`${domain} scored ${result.score}, expected 100`);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMsPerLookup = (cpu.user + cpu.system) / 1_000 / latencies.length;
    latencies.sort((a, b) => a - b);
    const meanMs = latencies.reduce((a, b) => a + b, 0) / latencies.length;

    // Cold, IN_FLIGHT at once: throughput against one DNS server.
    const concurrent = engineFor();
    const rest = domains.slice(DOMAINS / 2);
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < rest.length) await concurrent.lookup(concurrent.prepare(rest[next++]));
      }),
    );
    const concurrentPerSec = rest.length / (Number(process.hrtime.bigint() - started) / 1e9);

    // Cached: every domain is in `concurrent`'s cache now; mixed-case input with a trailing dot
    // half the time, as clients send it.
    const inputs = domains.slice(DOMAINS / 2).map((d, i) => (i % 2 ? `${d.toUpperCase()}.` : d));
    let misses = 0;
    const cachedPerSec = measure(
      (i) => {
        const outcome = syncOutcome(concurrent.lookup(concurrent.prepare(inputs[i % inputs.length])));
        if (!outcome.cached) misses++;
        return outcome;
      },
      { durationMs: 1_000, batch: 500, warmupBatches: 20 },
    );
    if (misses > 0) throw new Error(`cached bench missed the cache ${misses} times`);

    const ms = (value: number) => value.toFixed(2);
    return [
      ...accuracy,
      absoluteRow(
        {
          suite: SUITE,
          case: `cached lookups (normalize + cache hit + copy), ${inputs.length.toLocaleString('en-US')} domains`,
          opsPerSec: cachedPerSec,
          target: '>= 100,000/s',
        },
        100_000,
      ),
      absoluteRow(
        {
          suite: SUITE,
          case: `cold lookup, loopback DNS, one at a time (11 TXT queries in parallel): p50 ${ms(percentile(latencies, 50))} ms, p99 ${ms(percentile(latencies, 99))} ms, of which ${ms(cpuMsPerLookup)} ms CPU on our side (the rest is mostly the test server's dns2 encoding)`,
          opsPerSec: 1_000 / meanMs,
          target: '(info)',
        },
        0,
      ),
      absoluteRow({ suite: SUITE, case: `cold lookups, loopback DNS, ${IN_FLIGHT} in flight`, opsPerSec: concurrentPerSec, target: '(info)' }, 0),
    ];
  } finally {
    await server.close();
  }
}
