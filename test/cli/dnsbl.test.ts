/**
 * `seclookup lookup dnsbl`: the product's `--zones` flag and its zones file through
 * `--data-dir`. The CLI resolves through the system's DNS servers, which tests must not use,
 * so these cases stop at the checks made before any query (the engine's own tests cover the
 * queries against a loopback DNS server).
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, REPO_ROOT, runCli } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

async function lookupError(args: string[]): Promise<{ error_code: string; error: string }> {
  const result = await runCli(['lookup', 'dnsbl', ...args]);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  return JSON.parse(result.stderr) as { error_code: string; error: string };
}

describe('seclookup lookup dnsbl', () => {
  it.each([
    [['10.1.2.3'], 'ip_not_routable'],
    [['2001:4860:4860::8888'], 'ip_not_routable'],
    [['1.2.3'], 'invalid_ip'],
    [['8.8.8.8', '--zones', 'nosuch.example'], 'invalid_request'],
  ])('%j exits 1 with {error_code: %s} on stderr', async (args, code) => {
    expect((await lookupError(args)).error_code).toBe(code);
  });

  it('--zones names zones of the zones file in --data-dir', async () => {
    const dataDir = temp.make();
    cpSync(join(REPO_ROOT, 'data'), dataDir, { recursive: true });
    const zone = { zone: 'bl.example.net', name: 'Example BL', listing_codes: [{ code: '127.0.0.2', meaning: 'listed' }] };
    writeFileSync(join(dataDir, 'dnsbl', 'zones.json'), JSON.stringify({ generated: '2026-11-23', zones: [zone] }));
    // Known in that folder: the lookup goes on to the address check; unknown in the bundled data.
    expect((await lookupError(['10.0.0.1', '--zones', 'bl.example.net', '--data-dir', dataDir])).error_code).toBe('ip_not_routable');
    const unknown = await lookupError(['10.0.0.1', '--zones', 'bl.example.net']);
    expect(unknown.error_code).toBe('invalid_request');
    expect(unknown.error).toContain('configured: zen.spamhaus.org, bl.spamcop.net');
  });

  it('--zones belongs to dnsbl only, and the help lists it', async () => {
    const other = await runCli(['lookup', 'webhookip', '140.82.115.10', '--zones', 'zen.spamhaus.org']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--zones applies to dnsbl only');
    const help = await runCli(['lookup', '--help']);
    expect(help.stdout).toContain('dnsbl only: query only these configured zones');
    expect(help.stdout).toContain('seclookup lookup dnsbl 8.8.8.8 --zones zen.spamhaus.org,bl.spamcop.net');
  });
});
