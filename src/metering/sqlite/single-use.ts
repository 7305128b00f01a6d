/**
 * The single-use store in SQLite (better-sqlite3): one table in the meter's database file (or
 * any file), shared by every process that opens it. The claims of one event-loop turn are
 * written in one immediate transaction at its end (each answered once it is committed), so two
 * processes racing for one id cannot both win, and within a group the first claim of an id wins.
 * A claim's owner (an idempotency key) is kept in its row, so a retry with it wins again.
 * A write lock held by another process is waited for from a timer (lock-wait.ts).
 */
import type Database from 'better-sqlite3';
import { SeclookupError } from '../../errors.js';
import { openSeclookupDatabase } from '../../lib/sqlite-file.js';
import { checkSingleUseId, type SingleUseStore } from '../single-use.js';
import { isBusy, WriteLockWait } from './lock-wait.js';

/** Expired rows are deleted every this many inserts (and at open). */
const PURGE_EVERY = 1_000;
/** Most claims written in one transaction (a longer queue takes several). */
const MAX_GROUP = 256;
/** How long claims wait for another process's write lock before they fail. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * @param path the database file (the meter's own file is fine: the table is separate).
 * @example
 * const tokens = createSqliteSingleUseStore('./seclookup.db');
 */
export function createSqliteSingleUseStore(path: string): SingleUseStore {
  let db: Database.Database;
  try {
    db = openSeclookupDatabase(path, 'single-use store', { timeout: BUSY_TIMEOUT_MS });
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS single_use (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, owner TEXT) WITHOUT ROWID');
    addOwnerColumn(db);
    db.exec('CREATE INDEX IF NOT EXISTS single_use_expiry ON single_use (expires_at)');
  } catch (error) {
    if (error instanceof SeclookupError) throw error;
    throw new SeclookupError('store_failed', `cannot open the single-use store "${path}": ${(error as Error).message}`, { cause: error });
  }
  const dropExpired = db.prepare<[string, number]>('DELETE FROM single_use WHERE id = ? AND expires_at <= ?');
  const insert = db.prepare<[string, number, string | null]>('INSERT OR IGNORE INTO single_use (id, expires_at, owner) VALUES (?, ?, ?)');
  const ownerOf = db.prepare<[string]>('SELECT owner FROM single_use WHERE id = ?').pluck();
  const purge = db.prepare<[number]>('DELETE FROM single_use WHERE expires_at <= ?');
  let inserts = 0;
  purge.run(Date.now());

  const claim = ({ id, expiresAt, now, owner }: Claim): boolean => {
    dropExpired.run(id, now);
    const won = insert.run(id, Math.round(expiresAt), owner ?? null).changes === 1;
    if (won && ++inserts % PURGE_EVERY === 0) purge.run(now);
    // Lost: still a win for a retry of the claim that holds it.
    return won || (owner !== undefined && ownerOf.get(id) === owner);
  };
  const consumeOnce = db.transaction(claim);
  const consumeGroup = db.transaction((group: readonly PendingClaim[]) => group.map(claim));
  const lock = new WriteLockWait(db, `the single-use store "${path}"`, BUSY_TIMEOUT_MS);
  const failed = (error: unknown) => new SeclookupError('store_failed', `single-use store "${path}": ${(error as Error).message}`, { cause: error });

  // Claims made in one event-loop turn are written in one transaction at its end, as the
  // meter's group commit does: a commit per claim cost more than the rest of a siteverify.
  let queue: PendingClaim[] = [];
  let scheduled = false;
  /** Write the queued claims; `waitHere` (close) waits for a lock held elsewhere in SQLite, not from a timer. */
  function flush(waitHere = false): void {
    scheduled = false;
    if (waitHere) lock.cancel();
    const run = (group: PendingClaim[]) => consumeGroup.immediate(group);
    while (queue.length > 0) {
      const group = queue.length <= MAX_GROUP ? queue : queue.slice(0, MAX_GROUP);
      queue = group === queue ? [] : queue.slice(MAX_GROUP);
      let wins: boolean[];
      try {
        wins = waitHere ? run(group) : lock.withoutBusyWait(() => run(group));
        lock.succeeded();
      } catch (error) {
        if (isBusy(error)) {
          // Held elsewhere: the claims wait at the head of the queue, or, after the whole busy
          // timeout, all fail (a claim alone would meet the same lock).
          queue = group.concat(queue);
          if (!waitHere && lock.retryLater(() => flush())) return;
          for (const c of queue) c.reject(lock.timedOut(error));
          queue = [];
          return;
        }
        // The group was rolled back: each claim again in a transaction of its own, so only a failing one rejects.
        for (const c of group) {
          try {
            c.resolve(consumeOnce.immediate(c));
          } catch (error) {
            c.reject(failed(error));
          }
        }
        continue;
      }
      group.forEach((c, i) => c.resolve(wins[i]));
    }
  }

  return {
    consume(id, expiresAt, now, owner) {
      if (!db.open) throw new SeclookupError('store_failed', `the single-use store "${path}" is closed`);
      checkSingleUseId(id, expiresAt, owner);
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ id, expiresAt, now, owner, resolve, reject });
        if (!scheduled && !lock.waiting) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async close() {
      // Claims already made are written (and answered) before the file closes.
      if (db.open) {
        flush(true);
        db.close();
      }
    },
  };
}

interface Claim {
  id: string;
  expiresAt: number;
  now: number;
  owner: string | undefined;
}

/** One claim waiting for its turn's transaction. */
interface PendingClaim extends Claim {
  resolve(won: boolean): void;
  reject(error: unknown): void;
}

/**
 * Files written before claims had owners get the column (NULL: no owner). Two processes opening
 * one such file at once may both try: the loser's "duplicate column" is the same outcome.
 */
function addOwnerColumn(db: Database.Database): void {
  const columns = db.pragma('table_info(single_use)') as { name: string }[];
  if (columns.some((column) => column.name === 'owner')) return;
  try {
    db.exec('ALTER TABLE single_use ADD COLUMN owner TEXT');
  } catch (error) {
    if (!/duplicate column/i.test((error as Error).message)) throw error;
  }
}
