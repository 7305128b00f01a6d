/**
 * Runs the built CLI (`dist/cli.js`, produced by tsup before the tests) as a real child
 * process, with a clean environment so the developer's SECLOOKUP_DB / PORT cannot leak in.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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

/**
 * Run `node dist/cli.js ...args` to completion. The working directory defaults to the OS temp
 * dir, so a command that falls back to ./seclookup.db never writes into the repository.
 */
export function runCli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env: cliEnv(options.env), cwd: options.cwd ?? tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** Run the CLI and parse its stdout as JSON; fails the test with stderr when it exits non-zero. */
export async function runCliJson<T = unknown>(args: string[], options?: { env?: Record<string, string> }): Promise<T> {
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
