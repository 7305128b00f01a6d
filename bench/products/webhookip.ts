/**
 * webhookip full lookups (string in, result out) over a mix of public addresses: 90% IPv4,
 * 10% IPv6; half of each inside a bundled provider range, half outside. Absolute target
 * 2,000,000 lookups/s, plus a ratio against the obvious implementation: parseIp, isPublicIp,
 * formatIp and a linear scan of all CIDRs with ipaddr.js `match`.
 */
import { bundledDataDir } from '../../src/lib/datasets.js';
import { formatIp, isPublicIp, parseCidr, parseIp } from '../../src/lib/ip.js';
import { createWebhookIpEngine, loadWebhookRanges } from '../../src/products/webhookip/engine.js';
import type { WebhookRangesDataset } from '../../src/products/webhookip/types.js';
import { absoluteRow, compare, measure, ratioRow, type BenchRow, seededRandom } from '../harness.js';
import { readyJsonRow } from '../json-row.js';

const SUITE = 'webhookip engine';
const MIX_SIZE = 4096; // a power of two: the index is a mask

/** A random address inside `cidr`, as text. */
function insideCidr(cidr: string, rand: () => number): string {
  const [net, bits] = parseCidr(cidr);
  const bytes = net.toByteArray().map((byte, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    return (byte & mask) | (Math.floor(rand() * 256) & ~mask & 0xff);
  });
  return bytes.length === 4 ? bytes.join('.') : formatIp(parseIp(bytesToV6(bytes))!);
}

function bytesToV6(bytes: number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}

/** A random public address outside every bundled range. */
function outside(v6: boolean, rand: () => number, naive: (ip: string) => unknown[] | null): string {
  for (;;) {
    const text = v6
      ? bytesToV6([0x20 | Math.floor(rand() * 16), ...Array.from({ length: 15 }, () => Math.floor(rand() * 256))]) // 2000::/4
      : Array.from({ length: 4 }, () => Math.floor(rand() * 256)).join('.');
    const hits = naive(text);
    if (hits && hits.length === 0) return formatIp(parseIp(text)!);
  }
}

/** The obvious implementation, as the baseline: parse, check, scan everything. */
function naiveLookup(dataset: WebhookRangesDataset) {
  const cidrs = dataset.providers.flatMap((p) => p.cidrs.map((c) => ({ provider: p, cidr: parseCidr(c) })));
  return (text: string) => {
    const addr = parseIp(text.trim());
    if (!addr || !isPublicIp(addr)) return null;
    const providers: { id: string; name: string }[] = [];
    for (const { provider, cidr } of cidrs) {
      if (cidr[0].kind() === addr.kind() && addr.match(cidr) && !providers.some((p) => p.id === provider.id)) {
        providers.push({ id: provider.id, name: provider.name });
      }
    }
    return { ip: formatIp(addr), matched: providers.length > 0, providers }.providers;
  };
}

export async function run(): Promise<BenchRow[]> {
  const dataset = loadWebhookRanges(bundledDataDir());
  const engine = createWebhookIpEngine(dataset);
  const naive = naiveLookup(dataset);
  const rand = seededRandom(42);
  const v4Cidrs = dataset.providers.flatMap((p) => p.cidrs).filter((c) => !c.includes(':'));
  const v6Cidrs = dataset.providers.flatMap((p) => p.cidrs).filter((c) => c.includes(':'));

  const mix: string[] = [];
  for (let i = 0; i < MIX_SIZE; i++) {
    const v6 = i % 10 === 9;
    const matching = rand() < 0.5;
    const pool = v6 ? v6Cidrs : v4Cidrs;
    mix.push(matching ? insideCidr(pool[Math.floor(rand() * pool.length)], rand) : outside(v6, rand, naive));
  }
  // Same answers as the baseline, or the numbers mean nothing.
  for (const ip of mix) {
    const expected = naive(ip)!
      .map((p) => p.id)
      .join();
    const got = engine
      .lookup(engine.prepare(ip))
      .result.providers.map((p) => p.id)
      .join();
    if (got !== expected) throw new Error(`webhookip bench: engine and baseline disagree on ${ip}: ${got} vs ${expected}`);
  }
  const matched = mix.filter((ip) => engine.lookup(engine.prepare(ip)).result.matched).length;

  const options = { durationMs: 1000, batch: 1000, warmupBatches: 50 };
  let best = 0;
  for (let round = 0; round < 3; round++)
    best = Math.max(
      best,
      measure((i) => engine.lookup(engine.prepare(mix[i & (MIX_SIZE - 1)])), options),
    );
  const versus = compare(
    (i) => engine.lookup(engine.prepare(mix[i & (MIX_SIZE - 1)])),
    (i) => naive(mix[i & (MIX_SIZE - 1)]),
    3,
    options,
  );

  const readyJson = readyJsonRow(
    SUITE,
    `${MIX_SIZE} public IPs repeated, half matching`,
    (i) => engine.lookup(engine.prepare(mix[i & (MIX_SIZE - 1)])),
    options,
  );
  const mixText = `${MIX_SIZE} public IPs, 90% v4 / 10% v6, ${Math.round((100 * matched) / MIX_SIZE)}% matching, ${engine.cidrCount} CIDRs`;
  return [
    absoluteRow({ suite: SUITE, case: `full lookups (string in, result out): ${mixText}`, opsPerSec: best, target: '>= 2,000,000/s' }, 2_000_000),
    ratioRow(
      {
        suite: SUITE,
        case: `same mix vs the obvious implementation`,
        baseline: 'parseIp + isPublicIp + linear scan of every CIDR with ipaddr.js match',
        opsPerSec: versus.candidate,
        baselineOpsPerSec: versus.baseline,
        target: '>= 10x (informational)',
      },
      10,
    ),
    readyJson,
  ];
}
