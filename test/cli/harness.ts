/**
 * Runs the CLI with a clean environment so the developer's SECLOOKUP_DB / PORT cannot leak in:
 * in this process (`main(argv, io)` with its own stdout, stderr, environment, folder and, for
 * `serve`, signals and exit), and as the built `dist/cli.js` (produced by tsup before the tests)
 * in a real child process wherever a test asks for one.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI_PATH = join(REPO_ROOT, 'dist/cli.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment every CLI child gets: the parent's, minus seclookup's own variables. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ['SECLOOKUP_DB', 'SECLOOKUP_DATA_DIR', 'PORT']) if (!(name in extra)) delete env[name];
  return env;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** The working directory. @default the OS temp dir, so a fallback to ./seclookup.db never writes into the repository */
  cwd?: string;
  /**
   * Child processes only: file permissions bind the child even when the tests run as root (CI
   * does), by dropping root's power to override them (util-linux `setpriv`).
   */
  filePermissionsBind?: boolean;
  /** In this process only: the clock the command reads (`io.now`: doctor dates the data against it). */
  now?: () => number;
}

/** What a root process loses to be held to file permissions like any user. */
const FILE_OVERRIDE_CAPS = '-dac_override,-dac_read_search';

/**
 * Run `seclookup ...args` to completion, in this process (`serve` too: given its own signals and
 * exit, it leaves the process's alone). `runCliProcess` gives the same result from the binary.
 */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runCliInProcess(args, options);
}

/** Run `main(args, io)` in this process, its output collected. */
export async function runCliInProcess(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.js');
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: cliEnv(options.env),
    cwd: options.cwd ?? tmpdir(),
    // A serve that starts is stopped by its test, never by a signal to this process.
    host: { signals: new EventEmitter(), exit: () => {} },
    now: options.now,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

/** Run `node dist/cli.js ...args` to completion, as a child process. */
export function runCliProcess(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const command = [process.execPath, CLI_PATH, ...args];
  if (options.filePermissionsBind && process.getuid?.() === 0)
    command.unshift('setpriv', `--bounding-set=${FILE_OVERRIDE_CAPS}`, `--inh-caps=${FILE_OVERRIDE_CAPS}`);
  return outcomeOf(spawn(command[0], command.slice(1), { env: cliEnv(options.env), cwd: options.cwd ?? tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** A child process's exit code and all it wrote on stdout and stderr, once it has closed them. */
export function outcomeOf(child: ChildProcessByStdio<Writable | null, Readable, Readable>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run the CLI and parse its stdout as JSON; fails the test with stderr when it exits non-zero. */
export async function runCliJson<T = unknown>(args: string[], options?: RunOptions): Promise<T> {
  const result = await runCli(args, options);
  if (result.code !== 0) throw new Error(`seclookup ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A fresh directory under the OS temp dir; `cleanup()` removes every one made so far. */
export function createTempDirs() {
  const made: string[] = [];
  return {
    make(prefix = 'seclookup-cli-'): string {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup(): void {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
