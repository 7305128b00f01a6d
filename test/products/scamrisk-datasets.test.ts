/**
 * scamrisk's data files are input too: every loader refuses a file that does not have its
 * shape (random bytes, an empty list where one must list something, a wrong JSON shape, a
 * report table of another schema), naming the file and what is wrong. OFAC lists are strict
 * (one line that is not an address refuses the file); phishing host lists allow 1% odd entries.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_PATH, cliEnv } from '../cli/harness.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { isHostList, readHostListFile } from '../../src/lib/host-lists.js';
import { loadPhishingLists } from '../../src/products/domainrep/data.js';
import { BUNDLED_OFAC_ASSETS, loadScamLists } from '../../src/products/scamrisk/lists.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createSqliteReportStore } from '../../src/products/scamrisk/reports.js';

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A temporary data folder with copies of the bundled scamrisk and phishing lists. */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-scamdata-'));
  made.push(dir);
  for (const part of ['scamrisk', 'phishing']) cpSync(join(bundledDataDir(), part), join(dir, part), { recursive: true });
  return dir;
}

/** Bytes no list holds: every value 0-255, in a scrambled order, repeated. */
const RANDOM = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 167 + 13) % 256));

function loadError(dir: string): { code?: string; message: string } {
  try {
    loadScamLists(dir);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('the lists loaded');
}

describe('OFAC lists', () => {
  const ofac = (dir: string) => join(dir, 'scamrisk', 'ofac');

  it('random bytes in every list file are refused, naming the file and the line', () => {
    const dir = dataDir();
    for (const file of readdirSync(ofac(dir))) if (file.endsWith('.txt')) writeFileSync(join(ofac(dir), file), RANDOM);
    const error = loadError(dir);
    expect(error.code).toBe('dataset_invalid');
    expect(error.message).toMatch(/scamrisk OFAC list .*sanctioned_addresses_[A-Z]+\.txt: line 1 is not an address/);
  });

  it('one line that is not an address refuses the file (no share of bad lines is tolerated)', () => {
    const dir = dataDir();
    const path = join(ofac(dir), 'sanctioned_addresses_ETH.txt');
    writeFileSync(path, '0x04DBA1194ee10112fE6C3207C0687DEf0e78baCf\n# a comment\n\nnot an address\n');
    expect(loadError(dir).message).toBe(`scamrisk OFAC list ${path}: line 4 is not an address: "not an address"`);
  });

  it("an empty or missing list of an asset the bundled data lists is refused, naming the file: it would pass that asset's sanctioned wallets", () => {
    const dir = dataDir();
    const eth = join(ofac(dir), 'sanctioned_addresses_ETH.txt');
    writeFileSync(eth, '# emptied\n\n');
    const emptied = loadError(dir);
    expect(emptied.code).toBe('dataset_invalid');
    expect(emptied.message).toMatch(
      new RegExp(`^scamrisk OFAC list ${eth} lists no addresses: the bundled data lists sanctioned ETH addresses, .*every ETH wallet would pass`),
    );
    rmSync(eth);
    const missing = loadError(dir);
    expect(missing.code).toBe('dataset_invalid');
    expect(missing.message).toMatch(new RegExp(`^scamrisk OFAC list ${eth} is missing: .*copy the file back from .*sanctioned_addresses_ETH\\.txt`));
  });

  it('an empty list of an asset the bundled data does not list is valid (an asset added for data update to fill)', () => {
    const dir = dataDir();
    writeFileSync(join(ofac(dir), 'sanctioned_addresses_NEWCOIN.txt'), '');
    const lists = loadScamLists(dir);
    expect(lists.sanctioned('0x04dba1194ee10112fe6c3207c0687def0e78bacf')).toEqual(['ETH']);
  });

  it('BUNDLED_OFAC_ASSETS are the assets of the bundled folder, each listing addresses', () => {
    const files = readdirSync(join(bundledDataDir(), 'scamrisk', 'ofac')).filter((file) => /^sanctioned_addresses_[A-Z0-9]+\.txt$/.test(file));
    expect(files.map((file) => file.slice('sanctioned_addresses_'.length, -4)).sort()).toEqual([...BUNDLED_OFAC_ASSETS]);
    expect(loadScamLists(bundledDataDir()).counts.sanctioned).toBeGreaterThan(BUNDLED_OFAC_ASSETS.length);
  });
});

describe('phishing and scam-address lists', () => {
  const metamask = 'phishing/metamask/config.json';
  const polkadot = 'phishing/polkadot/all.json';
  const addresses = 'scamrisk/polkadot/address.json';

  it.each([
    ['random bytes', metamask, RANDOM, /config\.json is not valid JSON/],
    ['an empty file', metamask, '', /config\.json is not valid JSON/],
    ['a JSON array', metamask, '[]', /config\.json: not a JSON object/],
    ['no blacklist', metamask, '{"whitelist": [], "fuzzylist": []}', /config\.json: blacklist is not an array of strings/],
    ['an empty blacklist', metamask, '{"blacklist": [], "whitelist": [], "fuzzylist": []}', /config\.json: blacklist lists no entries/],
    [
      'a blacklist of non-hosts',
      metamask,
      JSON.stringify({ blacklist: ['evil.example', 'not a host', 'x', 'y'], whitelist: [], fuzzylist: [] }),
      /config\.json: blacklist 3 of 4 entries are not host names/,
    ],
    ['an empty deny list', polkadot, '{"deny": [], "allow": []}', /all\.json: deny lists no entries/],
    ['random bytes', addresses, RANDOM, /address\.json is not valid JSON/],
    ['no addresses', addresses, '{}', /address\.json: lists no addresses/],
    ['a number for an address', addresses, '{"site.example": [12345]}', /address\.json: site\.example lists "12345", not an address/],
    ['an array', addresses, '[]', /address\.json: not an object/],
  ])('%s in %s is refused', (_what, file, content, message) => {
    const dir = dataDir();
    writeFileSync(join(dir, file), content);
    const error = loadError(dir);
    expect(error.code).toBe('dataset_invalid');
    expect(error.message).toMatch(message);
  });

  it.each([
    ['an empty deny list', polkadot, '{"deny": [], "allow": []}', /all\.json: "deny" lists no entries/, /all\.json: deny lists no entries/],
    [
      'no blacklist',
      metamask,
      '{"whitelist": [], "fuzzylist": []}',
      /config\.json: "blacklist" must be an array of strings/,
      /config\.json: blacklist is not an array/,
    ],
    [
      'a blacklist of non-hosts',
      metamask,
      JSON.stringify({ blacklist: ['evil.example', 'not a host', 'x', 'y'], whitelist: [], fuzzylist: [] }),
      /config\.json: "blacklist" 3 of 4 entries are not host names/,
      /config\.json: blacklist 3 of 4 entries are not host names/,
    ],
  ])(
    "%s in %s: domainrep's loader of the same file refuses it too, each product in its own words",
    (_what, file, content, domainrepMessage, scamriskMessage) => {
      const dir = dataDir();
      writeFileSync(join(dir, file), content);
      // The file is read and checked once for both (readHostListFile); the refusal is each one's.
      expect(() => loadPhishingLists(dir)).toThrow(domainrepMessage);
      expect(loadError(dir).message).toMatch(scamriskMessage);
    },
  );

  it('domainrep and scamrisk read data/phishing/ once: the parsed files are shared, their hosts the same', () => {
    const dir = dataDir();
    const file = readHostListFile(join(dir, polkadot));
    expect(readHostListFile(join(dir, polkadot))).toBe(file);
    const deny = file.list('deny', false);
    expect(file.list('deny', false)).toBe(deny);
    if (!isHostList(deny)) throw new Error(`the bundled deny list is refused: ${JSON.stringify(deny)}`);
    // Unicode entries in their ASCII form, as both products compare hosts.
    const unicode = deny.written.findIndex((entry) => [...entry].some((char) => char.charCodeAt(0) > 0x7f));
    expect(deny.ascii[unicode]).toMatch(/^[\x21-\x7e]*xn--/);
    const blocked = loadPhishingLists(dir).blocked;
    expect(blocked.get(deny.ascii[unicode]!)).toMatch(/polkadot/);
    expect(loadScamLists(dir).phishing(deny.ascii[unicode]!)).toContainEqual(expect.objectContaining({ source: 'polkadot' }));
  });

  it('the bundled lists load (their few odd entries are under the 1% allowed)', () => {
    expect(loadScamLists(bundledDataDir()).counts.sanctioned).toBeGreaterThan(500);
    expect(loadPhishingLists(bundledDataDir()).blocked.size).toBeGreaterThan(50_000);
  });
});

describe('report database', () => {
  const file = () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-reportdb-'));
    made.push(dir);
    return join(dir, 'reports.db');
  };

  it('random bytes are refused, naming the file', () => {
    const path = file();
    writeFileSync(path, RANDOM);
    expect(() => createSqliteReportStore(path)).toThrow(
      expect.objectContaining({ code: 'store_failed', message: `cannot open report database "${path}": it is not an SQLite database` }),
    );
  });

  it('a scamrisk_reports table of another schema is refused at open, naming the missing columns', () => {
    const path = file();
    const db = new Database(path);
    db.exec('CREATE TABLE scamrisk_reports (id INTEGER PRIMARY KEY, value TEXT, score REAL)');
    db.close();
    expect(() => createSqliteReportStore(path)).toThrow(
      `the report database ${path} has a scamrisk_reports table of another schema (missing columns: type, identifier, category, source, verified, disputed, note, reported_at, disputed_at)`,
    );
  });

  it('a database holding other tables (the meter) gets its own table beside them', async () => {
    const path = file();
    const meter = createSqliteMeter(path);
    await meter.close();
    const store = createSqliteReportStore(path);
    await store.add({ type: 'username', identifier: 'someone', category: 'scam', source: 'x' });
    expect(await store.count()).toBe(1);
    await store.close();
  });
});

/** `seclookup serve ...args` to its exit; killed after 60 s so a serve that starts anyway does not outlive the test. */
function runServe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, 'serve', ...args], {
      env: cliEnv(),
      cwd: tmpdir(),
      stdio: ['ignore', 'ignore', 'pipe'],
      signal: AbortSignal.timeout(60_000),
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => (error.name === 'AbortError' ? resolve({ code: null, stderr }) : reject(error)));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('serve start', () => {
  it('a refused dataset stops start with one line naming the file', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-scamserve-'));
    made.push(dir);
    // The bundled data, scamrisk's folder a copy and every other one linked: riskscore's compiled
    // lists are found by their folder's real path, so the start does not compile them again.
    mkdirSync(join(dir, 'data'));
    for (const entry of readdirSync(bundledDataDir())) {
      if (entry === 'scamrisk') cpSync(join(bundledDataDir(), entry), join(dir, 'data', entry), { recursive: true });
      else symlinkSync(join(bundledDataDir(), entry), join(dir, 'data', entry));
    }
    const path = join(dir, 'data', 'scamrisk', 'ofac', 'sanctioned_addresses_XBT.txt');
    writeFileSync(path, RANDOM);
    mkdirSync(join(dir, 'db'));
    const result = await runServe(['--port', '0', '--data-dir', join(dir, 'data'), '--db', join(dir, 'db', 'seclookup.db')]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('cannot load the lookup engines');
    expect(lines[0]).toContain(`scamrisk OFAC list ${path}: line 1 is not an address`);
  });
});
