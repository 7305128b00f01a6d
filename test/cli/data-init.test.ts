/**
 * `seclookup data init DIR` and the messages around a data folder: init copies the bundled data
 * (never the indexes an earlier run compiled), refuses a folder that holds something, and a data
 * folder with missing datasets is reported one product per line with the way out.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { CLI_PATH, cliEnv, createTempDirs, outcomeOf, REPO_ROOT, runCli, type CliResult } from './harness.js';

const dirs = createTempDirs();

/**
 * `node dist/cli.js data init DIR` in a child process whose files may grow to `blocks` 512-byte
 * blocks (`ulimit -f`; Node ignores SIGXFSZ, so a larger write fails EFBIG).
 */
function initWithFileSizeLimit(dir: string, blocks: number): Promise<CliResult> {
  const script = 'ulimit -f "$1"; shift; exec "$@"';
  const args = ['-c', script, 'sh', String(blocks), process.execPath, CLI_PATH, 'data', 'init', dir];
  return outcomeOf(spawn('sh', args, { env: cliEnv(), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }));
}
afterAll(() => dirs.cleanup());

describe('seclookup data init', () => {
  it('copies every bundled dataset into a new folder, which then serves lookups', async () => {
    const target = join(dirs.make(), 'data');
    const result = await runCli(['data', 'init', target]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^copied \\d+ files \\(\\d+\\.\\d MB\\) of bundled data to ${target}\\n$`));
    expect(result.stderr).toContain(`next: seclookup serve --data-dir ${target}`);
    expect(readdirSync(target).sort()).toEqual(readdirSync(bundledDataDir()).sort());
    expect(existsSync(join(target, 'webhookip', 'ranges.json'))).toBe(true);
    // Compiled indexes are rebuilt where they are needed, never copied.
    expect(readdirSync(join(target, 'riskscore')).filter((name) => name.endsWith('.idx'))).toEqual([]);
    const lookup = await runCli(['lookup', 'webhookip', '140.82.112.1', '--data-dir', target]);
    expect(lookup.code).toBe(0);
    expect(JSON.parse(lookup.stdout)).toMatchObject({ matched: true, providers: [{ id: 'github', name: 'GitHub' }] });
  });

  it("keeps the files' modification times, so doctor and the dataset-age metric tell the data's age, not the copy's", async () => {
    const target = join(dirs.make(), 'data');
    // The bundled files were written (checked out, installed) well before this copy.
    expect((await runCli(['data', 'init', target])).code).toBe(0);
    for (const file of ['webhookip/ranges.json', 'scamrisk/ofac/sanctioned_addresses_ETH.txt', 'emailval/disposable-domains.txt']) {
      expect(Math.abs(statSync(join(target, file)).mtimeMs - statSync(join(bundledDataDir(), file)).mtimeMs), file).toBeLessThan(1);
    }
  });

  it('refuses a folder that already holds something, and leaves it as it was', async () => {
    const target = dirs.make();
    writeFileSync(join(target, 'mine.txt'), 'keep me');
    const result = await runCli(['data', 'init', target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${target} is not empty`);
    expect(readdirSync(target)).toEqual(['mine.txt']);
  });

  it('refuses a file in one line, and leaves it as it was', async () => {
    const target = join(dirs.make(), 'notes.txt');
    writeFileSync(target, 'keep me');
    const result = await runCli(['data', 'init', target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`seclookup: ${target} is a file: data init copies into a new or empty folder\n`);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
  });

  it('a copy that fails half-way (no room) leaves no half-filled folder, so the same command then works', async () => {
    const parent = dirs.make();
    const target = join(parent, 'data');
    const full = await initWithFileSizeLimit(target, 64); // 32 KB per file, as on a nearly full disk: EFBIG
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(new RegExp(`^seclookup: cannot copy the bundled data to ${target}: EFBIG: file too large`));
    expect(readdirSync(parent)).toEqual([]); // neither the folder nor the temporary copy is left

    // An empty folder made beforehand stays empty too.
    mkdirSync(target);
    expect((await initWithFileSizeLimit(target, 64)).code).toBe(1);
    expect(readdirSync(parent)).toEqual(['data']);
    expect(readdirSync(target)).toEqual([]);

    const again = await runCli(['data', 'init', target]);
    expect(again.code).toBe(0);
    expect(readdirSync(target).sort()).toEqual(readdirSync(bundledDataDir()).sort());
    expect(readdirSync(parent)).toEqual(['data']);
  }, 30_000);

  it('needs DIR', async () => {
    const result = await runCli(['data', 'init']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('missing DIR');
  });
});

describe('a data folder missing datasets', () => {
  it('is reported one product per line, without a doubled prefix, with data init as the way out', async () => {
    const empty = dirs.make();
    mkdirSync(join(empty, 'nothing-here'));
    const result = await runCli(['serve', '--port', '0', '--data-dir', empty, '--db', join(dirs.make(), 'x.db')]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe('seclookup: cannot load the lookup engines:');
    const perProduct = lines.filter((line) => /^ {2}\w+: /.test(line));
    // geoip's databases come from their package, its country zones from the folder (timezone/zone.tab).
    expect(perProduct.map((line) => line.trim().split(':')[0])).toEqual([
      'webhookip',
      'geoip',
      'timezone',
      'dnsbl',
      'emailval',
      'whois',
      'pwbreach',
      'scamrisk',
      'domainrep',
      'riskscore',
    ]);
    expect(perProduct.find((line) => line.startsWith('  webhookip:'))).toBe(
      `  webhookip: cannot read dataset ${join(empty, 'webhookip', 'ranges.json')}: ENOENT: no such file or directory, open '${join(empty, 'webhookip', 'ranges.json')}'`,
    );
    expect(perProduct.find((line) => line.startsWith('  geoip:'))).toContain(join(empty, 'timezone', 'zone.tab'));
    expect(result.stderr).not.toContain('seclookup: cannot read');
    expect(lines.at(-1)).toBe(`To fill a data folder with the bundled datasets: seclookup data init ${empty}`);
  });
});
