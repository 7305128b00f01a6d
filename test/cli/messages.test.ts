/**
 * What the CLI says when a setting is wrong, named as the operator wrote it: a config file's key,
 * an environment variable, a --db in a folder that does not exist; the warning serve and lookup
 * give when pwbreach answers from its sample; data update refusing to write into node_modules.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writableDataDir } from '../../src/cli/data.js';
import { UsageError } from '../../src/cli/errors.js';
import { createTempDirs, runCli } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

describe('messages that name the setting as it was given', () => {
  it('a bad value in the config file names the file and its key, not the flag', async () => {
    const config = join(dirs.make(), 'serve.json');
    writeFileSync(config, JSON.stringify({ port: 'eighty' }));
    const result = await runCli(['serve', '--config', config]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`seclookup: "port" in ${config} must be a whole number from 0 to 65535 (got "eighty")`);
  });

  it('a bad value in the environment names the variable; a flag given on the command line is named as the flag', async () => {
    const fromEnv = await runCli(['serve'], { env: { SECLOOKUP_BODY_LIMIT: 'lots' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/^seclookup: \$SECLOOKUP_BODY_LIMIT must be/);
    const fromFlag = await runCli(['serve', '--body-limit', 'lots'], { env: { SECLOOKUP_BODY_LIMIT: 'lots' } });
    expect(fromFlag.stderr).toMatch(/^seclookup: --body-limit must be/);
  });

  it('--db in a folder that does not exist blames the database path, not the product that opened it first', async () => {
    const result = await runCli(['serve', '--port', '0', '--db', '/nonexistent-dir/x.db']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('seclookup: cannot use the database /nonexistent-dir/x.db: the folder /nonexistent-dir does not exist\n');
  });
});

describe('messages said once, pointing at the right help', () => {
  it('an engine that cannot load is named once: no "geoip: geoip:", no "seclookup:" inside the line', async () => {
    const lookup = await runCli(['lookup', 'geoip', '8.8.8.8', '--geoip-db', '/nonexistent.mmdb']);
    expect(lookup.code).toBe(1);
    expect(lookup.stderr).toMatch(/^seclookup: cannot load the lookup engines: geoip: cannot read \/nonexistent\.mmdb: ENOENT/);
    expect(lookup.stderr).not.toMatch(/geoip: geoip:|: seclookup: /);
  });

  it('$SECLOOKUP_LEASE_MS refused under keys points at keys --help, naming the variable', async () => {
    const result = await runCli(['keys', 'list', '--db', join(dirs.make(), 'x.db')], { env: { SECLOOKUP_LEASE_MS: 'soon' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('seclookup: $SECLOOKUP_LEASE_MS must be a whole number >= 1 (got "soon")\nRun `seclookup keys --help` for usage.\n');
  });
});

describe('pwbreach on its bundled sample', () => {
  it('lookup pwbreach says so in one warning line on stderr, and still answers', async () => {
    const result = await runCli(['lookup', 'pwbreach', 'password']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ breached: true, count: expect.any(Number) });
    const warnings = result.stderr.trim().split('\n');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^seclookup: warning: pwbreach answers from the bundled 7,534-hash sample, .*data import pwbreach FILE.*--pwbreach-upstream URL/,
    );
  });

  it('a lookup of another product gives no pwbreach warning', async () => {
    const result = await runCli(['lookup', 'useragent', 'curl/8.5.0']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describe('data update and import write where a reinstall keeps them', () => {
  it('refuses the bundled data when it lies inside node_modules, and names data init', () => {
    expect(() => writableDataDir(undefined, 'data update', '/app/node_modules/seclookup/data')).toThrow(UsageError);
    expect(() => writableDataDir(undefined, 'data update', '/app/node_modules/seclookup/data')).toThrow(
      /give --data-dir DIR .*inside node_modules, where a reinstall would undo the update; `seclookup data init DIR` copies it there first/,
    );
    expect(writableDataDir(undefined, 'data update', '/home/me/seclookup/data')).toBe('/home/me/seclookup/data');
    expect(writableDataDir('/srv/data', 'data update', '/app/node_modules/seclookup/data')).toBe('/srv/data');
  });
});
