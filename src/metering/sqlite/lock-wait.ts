/**
 * Another process's write lock, waited for off the event loop. SQLite's busy handler sleeps in
 * the calling thread, and better-sqlite3 calls it synchronously: a group commit meeting a lock
 * held elsewhere (the sqlite3 shell in a transaction, a migration, another process's long write)
 * froze every request of this process, `/healthz` included, for up to the busy timeout, and the
 * next group froze it again. A group's `BEGIN IMMEDIATE` is therefore tried with no busy wait;
 * on SQLITE_BUSY its writes stay queued and are tried again from a timer, backing off as
 * SQLite's own handler does, until the lock has been waited for as long as the busy timeout.
 * Meanwhile the process answers everything that needs no write.
 */
import type Database from 'better-sqlite3';
import { SeclookupError } from '../../errors.js';

/** Delays between tries, in ms (SQLite's busy handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100). */
const RETRY_DELAYS_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

/** True for SQLite's "database is locked": another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}

export class WriteLockWait {
  /** When the current wait began (its first busy try), by the clock below; null when not waiting. */
  private waitingSince: number | null = null;
  private tries = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param what the store, for messages (`metering database "./seclookup.db"`).
   * @param timeoutMs how long a wait lasts before `retryLater` gives up: the connection's busy timeout.
   * @param clock real time in ms (a test's injected meter clock may stand still).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly what: string,
    private readonly timeoutMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** A retry is due from a timer: flushes meanwhile would only meet the lock again. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /** Run `write` (a transaction) with SQLite's busy wait off: a lock held elsewhere throws SQLITE_BUSY at once. */
  withoutBusyWait<T>(write: () => T): T {
    // Switched off around the try and back on after: every other statement of the connection
    // (the CLI's writes, close's last flush) still waits in SQLite. SQLite sets busy_timeout
    // when the pragma is compiled, not when it runs, so a prepared statement run again would do
    // nothing: each switch is compiled anew (about 2 µs; once per flush, not per call).
    this.db.pragma('busy_timeout = 0');
    try {
      return write();
    } finally {
      this.db.pragma(`busy_timeout = ${this.timeoutMs}`);
    }
  }

  /** A try went through: a later busy starts a wait of its own. */
  succeeded(): void {
    this.waitingSince = null;
    this.tries = 0;
  }

  /**
   * After a busy try: `retry` is called from a timer and this returns true; or, once the lock has
   * been waited for the whole timeout, nothing is scheduled, the wait ends, and this returns
   * false (the caller fails what it holds).
   */
  retryLater(retry: () => void): boolean {
    const now = this.clock();
    this.waitingSince ??= now;
    if (now - this.waitingSince >= this.timeoutMs) {
      this.succeeded();
      return false;
    }
    const delay = RETRY_DELAYS_MS[Math.min(this.tries++, RETRY_DELAYS_MS.length - 1)];
    this.timer = setTimeout(() => {
      this.timer = undefined;
      retry();
    }, delay);
    return true;
  }

  /** What the writes still held fail with once `retryLater` gave up. */
  timedOut(cause: unknown): SeclookupError {
    return new SeclookupError('store_failed', `${this.what} is locked by another connection: waited ${this.timeoutMs} ms for its write lock`, { cause });
  }

  /** No retry after this (the store is closing and writes what it holds at once). */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
