/**
 * The SQLite files seclookup writes: created 0600 with their -wal and -shm (they hold key hashes
 * and wrapped signing keys), an existing wider file of ours tightened, and another
 * application's database refused untouched by every store that opens the --db file.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { isSeclookupSchema } from '../../src/lib/sqlite-file.js';
import { createSqliteReportStore } from '../../src/products/scamrisk/reports.js';
import { createTempDirs } from '../cli/harness.js';

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
