/**
 * `seclookup reports add | import | dispute | list`: the scamrisk report database (table
 * `scamrisk_reports` in the `--db` file, which `serve` reads). Identifiers are normalized as
 * the assessment normalizes them, so a report always lands where assessments look.
 */
import { readFileSync } from 'node:fs';
import { isLookupError } from '../../errors.js';
import { parseIdentifier } from './identifiers.js';
import { createSqliteReportStore, REPORT_CATEGORIES, type NewReport, type ReportCategory, type ReportStore, type StoredReport } from './reports.js';
import { IDENTIFIER_TYPES, type IdentifierType } from './types.js';
import { DB_OPTION, expectPositionals, parseCommand, parseInteger, resolveDbPath } from '../../cli/args.js';
import { explainDatabaseError } from '../../cli/db-errors.js';
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

reports add      File one report. TYPE is one of ${IDENTIFIER_TYPES.join(', ')}; VALUE is
                 normalized as assessments normalize it (invalid values are refused).
  --category C          one of ${REPORT_CATEGORIES.join(', ')} (required)
  --source NAME         who reported it (default: cli); each reporter counts once in the score
  --verified            the operator checked it (weighs more; API reports never are)
  --note TEXT           free text, at most 500 characters
  --region CC           region of a phone number written without +

reports import   File every report of FILE: JSON lines, one object per line with type, value,
                 category and optionally source, verified, note, region, reported_at (ISO 8601).
                 Every line is checked first; any bad line refuses the whole file.
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

function withStore<T>(dbFlag: string | undefined, work: (store: ReportStore) => Promise<T>): Promise<T> {
  const path = resolveDbPath(dbFlag);
  let store: ReportStore;
  try {
    store = createSqliteReportStore(path);
  } catch (error) {
    const explained = explainDatabaseError(path, error);
    throw explained instanceof CommandError ? explained : new CommandError(error instanceof Error ? error.message : String(error));
  }
  return work(store)
    .catch((error: unknown) => {
      throw explainDatabaseError(path, error);
    })
    .finally(() => store.close());
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
  const stored = await withStore(values.db, async (store) =>
    store.add({ type, identifier, category, source: values.source ?? 'cli', verified: values.verified ?? false, note: values.note }),
  );
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
  const reports: NewReport[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const where = `line ${index + 1}`;
    try {
      const row = JSON.parse(line) as Record<string, unknown>;
      if (typeof row !== 'object' || row === null) throw new Error('not a JSON object');
      const type = row.type as IdentifierType;
      if (!(IDENTIFIER_TYPES as readonly string[]).includes(type)) throw new Error(`unknown type ${JSON.stringify(row.type)}`);
      if (typeof row.value !== 'string') throw new Error('value must be a string');
      if (!(REPORT_CATEGORIES as readonly string[]).includes(row.category as string)) throw new Error(`unknown category ${JSON.stringify(row.category)}`);
      let reportedAt: number | undefined;
      if (row.reported_at !== undefined) {
        reportedAt = Date.parse(String(row.reported_at));
        if (Number.isNaN(reportedAt)) throw new Error('reported_at is not an ISO 8601 time');
      }
      reports.push({
        type,
        identifier: parseIdentifier(type, row.value, { region: typeof row.region === 'string' ? row.region : undefined }).normalized,
        category: row.category as ReportCategory,
        source: typeof row.source === 'string' && row.source.trim() !== '' ? row.source : (values.source ?? 'import'),
        verified: values.verified === true || row.verified === true,
        note: typeof row.note === 'string' ? row.note : undefined,
        reportedAt,
      });
    } catch (error) {
      problems.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  if (problems.length > 0) {
    for (const problem of problems.slice(0, 10)) note(problem);
    throw new CommandError(`${problems.length} bad line(s) in ${file}; nothing imported`);
  }
  const stored = await withStore(values.db, async (store) => {
    const done: StoredReport[] = [];
    for (const report of reports) done.push(await store.add(report));
    return done;
  });
  if (values.json) printJson({ imported: stored.length, first_id: stored[0]?.id ?? null, last_id: stored.at(-1)?.id ?? null });
  else out(`imported ${stored.length} report(s) from ${file}`);
  return EXIT_OK;
}

async function dispute(argv: string[]): Promise<number> {
  const command = 'reports dispute';
  const { values, positionals } = parseCommand(argv, { undo: { type: 'boolean' }, json: { type: 'boolean' }, ...DB_OPTION }, command);
  if (values.help) return help();
  const [idText] = expectPositionals(positionals, ['ID'], command);
  const id = parseInteger(idText, 'ID', command, { min: 1 });
  const updated = await withStore(values.db, async (store) => store.dispute(id, !values.undo, Date.now()));
  if (!updated) throw new CommandError(`no report ${id}; see \`seclookup reports list\``);
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
  const found = await withStore(values.db, async (store) => store.list({ type, identifier, limit }));
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
