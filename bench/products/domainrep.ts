/**
 * domainrep engine (through createLookup, so whois and emailauth are the real engines), against
 * loopback servers: a DNS server in a child process (domainrep-dns-server.ts: the test server's dns2
 * encoder would otherwise share this event loop) answering each domain's A, MX,
 * SPF and DMARC records and a listing on one blocklist zone for every fourth domain, and the
 * tests' RDAP server in this process (127.0.0.1 let through the outbound guard for the bench).
 *
 * - cached: lookups of already-scored domains through prepare + lookup (memoised
 *   normalization, then the in-process cache), synchronous: the hot path.
 * - cold: distinct domains one at a time, every signal computed (1 RDAP request, 11 emailauth
 *   TXT queries, A/AAAA/MX, 3 zone queries): latency p50 / p99.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { absoluteRow, measure, type BenchRow } from '../harness.js';
import { rdapAnswer, startRdapServer } from '../../test/servers/rdap-server.js';
import type { Zone } from '../../test/servers/dns-server.js';
import { isPromise } from '../../src/lib/outcome.js';
import { createLookup } from '../../src/lookup.js';

const SUITE = 'domainrep engine';
const CACHED = 1_024; // a power of two: the index is a mask
const COLD = 300;
const WARMUP = 30;
const DAY = 86_400_000;

function zoneFor(domains: string[]): Zone {
  const zone: Zone = {};
  domains.forEach((domain, i) => {
    zone[domain] = [
      { type: 'A', address: '203.0.113.10' },
      { type: 'MX', exchange: `mx.${domain}`, priority: 10 },
      { type: 'TXT', data: 'v=spf1 mx -all' },
    ];
    zone[`_dmarc.${domain}`] = [{ type: 'TXT', data: 'v=DMARC1; p=reject' }];
    if (i % 4 === 0) zone[`${domain}.dbl.spamhaus.org`] = [{ type: 'A', address: '127.0.1.2' }];
  });
  return zone;
}

async function startDnsProcess(zone: Zone): Promise<{ address: string; close(): Promise<void> }> {
  const child = fork(new URL('./domainrep-dns-server.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  child.send(zone);
  const [{ address }] = (await once(child, 'message')) as [{ address: string }];
  return {
    address,
    async close() {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function run(): Promise<BenchRow[]> {
  const cachedDomains = Array.from({ length: CACHED }, (_, i) => `cached-${i}.com`);
  const coldDomains = Array.from({ length: COLD + WARMUP }, (_, i) => `cold-${i}.com`);
  const all = [...cachedDomains, ...coldDomains];
  const created = new Date(Date.now() - 3 * 365 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const rdap = await startRdapServer(
    Object.fromEntries(
      all.map((d) => [
        d,
        rdapAnswer.json({ objectClassName: 'domain', ldhName: d, events: [{ eventAction: 'registration', eventDate: created }], status: ['active'] }),
      ]),
    ),
  );
  const dns = await startDnsProcess(zoneFor(all));
  try {
    const lookup = createLookup({
      dns: { servers: [dns.address] },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
      whois: { rdapServers: { com: rdap.base } },
    });
    const engine = lookup.engine('domainrep');

    const latencies: number[] = [];
    for (const domain of coldDomains.slice(0, WARMUP)) await engine.lookup(engine.prepare(domain));
    for (const domain of coldDomains.slice(WARMUP)) {
      const started = process.hrtime.bigint();
      const outcome = await engine.lookup(engine.prepare(domain));
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (outcome.cached || outcome.result.signals.some((s) => s.detail.startsWith('unavailable')))
        throw new Error(`cold domainrep bench: ${domain} was not a complete cold lookup`);
    }
    latencies.sort((a, b) => a - b);
    const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;

    for (let i = 0; i < CACHED; i += 32) await Promise.all(cachedDomains.slice(i, i + 32).map((d) => engine.lookup(engine.prepare(d))));
    let misses = 0;
    const cachedPerSec = measure(
      (i) => {
        const outcome = engine.lookup(engine.prepare(cachedDomains[i & (CACHED - 1)]));
        if (isPromise(outcome) || !outcome.cached) misses++;
        return outcome;
      },
      { durationMs: 1_000, batch: 500, warmupBatches: 20 },
    );
    if (misses > 0) throw new Error(`cached domainrep bench missed the cache ${misses} times`);

    const ms = (value: number) => value.toFixed(2);
    return [
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
          case: `cold lookup, every signal (RDAP, 11 emailauth TXT, A/AAAA/MX, 3 zones) on loopback servers, one at a time: p50 ${ms(percentile(latencies, 50))} ms, p99 ${ms(percentile(latencies, 99))} ms`,
          opsPerSec: 1_000 / mean,
          target: '(info)',
        },
        0,
      ),
    ];
  } finally {
    await Promise.all([rdap.close(), dns.close()]);
  }
}
