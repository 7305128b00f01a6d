/**
 * whois engine, against the loopback RDAP and WHOIS servers of the tests (in this process;
 * 127.0.0.1 is let through the outbound guard for the bench only):
 *
 * - cached: lookups of already-looked-up domains through prepare + lookup (registrable-domain
 *   normalization, memoised, then the in-process cache): the hot path.
 * - cold RDAP: distinct .com domains, one at a time, each a `GET /rdap/domain/<name>` answered
 *   with Verisign's google.com record (test/fixtures/rdap) under that name: latency p50 / p99.
 * - cold WHOIS: distinct .ai domains over port-43 TCP, answered with the google.ai sample
 *   (ICANN layout, 2 KB): latency p50 / p99.
 * - parse: the 66 raw WHOIS answers of test/fixtures/whois, parsed in turn (answers per second).
 * - accuracy: the registry answers of the corpus (test/fixtures/whois/corpus, 703 answers of
 *   222 TLDs, docs/whois-accuracy.md) read through the engine's answer reader and compared with
 *   their expected values: one row per field (% exact), "not registered" recognised, refusals
 *   read as such, every field right. These rows' number is a percentage, not a rate.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { absoluteRow, measure, type BenchRow } from '../harness.js';
import { rdapAnswer, startRdapServer } from '../../test/servers/rdap-server.js';
import { startWhoisServer, whoisAnswer } from '../../test/servers/whois-server.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { createOutboundGuard } from '../../src/lib/outbound.js';
import { isPromise } from '../../src/lib/outcome.js';
import { createMemoryCache, createProductCache } from '../../src/lib/cache.js';
import { createWhoisEngine, type CachedWhois, type WhoisEngine } from '../../src/products/whois/engine.js';
import { parseWhoisText } from '../../src/products/whois/parse.js';
import { buildServerTables } from '../../src/products/whois/servers.js';
import type { WhoisEngineOptions } from '../../src/products/whois/types.js';
import { FIELDS, loadCorpus, percent, scoreCorpus } from '../../test/products/whois-corpus.js';

const SUITE = 'whois engine';
const COLD = 400;
const WARMUP = 40;
const CACHED = 2_000;
const SAMPLES = fileURLToPath(new URL('../../test/fixtures/whois/whois/', import.meta.url));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Latency of each lookup of `domains` (the first WARMUP only warm the JIT and are not counted). */
async function coldLatencies(engine: WhoisEngine, domains: string[]): Promise<number[]> {
  const latencies: number[] = [];
  for (const domain of domains.slice(0, WARMUP))
    await Promise.resolve()
      .then(() => engine.lookup(engine.prepare(`warm-${domain}`)))
      .catch(() => {});
  for (const domain of domains.slice(WARMUP)) {
    const started = process.hrtime.bigint();
    await engine.lookup(engine.prepare(domain));
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return latencies.sort((a, b) => a - b);
}

export async function run(): Promise<BenchRow[]> {
  const comDomains = Array.from({ length: CACHED }, (_, i) => `bench-${i}.com`);
  const aiDomains = Array.from({ length: COLD + WARMUP }, (_, i) => `bench-${i}.ai`);
  const registry = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../test/fixtures/rdap/domain/google.com.registry-verisign.json', import.meta.url)), 'utf8'),
  ) as object;
  const rdap = await startRdapServer(Object.fromEntries(comDomains.map((d) => [d, rdapAnswer.json({ ...registry, ldhName: d.toUpperCase() })])));
  const whois = await startWhoisServer({ answer: () => whoisAnswer.sample('google.ai') });
  // Names are never resolved here (the servers are IP literals), so the resolver is never asked.
  const guard = createOutboundGuard({ dns: () => createDnsResolver({ servers: ['127.0.0.1:9'] }), allowPrivateTargets: ['127.0.0.0/8'] });
  const options: WhoisEngineOptions = { rdapServers: { com: rdap.base, ai: null }, whoisServers: { ai: whois.address } };
  const tables = buildServerTables(bundledDataDir(), options);
  const engineFor = (cacheSize: number) =>
    createWhoisEngine(
      {
        tables,
        guard: () => guard,
        cache: cacheSize > 0 ? createProductCache<CachedWhois>(createMemoryCache({ maxEntries: cacheSize })) : null,
        now: Date.now,
      },
      options,
    );
  try {
    const ms = (value: number) => value.toFixed(2);
    const rdapLatencies = await coldLatencies(engineFor(0), comDomains.slice(0, COLD + WARMUP));
    const whoisLatencies = await coldLatencies(engineFor(0), aiDomains);
    const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;

    // Cached: fill one engine's cache, then ask again, mixed case and a subdomain half the time.
    const cached = engineFor(10_000);
    await Promise.all(comDomains.map((d) => cached.lookup(cached.prepare(d))));
    const inputs = comDomains.map((d, i) => (i % 2 ? `WWW.${d.toUpperCase()}` : d));
    let misses = 0;
    const cachedPerSec = measure(
      (i) => {
        const outcome = cached.lookup(cached.prepare(inputs[i % inputs.length]));
        if (isPromise(outcome) || !outcome.cached) misses++;
        return outcome;
      },
      { durationMs: 1_000, batch: 500, warmupBatches: 20 },
    );
    if (misses > 0) throw new Error(`cached whois bench missed the cache ${misses} times`);

    const texts = readdirSync(SAMPLES)
      .sort()
      .map((name) => readFileSync(join(SAMPLES, name), 'utf8'));
    const parsePerSec = measure((i) => parseWhoisText(texts[i % texts.length]), { durationMs: 1_000, batch: 66, warmupBatches: 10 });
    const averageKb = texts.reduce((sum, text) => sum + text.length, 0) / texts.length / 1024;

    return [
      ...accuracyRows(),
      absoluteRow(
        {
          suite: SUITE,
          case: `cached lookups (normalize + cache hit), ${CACHED.toLocaleString('en-US')} domains`,
          opsPerSec: cachedPerSec,
          target: '>= 500,000/s',
        },
        500_000,
      ),
      absoluteRow(
        {
          suite: SUITE,
          case: `cold RDAP lookup, loopback server in this process, one at a time: p50 ${ms(percentile(rdapLatencies, 50))} ms, p99 ${ms(percentile(rdapLatencies, 99))} ms`,
          opsPerSec: 1_000 / mean(rdapLatencies),
          target: '(info)',
        },
        0,
      ),
      absoluteRow(
        {
          suite: SUITE,
          case: `cold WHOIS (port-43) lookup, loopback server in this process, one at a time: p50 ${ms(percentile(whoisLatencies, 50))} ms, p99 ${ms(percentile(whoisLatencies, 99))} ms`,
          opsPerSec: 1_000 / mean(whoisLatencies),
          target: '(info)',
        },
        0,
      ),
      absoluteRow(
        {
          suite: SUITE,
          case: `WHOIS text parse, the 66 sample answers in turn (${averageKb.toFixed(1)} KB on average)`,
          opsPerSec: parsePerSec,
          target: '>= 2,000/s',
        },
        2_000,
      ),
    ];
  } finally {
    await Promise.all([rdap.close(), whois.close()]);
  }
}

/** Accuracy on the corpus: the row's number is the percentage (see the header). */
export function accuracyRows(): BenchRow[] {
  const score = scoreCorpus(loadCorpus());
  const row = (label: string, tally: { total: number; right: number }, floor: number) =>
    absoluteRow(
      {
        suite: 'whois accuracy (port 43)',
        case: `${label}: ${tally.right} of ${tally.total} (number = % exact, ${score.answers} answers, ${score.tlds} TLDs)`,
        opsPerSec: Number(percent(tally).toFixed(1)),
        target: `>= ${floor}%`,
      },
      floor,
    );
  return [
    ...FIELDS.map((field) => row(field, score.byField[field], 97)),
    row('unregistered recognised (404 domain_not_found)', score.byOutcome.not_found, 99),
    row('rate-limited / refused read as lookup_failed', score.byOutcome.lookup_failed, 99),
    row('registered read as a record', score.byOutcome.record, 99),
    row('registered answers with every measured field right', score.recordsAllRight, 95),
  ];
}
