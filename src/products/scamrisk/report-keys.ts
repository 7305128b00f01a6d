/**
 * Which identifiers have reports, in memory, so that an assessment of an identifier nobody
 * reported (most of them) asks SQLite nothing. The SQLite table stays the truth: for a key in
 * the set, the reports themselves are read from it, so counts, disputes and verification are
 * always current.
 *
 * Across processes (several `serve` on one file): a report filed here is in the set at once; one
 * filed by another process shows once this process has seen the database change, which it checks
 * (SQLite's `PRAGMA data_version`, one cheap call) at most every `refreshMs` on a read. Then the
 * rows added since the last one seen are read (ids only grow: AUTOINCREMENT). The set only grows:
 * a row deleted by hand leaves its key, which costs a query that finds nothing, never a wrong answer.
 *
 * Memory: one string per distinct reported identifier (type and normalized value, tens of bytes).
 */
import type Database from 'better-sqlite3';

/** How often a read checks whether another process wrote reports, unless told. */
export const REPORTED_KEYS_REFRESH_MS = 1000;

export interface ReportedKeys {
  /** Whether `identifier` of `type` has a report (as of at most `refreshMs` ago for other processes). */
  has(type: string, identifier: string): boolean;
  /** A report this process just stored. */
  add(type: string, identifier: string): void;
  /** Distinct reported identifiers known. */
  readonly size: number;
}

export interface ReportedKeysOptions {
  now: () => number;
  /** @default REPORTED_KEYS_REFRESH_MS */
  refreshMs?: number;
}

const keyOf = (type: string, identifier: string) => `${type}\n${identifier}`;

/** The set over the `scamrisk_reports` table of `db`, loaded on first use. */
export function createReportedKeys(db: Database.Database, { now, refreshMs = REPORTED_KEYS_REFRESH_MS }: ReportedKeysOptions): ReportedKeys {
  const keys = new Set<string>();
  const since = db.prepare('SELECT id, type, identifier FROM scamrisk_reports WHERE id > ? ORDER BY id');
  let lastId = 0;
  let version: unknown;
  let checkedAt = Number.NEGATIVE_INFINITY;

  function readNewRows(): void {
    for (const row of since.iterate(lastId) as Iterable<{ id: number; type: string; identifier: string }>) {
      keys.add(keyOf(row.type, row.identifier));
      lastId = row.id;
    }
  }

  function refreshIfDue(): void {
    const at = now();
    if (at - checkedAt < refreshMs && at >= checkedAt) return;
    checkedAt = at;
    // data_version changes when another connection commits; this connection's own writes are
    // added by add(). The first check always reads (version starts unknown).
    const current = db.pragma('data_version', { simple: true });
    if (current === version) return;
    version = current;
    readNewRows();
  }

  return {
    has(type, identifier) {
      refreshIfDue();
      return keys.has(keyOf(type, identifier));
    },
    add(type, identifier) {
      keys.add(keyOf(type, identifier));
    },
    get size() {
      return keys.size;
    },
  };
}
