/**
 * A real Redis Cluster on loopback for the Redis stores' tests and bench: Debian's redis-server
 * with `cluster-enabled yes`, three masters and (by default) one replica each, joined with
 * `redis-cli --cluster create --cluster-yes`, ready once every node reports cluster_state:ok.
 * Nodes fail over fast (`cluster-node-timeout` 1 s) and keep serving the slots they hold while
 * another master is down (`cluster-require-full-coverage no`, as docs/redis-cluster.md advises).
 * No persistence unless asked (`appendOnly`): a node's data lives in its memory and its replica.
 *
 * @example
 * const cluster = await startRedisCluster();
 * const meter = createRedisMeter(cluster.url());
 * const port = await cluster.masterOf('seclookup:{sub:1}:quota');
 * await cluster.kill(port);        // its replica takes over within ~2 s
 * await cluster.waitUntilOk();
 * await cluster.close();
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findRedisServer, freePort, sendCommand } from './redis-server.js';

export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** For a replica, its master's id. */
  masterId: string | null;
  /** Slot ranges [first, last] a master serves. */
  slots: [number, number][];
  failed: boolean;
}

export interface RedisCluster {
  /** Every node's port, masters first as created. */
  readonly ports: readonly number[];
  /** `redis+cluster://127.0.0.1:p1,...` naming every node as a seed. */
  url(): string;
  /** The process id of the node on `port` while it runs. */
  pid(port: number): number | undefined;
  /** The nodes as `CLUSTER NODES` on a running node describes them. */
  nodes(): Promise<ClusterNodeInfo[]>;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** `CLUSTER KEYSLOT key`. */
  slotOf(key: string): Promise<number>;
  /** SIGKILL the node on `port` (a crash: nothing is flushed) and wait until it has exited. */
  kill(port: number): Promise<void>;
  /** Start the node on `port` again (it rejoins from its nodes.conf) and wait until it answers PING. */
  start(port: number): Promise<void>;
  /**
   * Wait until every running node reports cluster_state:ok, every slot has a live master in every
   * running node's view (the views agreeing on which), and every live replica is synced.
   */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  /** FLUSHALL on every master. */
  flush(): Promise<void>;
  /** One command to one node, its raw RESP reply. */
  command(port: number, ...args: string[]): Promise<string>;
  /** Run `redis-cli` with `args` (e.g. `--cluster reshard ...`); resolves with its output. */
  cli(args: string[]): Promise<string>;
  /** Stop every node and remove the working directories. */
  close(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Masters. @default 3 */
  masters?: number;
  /** Replicas per master. @default 1 */
  replicas?: number;
  /**
   * Every node keeps its data in an append-only file (fsync on every write), so a node killed
   * and started again comes back with it. @default false (nothing persisted)
   */
  appendOnly?: boolean;
}

const STARTUP_TIMEOUT_MS = 10_000;
const SLOTS = 16_384;

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 1;
  const binary = findRedisServer();
  // redis-cli ships beside redis-server (Debian's redis-tools, a dependency of redis-server).
  const cliBinary = existsSync(join(dirname(binary), 'redis-cli')) ? join(dirname(binary), 'redis-cli') : 'redis-cli';
  const root = mkdtempSync(join(tmpdir(), 'seclookup-redis-cluster-'));
  const children = new Map<number, { proc: ChildProcess; exited: Promise<void>; output: () => string }>();
  const killAll = () => {
    for (const { proc } of children.values()) proc.kill('SIGKILL');
  };
  process.once('exit', killAll);

  async function launch(port: number): Promise<void> {
    const dir = join(root, String(port));
    mkdirSync(dir, { recursive: true });
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      ...(options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--logfile',
      '',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '1000',
      '--cluster-require-full-coverage',
      'no',
      // A replica takes over however long its link was down: tests kill masters at will.
      '--cluster-replica-validity-factor',
      '0',
    ];
    const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    children.set(port, { proc, exited, output: () => output });
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      try {
        if ((await sendCommand(port, ['PING'])).startsWith('+PONG')) return;
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
    proc.kill('SIGKILL');
    await exited;
    throw new Error(`redis-server (cluster node) did not answer PING on 127.0.0.1:${port}:\n${output}`);
  }

  const running = (port: number) => {
    const child = children.get(port);
    return child !== undefined && child.proc.exitCode === null && child.proc.signalCode === null;
  };

  function cli(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(cliBinary, args, { timeout: 60_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`redis-cli ${args.slice(0, 2).join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout + stderr);
      });
    });
  }

  async function nodes(): Promise<ClusterNodeInfo[]> {
    const port = [...children.keys()].find(running);
    if (port === undefined) throw new Error('no cluster node is running');
    return parseClusterNodes(await sendCommand(port, ['CLUSTER', 'NODES']));
  }

  /** `replicasExpected`: at creation, also wait until that many nodes show as replicas (gossip spreads the roles). */
  async function waitUntilOk(timeoutMs = 20_000, replicasExpected = 0): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const runningPorts = [...children.keys()].filter(running);
        const states = await Promise.all(runningPorts.map((port) => sendCommand(port, ['CLUSTER', 'INFO'])));
        // Every node's own view, not one node's: a client asks any of them for the slot map (and
        // ioredis's ready check asks any of them for CLUSTER INFO). A node that has not yet heard
        // of a failover still maps the dead master's slots to it, and a restarted master still
        // claims its old slots, until gossip reaches them.
        const views = await Promise.all(runningPorts.map(async (port) => parseClusterNodes(await sendCommand(port, ['CLUSTER', 'NODES']))));
        const slotMaps = views.map(liveSlotMap);
        const covered = Math.min(...slotMaps.map((map) => map.covered));
        const agreed = slotMaps.every((map) => map.owners === slotMaps[0].owners);
        const live = views[0].filter((node) => !node.failed && running(node.port));
        last = `${states.map((s) => /cluster_state:(\w+)/.exec(s)?.[1]).join(',')}; ${covered} slots on live masters in every view; views ${agreed ? 'agree' : 'differ'}`;
        // A replica that never synced cannot take over: wait for every live replica's link too.
        const replicas = live.filter((node) => node.role === 'replica');
        const links = await Promise.all(replicas.map((node) => sendCommand(node.port, ['INFO', 'replication'])));
        const synced = links.filter((info) => info.includes('master_link_status:up')).length;
        last += `; ${synced} of ${replicas.length} replicas synced`;
        const allReplicas = replicas.length >= replicasExpected;
        if (states.every((s) => s.includes('cluster_state:ok')) && covered === SLOTS && agreed && synced === replicas.length && allReplicas) return;
      } catch (error) {
        last = String(error);
      }
      await sleep(100);
    }
    throw new Error(`the Redis Cluster did not reach cluster_state:ok with every slot served: ${last}`);
  }

  /** In one node's view: how many slots live masters serve, and who serves which (comparable text). */
  function liveSlotMap(view: ClusterNodeInfo[]): { covered: number; owners: string } {
    const masters = view.filter((node) => node.role === 'master' && !node.failed && running(node.port) && node.slots.length > 0);
    const covered = masters.reduce((sum, node) => sum + node.slots.reduce((n, [a, b]) => n + b - a + 1, 0), 0);
    const owners = masters
      .map((node) => `${node.id}:${node.slots.map(([a, b]) => `${a}-${b}`).join(',')}`)
      .sort()
      .join(' ');
    return { covered, owners };
  }

  async function slotOf(key: string): Promise<number> {
    return Number(/^:(\d+)/.exec(await sendCommand(ports.find(running)!, ['CLUSTER', 'KEYSLOT', key]))?.[1]);
  }

  const ports: number[] = [];
  try {
    // A node also listens on its port + 10000 (the cluster bus): both must be free.
    while (ports.length < masters * (1 + replicas)) {
      const port = await freePort();
      if (port + 10_000 > 65_535 || ports.includes(port)) continue;
      try {
        await launch(port);
        ports.push(port);
      } catch {
        // taken between the probe and the bind: another port
      }
    }
    await cli(['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    await waitUntilOk(20_000, masters * replicas);
  } catch (error) {
    killAll();
    rmSync(root, { recursive: true, force: true });
    process.removeListener('exit', killAll);
    throw error;
  }

  return {
    ports,
    url: () => `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    pid: (port) => (running(port) ? children.get(port)?.proc.pid : undefined),
    nodes,
    slotOf,
    async masterOf(key) {
      const slot = await slotOf(key);
      const master = (await nodes()).find((node) => node.role === 'master' && !node.failed && node.slots.some(([a, b]) => a <= slot && slot <= b));
      if (!master) throw new Error(`no live master serves slot ${slot}`);
      return master.port;
    },
    async kill(port) {
      const child = children.get(port);
      if (!child || !running(port)) return;
      child.proc.kill('SIGKILL');
      await child.exited;
    },
    async start(port) {
      if (running(port)) return;
      await launch(port);
    },
    waitUntilOk,
    async flush() {
      const live = (await nodes()).filter((node) => node.role === 'master' && running(node.port));
      await Promise.all(live.map((node) => sendCommand(node.port, ['FLUSHALL'])));
    },
    command: (port, ...args) => sendCommand(port, args),
    cli,
    async close() {
      for (const [port, child] of children) {
        if (!running(port)) continue;
        child.proc.kill('SIGKILL');
        await child.exited;
      }
      process.removeListener('exit', killAll);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `CLUSTER NODES` (a bulk string reply) as node records. */
export function parseClusterNodes(reply: string): ClusterNodeInfo[] {
  const body = reply.replace(/^\$\d+\r\n/, '');
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[0-9a-f]{40} /.test(line))
    .map((line) => {
      const [id, address, flags, master, , , , , ...slotFields] = line.split(' ');
      const flagList = flags.split(',');
      const slots = slotFields
        .filter((field) => /^\d+(-\d+)?$/.test(field))
        .map((field) => {
          const [a, b] = field.split('-').map(Number);
          return [a, b ?? a] as [number, number];
        });
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        role: flagList.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? null : master,
        slots,
        failed: flagList.includes('fail') || flagList.includes('fail?'),
      } satisfies ClusterNodeInfo;
    });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
