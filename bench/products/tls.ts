/**
 * tls engine, against a loopback TLS server in a child process (tls-server.ts: ECDSA
 * P-256, TLS 1.3) whose names the loopback DNS server of the tests resolves to 127.0.0.1:
 *
 * - cached: lookups of already-checked targets (input normalization with IDN mapping, cache
 *   hit), synchronous with the in-process cache: the hot path.
 * - cold latency: one lookup at a time with the cache off, so each is the outbound guard (its
 *   DNS answers cached by the resolver) plus a full handshake: p50 / p99, beside a bare
 *   `tls.connect` one at a time.
 * - handshakes/s: cold lookups with the cache off, IN_FLIGHT at once (each slot its own name,
 *   so single-flight never merges them), against a bare `tls.connect` loop at the same
 *   concurrency (no verification, read the peer certificate, close): the ratio is our overhead.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import tls from 'node:tls';
import { absoluteRow, ratioRow, type BenchRow } from '../harness.js';
import { startDnsServer, type Zone } from '../../test/servers/dns-server.js';
import { isPromise } from '../../src/lib/outcome.js';
import { createLookup } from '../../src/lookup.js';

const SUITE = 'tls engine';
const NAMES = 256;
const IN_FLIGHT = 8;
const COLD_SAMPLES = 400;
const ROUND_MS = 2_000;
const ROUNDS = 3;

async function startServerProcess(): Promise<{ port: number; close(): Promise<void> }> {
  const child = fork(new URL('./tls-server.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  child.send({});
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  return {
    port,
    async close() {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

/** The obvious client: Node's defaults, no verification, read the certificate, close. */
function bareHandshake(port: number, servername: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.destroySoon();
      resolve(cert?.fingerprint256);
    });
    socket.on('error', reject);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function latencies(samples: number, run: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = process.hrtime.bigint();
    await run(i);
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out.sort((a, b) => a - b);
}

/** Calls per second of `run`, `inFlight` at a time, for `ms`. */
async function throughput(inFlight: number, ms: number, run: (slot: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, slot) => {
      while (performance.now() < end) {
        await run(slot);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1_000);
}

export async function run(): Promise<BenchRow[]> {
  const names = Array.from({ length: NAMES }, (_, i) => `h${i}.bench.test`);
  const zone: Zone = Object.fromEntries(names.map((name) => [name, [{ type: 'A' as const, address: '127.0.0.1', ttl: 3_600 }]]));
  const dns = await startDnsServer({ zone, negativeTtl: 3_600 });
  const server = await startServerProcess();
  const options = { dns: { servers: [dns.address] }, outbound: { allowPrivateTargets: ['127.0.0.0/8'] } };
  try {
    const port = server.port;
    // Cold, one at a time (cache off): what a client waits for an unseen host.
    const cold = createLookup({ ...options, tls: { cacheSize: 0 } }).engine('tls');
    for (const name of names) await cold.lookup(cold.prepare(`${name}:${port}`)); // DNS answers now in the resolver's cache
    const ours = await latencies(COLD_SAMPLES, (i) => Promise.resolve(cold.lookup(cold.prepare(`${names[i % NAMES]}:${port}`))));
    const bare = await latencies(COLD_SAMPLES, (i) => bareHandshake(port, names[i % NAMES]));

    // Handshakes per second, IN_FLIGHT at once, alternating rounds; best of each.
    let best = { ours: 0, bare: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      best = {
        bare: Math.max(best.bare, await throughput(IN_FLIGHT, ROUND_MS, (slot) => bareHandshake(port, names[slot]))),
        ours: Math.max(best.ours, await throughput(IN_FLIGHT, ROUND_MS, (slot) => Promise.resolve(cold.lookup(cold.prepare(`${names[slot]}:${port}`))))),
      };
    }

    // Cached: every target checked once, then looked up again in the forms clients send.
    const warm = createLookup(options).engine('tls');
    for (const name of names) await warm.lookup(warm.prepare(`${name}:${port}`));
    const inputs: [string, { port: number } | undefined][] = names.map((name, i) =>
      i % 3 === 0 ? [`https://${name.toUpperCase()}:${port}/path?q=1`, undefined] : i % 3 === 1 ? [`${name}:${port}`, undefined] : [name, { port }],
    );
    let misses = 0;
    const cachedPerSec = measureCached(inputs, ([input, option]) => {
      const outcome = warm.lookup(warm.prepare(input, option));
      if (isPromise(outcome) || !outcome.cached) misses++;
      return outcome;
    });
    if (misses > 0) throw new Error(`cached tls bench missed the cache ${misses} times`);

    const ms = (value: number) => value.toFixed(2);
    const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
    return [
      absoluteRow(
        {
          suite: SUITE,
          case: `cached lookups (normalize + cache hit), ${NAMES} targets, URL / host:port / host+port forms`,
          opsPerSec: cachedPerSec,
          target: '>= 200,000/s',
        },
        200_000,
      ),
      absoluteRow(
        {
          suite: SUITE,
          case: `cold lookup, cache off, one at a time, loopback ECDSA TLS 1.3 server in another process: p50 ${ms(percentile(ours, 50))} ms, p99 ${ms(percentile(ours, 99))} ms (bare tls.connect: p50 ${ms(percentile(bare, 50))} ms, p99 ${ms(percentile(bare, 99))} ms)`,
          opsPerSec: 1_000 / mean(ours),
          target: '(info)',
        },
        0,
      ),
      ratioRow(
        {
          suite: SUITE,
          case: `handshakes/s: cold lookups, cache off, ${IN_FLIGHT} in flight (guard + handshake + certificate fields)`,
          baseline: `bare tls.connect loop, ${IN_FLIGHT} in flight (no verification, read the peer certificate, close)`,
          opsPerSec: best.ours,
          baselineOpsPerSec: best.bare,
          target: '>= 0.80x',
        },
        0.8,
      ),
    ];
  } finally {
    await server.close();
    await dns.close();
  }
}

/** Synchronous cached lookups per second (the in-process cache never makes a promise). */
function measureCached<T>(inputs: T[], lookup: (input: T) => unknown): number {
  let sink: unknown;
  for (let i = 0; i < 50_000; i++) sink = lookup(inputs[i % inputs.length]);
  let ops = 0;
  const started = process.hrtime.bigint();
  const end = started + 1_000_000_000n;
  let now = started;
  while (now < end) {
    for (let k = 0; k < 1_000; k++) sink = lookup(inputs[(ops + k) % inputs.length]);
    ops += 1_000;
    now = process.hrtime.bigint();
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return ops / (Number(now - started) / 1e9);
}
