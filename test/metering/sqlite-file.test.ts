/**
 * The SQLite files seclookup writes: created 0600 with their -wal and -shm (they hold key hashes
 * and wrapped signing keys), an existing wider file of ours tightened, and another
 * application's database refused untouched by every store that opens the --db file.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { isSeclookupSchema } from '../../src/lib/sqlite-file.js';
import { createSqliteReportStore } from '../../src/products/scamrisk/reports.js';
import { createTempDirs, REPO_ROOT } from '../cli/harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

const modeOf = (file: string) => statSync(file).mode & 0o777;

/** Another application's database: a table of its own, mode 0644. */
function foreignDatabase(path: string): void {
  const db = new Database(path);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')");
  db.close();
  chmodSync(path, 0o644);
}

function tablesOf(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  } finally {
    db.close();
  }
}

describe('SQLite database files', () => {
  it('creates the database, its -wal and its -shm 0600 (umask 022 notwithstanding)', async () => {
    const previous = process.umask(0o022);
    const path = join(temp.make(), 'seclookup.db');
    try {
      const meter = createSqliteMeter(path);
      const tokens = createSqliteSingleUseStore(path);
      await issueKeys(meter, { product: 'useragent' });
      await tokens.consume('c:abc', Date.now() + 60_000, Date.now());
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        expect(existsSync(file), file).toBe(true);
        expect(modeOf(file).toString(8), file).toBe('600');
      }
      await tokens.close();
      await meter.close();
    } finally {
      process.umask(previous);
    }
  });

  it('tightens an existing seclookup database (and -wal, -shm) made 0644 by an older version', async () => {
    const path = join(temp.make(), 'seclookup.db');
    await createSqliteMeter(path).close();
    chmodSync(path, 0o644);
    writeFileSync(`${path}-shm`, '');
    chmodSync(`${path}-shm`, 0o644);
    const meter = createSqliteMeter(path);
    expect([modeOf(path), modeOf(`${path}-shm`)].map((m) => m.toString(8))).toEqual(['600', '600']);
    await meter.close();
  });

  it("refuses another application's database with foreign_database, in every store, leaving it untouched", () => {
    const path = join(temp.make(), 'app.db');
    foreignDatabase(path);
    const opens = [() => createSqliteMeter(path), () => createSqliteSingleUseStore(path), () => createSqliteReportStore(path)];
    for (const open of opens) {
      expect(open).toThrow(
        expect.objectContaining({
          code: 'foreign_database',
          message: expect.stringContaining(`"${path}" is another application's SQLite database (tables: users)`),
        }),
      );
    }
    expect(tablesOf(path)).toEqual(['users']);
    expect(modeOf(path).toString(8)).toBe('644');
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('takes an empty file and its own files (a reports-only or single-use-only file included); refuses a lookalike with only generic names', () => {
    expect(isSeclookupSchema([])).toBe(true);
    expect(isSeclookupSchema(['scamrisk_reports'])).toBe(true);
    expect(isSeclookupSchema(['single_use'])).toBe(true);
    expect(isSeclookupSchema(['plans', 'subscriptions', 'keys', 'settings', 'usage', 'live_counters'])).toBe(true);
    expect(isSeclookupSchema(['keys', 'settings'])).toBe(false);
    const path = join(temp.make(), 'reports.db');
    createSqliteReportStore(path).close();
    expect(() => createSqliteMeter(path).close()).not.toThrow();
    expect(tablesOf(path)).toEqual(expect.arrayContaining(['scamrisk_reports', 'plans', 'keys', 'settings']));
  });
});

/** The ranges of POSIX locks this process holds on `file`, from /proc/locks (Linux, as CI). */
function locksHeldOn(file: string): string[] {
  const { dev, ino } = statSync(file);
  // /proc/locks names the file MAJOR:MINOR:INODE, the numbers in hex, 2 digits each at least.
  const device = `${(dev >> 8).toString(16).padStart(2, '0')}:${(dev & 0xff).toString(16).padStart(2, '0')}:${ino}`;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1] === 'POSIX' && fields[4] === String(process.pid) && fields[5] === device)
    .map((fields) => `${fields[6]}-${fields[7]}`);
}

describe('several stores on one file in one process (serve: the meter, single-use tokens, reports)', () => {
  it('keep their locks when the file is checked and opened again: another process that reads and closes it leaves the -wal alone', async () => {
    const path = join(temp.make(), 'shared.db');
    const meter = createSqliteMeter(path);
    await issueKeys(meter, { product: 'useragent' });
    const held = locksHeldOn(path);
    expect(held.length).toBeGreaterThan(0); // SQLite's SHARED lock while the connection reads in WAL mode
    // What serve does next: the other stores check the file's header and open it too.
    const singleUse = createSqliteSingleUseStore(path);
    const reports = createSqliteReportStore(path);
    try {
      expect(locksHeldOn(path)).toEqual(held);
      // An operator's sqlite3 shell, a backup tool: it reads and closes. Were this process's locks
      // gone, that close would take itself for the last user, checkpoint and delete the -wal.
      const reader = spawnSync(
        process.execPath,
        ['-e', `const db = new (require('better-sqlite3'))(${JSON.stringify(path)}); db.prepare('SELECT count(*) FROM keys').get(); db.close();`],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
      expect(reader.stderr).toBe('');
      expect(existsSync(`${path}-wal`)).toBe(true);
    } finally {
      await reports.close();
      await singleUse.close();
      await meter.close();
    }
  });
});
