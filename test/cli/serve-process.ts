/** A `seclookup serve` child process for the CLI tests: started on a free port, its output collected line by line. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_PATH, cliEnv } from './harness.js';

/** Every process started and not yet stopped: a test's afterEach kills what a failed test left. */
export const running = new Set<ServeProcess>();

/** A `seclookup serve` child process with its output collected line by line. */
export class ServeProcess {
  readonly stdoutLines: string[] = [];
  stderr = '';
  /** Resolves once the process has exited and its stdout and stderr are read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stdoutRest = '';

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.stdoutRest + chunk).split('\n');
      this.stdoutRest = parts.pop()!;
      this.stdoutLines.push(...parts);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  static async start(
    db: string,
    { args = [], env = {} }: { args?: string[]; env?: Record<string, string> } = {},
  ): Promise<{ serve: ServeProcess; baseUrl: string }> {
    const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', db, ...args], { env: cliEnv(env), cwd: tmpdir() });
    const serve = new ServeProcess(child);
    running.add(serve);
    const match = await serve.waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serve.stderr));
    return { serve, baseUrl: match[1] };
  }

  /** Poll until `probe` returns something truthy; fail with the output so far after 10 s. */
  async waitFor<T>(probe: () => T | null | undefined | false, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out; stdout:\n${this.stdoutLines.join('\n')}\nstderr:\n${this.stderr}`);
      if (this.child.exitCode !== null) throw new Error(`serve exited ${this.child.exitCode}; stderr:\n${this.stderr}`);
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

  async stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.kill(signal);
    const result = await this.exited;
    running.delete(this);
    return result;
  }
}
