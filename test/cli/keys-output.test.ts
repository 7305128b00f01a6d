/**
 * `keys create` whose output cannot be written: the secret key exists only in that output, so a
 * pair whose secret was never shown is revoked before the command fails (exit 1), and the message
 * says so. In process (a stdout whose writes fail, as a full disk's do) and through the binary
 * on `/dev/full`.
 */
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CLI_PATH, cliEnv, createTempDirs, runCli, runCliJson } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

/** `main(args)` with a stdout whose every write fails with `error`, as a full disk's does. */
async function runWithFailingStdout(args: string[], error: Error): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const io = {
    stdout: { write: (_text: string, done?: (error?: Error | null) => void) => setImmediate(() => done?.(error)) },
    stderr: { write: (text: string) => (stderr += text) },
    env: cliEnv(),
    cwd: dirs.make(),
    host: { signals: new EventEmitter(), exit: () => {} },
  };
  const code = await main(args, io);
  return { code, stderr };
}

const ENOSPC = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('keys create with an output that cannot be written', () => {
  it.each([[[]], [['--json']]])('revokes the pair whose secret was never shown, and says so (%j)', async (extra) => {
    const db = join(dirs.make(), 'k.db');
    const result = await runWithFailingStdout(['keys', 'create', '--product', 'geoip', ...extra, '--db', db], ENOSPC);
    expect(result.stderr).toBe(
      'seclookup: cannot write the output (ENOSPC: no space left on device, write): revoked the new geoip key pair (key ids 1 and 2, subscription 1), since its secret key was never shown; run the command again\n',
    );
    expect(result.code).toBe(1);
    const keys = await runCliJson<{ id: string; status: string }[]>(['keys', 'list', '--json', '--db', db]);
    expect(keys.map((key) => [key.id, key.status])).toEqual([
      ['1', 'revoked'],
      ['2', 'revoked'],
    ]);
  });

  it('a reader gone before the key was read (EPIPE) is a failure too: the secret was lost', async () => {
    const db = join(dirs.make(), 'k.db');
    const result = await runWithFailingStdout(['keys', 'create', '--product', 'geoip', '--db', db], Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('revoked the new geoip key pair');
    const keys = await runCliJson<{ status: string }[]>(['keys', 'list', '--json', '--db', db]);
    expect(keys.every((key) => key.status === 'revoked')).toBe(true);
  });

  it('the binary on /dev/full: exit 1, the pair revoked', async () => {
    const db = join(dirs.make(), 'k.db');
    const full = openSync('/dev/full', 'w');
    let result: { code: number | null; stderr: string };
    try {
      result = await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [CLI_PATH, 'keys', 'create', '--product', 'geoip', '--db', db], {
          env: cliEnv(),
          stdio: ['ignore', full, 'pipe'],
        });
        let stderr = '';
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
    } finally {
      closeSync(full);
    }
    expect(result.code).toBe(1);
    // Said once: by keys create, which says what it did about it, not a second time by the binary.
    expect(result.stderr).toBe(
      'seclookup: cannot write the output (ENOSPC: no space left on device, write): revoked the new geoip key pair (key ids 1 and 2, subscription 1), since its secret key was never shown; run the command again\n',
    );
    const keys = await runCliJson<{ status: string }[]>(['keys', 'list', '--json', '--db', db]);
    expect(keys.map((key) => key.status)).toEqual(['revoked', 'revoked']);
  });
});

describe('sitekeys create with an output that cannot be written, and revoked site keys', () => {
  it.each([[[]], [['--json']]])('revokes the site key whose secret was never shown, and says so (%j)', async (extra) => {
    const db = join(dirs.make(), 's.db');
    const result = await runWithFailingStdout(['sitekeys', 'create', '--domain', 'shop.example', ...extra, '--db', db], ENOSPC);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^seclookup: cannot write the output \(ENOSPC: no space left on device, write\): revoked the new site key tf_pub_[\w-]+, since its secret key was never shown; run the command again\n$/,
    );
    const keys = await runCliJson<{ status: string }[]>(['sitekeys', 'list', '--json', '--db', db]);
    expect(keys.map((key) => key.status)).toEqual(['revoked']);
  });

  it('revoking a revoked site key says it was revoked already; updating one is refused', async () => {
    const db = join(dirs.make(), 's.db');
    const created = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--domain', 'shop.example', '--json', '--db', db]);
    const first = await runCli(['sitekeys', 'revoke', created.site_key, '--db', db]);
    expect([first.code, first.stdout]).toEqual([0, expect.stringMatching(/^Revoked site key \d+ and its secret key\.\n$/)]);
    const again = await runCli(['sitekeys', 'revoke', created.site_key, '--db', db]);
    expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(/^site key \d+ was already revoked\.\n$/)]);
    const update = await runCli(['sitekeys', 'update', created.site_key, '--domain', 'other.example', '--db', db]);
    expect(update.code).toBe(1);
    expect(update.stderr).toMatch(/^seclookup: site key \d+ is revoked; create another with seclookup sitekeys create\n$/);
  });
});
