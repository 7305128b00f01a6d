/**
 * A --db file this process cannot use: said in one line naming the file and the cause, before
 * any engine opens it (scamrisk keeps its reports there and was blamed), and never as a crash
 * with a stack. The permission cases run the built CLI in a child held to file permissions even
 * when the tests run as root (harness.ts), since a root process would write anything.
 */
import { chmodSync, closeSync, existsSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliProcess } from './harness.js';

const dirs = createTempDirs();
afterAll(() => dirs.cleanup());

const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';
const uid = process.getuid?.();
const user = `this user (uid ${uid})`;

/** A folder of its own with a seclookup database in it (keys, a plan, the tables serve writes). */
async function database(): Promise<{ folder: string; db: string }> {
  const folder = dirs.make();
  const db = join(folder, 'seclookup.db');
  expect((await runCli(['keys', 'create', '--product', 'geoip', '--db', db])).code).toBe(0);
  expect((await runCli(['reports', 'list', '--db', db])).code).toBe(0);
  return { folder, db };
}

const held = (args: string[]) => runCliProcess(args, { filePermissionsBind: true });

describe('a --db file that is not an SQLite database', () => {
  it('serve names the file, not scamrisk, whose engine opens it first', async () => {
    const db = join(dirs.make(), 'notes.db');
    writeFileSync(db, 'shopping list: eggs, flour\n');
    const result = await runCli(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`seclookup: cannot use the database ${db}: it is not an SQLite database\n`);
  });

  it('keys and reports say the same of it', async () => {
    const db = join(dirs.make(), 'notes.db');
    writeFileSync(db, 'shopping list: eggs, flour\n');
    const keys = await runCli(['keys', 'list', '--db', db]);
    expect(keys.code).toBe(1);
    expect(keys.stderr).toBe(`seclookup: cannot open metering database "${db}": it is not an SQLite database\n`);
    const reports = await runCli(['reports', 'list', '--db', db]);
    expect(reports.code).toBe(1);
    expect(reports.stderr).toBe(`seclookup: cannot open report database "${db}": it is not an SQLite database\n`);
  });
});

describe('a --db file this user may not write', () => {
  it('serve refuses to start, naming the file, its owner and its mode', async () => {
    const { db } = await database();
    chmodSync(db, 0o400);
    const result = await held(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`seclookup: cannot use the database ${db}: ${user} may not write the file (owner uid ${uid}, mode 0400)\n`);
  });

  it('commands that change it fail in one line; commands that read it still work', async () => {
    const { db } = await database();
    chmodSync(db, 0o400);
    const refusal = `seclookup: cannot write the database ${db}: ${user} may not write the file (owner uid ${uid}, mode 0400)\n`;
    for (const args of [
      ['keys', 'create', '--product', 'geoip'],
      ['plans', 'set', 'gold', '--all-products', '--rate-limit', '5', '--monthly-quota', '5'],
      ['sitekeys', 'create', '--domain', 'example.com'],
      ['reports', 'add', 'crypto', ETH, '--category', 'scam'],
    ]) {
      const result = await held([...args, '--db', db]);
      expect(result.stderr, args.join(' ')).toBe(refusal);
      expect(result.code, args.join(' ')).toBe(1);
    }
    const list = await held(['keys', 'list', '--json', '--db', db]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toHaveLength(2);
  });
});

describe('a --db folder this user may not write', () => {
  it('serve says it cannot create the database there', async () => {
    const folder = dirs.make();
    chmodSync(folder, 0o555);
    const db = join(folder, 'seclookup.db');
    const result = await held(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`seclookup: cannot use the database ${db}: ${user} cannot create files in the folder ${folder} (owner uid ${uid}, mode 0555)\n`);
    expect(existsSync(db)).toBe(false);
  });

  it('serve says SQLite needs the folder for the -wal and -shm files, even with the file itself writable', async () => {
    const { folder, db } = await database();
    expect(existsSync(`${db}-wal`)).toBe(false); // the last connection closed removed them
    chmodSync(folder, 0o555);
    const result = await held(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `seclookup: cannot use the database ${db}: ${user} cannot create files in the folder ${folder}, where SQLite keeps the database's -wal and -shm files (owner uid ${uid}, mode 0555)\n`,
    );
  });
});

describe('commands that only read, on a file or folder this user may not write', () => {
  it('reports list reads a read-only file, even one without the report table yet (nothing is created in it)', async () => {
    const folder = dirs.make();
    const db = join(folder, 'seclookup.db');
    expect((await runCli(['keys', 'create', '--product', 'geoip', '--db', db])).code).toBe(0);
    chmodSync(db, 0o400);
    const list = await held(['reports', 'list', '--json', '--db', db]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
    chmodSync(db, 0o600);
    expect((await runCli(['reports', 'add', 'crypto', ETH, '--category', 'scam', '--db', db])).code).toBe(0);
    chmodSync(db, 0o400);
    const listed = await held(['reports', 'list', '--json', '--db', db]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
  });

  it('in a folder this user may not write, keys list and reports list say why in one line, naming the file and the folder', async () => {
    const { folder, db } = await database();
    chmodSync(folder, 0o555);
    const why = `${user} cannot create files in the folder ${folder}, where SQLite keeps the database's -wal and -shm files (owner uid ${uid}, mode 0555)`;
    const keys = await held(['keys', 'list', '--db', db]);
    expect(keys.stderr).toBe(`seclookup: cannot open metering database "${db}": ${why}\n`);
    expect(keys.code).toBe(1);
    const reports = await held(['reports', 'list', '--db', db]);
    expect(reports.stderr).toBe(`seclookup: cannot read the database ${db}: ${why}\n`);
    expect(reports.code).toBe(1);
  });

  it('keys create of a new database in a folder this user may not write says so in one line, and creates nothing', async () => {
    const folder = dirs.make();
    chmodSync(folder, 0o555);
    const db = join(folder, 'new.db');
    const why = `${user} cannot create files in the folder ${folder} (owner uid ${uid}, mode 0555)`;
    const create = await held(['keys', 'create', '--product', 'geoip', '--db', db]);
    expect(create.stderr).toBe(`seclookup: cannot create the database ${db}: ${why}\n`);
    expect(create.code).toBe(1);
    const reports = await held(['reports', 'list', '--db', db]);
    expect(reports.stderr).toBe(`seclookup: cannot create the database ${db}: ${why}\n`);
    expect(existsSync(db)).toBe(false);
  });
});

describe('a database another connection holds the write lock of (the sqlite3 shell in BEGIN IMMEDIATE)', () => {
  it('keys list, plans list and sitekeys list still read it: opening a current file takes no write lock', async () => {
    const { db } = await database();
    expect((await runCli(['sitekeys', 'create', '--domain', 'example.com', '--db', db])).code).toBe(0);
    const holder = new Database(db);
    holder.exec('BEGIN IMMEDIATE');
    try {
      for (const args of [
        ['keys', 'list', '--json'],
        ['plans', 'list', '--json'],
        ['sitekeys', 'list', '--json'],
      ]) {
        const result = await runCli([...args, '--db', db]);
        expect([args.join(' '), result.code, result.stderr]).toEqual([args.join(' '), 0, '']);
        expect(JSON.parse(result.stdout).length, args.join(' ')).toBeGreaterThan(0);
      }
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });
});

describe('a corrupt database (a page overwritten)', () => {
  /** A seclookup database whose subscriptions table's page is overwritten with 0xff: it opens, and fails at the first read of a key. */
  async function corruptDatabase(): Promise<string> {
    const { db } = await database();
    const reader = new Database(db, { readonly: true });
    const page = reader.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'subscriptions'").pluck().get() as number;
    const pageSize = reader.pragma('page_size', { simple: true }) as number;
    reader.close();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, (page - 1) * pageSize);
    closeSync(fd);
    return db;
  }

  /** What to do, said after SQLite's own words. */
  const salvage = (db: string) => `; restore it from a backup, or salvage what SQLite can read with: sqlite3 ${db} .recover | sqlite3 NEW.db`;

  it('serve says so in one line naming the file, with no stack trace (exit 1)', async () => {
    const db = await corruptDatabase();
    const result = await runCli(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/unexpected error|SqliteError|\n\s+at /);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(`seclookup: cannot use the database ${db}: database disk image is malformed${salvage(db)}`);
  });

  it('serve refuses a file whose key index page is overwritten, naming the file and what to do, instead of listening and failing every lookup (exit 1)', async () => {
    const { db } = await database();
    const reader = new Database(db, { readonly: true });
    const page = reader.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_keys_1'").pluck().get() as number;
    const pageSize = reader.pragma('page_size', { simple: true }) as number;
    reader.close();
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (page - 1) * pageSize);
    closeSync(fd);
    // Keys are still listed from their table: only lookups, which find a key by its hash, would fail.
    expect((await runCli(['keys', 'list', '--db', db])).code).toBe(0);
    const result = await runCli(['serve', '--port', '0', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('listening');
    expect(result.stderr).not.toMatch(/unexpected error|SqliteError|\n\s+at /);
    const last = result.stderr.trim().split('\n').at(-1);
    expect(last).toMatch(
      new RegExp(`^seclookup: cannot use the database ${db}: the file is damaged \\(SQLite's quick_check: [^\\n]+\\); restore it from a backup`),
    );
  });

  it('keys list says it cannot use the database, not that it cannot write it: it only reads', async () => {
    const db = await corruptDatabase();
    const result = await runCli(['keys', 'list', '--db', db]);
    expect([result.code, result.stderr]).toEqual([1, `seclookup: cannot use the database ${db}: database disk image is malformed${salvage(db)}\n`]);
  });

  it('a file of a newer seclookup (schema version 99) is refused, saying to run that version', async () => {
    const { db } = await database();
    const writer = new Database(db);
    writer.pragma('user_version = 99');
    writer.close();
    const result = await runCli(['keys', 'list', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'schema version 99 is newer than this seclookup supports (3): a newer seclookup wrote it; run that version (or newer) on it',
    );
  });
});
