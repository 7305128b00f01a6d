import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, REPO_ROOT, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

describe('seclookup lookup', () => {
  it('parses a User-Agent and prints the result as pretty JSON', async () => {
    const ua = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
    const result = await runCli(['lookup', 'useragent', ua]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('\n  "user_agent"');
    expect(JSON.parse(result.stdout)).toMatchObject({
      user_agent: ua,
      browser: { name: 'Mobile Safari' },
      os: { name: 'iOS' },
      device_type: 'mobile',
      is_bot: false,
    });
  });

  it('takes an input that starts with "-" after --', async () => {
    const result = await runCliJson<{ user_agent: string }>(['lookup', 'useragent', '--', '-odd-agent/1.0']);
    expect(result.user_agent).toBe('-odd-agent/1.0');
  });

  it('finds a GitHub webhook address, and honours --provider', async () => {
    expect(await runCliJson(['lookup', 'webhookip', '140.82.115.10'])).toEqual({
      ip: '140.82.115.10',
      matched: true,
      providers: [{ id: 'github', name: 'GitHub' }],
    });
    expect(await runCliJson(['lookup', 'webhookip', '140.82.115.10', '--provider', 'stripe'])).toEqual({ ip: '140.82.115.10', matched: false, providers: [] });
    // Given twice, both count (as --provider stripe,github), not only the last.
    expect(await runCliJson(['lookup', 'webhookip', '140.82.115.10', '--provider', 'github', '--provider', 'stripe'])).toMatchObject({ matched: true });
    expect(await runCliJson(['lookup', 'webhookip', '140.82.115.10', '--provider', 'stripe', '--provider=github'])).toMatchObject({ matched: true });
    expect(await runCliJson(['lookup', 'webhookip', '8.8.8.8'])).toEqual({ ip: '8.8.8.8', matched: false, providers: [] });
  });

  it.each([
    [['webhookip', '10.1.2.3'], 'ip_not_routable'],
    [['webhookip', 'not-an-ip'], 'invalid_ip'],
    [['webhookip', '140.82.115.10', '--provider', 'nosuch'], 'invalid_provider'],
    [['useragent', ''], 'invalid_user_agent'],
  ])('%j exits 1 with {error_code: %s} on stderr', async (args, code) => {
    const result = await runCli(['lookup', ...args]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const error = JSON.parse(result.stderr) as { error_code: string; error: string };
    expect(error.error_code).toBe(code);
    expect(error.error.length).toBeGreaterThan(0);
  });

  it('reads datasets from --data-dir and $SECLOOKUP_DATA_DIR', async () => {
    const dataDir = temp.make();
    const dataset = { generated: '2026-01-01', providers: [{ id: 'acme', name: 'Acme Hooks', source_url: 'https://acme.example/ips', cidrs: ['9.9.9.0/24'] }] };
    cpSync(join(REPO_ROOT, 'data'), dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'webhookip', 'ranges.json'), JSON.stringify(dataset));
    const expected = { ip: '9.9.9.9', matched: true, providers: [{ id: 'acme', name: 'Acme Hooks' }] };
    expect(await runCliJson(['lookup', 'webhookip', '9.9.9.9', '--data-dir', dataDir])).toEqual(expected);
    expect(await runCliJson(['lookup', 'webhookip', '9.9.9.9'], { env: { SECLOOKUP_DATA_DIR: dataDir } })).toEqual(expected);
  });

  it('exits 1 naming the file when the dataset is missing', async () => {
    const result = await runCli(['lookup', 'webhookip', '9.9.9.9', '--data-dir', temp.make()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot load the lookup engines');
    expect(result.stderr).toContain('ranges.json');
  });
});

describe('seclookup lookup: a mistaken flag is a usage error naming it', () => {
  it.each([
    [['scamrisk', 'metamask-io.com'], '--type', '(missing)'],
    [['scamrisk', '--type', 'bogus', 'metamask-io.com'], '--type', '(got "bogus")'],
    [['tls', 'example.com', '--port', 'abc'], '--port', '(got "abc")'],
    [['tls', 'example.com', '--port', '70000'], '--port', '(got "70000")'],
  ])('%j exits 2 naming %s', async (args, flag, got) => {
    const result = await runCli(['lookup', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.startsWith(`seclookup: ${flag} must be `)).toBe(true);
    expect(result.stderr).toContain(got);
    expect(result.stderr).toContain('seclookup lookup --help');
  });

  it('a product setting the product refuses (a provider without its key) exits 2, as serve does', async () => {
    const result = await runCli(['lookup', 'riskscore', '185.220.101.1', '--riskscore-provider', 'ipinfo']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('riskscore provider ipinfo needs a key');
    expect(result.stderr).toContain('(from --riskscore-* or $SECLOOKUP_RISKSCORE_*)');
    expect(result.stderr).not.toContain('config file');
  });
});

describe('seclookup lookup --dns', () => {
  it.each([['dns.example.com'], ['127.0.0.1:0'], ['[::1]:x']])('refuses --dns %s with exit 2', async (server) => {
    const result = await runCli(['lookup', 'useragent', 'curl/8', '--dns', server]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--dns');
  });

  it('takes several servers, repeated or comma-separated, for products that use none', async () => {
    const result = await runCliJson<{ is_bot: boolean }>(['lookup', 'useragent', 'curl/8', '--dns', '127.0.0.1:5353,[::1]:53', '--dns', '10.0.0.2']);
    expect(result.is_bot).toBe(true);
  });

  it('refuses an --allow-private-targets CIDR with host bits (exit 2, naming the flag)', async () => {
    const result = await runCli(['lookup', 'useragent', 'curl/8', '--allow-private-targets', '127.0.0.1/8']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--allow-private-targets');
    expect(result.stderr).toContain('host bits');
  });
});
