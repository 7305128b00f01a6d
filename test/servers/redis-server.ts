/**
 * A real redis-server (Debian's package) on a free loopback port, for the Redis stores' tests and
 * bench: no persistence (`--save '' --appendonly no`), so a stop and start is a Redis that lost
 * everything, as after a crash without AOF; or, with `appendOnly`, an AOF that a restart reads
 * back. Never a mock: the stores' atomicity, scripts and expiry are Redis's own.
 *
 * @example
 * const redis = await startRedisServer();
 * const meter = createRedisMeter(redis.url());
 * await redis.stop();   // an outage
 * await redis.start();  // the same port again
 * await redis.close();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>/<db>`. */
  url(db?: number): string;
  /** The server's process id while it runs (for SIGSTOP/SIGCONT). */
  readonly pid: number | undefined;
  /** SIGTERM, and wait until the process has exited. */
  stop(): Promise<void>;
  /** Start again on the same port (empty: nothing is persisted) and wait until it answers PING. */
  start(): Promise<void>;
  /** Freeze the process (SIGSTOP): connections stay open, nothing answers, as a hung Redis. */
  pause(): void;
  /** Let a paused process run again (SIGCONT). */
  resume(): void;
  /** FLUSHALL. */
  flush(): Promise<void>;
  /** Send one command and return its raw RESP reply (for INFO, SCRIPT FLUSH, PTTL...). */
  command(...args: string[]): Promise<string>;
  /** Stop for good and remove the working directory. */
  close(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;

/** The redis-server binary: $REDIS_SERVER, /usr/bin/redis-server, or one on PATH. Throws with the fix when absent. */
export function findRedisServer(): string {
  const candidates = [
    process.env.REDIS_SERVER,
    '/usr/bin/redis-server',
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'redis-server')),
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error(
    'redis-server is not installed (looked for /usr/bin/redis-server and on PATH): the Redis tests need a real server. Install it with `apt-get install redis-server` (CI installs it), or set REDIS_SERVER to its path.',
  );
}

export interface RedisServerOptions {
  /**
   * Keep the data across stop() and start() in an append-only file (fsync on every write), as
   * a production Redis holding keys and plans must. @default false (nothing persisted)
   */
  appendOnly?: boolean;
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = findRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  let closed = false;
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  async function launch(): Promise<void> {
    const persistence = options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir, '--daemonize', 'no', '--logfile', ''];
    const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      try {
        if ((await sendCommand(port, ['PING'])).startsWith('+PONG')) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    proc.kill('SIGKILL');
    await exited;
    throw new Error(`redis-server did not answer PING on 127.0.0.1:${port}:\n${output}`);
  }

  // A free port can be taken between our probe and redis-server's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    await exited;
  }

  return {
    get port() {
      return port;
    },
    get pid() {
      return child?.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    url: (db = 0) => `redis://127.0.0.1:${port}/${db}`,
    stop,
    async start() {
      if (closed) throw new Error('the redis server fixture is closed');
      if (child && child.exitCode === null && child.signalCode === null) return;
      await launch();
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async flush() {
      await sendCommand(port, ['FLUSHALL']);
    },
    command: (...args: string[]) => sendCommand(port, args),
    async close() {
      closed = true;
      await stop();
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * One command on a fresh connection, answered with the raw reply once it is complete (a simple
 * string, error, integer, bulk string or flat array of those: enough for a fixture).
 */
export function sendCommand(port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis fixture: no reply to ${args[0]} within 5 s`));
    }, 5_000);
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk) => {
      reply = Buffer.concat([reply, chunk]);
      if (replyComplete(reply)) {
        clearTimeout(timer);
        socket.end();
        resolve(reply.toString());
      }
    });
    socket.write(args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).reduce((out, part) => out + part, `*${args.length}\r\n`));
  });
}

/** True when `buffer` holds one whole RESP reply. */
function replyComplete(buffer: Buffer): boolean {
  return parseReply(buffer, 0) !== -1;
}

/** The offset after the reply starting at `offset`, or -1 when incomplete. */
function parseReply(buffer: Buffer, offset: number): number {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd === -1) return -1;
  const type = String.fromCharCode(buffer[offset]);
  const header = buffer.toString('utf8', offset + 1, lineEnd);
  if (type === '+' || type === '-' || type === ':') return lineEnd + 2;
  if (type === '$') {
    const length = Number(header);
    if (length < 0) return lineEnd + 2;
    const end = lineEnd + 2 + length + 2;
    return buffer.length >= end ? end : -1;
  }
  if (type === '*') {
    const count = Number(header);
    let next = lineEnd + 2;
    for (let i = 0; i < count; i++) {
      next = parseReply(buffer, next);
      if (next === -1) return -1;
    }
    return next;
  }
  return -1;
}
