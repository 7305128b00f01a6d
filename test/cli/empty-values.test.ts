/**
 * An empty value is a usage error naming the flag (or the config file's key), never "not given":
 * `--host ''` listened on every interface, `--db ''` used ./seclookup.db, `--data-dir ''` the
 * bundled data, `--ip-allow ''` made a key usable from anywhere, `data init ''` copied into the
 * current folder. An empty environment variable still counts as unset.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

/** Exit 2, the flag named, the command's help pointed at. */
function expectRefused(result: { code: number | null; stderr: string }, name: string, help: string): void {
  expect(result.stderr).toBe(`seclookup: ${name} needs a value (got an empty one)\nRun \`seclookup ${help} --help\` for usage.\n`);
  expect(result.code).toBe(2);
}

describe('serve', () => {
  it('refuses --host "" (every interface) and "host": "" in the config file, naming each', async () => {
    const folder = dirs.make();
    const db = join(folder, 'x.db');
    expectRefused(await runCli(['serve', '--port', '0', '--host', '', '--db', db]), '--host', 'serve');
    expectRefused(await runCli(['serve', '--port', '0', '--host', '  ', '--db', db]), '--host', 'serve');
    const config = join(folder, 'serve.json');
    writeFileSync(config, JSON.stringify({ host: '', port: 0, db }));
    expectRefused(await runCli(['serve', '--config', config]), `--config ${config}: setting "host"`, 'serve');
    writeFileSync(config, JSON.stringify({ db: '', port: 0 }));
    expectRefused(await runCli(['serve', '--config', config]), `--config ${config}: setting "db"`, 'serve');
    writeFileSync(config, JSON.stringify({ 'trust-proxy': ['10.0.0.0/8', ''], port: 0, db }));
    const list = await runCli(['serve', '--config', config]);
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(`--config ${config}: setting "trust-proxy" holds an empty value`);
    expect(existsSync(db)).toBe(false);
  });
});

describe('keys, reports and data', () => {
  it('--db "" is refused instead of falling back to ./seclookup.db', async () => {
    const cwd = dirs.make();
    expectRefused(await runCli(['keys', 'list', '--db', ''], { cwd }), '--db', 'keys');
    expectRefused(await runCli(['keys', 'create', '--product', 'geoip', '--db='], { cwd }), '--db', 'keys');
    expectRefused(await runCli(['reports', 'list', '--db', ''], { cwd }), '--db', 'reports');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('--ip-allow "" (or only commas) is refused instead of making a key usable from anywhere', async () => {
    const db = join(dirs.make(), 'k.db');
    expectRefused(await runCli(['keys', 'create', '--product', 'geoip', '--ip-allow', '', '--db', db]), '--ip-allow', 'keys');
    const commas = await runCli(['keys', 'create', '--product', 'geoip', '--ip-allow', ',', '--db', db]);
    expect(commas.code).toBe(2);
    expect(commas.stderr).toContain('--ip-allow needs at least one network or address (got ",")');
    expect(existsSync(db)).toBe(false);
  });

  it('sitekeys --domain "" is refused', async () => {
    const db = join(dirs.make(), 'k.db');
    expectRefused(await runCli(['sitekeys', 'create', '--domain', '', '--db', db]), '--domain', 'sitekeys');
    expect(existsSync(db)).toBe(false);
  });

  it('--data-dir "", --source "", --out "" and --tmp-dir "" are refused before any work', async () => {
    expectRefused(await runCli(['data', 'update', 'webhookip', '--data-dir', '']), '--data-dir', 'data');
    expectRefused(await runCli(['data', 'update', 'scamrisk', '--source', '', '--data-dir', dirs.make()]), '--source', 'data');
    const input = join(dirs.make(), 'in.txt');
    writeFileSync(input, '');
    expectRefused(await runCli(['data', 'import', 'pwbreach', input, '--out', '']), '--out', 'data');
    expectRefused(await runCli(['data', 'import', 'pwbreach', input, '--tmp-dir', '', '--data-dir', dirs.make()]), '--tmp-dir', 'data');
    expectRefused(await runCli(['lookup', 'webhookip', '140.82.112.1', '--data-dir', '']), '--data-dir', 'lookup');
  });

  it('data init "" is refused instead of copying into the current folder', async () => {
    const cwd = dirs.make();
    expectRefused(await runCli(['data', 'init', ''], { cwd }), 'DIR', 'data');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('an empty environment variable still counts as unset', async () => {
    const cwd = dirs.make();
    const keys = await runCliJson<Record<string, unknown>>(['keys', 'create', '--product', 'geoip', '--json'], { cwd, env: { SECLOOKUP_DB: '' } });
    expect(keys).toMatchObject({ product: 'geoip' });
    expect(existsSync(join(cwd, 'seclookup.db'))).toBe(true);
  });
});
