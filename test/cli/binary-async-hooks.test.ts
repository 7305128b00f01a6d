/**
 * The binary (`node dist/cli.js`, main without an io) runs its command outside the CLI's
 * AsyncLocalStorage: once entered, Node runs promise hooks on every promise, which `serve` would
 * pay on every request for as long as it runs. A preload marks every AsyncLocalStorage.run call.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, cliEnv } from './harness.js';

const PRELOAD = `data:text/javascript,${encodeURIComponent(
  [
    "import { AsyncLocalStorage } from 'node:async_hooks';",
    'const run = AsyncLocalStorage.prototype.run;',
    "AsyncLocalStorage.prototype.run = function (...args) { process.stderr.write('ALS-RUN\\n'); return run.apply(this, args); };",
  ].join('\n'),
)}`;

function node(args: string[]): { stdout: string; stderr: string } {
  const { stdout, stderr } = spawnSync(process.execPath, ['--import', PRELOAD, ...args], { env: cliEnv(), encoding: 'utf8' });
  return { stdout, stderr };
}

describe('the seclookup binary', () => {
  it('runs a command without entering an AsyncLocalStorage (no promise hooks for serve)', () => {
    // The preload sees a run made in its process.
    expect(node(['-e', "new (require('node:async_hooks').AsyncLocalStorage)().run(1, () => {})"]).stderr).toBe('ALS-RUN\n');
    const version = node([CLI_PATH, '--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(version.stderr).toBe('');
    const help = node([CLI_PATH, 'serve', '--help']);
    expect(help.stdout).toContain('seclookup serve');
    expect(help.stderr).toBe('');
  });
});
