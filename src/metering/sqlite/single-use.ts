/**
 * The single-use store in SQLite (better-sqlite3): one table in the meter's database file (or
 * any file), shared by every process that opens it. `consume` is one immediate transaction,
 * so two processes racing for one id cannot both win.
 */
import type Database from 'better-sqlite3';
import { SeclookupError } from '../../errors.js';
import { openSeclookupDatabase } from '../../lib/sqlite-file.js';
import { checkSingleUseId, type SingleUseStore } from '../single-use.js';

/** Expired rows are deleted every this many inserts (and at open). */
const PURGE_EVERY = 1_000;

/**
 * @param path the database file (the meter's own file is fine: the table is separate).
 * @example
 * const tokens = createSqliteSingleUseStore('./seclookup.db');
 */
export function createSqliteSingleUseStore(path: string): SingleUseStore {
  let db: Database.Database;
  try {
    db = openSeclookupDatabase(path, 'single-use store');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS single_use (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    db.exec('CREATE INDEX IF NOT EXISTS single_use_expiry ON single_use (expires_at)');
  } catch (error) {
    if (error instanceof SeclookupError) throw error;
    throw new SeclookupError('store_failed', `cannot open the single-use store "${path}": ${(error as Error).message}`, { cause: error });
  }
  const dropExpired = db.prepare<[string, number]>('DELETE FROM single_use WHERE id = ? AND expires_at <= ?');
  const insert = db.prepare<[string, number]>('INSERT OR IGNORE INTO single_use (id, expires_at) VALUES (?, ?)');
  const purge = db.prepare<[number]>('DELETE FROM single_use WHERE expires_at <= ?');
  let inserts = 0;
  purge.run(Date.now());

  const consumeOnce = db.transaction((id: string, expiresAt: number, now: number): boolean => {
    dropExpired.run(id, now);
    const won = insert.run(id, Math.round(expiresAt)).changes === 1;
    if (won && ++inserts % PURGE_EVERY === 0) purge.run(now);
    return won;
  });

  return {
    consume(id, expiresAt, now) {
      if (!db.open) throw new SeclookupError('store_failed', `the single-use store "${path}" is closed`);
      checkSingleUseId(id, expiresAt);
      try {
        return consumeOnce.immediate(id, expiresAt, now);
      } catch (error) {
        throw new SeclookupError('store_failed', `single-use store "${path}": ${(error as Error).message}`, { cause: error });
      }
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
