/**
 * What a command says when its store fails, in one line instead of a crash with a stack: SQLite
 * refusing a change to the --db file (naming the file and, where the file system shows it, the
 * cause: a file or folder this user may not write), or the meter store unreachable (Redis down,
 * or refusing the URL's password).
 */
import { isSeclookupError } from '../errors.js';
import { databaseFileProblem } from '../lib/sqlite-file.js';
import { CommandError } from './errors.js';

/**
 * `error` from work on the meter at `where` (the file, or the Redis URL without its password),
 * as a CommandError when the store failed; any other error as it is. `dbPath` is the SQLite
 * file, when the meter is one; `write`: the work was meant to change it.
 */
export function explainMeterError(where: string, dbPath: string | null, error: unknown, { write = true }: { write?: boolean } = {}): unknown {
  const explained = dbPath === null ? error : explainDatabaseError(dbPath, error, { write });
  if (explained !== error) return explained;
  if (isSeclookupError(error, 'store_failed') || isSeclookupError(error, 'timeout'))
    return new CommandError(`cannot use the meter store (${where}): ${error.message}`, { cause: error });
  return error;
}

/** What SQLite says when a write, not the file as a whole, failed: a read-only file, a full disk, a lock held too long. */
const WRITE_FAILURES = /^SQLITE_(READONLY|FULL|BUSY|LOCKED|CANTOPEN|IOERR_WRITE|IOERR_FSYNC|PERM)/;

/**
 * `error` as a CommandError naming `path` when SQLite raised it; any other error as it is. "cannot
 * write" when a write failed for a cause of the file system's or SQLite's (read-only, full,
 * locked); "cannot use" for a file broken whatever is done with it (malformed, not a database)
 * and for work that only reads.
 */
export function explainDatabaseError(path: string, error: unknown, { write = true }: { write?: boolean } = {}): unknown {
  const sqlite = sqliteErrorIn(error);
  if (!sqlite) return error;
  const problem = databaseFileProblem(path, { write });
  const verb = write && (problem !== null || WRITE_FAILURES.test(sqlite.code)) ? 'write' : 'use';
  return new CommandError(`cannot ${verb} the database ${path}: ${problem ?? withRemedy(path, sqlite)}`, { cause: error });
}

/** SQLite's message, and what to do when the file itself is damaged (a truncated copy, a page overwritten) and nothing says it yet. */
function withRemedy(path: string, sqlite: Error & { code: string }): string {
  if (!sqlite.code.startsWith('SQLITE_CORRUPT') || sqlite.message.includes('restore it from a backup')) return sqlite.message;
  return `${sqlite.message}; restore it from a backup, or salvage what SQLite can read with: sqlite3 ${path} .recover | sqlite3 NEW.db`;
}

/**
 * The error better-sqlite3 raised for SQLite itself (a read-only file, a full disk, a lock held
 * too long), found in `error` or the causes it wraps; undefined when there is none.
 */
function sqliteErrorIn(error: unknown): (Error & { code: string }) | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return current as Error & { code: string };
  }
  return undefined;
}
