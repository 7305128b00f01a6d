import { invalidOption, LookupError } from '../../errors.js';
import { datasetDateMs } from '../../lib/datasets.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import type { ExtraRoute, RouteInput } from '../route.js';
import { checkScamriskOptions, createScamriskEngine, scamriskCacheSettings, type CachedScamrisk, type ScamriskEngine } from './engine.js';
import { loadScamLists } from './lists.js';
import { apiReporter, CONTROL_CHARACTER, MAX_NOTE, noteLength, REPORT_CATEGORIES, type ReportCategory } from './reports.js';
import { IDENTIFIER_TYPES, SOFT_SOURCES, type IdentifierType, type ScamriskEngineOptions, type ScamriskRequest, type SoftSource } from './types.js';
import { parseScamriskSources, SCAMRISK_DEFAULT_TIMEOUT_MS, SCAMRISK_SOURCES, updateScamriskData, type ScamriskUpdateReport } from './update.js';
import { SCAMRISK_DOC } from './doc.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    scamrisk: ScamriskEngine;
  }
}

/** `lookup scamrisk --type`: required, one of the types (a mistake is the command line's, said naming the flag). */
function cliType(type: string | undefined): IdentifierType {
  if (type !== undefined && (IDENTIFIER_TYPES as readonly string[]).includes(type)) return type as IdentifierType;
  const got = type === undefined ? 'missing' : `got ${JSON.stringify(type)}`;
  throw invalidOption(`--type must be one of ${IDENTIFIER_TYPES.join(', ')} (${got})`);
}

/** GET ?type=&value=(&region=): absent parameters stay absent, so the engine names what is missing. */
function fromQuery({ query }: RouteInput): ScamriskRequest {
  const request: Record<string, string> = {};
  for (const name of ['type', 'value', 'region']) {
    const value = query.get(name);
    if (value !== null) request[name] = value;
  }
  return request as unknown as ScamriskRequest;
}

interface ReportQuery {
  type: IdentifierType;
  value: string;
  category: ReportCategory;
  source: string;
  /** The reporter name the caller gave (its own label, shown back). */
  label: string;
  note?: string;
  region?: string;
}

const REPORT_FIELDS = new Set(['type', 'value', 'category', 'reporter', 'note', 'region']);

/**
 * Beyond SPEC (ours): `POST /v1/scamrisk/report` files an unverified report, authenticated and
 * billed like an assessment. Body: type, value, category, optional reporter (default `api`),
 * note, region. Answers the stored report (its id, normalized identifier and masked form).
 */
const REPORT_ROUTE: ExtraRoute<ScamriskEngine, ReportQuery> = {
  method: 'POST',
  path: 'report',
  inputError: 'invalid_request',
  prepare(engine, { body }, caller) {
    if (!body) throw new LookupError('invalid_request', 'send a JSON body: type, value, category');
    const extra = Object.keys(body).find((k) => !REPORT_FIELDS.has(k));
    if (extra) throw new LookupError('invalid_request', `unknown field ${JSON.stringify(extra)}`);
    const { type, value, category, reporter = 'api', note, region } = body;
    if (typeof type !== 'string' || !(IDENTIFIER_TYPES as readonly string[]).includes(type))
      throw new LookupError('invalid_request', `type must be one of ${IDENTIFIER_TYPES.join(', ')}`);
    if (typeof value !== 'string' || value === '') throw new LookupError('invalid_request', 'value is required');
    if (typeof category !== 'string' || !(REPORT_CATEGORIES as readonly string[]).includes(category))
      throw new LookupError('invalid_request', `category must be one of ${REPORT_CATEGORIES.join(', ')}`);
    if (typeof reporter !== 'string' || reporter.trim() === '' || reporter.length > 100 || CONTROL_CHARACTER.test(reporter))
      throw new LookupError('invalid_request', 'reporter must be 1 to 100 characters, none of them a control or text-direction character');
    if (note !== undefined && (typeof note !== 'string' || noteLength(note) > MAX_NOTE))
      throw new LookupError('invalid_request', `note must be a string of at most ${MAX_NOTE} characters`);
    if (region !== undefined && (typeof region !== 'string' || !/^[A-Za-z]{2}$/.test(region)))
      throw new LookupError('invalid_request', 'region must be an ISO 3166 alpha-2 code');
    // As an assessment says: a region reads a national phone number, nothing else.
    if (region !== undefined && type !== 'phone') throw new LookupError('invalid_request', 'region applies to phone numbers only');
    // Validates the value now, before quota: invalid_identifier.
    engine.normalize(type as IdentifierType, value, region as string | undefined);
    return {
      type: type as IdentifierType,
      value,
      category: category as ReportCategory,
      // The reporter who counts is the caller's subscription; the name it gives is its own label.
      source: apiReporter(caller.subscriptionId, reporter.trim()),
      label: reporter.trim(),
      note: note as string | undefined,
      region: region as string | undefined,
    };
  },
  async lookup(engine, query) {
    const stored = await engine.report({ ...query, verified: false });
    const identifier = engine.normalize(query.type, query.value, query.region);
    return {
      result: {
        report: {
          id: stored.id,
          identifier: { type: stored.type, masked: identifier.masked },
          category: stored.category,
          reporter: query.label,
          verified: stored.verified,
          disputed: stored.disputed,
          reported_at: new Date(stored.reportedAt).toISOString().replace('Z', '+00:00'),
        },
      },
      cached: false,
    };
  },
};

/** scamrisk: risk assessment of an identifier from bundled lists, a report database and the other engines. */
export default defineProduct({
  id: 'scamrisk',
  needs: SOFT_SOURCES,
  // Its reports live in serve's --db file unless --scamrisk-reports names another.
  dbFileOption: 'reports',
  optionNames: { reports: true, defaultRegion: true, disable: true, sourceTimeoutMs: true, cacheSize: true, cacheTtlMs: true },
  checkOptions: (options) => void checkScamriskOptions(options),
  createEngine: ({ dataDir, options, now, engine, cache }: EngineContext<ScamriskEngineOptions, SoftSource>) =>
    createScamriskEngine({ lists: loadScamLists(dataDir), options, now, engine, cache: cache<CachedScamrisk>(scamriskCacheSettings(options)) }),
  // SPEC: POST /assess with { type, value } or { <type>: value }; GET /assess?type=&value=.
  routes: [
    { method: 'POST', path: 'assess', inputError: 'invalid_request', args: ({ body }): [ScamriskRequest] => [(body ?? {}) as unknown as ScamriskRequest] },
    { method: 'GET', path: 'assess', inputError: 'invalid_request', args: (input): [ScamriskRequest] => [fromQuery(input)] },
  ],
  extraRoutes: [REPORT_ROUTE],
  statusExtras: () => ({ supported_types: [...IDENTIFIER_TYPES] }),
  // The phishing and scam lists grow daily; the sanctions lists change every few weeks.
  doctor: {
    freshness: { maxAgeDays: { 'phishing/metamask': 30, 'phishing/polkadot': 30, polkadot: 30, ofac: 90 }, refresh: 'seclookup data update scamrisk' },
  },
  // Each list's date as its signals' `last_seen` says it: snapshots.json, else the bundled snapshot's (lists.ts).
  datasetAges: ({ lists: { dates } }) => [
    { dataset: 'phishing/metamask', builtAtMs: datasetDateMs(dates.metamask) },
    { dataset: 'phishing/polkadot', builtAtMs: datasetDateMs(dates.polkadot) },
    { dataset: 'polkadot', builtAtMs: datasetDateMs(dates.polkadotAddresses) },
    { dataset: 'ofac', builtAtMs: datasetDateMs(dates.ofac) },
  ],
  doc: SCAMRISK_DOC,
  cli: {
    input: 'the identifier (with --type)',
    example: '--type domain metamask-io.com',
    flags: { type: `the identifier type (${IDENTIFIER_TYPES.join(', ')})`, region: 'region of a phone number without + (US, GB, ...)' },
    args: (input, flags): [ScamriskRequest] => [{ type: cliType(flags.type), value: input, region: flags.region }],
    settings: {
      'scamrisk-reports': {
        help: 'report database (SQLite file; default for serve: the --db file, for lookup: none)',
        apply: (value) => ({ reports: value }),
      },
      'scamrisk-region': {
        help: 'default region of phone numbers without + (ISO 3166 alpha-2; default: none)',
        apply: (value) => {
          if (!/^[A-Za-z]{2}$/.test(value)) throw invalidOption(`expected a two-letter region (got ${JSON.stringify(value)})`);
          return { defaultRegion: value.toUpperCase() };
        },
      },
      'scamrisk-disable': {
        help: `engine-backed sources to skip, comma-separated (${SOFT_SOURCES.join(', ')})`,
        apply: (value) => {
          const list = value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
          const unknown = list.find((s) => !(SOFT_SOURCES as readonly string[]).includes(s));
          if (unknown) throw invalidOption(`unknown source ${JSON.stringify(unknown)}; known: ${SOFT_SOURCES.join(', ')}`);
          return { disable: list as SoftSource[] };
        },
      },
    },
  },
  dataset: {
    help: `scamrisk fetches its bundled lists from their official URLs: phishing (MetaMask
eth-phishing-detect config.json and polkadot{.js} phishing all.json, shared with domainrep),
polkadot-addresses (polkadot{.js} phishing address.json) and ofac (the OFAC lists of
0xB10C/ofac-sanctioned-digital-currency-addresses, one per asset on file). --source picks
sources. A file whose download fails, does not read, or lists fewer than half the entries
on file keeps its previous content; the others still update. Default per-request
timeout: ${SCAMRISK_DEFAULT_TIMEOUT_MS} ms.`,
    sources: { names: SCAMRISK_SOURCES, parse: parseScamriskSources },
    async update({ dataDir, mirror, timeoutMs, source, onProgress }) {
      const sources = source === undefined ? undefined : parseScamriskSources(source);
      return describeUpdate(await updateScamriskData({ dataDir, mirror, timeoutMs, sources, onProgress }));
    },
  },
});

function describeUpdate(report: ScamriskUpdateReport): DatasetUpdateReport {
  const updated = report.updated.length > 0 ? ` (${report.updated.join(', ')})` : '';
  const summary = `scamrisk: ${report.updated.length} updated${updated}, ${report.unchanged.length} unchanged, ${report.failed.length} failed; ${report.dataDir}`;
  const notes: string[] = [];
  if (report.failed.length > 0) notes.push(`${report.failed.map((f) => `${f.file} (${f.reason})`).join(', ')}: previous data kept.`);
  // New dates alone (snapshots.json) change the signals' last_seen: a restart loads them too.
  if (report.updated.length > 0 || report.dated.length > 0) notes.push('Restart `seclookup serve` to load the new data.');
  if (report.updated.some((file) => file.startsWith('phishing/'))) {
    notes.push(
      'domainrep reads the phishing lists too; its TLD risk table is derived from them: rebuild it with `node data/domainrep/build-tld-risk.mjs` (from the seclookup folder; the script reads the phishing lists of the data folder it sits in).',
    );
  }
  return { summary, ok: report.updated.length + report.unchanged.length > 0 || report.failed.length === 0, notes };
}
