/**
 * The report database: reports filed against normalized identifiers, behind one interface
 * with an SQLite implementation (better-sqlite3; the default for `serve`, in the `--db` file)
 * and an in-memory one (tests, embedding). test/products/scamrisk-reports.test.ts runs one
 * conformance suite over both.
 */
import Database from 'better-sqlite3';
import { databaseFileProblem, isSeclookupSchema, openSeclookupDatabase } from '../../lib/sqlite-file.js';
import { createReportedKeys } from './report-keys.js';
import { SeclookupError } from '../../errors.js';
import type { MaybePromise } from '../../lib/outcome.js';
import { IDENTIFIER_TYPES, type IdentifierType } from './types.js';
import { NORMALIZATION_VERSION, parseIdentifier } from './identifiers.js';

/** Ours: the categories a report may carry. */
export const REPORT_CATEGORIES = ['phishing', 'scam', 'fraud', 'impersonation', 'spam', 'malware', 'extortion', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

export interface NewReport {
  type: IdentifierType;
  /** The normalized identifier (the engine's `normalize`). */
  identifier: string;
  category: ReportCategory;
  /** Who reported it: a name the operator recognises (`abuse-desk`, `api`); one reporter counts once in the score. */
  source: string;
  /** Checked by the operator. @default false */
  verified?: boolean;
  /** Free text, at most 500 characters. */
  note?: string;
  /** When it was reported, ms since the epoch. @default now */
  reportedAt?: number;
}

export interface StoredReport {
  id: number;
  type: IdentifierType;
  identifier: string;
  category: ReportCategory;
  source: string;
  verified: boolean;
  disputed: boolean;
  note: string | null;
  reportedAt: number;
  /** When it was last disputed or undisputed; null when never. */
  disputedAt: number | null;
}

export interface ReportFilter {
  type?: IdentifierType;
  identifier?: string;
  /** Newest first, at most this many. @default 100 */
  limit?: number;
}

export interface ReportStore {
  add(report: NewReport): MaybePromise<StoredReport>;
  /**
   * Add every report or none: each is checked first (a TypeError naming the first bad one, and
   * nothing stored), then all are written in one transaction. The bundled stores have it;
   * `reports import` needs it.
   */
  addMany?(reports: readonly NewReport[]): MaybePromise<StoredReport[]>;
  /** Mark a report disputed (or, with `disputed: false`, no longer); null when there is no such id. */
  dispute(id: number, disputed: boolean, at: number): MaybePromise<StoredReport | null>;
  /** Every report of one identifier, newest first. */
  find(type: IdentifierType, identifier: string): MaybePromise<StoredReport[]>;
  list(filter?: ReportFilter): MaybePromise<StoredReport[]>;
  count(): MaybePromise<number>;
  close(): MaybePromise<void>;
}

/**
 * How far ahead of the clock a report's time may be: another machine's clock may run a little
 * ahead. Beyond it a time is refused, since scoring counts a report from the future as new
 * (age 0) for as long as the future lasts: it would never decay.
 */
export const REPORT_CLOCK_SKEW_MS = 5 * 60_000;
/** A note's limit in characters, counted as code points (noteLength): the API's and the CLI's alike. */
export const MAX_NOTE = 500;
const MAX_SOURCE = 100;
/** An API report's source: a name of up to 100 characters behind `api:<subscription>/`. */
const MAX_API_SOURCE = 160;

/**
 * A note's length in code points, not UTF-16 units: an emoji (or any character beyond U+FFFF)
 * is one character to whoever writes the note, so 500 of them fit.
 */
export function noteLength(note: string): number {
  let count = 0;
  for (const _ of note) count++;
  return count;
}

/**
 * A control character, or one that changes the direction of the text after it (U+202E and the
 * other bidirectional formatting characters): refused in a reporter, where an escape or a newline
 * would reach `reports list` on a terminal, and a direction change would make its row read as
 * something else (Trojan Source, CVE-2021-42574).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them.
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * A report as stored, checked: every store applies exactly these rules (and `reports import`
 * checks each line with them before writing any). Throws a TypeError naming the field.
 */
export function checkNewReport(report: NewReport, now: number): Required<Omit<NewReport, 'note'>> & { note: string | null } {
  if (!(IDENTIFIER_TYPES as readonly string[]).includes(report.type)) throw new TypeError(`type must be one of ${IDENTIFIER_TYPES.join(', ')}`);
  if (typeof report.identifier !== 'string' || report.identifier === '') throw new TypeError('identifier must be a non-empty string');
  if (!(REPORT_CATEGORIES as readonly string[]).includes(report.category)) throw new TypeError(`category must be one of ${REPORT_CATEGORIES.join(', ')}`);
  if (
    typeof report.source !== 'string' ||
    report.source.trim() === '' ||
    report.source.length > (report.source.startsWith('api:') ? MAX_API_SOURCE : MAX_SOURCE)
  )
    throw new TypeError(`source must be 1 to ${MAX_SOURCE} characters`);
  // An escape or a newline in a reporter would reach the operator's terminal in `reports list`.
  if (CONTROL_CHARACTER.test(report.source)) throw new TypeError('source must hold no control or text-direction characters');
  if (report.verified !== undefined && typeof report.verified !== 'boolean') throw new TypeError('verified must be true or false');
  if (report.note !== undefined && (typeof report.note !== 'string' || noteLength(report.note) > MAX_NOTE))
    throw new TypeError(`note must be at most ${MAX_NOTE} characters (got ${typeof report.note === 'string' ? noteLength(report.note) : typeof report.note})`);
  const reportedAt = report.reportedAt ?? now;
  if (!Number.isSafeInteger(reportedAt) || reportedAt < 0) throw new TypeError('reportedAt must be a time from 1970 on');
  if (reportedAt > now + REPORT_CLOCK_SKEW_MS)
    throw new TypeError(
      `reportedAt is in the future (${new Date(reportedAt).toISOString()}; at most ${REPORT_CLOCK_SKEW_MS / 60_000} minutes ahead of this clock)`,
    );
  return {
    type: report.type,
    identifier: report.identifier,
    category: report.category,
    source: report.source.trim(),
    verified: report.verified ?? false,
    note: report.note ?? null,
    reportedAt,
  };
}

const byNewest = (a: StoredReport, b: StoredReport) => b.reportedAt - a.reportedAt || b.id - a.id;

/**
 * The source of a report filed over the API: `api:<subscription>/<name>`. The subscription of the
 * key that filed it is who reported; the name the caller gave is its own label (its end user,
 * its desk), which it can make up at will.
 */
export function apiReporter(subscriptionId: string, name: string): string {
  return `api:${subscriptionId}/${name}`;
}

/**
 * Who a report counts as, for "each reporter counts once": a report filed over the API as the
 * subscription that filed it, whatever name it gave; any other (an operator's `reports add` or
 * `import`) as its source.
 */
export function reporterOf(source: string): string {
  if (!source.startsWith('api:')) return source;
  const slash = source.indexOf('/');
  return slash === -1 ? source : source.slice(0, slash);
}

export function createMemoryReportStore(options: { now?: () => number } = {}): ReportStore {
  const now = options.now ?? Date.now;
  const reports: StoredReport[] = [];
  /** Reports per identifier (type and normalized value), so `find` does not scan them all. */
  const byIdentifier = new Map<string, StoredReport[]>();
  let closed = false;
  const open = () => {
    if (closed) throw new SeclookupError('store_failed', 'the report store is closed');
  };
  const insert = (checked: ReturnType<typeof checkNewReport>): StoredReport => {
    const stored: StoredReport = { id: reports.length + 1, ...checked, disputed: false, disputedAt: null };
    reports.push(stored);
    const key = `${stored.type}\n${stored.identifier}`;
    const same = byIdentifier.get(key);
    if (same) same.push(stored);
    else byIdentifier.set(key, [stored]);
    return { ...stored };
  };
  return {
    add(report) {
      open();
      return insert(checkNewReport(report, now()));
    },
    addMany(many) {
      open();
      const at = now();
      return many.map((report) => checkNewReport(report, at)).map(insert);
    },
    dispute(id, disputed, at) {
      open();
      const found = reports.find((r) => r.id === id);
      if (!found) return null;
      found.disputed = disputed;
      found.disputedAt = at;
      return { ...found };
    },
    find(type, identifier) {
      open();
      const same = byIdentifier.get(`${type}\n${identifier}`);
      return same ? [...same].sort(byNewest).map((r) => ({ ...r })) : [];
    },
    list(filter = {}) {
      open();
      return reports
        .filter((r) => (filter.type === undefined || r.type === filter.type) && (filter.identifier === undefined || r.identifier === filter.identifier))
        .sort(byNewest)
        .slice(0, filter.limit ?? 100)
        .map((r) => ({ ...r }));
    },
    count() {
      open();
      return reports.length;
    },
    close() {
      closed = true;
    },
  };
}

interface Row {
  id: number;
  type: IdentifierType;
  identifier: string;
  category: ReportCategory;
  source: string;
  verified: number;
  disputed: number;
  note: string | null;
  reported_at: number;
  disputed_at: number | null;
}

const fromRow = (row: Row): StoredReport => ({
  id: row.id,
  type: row.type,
  identifier: row.identifier,
  category: row.category,
  source: row.source,
  verified: row.verified === 1,
  disputed: row.disputed === 1,
  note: row.note,
  reportedAt: row.reported_at,
  disputedAt: row.disputed_at,
});

/** The columns the SQLite store reads and writes. */
const REPORT_COLUMNS = ['id', 'type', 'identifier', 'category', 'source', 'verified', 'disputed', 'note', 'reported_at', 'disputed_at'] as const;

/**
 * Open (creating if absent) the report table in the SQLite file at `path`. Refuses, naming the
 * file, one that is not an SQLite database or whose `scamrisk_reports` table has another schema,
 * so a wrong file stops start instead of failing the first report.
 */
function openReportDatabase(path: string): Database.Database {
  let db: Database.Database | undefined;
  const refuse = (what: string, cause?: unknown): never => {
    db?.close();
    throw new SeclookupError('store_failed', what, { cause });
  };
  try {
    db = openSeclookupDatabase(path, 'report database');
    const existed = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scamrisk_reports'").get() !== undefined;
    db.exec(`CREATE TABLE IF NOT EXISTS scamrisk_reports (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      type TEXT NOT NULL,
      identifier TEXT NOT NULL,
      category TEXT NOT NULL,
      source TEXT NOT NULL,
      verified INTEGER NOT NULL DEFAULT 0,
      disputed INTEGER NOT NULL DEFAULT 0,
      note TEXT,
      reported_at INTEGER NOT NULL,
      disputed_at INTEGER
    );`);
    const missing = missingColumns(db);
    if (missing.length > 0)
      return refuse(`the report database ${path} has a scamrisk_reports table of another schema (missing columns: ${missing.join(', ')})`);
    db.exec('CREATE INDEX IF NOT EXISTS scamrisk_reports_identifier ON scamrisk_reports (type, identifier);');
    fileUnderCurrentNormalization(db, existed);
    return db;
  } catch (error) {
    if (error instanceof SeclookupError) throw error;
    return refuse(`cannot open the report database ${path}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

/**
 * Table `scamrisk_reports_meta`: the NORMALIZATION_VERSION the stored identifiers are written in,
 * as row `normalization` (not PRAGMA user_version: the metering database, which the reports
 * share by default, has its own).
 */
const META_TABLE = 'CREATE TABLE IF NOT EXISTS scamrisk_reports_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);';

/** The normalization version of a database's stored identifiers: 0 when none is recorded (written before versions). */
export function storedNormalizationVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scamrisk_reports_meta'").get();
  if (table === undefined) return 0;
  const row = db.prepare("SELECT value FROM scamrisk_reports_meta WHERE key = 'normalization'").get() as { value: number } | undefined;
  return row?.value ?? 0;
}

/** Reports re-filed per transaction: each is short, so a meter sharing the file is never held up long. */
export const REFILE_BATCH = 2_000;

/**
 * Reports filed before a normalized form changed (NORMALIZATION_VERSION) move to the current
 * form, so they count for the identifier as assessments now normalize it (`twitter:alice` to
 * `x:alice`, a URL without its password, an SS58 address under its public key's generic form).
 * Each stored identifier is parsed again by its type and its row updated when the form differs;
 * one that no longer parses, or of an unknown type, stays as it is. Every report once per
 * version; then, on each later open, the reports filed since (`normalized_through`, the highest
 * id looked at): an older seclookup may have filed them in its own forms (a rollback and back),
 * and this code's own rows come out unchanged. In id order, REFILE_BATCH reports a transaction,
 * each advancing `normalized_through`: memory stays bounded, other writers get the lock between
 * batches, and a start cut short goes on where it stopped. A table just created is current; a
 * database recorded at a newer version is left alone.
 */
function fileUnderCurrentNormalization(db: Database.Database, existed: boolean): void {
  db.exec(META_TABLE);
  const record = db.prepare('INSERT INTO scamrisk_reports_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const highestId = () => (db.prepare('SELECT max(id) FROM scamrisk_reports').pluck().get() as number | null) ?? 0;
  const through = () => (db.prepare("SELECT value FROM scamrisk_reports_meta WHERE key = 'normalized_through'").pluck().get() as number | undefined) ?? 0;
  if (!existed) {
    record.run('normalization', NORMALIZATION_VERSION);
    return;
  }
  const stored = storedNormalizationVersion(db);
  if (stored > NORMALIZATION_VERSION || (stored === NORMALIZATION_VERSION && highestId() <= through())) return;
  if (stored < NORMALIZATION_VERSION) {
    // Every report again, from the first: recorded before the work, so a start cut short resumes.
    db.transaction(() => {
      if (storedNormalizationVersion(db) >= NORMALIZATION_VERSION) return; // another process did
      record.run('normalization', NORMALIZATION_VERSION);
      record.run('normalized_through', 0);
    }).immediate();
  }
  const batch = db.prepare('SELECT id, type, identifier FROM scamrisk_reports WHERE id > ? ORDER BY id LIMIT ?');
  const move = db.prepare('UPDATE scamrisk_reports SET identifier = ? WHERE id = ?');
  const refileBatch = db.transaction((): boolean => {
    // Read again under the write lock: another process may be doing the same.
    const rows = batch.all(through(), REFILE_BATCH) as { id: number; type: string; identifier: string }[];
    for (const { id, type, identifier } of rows) {
      const current = renormalized(type, identifier);
      if (current !== null && current !== identifier) move.run(current, id);
    }
    if (rows.length > 0) record.run('normalized_through', rows[rows.length - 1]!.id);
    return rows.length === REFILE_BATCH;
  });
  while (refileBatch.immediate()) {
    // next batch
  }
}

/** A stored identifier as `parseIdentifier` now writes it; null when it no longer parses or its type is unknown. */
function renormalized(type: string, identifier: string): string | null {
  if (!(IDENTIFIER_TYPES as readonly string[]).includes(type)) return null;
  try {
    return parseIdentifier(type as IdentifierType, identifier).normalized;
  } catch {
    return null;
  }
}

function missingColumns(db: Database.Database): string[] {
  const columns = new Set((db.pragma('table_info(scamrisk_reports)') as { name: string }[]).map((c) => c.name));
  return REPORT_COLUMNS.filter((c) => !columns.has(c));
}

/**
 * Open an existing file for reading only: nothing is created or written (no table, no index, no
 * journal mode), so a file this user may read but not write still lists its reports. Null when
 * the file has no report table yet (it then holds no reports).
 */
function openReportDatabaseReadOnly(path: string): Database.Database | null {
  const problem = databaseFileProblem(path, { write: false });
  if (problem) throw new SeclookupError('store_failed', `cannot open report database "${path}": ${problem}`);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    if (!isSeclookupSchema(tables))
      throw new SeclookupError('foreign_database', `"${path}" is another application's SQLite database and holds no seclookup tables`);
    if (!tables.includes('scamrisk_reports')) {
      db.close();
      return null;
    }
    const missing = missingColumns(db);
    if (missing.length > 0)
      throw new SeclookupError(
        'store_failed',
        `the report database ${path} has a scamrisk_reports table of another schema (missing columns: ${missing.join(', ')})`,
      );
    return db;
  } catch (error) {
    if (db?.open) db.close();
    if (error instanceof SeclookupError) throw error;
    throw new SeclookupError('store_failed', `cannot open report database "${path}": ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

export interface SqliteReportStoreOptions {
  now?: () => number;
  /** How soon reports filed by other processes are seen (report-keys.ts). @default 1000 */
  refreshMs?: number;
  /**
   * Open an existing file for reading only (`reports list` on a file this user may not write):
   * nothing is created or written, and `add`, `addMany` and `dispute` fail with `store_failed`.
   * @default false
   */
  readOnly?: boolean;
}

/** The SQLite store, which can also add many reports in one transaction. */
export type SqliteReportStore = ReportStore & Required<Pick<ReportStore, 'addMany'>>;

/**
 * The SQLite store: table `scamrisk_reports` in the file at `path` (created if absent). It
 * shares the metering database by default (`--db`) and touches no other table. `find` asks
 * SQLite only about identifiers that have reports (report-keys.ts: an in-memory set, which sees
 * reports filed by other processes within `refreshMs`, default 1 s).
 */
export function createSqliteReportStore(path: string, options: SqliteReportStoreOptions = {}): SqliteReportStore {
  const now = options.now ?? Date.now;
  if (options.readOnly) {
    const db = openReportDatabaseReadOnly(path);
    if (db === null) return emptyReadOnlyStore(path);
    return sqliteStore(db, path, now, options.refreshMs, true);
  }
  return sqliteStore(openReportDatabase(path), path, now, options.refreshMs, false);
}

function sqliteStore(db: Database.Database, path: string, now: () => number, refreshMs: number | undefined, readOnly: boolean): SqliteReportStore {
  const reported = createReportedKeys(db, { now, refreshMs });
  // Prepared only where they can run: a read-only connection refuses to prepare a write.
  const insert = readOnly
    ? null
    : db.prepare('INSERT INTO scamrisk_reports (type, identifier, category, source, verified, note, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *');
  const setDisputed = readOnly ? null : db.prepare('UPDATE scamrisk_reports SET disputed = ?, disputed_at = ? WHERE id = ? RETURNING *');
  const find = db.prepare('SELECT * FROM scamrisk_reports WHERE type = ? AND identifier = ? ORDER BY reported_at DESC, id DESC');
  const list = db.prepare(
    'SELECT * FROM scamrisk_reports WHERE (@type IS NULL OR type = @type) AND (@identifier IS NULL OR identifier = @identifier) ORDER BY reported_at DESC, id DESC LIMIT @limit',
  );
  const count = db.prepare('SELECT COUNT(*) AS n FROM scamrisk_reports');
  const writable = () => {
    if (readOnly) throw new SeclookupError('store_failed', `the report database ${path} is open for reading only`);
  };
  const guard = <T>(work: () => T): T => {
    if (!db.open) throw new SeclookupError('store_failed', 'the report database is closed');
    try {
      return work();
    } catch (error) {
      if (error instanceof TypeError || error instanceof SeclookupError) throw error;
      throw new SeclookupError('store_failed', `report database failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
  const store = (r: ReturnType<typeof checkNewReport>): StoredReport => {
    const stored = fromRow(insert!.get(r.type, r.identifier, r.category, r.source, r.verified ? 1 : 0, r.note, r.reportedAt) as Row);
    reported.add(stored.type, stored.identifier);
    return stored;
  };
  // Every row or none: a failure inside rolls the whole batch back.
  const storeAll = db.transaction((checked: ReturnType<typeof checkNewReport>[]) => checked.map(store));
  return {
    add: (report) =>
      guard(() => {
        writable();
        return store(checkNewReport(report, now()));
      }),
    addMany: (reports) =>
      guard(() => {
        writable();
        const at = now();
        return storeAll(reports.map((report) => checkNewReport(report, at)));
      }),
    dispute: (id, disputed, at) =>
      guard(() => {
        writable();
        const row = setDisputed!.get(disputed ? 1 : 0, at, id) as Row | undefined;
        return row ? fromRow(row) : null;
      }),
    find: (type, identifier) => guard(() => (reported.has(type, identifier) ? (find.all(type, identifier) as Row[]).map(fromRow) : [])),
    list: (filter = {}) =>
      guard(() => (list.all({ type: filter.type ?? null, identifier: filter.identifier ?? null, limit: filter.limit ?? 100 }) as Row[]).map(fromRow)),
    count: () => guard(() => (count.get() as { n: number }).n),
    close: () => {
      if (db.open) db.close();
    },
  };
}

/** A read-only file without the report table: no reports, and no way to add one. */
function emptyReadOnlyStore(path: string): SqliteReportStore {
  const refuse = (): never => {
    throw new SeclookupError('store_failed', `the report database ${path} is open for reading only`);
  };
  return { add: refuse, addMany: refuse, dispute: refuse, find: () => [], list: () => [], count: () => 0, close: () => {} };
}
