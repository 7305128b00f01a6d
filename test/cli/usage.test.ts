import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, REPO_ROOT, runCli } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

describe('seclookup help and version', () => {
  it('prints the overview with every command for --help and for no arguments', async () => {
    for (const args of [['--help'], ['-h'], []]) {
      const result = await runCli(args);
      expect(result.code).toBe(0);
      for (const command of ['serve', 'keys', 'plans', 'lookup', 'data update']) expect(result.stdout).toContain(command);
      expect(result.stdout).toContain('Exit codes');
    }
  });

  it.each([
    [['serve', '--help'], '127.0.0.1'],
    [['keys', '--help'], 'keys revoke'],
    [['keys', 'create', '--help'], '--ip-allow'],
    [['plans', 'set', '-h'], '--monthly-quota N|unlimited'],
    [['plans', 'set', '--help'], '--all-products'],
    [['lookup', '--help'], '--provider'],
    [['data', 'update', '--help'], '--mirror'],
  ])('%j prints the command help on stdout', async (args, expected) => {
    const result = await runCli(args);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(expected);
    expect(result.stderr).toBe('');
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe('seclookup usage errors exit 2 with a hint to --help', () => {
  it.each([
    [['frobnicate'], 'unknown command "frobnicate"', 'seclookup --help'],
    [['--db', 'x.db'], 'unknown option --db', 'seclookup --help'],
    [['keys'], 'missing subcommand: create, list or revoke', 'seclookup keys --help'],
    [['keys', 'list', '--verbose'], "unknown option '--verbose'", 'seclookup keys --help'],
    [['keys', 'list', '--json=yes'], "option '--json' does not take an argument", 'seclookup keys --help'],
    [['serve', '--port'], 'option --port needs a value', 'seclookup serve --help'],
    [['serve', '--port', '70000'], '--port must be a whole number from 0 to 65535 (got "70000")', 'seclookup serve --help'],
    [['serve', '--port', 'http'], '--port must be a whole number from 0 to 65535', 'seclookup serve --help'],
    [['serve', '--trust-proxy', '10.0.0.0/8,nonsense'], '--trust-proxy: "nonsense" is not an IP address or CIDR', 'seclookup serve --help'],
    [
      ['serve', '--trust-proxy', '192.168.1.1/16'],
      '--trust-proxy: "192.168.1.1/16" has host bits set after the /16 prefix; did you mean the network 192.168.0.0/16',
      'seclookup serve --help',
    ],
    [['lookup', 'useragent'], 'missing INPUT', 'seclookup lookup --help'],
    // The lookups only: captcha is a product but not a lookup.
    [
      ['lookup', 'nosuch', 'x'],
      'unknown product "nosuch"; lookups: useragent, webhookip, geoip, timezone, emailauth, dnsbl, emailval, tls, whois, asn, pwbreach, scamrisk, domainrep, riskscore\n',
      'seclookup lookup --help',
    ],
    [['lookup', 'captcha', '8.8.8.8'], 'product captcha is not a lookup (see `seclookup sitekeys --help`); lookups: ', 'seclookup lookup --help'],
    [['lookup', 'useragent', 'curl/8', '--provider', 'github'], '--provider applies to webhookip only', 'seclookup lookup --help'],
    [['data', 'update', 'useragent'], 'useragent has no updatable dataset', 'seclookup data --help'],
    [['data', 'update', 'webhookip', '--timeout', '5s'], '--timeout must be a whole number from 1 to 2147483647', 'seclookup data --help'],
    [['data', 'update', 'webhookip', '--mirror', 'ftp://example.test/'], '--mirror must be an http(s) URL', 'seclookup data --help'],
  ])('%j', async (args, message, hint) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain(`Run \`${hint}\` for usage.`);
    expect(result.stdout).toBe('');
  });

  it('refuses a single-value flag given twice (exit 2, naming it, never its values), and changes nothing; repeatable flags stay repeatable', async () => {
    const folder = temp.make();
    const db = join(folder, 'x.db');
    for (const [args, flag, help] of [
      [['keys', 'create', '--product', 'geoip', '--product', 'asn', '--db', db], '--product', 'keys'],
      [['keys', 'list', '--db', db, '--db', join(folder, 'y.db')], '--db', 'keys'],
      [['keys', 'create', '--product', 'geoip', '--db=' + db, '--db', join(folder, 'y.db')], '--db', 'keys'],
      [['serve', '--port', '0', '--redis', 'redis://:hunter2@127.0.0.1:1/0', '--redis', 'redis://:hunter3@127.0.0.1:1/0'], '--redis', 'serve'],
      [['sitekeys', 'create', '--plan', 'starter', '--plan', 'enterprise', '--db', db], '--plan', 'sitekeys'],
    ] as const) {
      const result = await runCli([...args]);
      expect([args.join(' '), result.code, result.stderr]).toEqual([
        args.join(' '),
        2,
        `seclookup: option ${flag} was given more than once; give it once\nRun \`seclookup ${help} --help\` for usage.\n`,
      ]);
    }
    expect(existsSync(db)).toBe(false);
    // Documented as repeatable: --ip-allow, --dns, --domain, plans set --product.
    const created = await runCli(['keys', 'create', '--product', 'geoip', '--ip-allow', '10.0.0.0/8', '--ip-allow', '192.0.2.1', '--json', '--db', db]);
    expect([created.code, JSON.parse(created.stdout).ip_allow]).toEqual([0, ['10.0.0.0/8', '192.0.2.1/32']]);
  });

  it('rejects a bad PORT variable the same way', async () => {
    const result = await runCli(['serve', '--db', join(temp.make(), 'x.db')], { env: { PORT: 'eighty' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT must be a whole number from 0 to 65535 (got "eighty")');
  });
});
