/**
 * `seclookup reports add | import | dispute | list`: the scamrisk report database (table
 * `scamrisk_reports` in the `--db` file, which `serve` reads). Identifiers are normalized as
 * the assessment normalizes them, so a report always lands where assessments look.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isLookupError, isSeclookupError } from '../../errors.js';
import { databaseFileProblem } from '../../lib/sqlite-file.js';
import { parseIdentifier } from './identifiers.js';
import {
  checkNewReport,
  createSqliteReportStore,
  REPORT_CATEGORIES,
  REPORT_CLOCK_SKEW_MS,
  type NewReport,
  type ReportCategory,
  type SqliteReportStore,
  type StoredReport,
} from './reports.js';
import { IDENTIFIER_TYPES, type IdentifierType } from './types.js';
import { DB_OPTION, expectPositionals, parseCommand, parseInteger, resolveDbPath } from '../../cli/args.js';
import { explainDatabaseError } from '../../cli/db-errors.js';
import { onSameStore } from '../../cli/db.js';
import { CommandError, EXIT_OK, UsageError } from '../../cli/errors.js';
import { formatTable, note, out, printJson } from '../../cli/output.js';
import { cliPath } from '../../cli/io.js';

export const REPORTS_HELP = `Usage:
  seclookup reports add TYPE VALUE --category CATEGORY [--source NAME] [--verified] [--note TEXT]
                        [--region CC] [--json] [--db FILE]
  seclookup reports import FILE [--verified] [--source NAME] [--json] [--db FILE]
  seclookup reports dispute ID [--undo] [--db FILE]
  seclookup reports list [--type TYPE] [--value VALUE] [--limit N] [--json] [--db FILE]

The scamrisk report database: reports against identifiers, which assessments count in
report_summary and the reported / reported_verified signals.

reports add      File one report. TYPE is one of:
                 ${IDENTIFIER_TYPES.join(', ')};
                 VALUE is normalized as assessments normalize it (invalid values are refused).
  --category C          one of ${REPORT_CATEGORIES.join(', ')}
                        (required)
  --source NAME         who reported it (default: cli); each reporter counts once in the score
  --verified            the operator checked it (weighs more; API reports never are)
  --note TEXT           free text, at most 500 characters
  --region CC           region of a phone number written without +

reports import   File every report of FILE: JSON lines, one object per line with type, value,
                 category and optionally source, verified (true or false), note, region,
                 reported_at (ISO 8601, from 1970 to at most ${REPORT_CLOCK_SKEW_MS / 60_000} minutes ahead of this clock).
                 Every line is checked first, by the rules of reports add; any bad line (or
                 unknown field) refuses the whole file, and the rest is written in one
                 transaction: all of it or nothing. A line with its own reported_at that
                 matches a stored report in every field is skipped: a file imported again
                 files its dated reports once.
  --verified            mark every imported report verified
  --source NAME         source for lines without one (default: import)

reports dispute  Mark report ID disputed (it then adds nothing to the score); --undo clears it.

reports list     Newest first. --type and --value (normalized) filter; --limit N (default 100).

Common options:
  --db FILE     database (default: $SECLOOKUP_DB, else ./seclookup.db; created if absent)
  --json        print JSON instead of text
  -h, --help    show this help

Exit codes: 0 done, 1 failed (bad value, unknown report id, bad import file), 2 usage error.`;

export async function runReports(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'add':
      return add(rest);
    case 'import':
      return importFile(rest);
    case 'dispute':
      return dispute(rest);
    case 'list':
      return list(rest);
    case undefined:
      throw new UsageError('missing subcommand: add, import, dispute or list', 'reports');
    default:
      if (sub === '-h' || sub === '--help') return help();
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; use add, import, dispute or list`, 'reports');
  }
}

function help(): number {
  out(REPORTS_HELP);
  return EXIT_OK;
}

/**
 * Run `work` on the report store in the --db file, closed afterwards. `write`: the command
 * changes it, so a file or folder this user may not write is refused first, in one line naming
 * the file and the cause. A command that only reads opens a file it may read but not write
 * read-only (nothing created, nothing written).
 */
async function withStore<T>(dbFlag: string | undefined, { write }: { write: boolean }, work: (store: SqliteReportStore) => Promise<T>): Promise<T> {
  const path = resolveDbPath(dbFlag);
  const exists = existsSync(path);
  const writeProblem = databaseFileProblem(path, { write: true });
  if (write && writeProblem) throw new CommandError(`cannot write the database ${path}: ${writeProblem}`);
  // `reports list` creates a file that is not there yet, as the other commands do.
  if (!exists && writeProblem) throw new CommandError(`cannot create the database ${path}: ${writeProblem}`);
  const readOnly = !write && writeProblem !== null;
  let store: SqliteReportStore;
  try {
    store = createSqliteReportStore(path, { readOnly });
  } catch (error) {
    // Read-only and still refused: SQLite needs the folder for a WAL file's -shm even to read.
    if (readOnly && isSeclookupError(error, 'store_failed') && !/not an SQLite database|another schema/.test(error.message))
      throw new CommandError(`cannot read the database ${path}: ${writeProblem}`, { cause: error });
    const explained = explainDatabaseError(path, error);
    throw explained instanceof CommandError ? explained : new CommandError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  try {
    return await work(store);
  } catch (error) {
    // A report the store's own rules refuse (checkNewReport): the operator's input, said in one line.
    if (error instanceof TypeError) throw new CommandError(fieldNames(error.message), { cause: error });
    throw explainDatabaseError(path, error);
  } finally {
    store.close();
  }
}

/** The store's field names as the import file and the flags spell them. */
function fieldNames(message: string): string {
  return message.replace(/^reportedAt\b/, 'reported_at');
}

function parseType(value: string, command: string): IdentifierType {
  if ((IDENTIFIER_TYPES as readonly string[]).includes(value)) return value as IdentifierType;
  throw new UsageError(`unknown type ${JSON.stringify(value)}; types: ${IDENTIFIER_TYPES.join(', ')}`, command);
}

function parseCategory(value: string | undefined, command: string): ReportCategory {
  if (value === undefined) throw new UsageError(`missing --category (${REPORT_CATEGORIES.join(', ')})`, command);
  if ((REPORT_CATEGORIES as readonly string[]).includes(value)) return value as ReportCategory;
  throw new UsageError(`unknown category ${JSON.stringify(value)}; categories: ${REPORT_CATEGORIES.join(', ')}`, command);
}

function normalized(type: IdentifierType, value: string, region?: string): string {
  try {
    return parseIdentifier(type, value, { region }).normalized;
  } catch (error) {
    if (isLookupError(error)) throw new CommandError(error.message);
    throw error;
  }
}

function toJson(report: StoredReport): Record<string, unknown> {
  return {
    id: report.id,
    type: report.type,
    identifier: report.identifier,
    category: report.category,
    source: report.source,
    verified: report.verified,
    disputed: report.disputed,
    note: report.note,
    reported_at: new Date(report.reportedAt).toISOString(),
    disputed_at: report.disputedAt === null ? null : new Date(report.disputedAt).toISOString(),
  };
}

async function add(argv: string[]): Promise<number> {
  const command = 'reports add';
  const { values, positionals } = parseCommand(
    argv,
    {
      category: { type: 'string' },
      source: { type: 'string' },
      verified: { type: 'boolean' },
      note: { type: 'string' },
      region: { type: 'string' },
      json: { type: 'boolean' },
      ...DB_OPTION,
    },
    command,
  );
  if (values.help) return help();
  const [typeText, value] = expectPositionals(positionals, ['TYPE', 'VALUE'], command);
  const type = parseType(typeText, command);
  const category = parseCategory(values.category, command);
  const identifier = normalized(type, value, values.region);
  const report: NewReport = { type, identifier, category, source: values.source ?? 'cli', verified: values.verified ?? false, note: values.note };
  // Checked by the store's rules before the file is opened (or created).
  try {
    checkNewReport(report, Date.now());
  } catch (error) {
    if (error instanceof TypeError) throw new CommandError(fieldNames(error.message), { cause: error });
    throw error;
  }
  const stored = await withStore(values.db, { write: true }, async (store) => store.add(report));
  if (values.json) printJson(toJson(stored));
  else out(`report ${stored.id}: ${type} ${identifier} (${category}${stored.verified ? ', verified' : ''}, by ${stored.source})`);
  return EXIT_OK;
}

async function importFile(argv: string[]): Promise<number> {
  const command = 'reports import';
  const { values, positionals } = parseCommand(
    argv,
    { verified: { type: 'boolean' }, source: { type: 'string' }, json: { type: 'boolean' }, ...DB_OPTION },
    command,
  );
  if (values.help) return help();
  const [file] = expectPositionals(positionals, ['FILE'], command);
  let text: string;
  try {
    text = readFileSync(cliPath(file), 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { reports, problems } = readImportLines(text, { source: values.source ?? 'import', verified: values.verified === true }, Date.now());
  if (problems.length > 0) {
    for (const problem of problems.slice(0, 10)) note(problem);
    if (problems.length > 10) note(`... and ${problems.length - 10} more`);
    throw new CommandError(`${problems.length} bad line(s) in ${file}; nothing imported`);
  }
  // One transaction: every new line or none, even if the store refuses one or the disk fills up.
  const { stored, skipped } = await withStore(values.db, { write: true }, async (store) => {
    const fresh = await notYetFiled(store, reports);
    return { stored: await store.addMany(fresh), skipped: reports.length - fresh.length };
  });
  if (values.json) printJson({ imported: stored.length, skipped, first_id: stored[0]?.id ?? null, last_id: stored.at(-1)?.id ?? null });
  else out(`imported ${stored.length} report(s) from ${file}${skipped > 0 ? `; skipped ${skipped} already filed` : ''}`);
  return EXIT_OK;
}

/**
 * The reports not filed yet. A line with its own `reported_at` that matches a stored report in
 * every field (or an earlier line of the file) is the same report filed again, as when a file is
 * imported twice: counted once, not twice in `total_reports`. A line without `reported_at` is
 * a report made now, and always new.
 */
async function notYetFiled(store: SqliteReportStore, reports: readonly NewReport[]): Promise<NewReport[]> {
  const identity = (r: { type: string; identifier: string; category: string; source: string; verified?: boolean; note?: string | null; reportedAt?: number }) =>
    JSON.stringify([r.type, r.identifier, r.category, r.source.trim(), r.verified ?? false, r.note ?? null, r.reportedAt]);
  const filed = new Set<string>();
  const looked = new Set<string>();
  const fresh: NewReport[] = [];
  for (const report of reports) {
    if (report.reportedAt === undefined) {
      fresh.push(report);
      continue;
    }
    const subject = JSON.stringify([report.type, report.identifier]);
    if (!looked.has(subject)) {
      looked.add(subject);
      for (const stored of await store.find(report.type, report.identifier)) filed.add(identity(stored));
    }
    const key = identity(report);
    if (filed.has(key)) continue;
    filed.add(key);
    fresh.push(report);
  }
  return fresh;
}

/**
 * `reported_at`: an ISO 8601 date (`2024-01-31`, midnight UTC) or date-time with its offset
 * (`Z` or `+01:00`), of a day that exists; NaN for anything else. Date.parse alone takes
 * `2024-02-30` as March 1 and reads a time without an offset in this machine's zone.
 */
export function parseReportedAt(value: unknown): number {
  if (typeof value !== 'string') return Number.NaN;
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/.exec(value);
  if (!match) return Number.NaN;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return Number.NaN;
  return Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
}

/** The fields an import line may have. */
const LINE_FIELDS = ['type', 'value', 'category', 'source', 'verified', 'note', 'region', 'reported_at'];

/**
 * The reports of an import file, each checked as the store will check it (checkNewReport, at
 * `now`), or the problems of its bad lines (`line N: why`). Blank lines and `#` comments are skipped.
 */
export function readImportLines(text: string, defaults: { source: string; verified: boolean }, now: number): { reports: NewReport[]; problems: string[] } {
  const reports: NewReport[] = [];
  const problems: string[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((line, index) => {
      if (line.trim() === '' || line.trimStart().startsWith('#')) return;
      try {
        reports.push(readImportLine(line, defaults, now));
      } catch (error) {
        problems.push(`line ${index + 1}: ${fieldNames(error instanceof Error ? error.message : String(error))}`);
      }
    });
  return { reports, problems };
}

function readImportLine(line: string, defaults: { source: string; verified: boolean }, now: number): NewReport {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    throw new Error('not JSON');
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new Error('not a JSON object');
  const fields = row as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !LINE_FIELDS.includes(name));
  if (unknown !== undefined) throw new Error(`unknown field ${JSON.stringify(unknown)}; fields: ${LINE_FIELDS.join(', ')}`);
  const type = fields.type as IdentifierType;
  if (!(IDENTIFIER_TYPES as readonly string[]).includes(type)) throw new Error(`unknown type ${JSON.stringify(fields.type)}`);
  if (typeof fields.value !== 'string') throw new Error('value must be a string');
  if (fields.region !== undefined && typeof fields.region !== 'string') throw new Error('region must be a string');
  if (fields.source !== undefined && typeof fields.source !== 'string') throw new Error('source must be a string');
  if (fields.note !== undefined && typeof fields.note !== 'string') throw new Error('note must be a string');
  if (fields.verified !== undefined && typeof fields.verified !== 'boolean') throw new Error('verified must be true or false');
  let reportedAt: number | undefined;
  if (fields.reported_at !== undefined) {
    reportedAt = parseReportedAt(fields.reported_at);
    if (Number.isNaN(reportedAt)) throw new Error(`reported_at is not an ISO 8601 date or time with its offset (got ${JSON.stringify(fields.reported_at)})`);
  }
  const report: NewReport = {
    type,
    identifier: parseIdentifier(type, fields.value, { region: fields.region as string | undefined }).normalized,
    category: fields.category as ReportCategory,
    // A line's own source, else --source; an empty one is refused (by the store's rule), not replaced.
    source: (fields.source as string | undefined) ?? defaults.source,
    verified: defaults.verified || fields.verified === true,
    note: fields.note as string | undefined,
    reportedAt,
  };
  // The store's own rules (category, source, note length, time from 1970 to now + skew), so no line fails inside the transaction.
  checkNewReport(report, now);
  return report;
}

async function dispute(argv: string[]): Promise<number> {
  const command = 'reports dispute';
  const { values, positionals } = parseCommand(argv, { undo: { type: 'boolean' }, json: { type: 'boolean' }, ...DB_OPTION }, command);
  if (values.help) return help();
  const [idText] = expectPositionals(positionals, ['ID'], command);
  const id = parseInteger(idText, 'ID', command, { min: 1 });
  const updated = await withStore(values.db, { write: true }, async (store) => store.dispute(id, !values.undo, Date.now()));
  if (!updated) throw new CommandError(`no report ${id}; see \`${onSameStore('reports list', { db: values.db, redis: null })}\``);
  if (values.json) printJson(toJson(updated));
  else out(`report ${id} ${updated.disputed ? 'disputed' : 'no longer disputed'}`);
  return EXIT_OK;
}

async function list(argv: string[]): Promise<number> {
  const command = 'reports list';
  const { values, positionals } = parseCommand(
    argv,
    { type: { type: 'string' }, value: { type: 'string' }, limit: { type: 'string' }, region: { type: 'string' }, json: { type: 'boolean' }, ...DB_OPTION },
    command,
  );
  if (values.help) return help();
  expectPositionals(positionals, [], command);
  const type = values.type === undefined ? undefined : parseType(values.type, command);
  if (values.value !== undefined && type === undefined) throw new UsageError('--value needs --type', command);
  const identifier = values.value !== undefined && type ? normalized(type, values.value, values.region) : undefined;
  const limit = values.limit === undefined ? 100 : parseInteger(values.limit, '--limit', command, { min: 1, max: 100_000 });
  const found = await withStore(values.db, { write: false }, async (store) => store.list({ type, identifier, limit }));
  if (values.json) {
    printJson(found.map(toJson));
    return EXIT_OK;
  }
  out(
    formatTable(
      ['ID', 'TYPE', 'IDENTIFIER', 'CATEGORY', 'SOURCE', 'VERIFIED', 'DISPUTED', 'REPORTED'],
      found.map((r) => [
        String(r.id),
        r.type,
        r.identifier,
        r.category,
        r.source,
        r.verified ? 'yes' : 'no',
        r.disputed ? 'yes' : 'no',
        new Date(r.reportedAt).toISOString(),
      ]),
    ),
  );
  return EXIT_OK;
}
