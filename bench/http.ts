/**
 * The HTTP hot path per adapter: an authenticated useragent lookup (warm UA cache) against a
 * bare hello-JSON handler on the same framework, once with the SQLite meter (the `serve`
 * default) and once with the in-memory meter, so the meter's share of the cost is visible.
 * Each server runs in its own child process (bench/servers/http-server.mjs, on the built
 * dist/), loaded by autocannon from this process; bare and seclookup are measured alternately
 * and each keeps its best round.
 *
 * Two loads: 100 connections keep the server saturated, so the ratio compares throughput
 * capacity (the goal). 10 connections, on a 2-core machine shared with the load generator,
 * leave even the bare server partly idle: that ratio measures round-trip latency, where the
 * SQLite meter's group commit (answers leave at the end of the event-loop turn) costs most.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ratioRow, type BenchRow } from './harness.js';

const ADAPTERS = ['node', 'express', 'fastify'] as const;
type Adapter = (typeof ADAPTERS)[number];
type Mode = 'bare' | 'seclookup';
type MeterKind = 'sqlite' | 'memory';

const SERVER_SCRIPT = fileURLToPath(new URL('./servers/http-server.mjs', import.meta.url));
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PATH = `/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`;
/** Connections per load; the goal is judged at the saturating one. */
const LOADS = [
  { connections: 100, goal: true },
  { connections: 10, goal: false },
] as const;
const WARMUP_SECONDS = 1;
/** Measured seconds per server, split into alternating rounds. */
const ROUNDS = 3;
const ROUND_SECONDS = 2.5;
const MIN_RATIO = 0.6;

/** The part of autocannon's programmatic API used here (it ships no types). */
interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Target {
  url: string;
  headers: Record<string, string>;
}

/** Start one bench server; resolves once it prints its port. Registers the child for cleanup first. */
function startServer(adapter: Adapter, mode: Mode, children: ChildProcess[], meter: MeterKind = 'sqlite'): Promise<Target> {
  const child = spawn(process.execPath, [SERVER_SCRIPT, adapter, mode, meter], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${adapter}/${mode} server did not start in 15 s: ${errors}`)), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${adapter}/${mode} server exited (${code}): ${errors}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (!output.includes('\n')) return;
      clearTimeout(timer);
      const { port, key } = JSON.parse(output.split('\n')[0]) as { port: number; key: string | null };
      resolve({ url: `http://127.0.0.1:${port}${PATH}`, headers: key ? { authorization: `Bearer ${key}` } : {} });
    });
  });
}

/** Requests per second answered 2xx; throws if anything else came back. */
async function load(target: Target, connections: number, seconds: number): Promise<number> {
  const result = await autocannon({ url: target.url, connections, duration: seconds, headers: target.headers });
  if (result.non2xx || result.errors || result.timeouts) {
    throw new Error(`${target.url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return result['2xx'] / result.duration;
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

async function benchAdapter(adapter: Adapter): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  // A crash of this process must not leave servers behind either.
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  try {
    const [bare, sqlite, memory] = await Promise.all([
      startServer(adapter, 'bare', children),
      startServer(adapter, 'seclookup', children, 'sqlite'),
      startServer(adapter, 'seclookup', children, 'memory'),
    ]);
    const rows: BenchRow[] = [];
    for (const { connections, goal } of LOADS) {
      for (const target of [bare, sqlite, memory]) await load(target, connections, WARMUP_SECONDS);
      const best = { bare: 0, sqlite: 0, memory: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        best.bare = Math.max(best.bare, await load(bare, connections, ROUND_SECONDS));
        best.sqlite = Math.max(best.sqlite, await load(sqlite, connections, ROUND_SECONDS));
        best.memory = Math.max(best.memory, await load(memory, connections, ROUND_SECONDS));
      }
      for (const meter of ['sqlite', 'memory'] as const) {
        rows.push(
          ratioRow(
          {
            suite: 'http',
            case: `${adapter}: GET /v1/useragent/lookup, warm UA cache, ${meter} meter, ${connections} connections`,
            baseline: `bare ${adapter} hello JSON`,
            opsPerSec: best[meter],
            baselineOpsPerSec: best.bare,
            target: goal ? `>= ${MIN_RATIO.toFixed(2)}x` : '(info: latency-bound)',
          },
          goal ? MIN_RATIO : 0,
          ),
        );
      }
    }
    return rows;
  } finally {
    await stopAll(children);
    process.removeListener('exit', killOnExit);
  }
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const adapter of ADAPTERS) rows.push(...(await benchAdapter(adapter)));
  return rows;
}
