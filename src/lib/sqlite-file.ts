/**
 * Opening a seclookup SQLite file, shared by every store that lives in it (the meter, the
 * single-use store, scamrisk's reports). Two guarantees:
 *
 * - The file and its `-wal`/`-shm` companions are readable by their owner only (0600): they
 *   hold key hashes, site-key settings and the wrapped captcha signing keys. A new file is
 *   created 0600 before SQLite opens it (SQLite gives `-wal` and `-shm` the database file's
 *   mode); an existing one with a wider mode is tightened when this process owns it.
 * - A file that already holds another application's tables (and none of seclookup's) is
 *   refused with a `foreign_database` error, instead of silently getting our tables added.
 */
import { chmodSync, closeSync, constants, existsSync, openSync, type Stats, statSync } from 'node:fs';
import { mayAccess, mayCreateFilesIn } from './file-access.js';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SeclookupError } from '../errors.js';

/** The mode of every database file seclookup creates or opens. */
export const DATABASE_FILE_MODE = 0o600;

/** Tables any seclookup store creates; a file with none of them (and other tables) is not ours. */
const METER_TABLES = ['plans', 'subscriptions', 'keys', 'settings'];
const OWN_TABLES = new Set(['single_use', 'scamrisk_reports', 'live_counters']);

/**
 * Open `path` with better-sqlite3 in WAL mode for a seclookup store, creating it 0600 when
 * absent. Throws SeclookupError `foreign_database` for another application's file, and
 * `store_failed` when it cannot be opened; `what` names the store in messages.
 */
export function openSeclookupDatabase(path: string, what: string, options: { timeout?: number } = {}): Database.Database {
  const problem = databaseFileProblem(path, { write: false });
  if (problem) throw new SeclookupError('store_failed', `cannot open ${what} "${path}": ${problem}`);
  if (isFilePath(path)) createPrivate(path);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { timeout: options.timeout ?? 5_000 });
    refuseForeign(db, path);
    db.pragma('journal_mode = WAL');
    if (isFilePath(path)) tightenCompanions(path);
    return db;
  } catch (error) {
    if (db?.open) db.close();
    if (error instanceof SeclookupError && error.code === 'foreign_database') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new SeclookupError('store_failed', `cannot open ${what} "${path}": ${reason}`, { cause: error });
  }
}

/**
 * Why this process cannot use `path` as a seclookup database, in words an operator can act on,
 * or null when the file system sees nothing wrong. SQLite's own messages ("unable to open
 * database file", "attempt to write a readonly database") name neither the file nor the cause,
 * and the first store to open the file is not always the one the operator thinks of. `write`
 * asks also for what a writer needs: the file writable, and its folder too, where SQLite
 * creates the `-wal` and `-shm` files (unless both are there and writable already). A file not
 * there yet is no problem for a reader: whoever opens it decides whether it may be created.
 */
export function databaseFileProblem(path: string, { write }: { write: boolean }): string | null {
  if (!isFilePath(path)) return null;
  const folder = dirname(resolve(path));
  const folderStats = statOf(folder);
  if (typeof folderStats === 'string')
    return folderStats === 'ENOENT' ? `the folder ${folder} does not exist` : `${thisUser()} cannot reach the folder ${folder} (${folderStats})`;
  if (!folderStats.isDirectory()) return `${folder} is not a folder`;
  const fileStats = statOf(path);
  if (fileStats === 'ENOENT') {
    return write && !mayCreateFilesIn(folder) ? `${thisUser()} cannot create files in the folder ${folder} (${ownership(folderStats)})` : null;
  }
  if (typeof fileStats === 'string') return `${thisUser()} cannot reach the file (${fileStats})`;
  if (!fileStats.isFile()) return 'it is not a file';
  if (!mayAccess(path, write ? constants.R_OK | constants.W_OK : constants.R_OK))
    return `${thisUser()} may not ${write ? 'write' : 'read'} the file (${ownership(fileStats)})`;
  if (fileStats.size > 0 && !startsLikeSqlite(path)) return 'it is not an SQLite database';
  if (write && !mayCreateFilesIn(folder) && !companionsWritable(path))
    return `${thisUser()} cannot create files in the folder ${folder}, where SQLite keeps the database's -wal and -shm files (${ownership(folderStats)})`;
  return null;
}

/** The file's stats, or the error code that kept them from this process. */
function statOf(path: string): Stats | string {
  try {
    return statSync(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

function companionsWritable(path: string): boolean {
  return ['-wal', '-shm'].every((suffix) => mayAccess(path + suffix, constants.R_OK | constants.W_OK));
}

/**
 * Whether SQLite reads the file as a database. Asked of SQLite itself, never through a file
 * descriptor of our own: closing any descriptor on a file drops every POSIX lock this process
 * holds on it (fcntl locks belong to the process), so checking a file that a store here has open
 * would leave that store unlocked. Another process's SQLite then takes itself for the last user,
 * checkpoints and deletes the -wal under the store, which goes on in an unlinked file: revoked
 * keys keep working, and its last checkpoint corrupts the database. SQLite's own files share one
 * lock state per file within the process, so its connections never do this to each other.
 */
function startsLikeSqlite(path: string): boolean {
  let db: Database.Database | undefined;
  try {
    // No wait on a lock: a file another process holds is SQLite's, and the store's own open waits for it.
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 0 });
    db.pragma('schema_version'); // reads the header and page 1
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code !== 'SQLITE_NOTADB'; // locked, or unreadable for another reason: SQLite says what
  } finally {
    db?.close();
  }
}

function thisUser(): string {
  return typeof process.getuid === 'function' ? `this user (uid ${process.getuid()})` : 'this user';
}

function ownership(stats: Stats): string {
  return `owner uid ${stats.uid}, mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}`;
}

/** True when the file's tables are seclookup's, or it has none yet. */
export function isSeclookupSchema(tables: readonly string[]): boolean {
  if (tables.length === 0) return true;
  if (tables.some((name) => OWN_TABLES.has(name))) return true;
  return METER_TABLES.every((name) => tables.includes(name));
}

function refuseForeign(db: Database.Database, path: string): void {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  if (isSeclookupSchema(tables)) return;
  const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? ', ...' : '');
  throw new SeclookupError(
    'foreign_database',
    `"${path}" is another application's SQLite database (tables: ${shown}) and holds no seclookup tables; seclookup will not add its own to it. Point seclookup at a file of its own (--db FILE, or SECLOOKUP_DB).`,
  );
}

/** `:memory:` and the empty name are SQLite's in-memory and temporary databases: no file to guard. */
function isFilePath(path: string): boolean {
  return path !== '' && path !== ':memory:';
}

/**
 * Create the file 0600 if absent. An existing file is tightened only once it is known to be
 * ours (after the foreign check). Failures (no such folder, no permission) are left to SQLite
 * to report, with its own message.
 */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, DATABASE_FILE_MODE));
  } catch {
    // There already (or created by another process a moment ago).
  }
}

function tightenCompanions(path: string): void {
  tighten(path);
  for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) tighten(path + suffix);
}

/** Drop group and other permissions from a file this process owns; a file owned by another user is left as its owner set it. */
function tighten(file: string): void {
  try {
    const { mode, uid } = statSync(file);
    if ((mode & 0o077) === 0) return;
    if (typeof process.getuid === 'function' && process.getuid() !== uid) return;
    chmodSync(file, mode & 0o700);
  } catch {
    // Gone since (a -shm removed by the last connection closing): nothing to tighten.
  }
}
