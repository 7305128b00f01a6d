/**
 * `data update`, as a hostile feed and a narrow umask attack it: the files it leaves behind (permissions kept, like the
 * other updaters' atomic rewrite and `data import`), against feeds served on loopback.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { viaMirror, writeAtomically, writeBeside } from '../../src/lib/source-update.js';
import { updateRiskScoreData } from '../../src/products/riskscore/update.js';
import { runCli } from '../cli/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE_UPDATE = pathToFileURL(join(ROOT, 'src/lib/source-update.ts')).href;
const pathOf = (url: string) => new URL(viaMirror(url, 'http://x')).pathname;
const IPSUM_URL = 'https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt';
const IPSUM = '# IPsum\n45.9.148.7\t8\n45.9.148.8\t3\n';

let server: HttpFixture;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startHttpFixture({ [pathOf(IPSUM_URL)]: respond.text(IPSUM) });
});
afterAll(async () => {
  await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function riskscoreDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
  dirs.push(dir);
  cpSync(join(bundledDataDir(), 'riskscore'), join(dir, 'riskscore'), { recursive: true });
  writeFileSync(join(dir, 'riskscore/abuse/ipsum.txt'), '# IPsum\n45.9.148.7\t8\n');
  return dir;
}

describe('data update riskscore: the files it rewrites', () => {
  it('keeps the permissions of the list and of snapshots.json it replaces, whatever the umask', async () => {
    const dir = riskscoreDataDir();
    const list = join(dir, 'riskscore/abuse/ipsum.txt');
    const snapshots = join(dir, 'riskscore/snapshots.json');
    // Readable by the service's group (serve may run as another user of that group).
    chmodSync(list, 0o640);
    chmodSync(snapshots, 0o640);
    const umask = process.umask(0o077);
    try {
      const report = await updateRiskScoreData({ dataDir: dir, mirror: server.url, timeoutMs: 5000, sources: ['ipsum'] });
      expect(report.updated).toEqual(['ipsum']);
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(list, 'utf8')).toBe(IPSUM);
    expect(statSync(list).mode & 0o777).toBe(0o640);
    expect(statSync(snapshots).mode & 0o777).toBe(0o640);
  });
});

describe('writeAtomically (webhookip, emailval, whois, scamrisk)', () => {
  it('keeps the permissions of the file it replaces even under a narrow umask', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
    dirs.push(dir);
    const path = join(dir, 'ranges.json');
    writeFileSync(path, 'old\n');
    chmodSync(path, 0o640);
    const umask = process.umask(0o077);
    try {
      await writeAtomically(path, 'new\n');
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });
});

describe('an update killed between writing and renaming (kill -9)', () => {
  it("leaves a temporary file that the next update of that file removes; a live writer's is kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
    dirs.push(dir);
    const path = join(dir, 'ranges.json');
    writeFileSync(path, 'old\n');
    // A real process writes its temporary copy, then is killed before it can rename it.
    const code = `import('${SOURCE_UPDATE}').then((m) => { m.writeBeside(${JSON.stringify(path)}, 'half-done'); process.kill(process.pid, 'SIGKILL'); })`;
    const killed = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
    expect(killed.signal).toBe('SIGKILL');
    const left = readdirSync(dir).filter((name) => name.endsWith('.tmp'));
    expect(left).toEqual([expect.stringMatching(new RegExp(`^ranges\\.json\\.${killed.pid}\\.[0-9a-f]{8}\\.tmp$`))]);
    const live = writeBeside(path, 'this process is still writing it'); // a concurrent update's
    writeFileSync(join(dir, 'other.json.1.deadbeef.tmp'), "another file's"); // not this file's

    await writeAtomically(path, 'new\n');
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(readdirSync(dir).sort()).toEqual([basename(live), 'other.json.1.deadbeef.tmp', 'ranges.json'].sort());
  });
});

describe('a feed sent with a byte order mark', () => {
  it('data update whois reads a bootstrap that starts with a BOM instead of refusing it as not JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
    dirs.push(dir);
    cpSync(join(bundledDataDir(), 'whois'), join(dir, 'whois'), { recursive: true });
    const onFile = readFileSync(join(dir, 'whois/rdap-bootstrap.json'), 'utf8');
    server.routes.set(pathOf('https://data.iana.org/rdap/dns.json'), respond.text(`\uFEFF${onFile}`, { contentType: 'application/json' }));
    const result = await runCli(['data', 'update', 'whois', '--data-dir', dir, '--mirror', server.url, '--timeout', '5000']);
    expect(result.stderr).not.toContain('not valid JSON');
    expect(result.stdout).toMatch(/^whois: RDAP bootstrap unchanged/);
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'whois/rdap-bootstrap.json'), 'utf8')).toBe(onFile);
  });
});

describe('--mirror with a query string (an API key in the feed URL)', () => {
  it('is a usage error that never quotes the query, before anything is fetched', async () => {
    const before = server.hits.get(pathOf('https://data.iana.org/rdap/dns.json')) ?? 0;
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
    dirs.push(dir);
    cpSync(join(bundledDataDir(), 'whois'), join(dir, 'whois'), { recursive: true });
    const args = ['data', 'update', 'whois', '--data-dir', dir, '--mirror', `${server.url}/feeds?token=s3cr3t`, '--timeout', '5000'];
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--mirror must not have a query or fragment');
    expect(`${result.stdout}${result.stderr}`).not.toContain('s3cr3t');
    expect(server.hits.get(pathOf('https://data.iana.org/rdap/dns.json')) ?? 0).toBe(before);
  });
});
