/**
 * `npm run bench -- scale`: how throughput grows with `seclookup serve` instances on one Redis
 * and on a three-master Redis Cluster. 1, 2 and 4 instances (the built CLI, request log on,
 * going to /dev/null) sit behind a small round-robin TCP balancer on loopback
 * (bench/servers/round-robin.mjs); autocannon sends a mix of five offline products (useragent,
 * geoip, asn, timezone, webhookip) over varied inputs, each with its own key. For each step it
 * reports throughput, p99 latency, Redis commands and bytes per request (INFO commandstats and
 * stats deltas), Redis CPU (INFO cpu), the CPU every process used, and which limit was hit: the
 * machine's cores, Redis's one core, or neither. Then each product alone on one instance.
 * Writes the detail to bench/results/scale.md (docs/capacity.md is built from it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisCluster } from '../test/servers/redis-cluster.js';
import { sendCommand, startRedisServer } from '../test/servers/redis-server.js';
import { absoluteRow, type BenchRow } from './harness.js';
import { autocannon, stopAll, type CannonRequest, type CannonResult } from './load.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const BALANCER = fileURLToPath(new URL('./servers/round-robin.mjs', import.meta.url));
const INSTANCES = [1, 2, 4];
const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
const SECONDS = 6;
const PRODUCT_SECONDS = 3;
/**
 * Commands a client sends itself (one round trip each; a script counts once). INFO's
 * commandstats also counts the commands a script runs inside Redis: every other name is one of
 * those on the hot path (HSET and HGET are admin writes and reads outside scripts, which the
 * load never makes: keys are resolved from the instance's memory). ZREM runs only inside
 * scripts: a commit rides on the next script call of its subscription, or on a settle script.
 */
const CLIENT_COMMANDS = new Set(['evalsha', 'eval', 'get', 'set', 'del', 'exec', 'hgetall', 'smembers', 'hkeys', 'hsetnx', 'script|load']);
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS = 100;

const IPS = [
  '8.8.8.8',
  '1.1.1.1',
  '9.9.9.9',
  '208.67.222.222',
  '140.82.112.3',
  '151.101.1.69',
  '104.16.132.229',
  '13.107.42.14',
  '17.253.144.10',
  '31.13.71.36',
];
const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'curl/8.5.0',
];
/** The mix: each product's lookups over varied inputs (the shared result cache sees repeats, as in production). */
const PRODUCTS: Record<string, string[]> = {
  useragent: UAS.map((ua) => `/v1/useragent/lookup?ua=${encodeURIComponent(ua)}`),
  geoip: IPS.map((ip) => `/v1/geoip/lookup?ip=${ip}`),
  asn: IPS.map((ip) => `/v1/asn/lookup?ip=${ip}`),
  timezone: IPS.map((ip) => `/v1/timezone/lookup?ip=${ip}`),
  webhookip: IPS.map((ip) => `/v1/webhookip/lookup?ip=${ip}`),
};

interface Store {
  name: string;
  url: string;
  /** The Redis processes: their ports (INFO is summed over them). */
  ports: number[];
}

interface Step {
  store: string;
  instances: number;
  rps: number;
  p50: number;
  p99: number;
  commandsPerRequest: number;
  roundTripsPerRequest: number;
  topCommands: string;
  bytesPerRequest: number;
  /** Redis CPU in cores (1 = one core busy), the busiest node's and the sum. */
  redisCpuMax: number;
  redisCpuSum: number;
  serveCpu: number;
  balancerCpu: number;
  loadCpu: number;
  /** Every process on the machine (other jobs included), in cores. */
  machineCpu: number;
  limit: string;
}

export async function run(): Promise<BenchRow[]> {
  const children: ChildProcess[] = [];
  const killOnExit = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killOnExit);
  const root = mkdtempSync(join(tmpdir(), 'seclookup-bench-scale-'));
  const steps: Step[] = [];
  const perProduct: ProductRun[] = [];
  let rssMb: number[] = [];
  try {
    const redis = await startRedisServer();
    try {
      const store = { name: 'one Redis', url: redis.url(), ports: [redis.port] };
      const { instances, keys } = await startInstances(store, root, children);
      for (const count of INSTANCES) steps.push(await measureStep(store, instances.slice(0, count), keys, children));
      for (const product of Object.keys(PRODUCTS)) {
        const requests = PRODUCTS[product].map((path) => ({ method: 'GET' as const, path, headers: { authorization: `Bearer ${keys[product]}` } }));
        await autocannon({ url: instances[0].url, connections: CONNECTIONS, duration: 1, requests });
        const before = await redisSnapshot(store.ports);
        const serveBefore = cpuSeconds(instances[0].pid);
        const result = await checked(autocannon({ url: instances[0].url, connections: CONNECTIONS, duration: PRODUCT_SECONDS, requests }));
        const after = await redisSnapshot(store.ports);
        perProduct.push({
          product,
          rps: result['2xx'] / result.duration,
          p99: result.latency.p99,
          commandsPerRequest: (after.calls - before.calls) / result['2xx'],
          roundTripsPerRequest: (after.clientCalls - before.clientCalls) / result['2xx'],
          redisCpu: (after.cpu[0] - before.cpu[0]) / result.duration,
          serveCpu: (cpuSeconds(instances[0].pid) - serveBefore) / result.duration,
        });
      }
      rssMb = instances.map((instance) => rss(instance.pid));
      await stopAll(instances.map((instance) => instance.child));
    } finally {
      await redis.close();
    }
    const cluster = await startRedisCluster({ replicas: 0 });
    try {
      const store = { name: '3-master cluster', url: cluster.url(), ports: [...cluster.ports] };
      const { instances, keys } = await startInstances(store, root, children);
      for (const count of INSTANCES) steps.push(await measureStep(store, instances.slice(0, count), keys, children));
      await stopAll(instances.map((instance) => instance.child));
    } finally {
      await cluster.close();
    }
  } finally {
    await stopAll(children);
    process.removeListener('exit', killOnExit);
    rmSync(root, { recursive: true, force: true });
  }
  writeReport(steps, perProduct, rssMb);
  return [
    ...steps.map((step) =>
      absoluteRow(
        {
          suite: 'scale',
          case: `${step.instances} serve on ${step.store}, mixed products, ${CONNECTIONS} connections: p99 ${step.p99} ms, ${step.roundTripsPerRequest.toFixed(2)} Redis round trips/req, Redis CPU ${pct(step.redisCpuMax)} (busiest node); limit: ${step.limit}`,
          opsPerSec: step.rps,
          target: '(info)',
        },
        0,
      ),
    ),
    ...perProduct.map((p) =>
      absoluteRow(
        {
          suite: 'scale',
          case: `1 serve on one Redis, ${p.product} alone: p99 ${p.p99} ms, ${p.roundTripsPerRequest.toFixed(2)} Redis round trips/req`,
          opsPerSec: p.rps,
          target: '(info)',
        },
        0,
      ),
    ),
  ];
}

interface Instance {
  url: string;
  port: number;
  pid: number;
  child: ChildProcess;
}

/** Plans and one key per product in the store (with the CLI), then 4 `serve` instances on it. */
async function startInstances(store: Store, root: string, children: ChildProcess[]): Promise<{ instances: Instance[]; keys: Record<string, string> }> {
  const cli = (args: string[]) => execFileSync(process.execPath, [CLI, ...args, '--redis', store.url], { encoding: 'utf8' });
  cli(['plans', 'set', 'bench', '--all-products', '--rate-limit', '1000000000', '--monthly-quota', 'unlimited']);
  const keys: Record<string, string> = {};
  for (const product of Object.keys(PRODUCTS)) {
    keys[product] = (JSON.parse(cli(['keys', 'create', '--product', product, '--plan', 'bench', '--json'])) as { secret_key: string }).secret_key;
  }
  const max = Math.max(...INSTANCES);
  const instances = await Promise.all(
    Array.from({ length: max }, (_, i) => {
      const dir = join(root, `${store.name.replace(/\W+/g, '-')}-${i}`);
      mkdirSync(dir, { recursive: true });
      return startServe(['--db', join(dir, 'serve.db'), '--redis', store.url], children);
    }),
  );
  return { instances, keys };
}

function startServe(args: string[], children: ChildProcess[]): Promise<Instance> {
  // The request log is on, written to /dev/null: its cost is counted, no disk is.
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let errors = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`seclookup serve did not start in 60 s: ${errors}`)), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`seclookup serve exited (${code}): ${errors}`));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      errors += chunk;
      const listening = /listening on (http:\/\/[\d.]+:(\d+))/.exec(errors);
      if (!listening) return;
      clearTimeout(timer);
      resolve({ url: listening[1], port: Number(listening[2]), pid: child.pid!, child });
    });
  });
}

/** The mix through a fresh balancer over `instances`: warm-up, then one measured run with every counter around it. */
async function measureStep(store: Store, instances: Instance[], keys: Record<string, string>, children: ChildProcess[]): Promise<Step> {
  const balancer = await startBalancer(instances, children);
  try {
    const requests = mixedRequests(keys);
    await autocannon({ url: balancer.url, connections: CONNECTIONS, duration: WARMUP_SECONDS, requests });
    const redisBefore = await redisSnapshot(store.ports);
    const serveBefore = instances.map((instance) => cpuSeconds(instance.pid));
    const balancerBefore = cpuSeconds(balancer.pid);
    const loadBefore = process.cpuUsage();
    const machineBefore = machineBusy();
    const result = await checked(autocannon({ url: balancer.url, connections: CONNECTIONS, duration: SECONDS, requests }));
    const load = process.cpuUsage(loadBefore);
    const machineAfter = machineBusy();
    const redisAfter = await redisSnapshot(store.ports);
    const seconds = result.duration;
    const answered = result['2xx'];
    const serveCpu = instances.reduce((sum, instance, i) => sum + cpuSeconds(instance.pid) - serveBefore[i], 0) / seconds;
    const balancerCpu = (cpuSeconds(balancer.pid) - balancerBefore) / seconds;
    const loadCpu = (load.user + load.system) / 1e6 / seconds;
    const redisCpu = redisAfter.cpu.map((cpu, i) => (cpu - redisBefore.cpu[i]) / seconds);
    const redisCpuMax = Math.max(...redisCpu);
    const redisCpuSum = redisCpu.reduce((a, b) => a + b, 0);
    const benchCpu = serveCpu + balancerCpu + loadCpu + redisCpuSum;
    const cores = cpus().length;
    const machineCpu = ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * cores;
    const limit =
      redisCpuMax >= 0.85
        ? `Redis (its busiest node used ${pct(redisCpuMax)} of its one core)`
        : machineCpu >= cores * 0.85
          ? `the machine's ${cores} cores (${pct(machineCpu)} of ${cores * 100}% busy, ${pct(benchCpu)} of it this bench's processes)`
          : `neither (${pct(machineCpu)} of ${cores * 100}% CPU busy: the ${CONNECTIONS} connections' latency)`;
    const top = Object.entries(redisAfter.byCommand)
      .map(([name, calls]) => [name, (calls - (redisBefore.byCommand[name] ?? 0)) / answered] as const)
      .filter(([, perRequest]) => perRequest >= 0.005)
      .sort((a, b) => b[1] - a[1])
      .map(([name, perRequest]) => `${name} ${perRequest.toFixed(2)}`)
      .join(', ');
    return {
      store: store.name,
      instances: instances.length,
      rps: answered / seconds,
      p50: result.latency.p50,
      p99: result.latency.p99,
      commandsPerRequest: (redisAfter.calls - redisBefore.calls) / answered,
      roundTripsPerRequest: (redisAfter.clientCalls - redisBefore.clientCalls) / answered,
      topCommands: top,
      bytesPerRequest: (redisAfter.bytes - redisBefore.bytes) / answered,
      redisCpuMax,
      redisCpuSum,
      serveCpu,
      balancerCpu,
      loadCpu,
      machineCpu,
      limit,
    };
  } finally {
    await stopAll([balancer.child]);
  }
}

function mixedRequests(keys: Record<string, string>): CannonRequest[] {
  // Interleaved, so every connection sends every product in turn.
  const lists = Object.entries(PRODUCTS).map(([product, paths]) =>
    paths.map((path) => ({ method: 'GET' as const, path, headers: { authorization: `Bearer ${keys[product]}` } })),
  );
  const longest = Math.max(...lists.map((list) => list.length));
  const out: CannonRequest[] = [];
  for (let i = 0; i < longest; i++) for (const list of lists) out.push(list[i % list.length]);
  return out;
}

function startBalancer(instances: Instance[], children: ChildProcess[]): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [BALANCER, ...instances.map((instance) => `127.0.0.1:${instance.port}`)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the balancer exited (${code})`)));
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (!output.includes('\n')) return;
      resolve({ url: `http://127.0.0.1:${(JSON.parse(output) as { port: number }).port}`, pid: child.pid!, child });
    });
  });
}

async function checked(result: Promise<CannonResult>): Promise<CannonResult> {
  const done = await result;
  if (done.non2xx || done.errors || done.timeouts) throw new Error(`scale bench: ${done.non2xx} non-2xx, ${done.errors} errors, ${done.timeouts} timeouts`);
  return done;
}

/** Commands served (INFO's own and the clients' CLUSTER/PING housekeeping left out), bytes in+out and CPU seconds, per node and summed. */
async function redisSnapshot(
  ports: number[],
): Promise<{ calls: number; clientCalls: number; byCommand: Record<string, number>; bytes: number; cpu: number[] }> {
  const byCommand: Record<string, number> = {};
  let bytes = 0;
  const cpu: number[] = [];
  for (const port of ports) {
    const info = await sendCommand(port, ['INFO', 'everything']);
    for (const [, name, calls] of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) {
      if (/^(info|cluster|ping|command|client|readonly|hello|select)/.test(name)) continue;
      byCommand[name] = (byCommand[name] ?? 0) + Number(calls);
    }
    bytes += Number(/total_net_input_bytes:(\d+)/.exec(info)?.[1] ?? 0) + Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1] ?? 0);
    cpu.push(Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0));
  }
  const calls = Object.values(byCommand).reduce((a, b) => a + b, 0);
  const clientCalls = Object.entries(byCommand).reduce((sum, [name, n]) => sum + (CLIENT_COMMANDS.has(name) ? n : 0), 0);
  return { calls, clientCalls, byCommand, bytes, cpu };
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** Busy and total jiffies of every CPU since boot (/proc/stat), every process included. */
function machineBusy(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const values = fields.map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - values[3] - values[4], total };
}

/** Resident memory of a process in MB. */
function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}

/** CPU time per request in µs, from cores busy and requests per second. */
function micros(cores: number, rps: number): number {
  return Math.round((cores / rps) * 1e6);
}

function pct(cores: number): string {
  return `${Math.round(cores * 100)}%`;
}

interface ProductRun {
  product: string;
  rps: number;
  p99: number;
  commandsPerRequest: number;
  roundTripsPerRequest: number;
  redisCpu: number;
  serveCpu: number;
}

function writeReport(steps: Step[], perProduct: ProductRun[], rssMb: number[]): void {
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
  const lines = [
    '# Scale bench (`npm run bench -- scale`)',
    '',
    `${new Date().toISOString()} on ${machine}, load average ${loadavg()[0].toFixed(1)} at the end. Everything (load generator, balancer, serve instances, Redis, and whatever else runs on the machine) shares these cores.`,
    `Mixed products (${Object.keys(PRODUCTS).join(', ')}), ${CONNECTIONS} keep-alive connections, ${SECONDS} s per step after ${WARMUP_SECONDS} s of warm-up.`,
    '',
    'Redis round trips/req: commands clients sent (a script counts once). Redis cmds/req: every command Redis ran, those inside scripts included (INFO commandstats).',
    'CPU: 100% = one core busy for the whole step. Machine CPU counts every process on the machine, other jobs included.',
    '',
    'CPU µs/req: CPU time per answered request (serve: all instances; Redis: all nodes). Unlike requests/s, it does not depend on the share of the cores the bench got.',
    '',
    '| store | serve instances | requests/s | p50 ms | p99 ms | Redis round trips/req | Redis cmds/req | Redis bytes/req (in+out) | Redis CPU (busiest node / all) | serve CPU | serve CPU µs/req | Redis CPU µs/req | load gen CPU | balancer CPU | machine CPU | limit hit |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|',
    ...steps.map(
      (s) =>
        `| ${s.store} | ${s.instances} | ${Math.round(s.rps)} | ${s.p50} | ${s.p99} | ${s.roundTripsPerRequest.toFixed(2)} | ${s.commandsPerRequest.toFixed(2)} (${s.topCommands}) | ${Math.round(s.bytesPerRequest)} | ${pct(s.redisCpuMax)} / ${pct(s.redisCpuSum)} | ${pct(s.serveCpu)} | ${micros(s.serveCpu, s.rps)} | ${micros(s.redisCpuSum, s.rps)} | ${pct(s.loadCpu)} | ${pct(s.balancerCpu)} | ${pct(s.machineCpu)} | ${s.limit} |`,
    ),
    '',
    '## Each product alone, one instance on one Redis, no balancer',
    '',
    '| product | requests/s | p99 ms | Redis round trips/req | Redis cmds/req | Redis CPU | serve CPU µs/req | Redis CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...perProduct.map(
      (p) =>
        `| ${p.product} | ${Math.round(p.rps)} | ${p.p99} | ${p.roundTripsPerRequest.toFixed(2)} | ${p.commandsPerRequest.toFixed(2)} | ${pct(p.redisCpu)} | ${micros(p.serveCpu, p.rps)} | ${micros(p.redisCpu, p.rps)} |`,
    ),
    '',
    `Resident memory of each serve instance after the runs above: ${rssMb.map((mb) => `${Math.round(mb)} MB`).join(', ')}.`,
    '',
  ];
  writeFileSync(new URL('./results/scale.md', import.meta.url), lines.join('\n'));
  console.error(lines.join('\n'));
}
