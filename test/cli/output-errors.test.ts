/**
 * The binary's own stdout failing: a full disk (`/dev/full` answers every write ENOSPC) fails the
 * command with one line on stderr, not a stack trace; a reader that goes away (`| head`) is not
 * a failure. Real processes: the handlers live in dist/cli.js, not in `main`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { expect, it } from 'vitest';
import { CLI_PATH, cliEnv } from './harness.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

function run(args: string[], stdout: number | 'pipe', closeStdoutAtOnce = false): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [CLI_PATH, ...args], { env: cliEnv(), cwd: tmpdir(), stdio: ['ignore', stdout, 'pipe'] });
    // The reader leaves before the command writes, as `head -1` does after its line.
    if (closeStdoutAtOnce) child.stdout!.destroy();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

it('a command whose output cannot be written (a full disk) exits 1 with one line on stderr, no stack trace', async () => {
  const full = openSync('/dev/full', 'w');
  try {
    const result = await run(['lookup', 'useragent', UA], full);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('seclookup: cannot write the output: ENOSPC: no space left on device, write\n');
  } finally {
    closeSync(full);
  }
});

it('a reader that goes away before the output (`| head`) is not a failure: exit 0, nothing on stderr', async () => {
  const result = await run(['lookup', 'useragent', UA], 'pipe', true);
  expect(result).toEqual({ code: 0, stderr: '' });
});
