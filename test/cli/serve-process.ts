/**
 * `seclookup serve` for the CLI tests, started on a free port with its output collected line by
 * line: in this process (`startServe`: `main(['serve', ...], io)` with its own stdout, stderr
 * and signals, the default) or as a real `node dist/cli.js serve` child (`ServeProcess.start`),
 * kept for what only a process shows: SIGKILL, a real signal to a pid, the binary's own stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_PATH, cliEnv } from './harness.js';

export interface ServeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeStartOptions {
  args?: string[];
  env?: Record<string, string>;
  /** A real process only: a file descriptor for its stdout (the log) instead of a pipe read into `stdoutLines`. */
  stdout?: number;
}

/** Every serve started and not yet stopped: a test's afterEach stops what a failed test left. */
export const running = new Set<ServeRun>();

/** What the tests see of a running serve, in process or not: its output, its signals, its exit. */
export abstract class ServeRun {
  readonly stdoutLines: string[] = [];
  stderr = '';
  /** Resolves once serve has exited and its stdout and stderr are read to the end. */
  abstract readonly exited: Promise<ServeExit>;
  /** Null while serve runs; its exit code once it has exited. */
  abstract readonly exitCode: number | null;
  private stdoutRest = '';

  protected takeStdout(chunk: string): void {
    const parts = (this.stdoutRest + chunk).split('\n');
    this.stdoutRest = parts.pop()!;
    this.stdoutLines.push(...parts);
  }

  /** Send `signal` and return at once (SIGKILL: in process, two SIGTERMs: drain, then cut every connection). */
  abstract kill(signal: NodeJS.Signals): void;

  /** Poll until `probe` returns something truthy; fail with the output so far after 10 s. */
  async waitFor<T>(probe: () => T | null | undefined | false, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out; stdout:\n${this.stdoutLines.join('\n')}\nstderr:\n${this.stderr}`);
      if (this.exitCode !== null) throw new Error(`serve exited ${this.exitCode}; stderr:\n${this.stderr}`);
      await sleep(20);
    }
  }

  /** Every stdout line, parsed: stdout is the JSON log and nothing else, so any other line fails here. */
  logLines(): Record<string, unknown>[] {
    return this.stdoutLines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** The log's request lines (an error line has no request_id). */
  requestLines(): Record<string, unknown>[] {
    return this.logLines().filter((line) => 'request_id' in line);
  }

  /** Product -> keys, from the one-time starter table (on stderr). */
  starterKeys(): Map<string, { secret: string; public: string }> {
    const keys = new Map<string, { secret: string; public: string }>();
    for (const line of this.stderr.split('\n')) {
      const row = /^(\w+)\s+(\w+_sec_[\w-]+)\s+(\w+_pub_[\w-]+)$/.exec(line);
      if (row) keys.set(row[1], { secret: row[2], public: row[3] });
    }
    return keys;
  }

  async stop(signal: NodeJS.Signals): Promise<ServeExit> {
    this.kill(signal);
    const result = await this.exited;
    running.delete(this);
    return result;
  }

  /**
   * Wait for the "listening on" line: the base URL. A start builds every engine (1.5 s of CPU on a
   * quiet machine); on a shared, loaded one it has taken over 30 s (a fresh clone's first start,
   * which also indexes the ASN data, beside the suite's busiest files), so it gets 50, within
   * the hooks' 60.
   */
  protected async listening(): Promise<string> {
    const match = await this.waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(this.stderr), 50_000);
    return match[1];
  }
}

function serveArgs(db: string, args: readonly string[]): string[] {
  return ['serve', '--port', '0', '--db', db, ...args];
}

/** `main(['serve', ...], io)` in this process: stdout is the JSON log, signals come from an emitter. */
export class ServeInProcess extends ServeRun {
  readonly exited: Promise<ServeExit>;
  exitCode: number | null = null;
  private readonly signals = new EventEmitter();
  private killed = false;

  private constructor(argv: string[], env: Record<string, string>) {
    super();
    const io = {
      stdout: { write: (text: string) => this.takeStdout(text) },
      stderr: { write: (text: string) => (this.stderr += text) },
      env: cliEnv(env),
      cwd: tmpdir(),
      // The exit code is main's result; the exit itself (the binary's process.exit) has nothing to end here.
      host: { signals: this.signals, exit: () => {} },
    };
    this.exited = import('../../src/cli/main.js')
      .then(({ main }) => main(argv, io))
      .then((code) => {
        this.exitCode = code;
        return { code, signal: null };
      });
  }

  static async start(db: string, { args = [], env = {} }: ServeStartOptions = {}): Promise<{ serve: ServeInProcess; baseUrl: string }> {
    const serve = new ServeInProcess(serveArgs(db, args), env);
    running.add(serve);
    return { serve, baseUrl: await serve.listening() };
  }

  kill(signal: NodeJS.Signals): void {
    if (signal !== 'SIGKILL') {
      this.signals.emit(signal, signal);
      return;
    }
    // No process to kill: stop now, cutting every open connection (the second signal does that).
    if (!this.killed) this.signals.emit('SIGTERM', 'SIGTERM');
    this.killed = true;
    this.signals.emit('SIGTERM', 'SIGTERM');
  }
}

/** A real `node dist/cli.js serve` child process. */
export class ServeProcess extends ServeRun {
  readonly exited: Promise<ServeExit>;

  private constructor(readonly child: ChildProcess) {
    super();
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.takeStdout(chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  get exitCode(): number | null {
    return this.child.exitCode;
  }

  static async start(db: string, { args = [], env = {}, stdout = undefined }: ServeStartOptions = {}): Promise<{ serve: ServeProcess; baseUrl: string }> {
    const child = spawn(process.execPath, [CLI_PATH, ...serveArgs(db, args)], { env: cliEnv(env), cwd: tmpdir(), stdio: ['pipe', stdout ?? 'pipe', 'pipe'] });
    const serve = new ServeProcess(child);
    running.add(serve);
    return { serve, baseUrl: await serve.listening() };
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** Start serve in this process: what most tests need ("a serve answering HTTP"). */
export const startServe = ServeInProcess.start;

/** One GET with a key: its status, or 'cut' when the connection ended without an answer. */
export function getStatus(url: string, key: string, agent: Agent): Promise<number | 'cut'> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${key}` }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', () => resolve('cut'));
    });
    req.on('error', () => resolve('cut'));
    req.end();
  });
}
