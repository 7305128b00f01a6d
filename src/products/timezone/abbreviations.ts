/**
 * Time zone abbreviations from the tz database itself (JST, MSK, CEST, and `+0545`-style
 * numbers only where tzdata writes them), read from `<dataDir>/timezone/abbreviations.json` (the
 * bundled data/timezone/abbreviations.json unless createLookup's `dataDir` says otherwise), which
 * data/timezone/build-abbreviations.ts makes from the compiled tz files (see its SOURCES.md).
 * Intl cannot give them: ICU names zones only per locale and otherwise writes "GMT+9".
 *
 * The offset stays Intl's (the engine's clock): an abbreviation is given only when the tz
 * table agrees with that offset, so the two never contradict each other when Node's ICU and
 * the bundled tzdata are of different versions.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { SeclookupError } from '../../errors.js';
import { bundledDataDir, readJsonDataset } from '../../lib/datasets.js';

/** One zone of abbreviations.json (the build script documents the fields). */
interface ZoneTable {
  types: Array<[offset: number, abbreviation: string]>;
  at: number[];
  type: number[];
  rule: Array<[offset: number, abbreviation: string]>;
}

interface AbbreviationFile {
  tzdata: string;
  links: Record<string, string>;
  zones: Record<string, ZoneTable>;
}

/** An abbreviation and the period of time it is known to hold for, in ms: [from, until). */
export interface AbbreviationSpan {
  abbreviation: string | null;
  from: number;
  until: number;
}

export interface ZoneAbbreviations {
  /** The tzdata release the table was built from, e.g. `2025b`. */
  readonly version: string;
  /**
   * The abbreviation of `zone` at `ms`, given the zone's UTC offset then (seconds east of UT,
   * from Intl); null when the zone is not in the table or tzdata knows no name for that offset
   * at that time.
   */
  at(zone: string, ms: number, offsetSeconds: number): AbbreviationSpan;
}

export const ABBREVIATIONS_FILE = join('timezone', 'abbreviations.json');

/** Tables read, by file, while the file is unchanged: engines of one process over the same file share one (about 200 KB). */
const tables = new Map<string, { identity: string; table: ZoneAbbreviations }>();

/**
 * The table of a data folder, `<dataDir>/timezone/abbreviations.json` (the timezone engine's),
 * read once per process while the file is unchanged. Throws SeclookupError `dataset_missing`
 * (absent or unreadable) / `dataset_invalid` (not such a table), naming the file.
 */
export function loadAbbreviations(dataDir: string): ZoneAbbreviations {
  const path = join(dataDir, ABBREVIATIONS_FILE);
  let identity: string;
  try {
    const stats = statSync(path);
    identity = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  } catch {
    return readAbbreviations(path); // throws dataset_missing naming the file
  }
  const known = tables.get(path);
  if (known?.identity === identity) return known.table;
  const table = readAbbreviations(path);
  if (tables.size >= 8) tables.clear(); // a few folders at most (tests); never grows without bound
  tables.set(path, { identity, table });
  return table;
}

/** The bundled table (`data/timezone/abbreviations.json`). Throws SeclookupError `dataset_missing` / `dataset_invalid`. */
export function bundledAbbreviations(): ZoneAbbreviations {
  return loadAbbreviations(bundledDataDir());
}

/** Read and check one table file. Throws SeclookupError `dataset_missing` / `dataset_invalid`, naming the file. */
export function readAbbreviations(path: string): ZoneAbbreviations {
  const file = readJsonDataset<AbbreviationFile>(path);
  const problem = tableProblem(file);
  if (problem !== null) throw new SeclookupError('dataset_invalid', `seclookup: ${path} is not a timezone abbreviation table: ${problem}`);
  const { zones, links } = file;
  const ALWAYS = { from: -Infinity, until: Infinity };

  return {
    version: file.tzdata,
    at(zone, ms, offsetSeconds) {
      const table = Object.hasOwn(zones, zone) ? zones[zone] : Object.hasOwn(links, zone) ? zones[links[zone]] : undefined;
      if (!table) return { abbreviation: null, ...ALWAYS };
      const seconds = Math.floor(ms / 1000);
      const i = lastAtOrBefore(table.at, seconds); // -1: before the first transition
      const from = i < 0 ? -Infinity : table.at[i] * 1000;
      const until = i + 1 < table.at.length ? table.at[i + 1] * 1000 : Infinity;
      if (i === table.at.length - 1 && table.rule.length > 0) {
        // Past the table: the footer's rule, whose standard and daylight names differ in offset.
        const named = table.rule.find(([offset]) => offset === offsetSeconds);
        if (named) return { abbreviation: named[1], from, until };
      }
      const [offset, abbreviation] = table.types[i < 0 ? 0 : table.type[i]];
      if (offset === offsetSeconds) return { abbreviation, from, until };
      // The tz table and Intl disagree on the offset (different tzdata versions): the name
      // this zone used with Intl's offset nearest in time, else none.
      return { abbreviation: nearestNamed(table, i, offsetSeconds), from, until };
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An [offset seconds, abbreviation] pair. */
function isNamedOffset(value: unknown): boolean {
  return Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string' && value[1] !== '';
}

/**
 * What is wrong with a parsed file (the shape build-abbreviations.ts writes, which `at` relies
 * on: a hand-edited or truncated file would otherwise fail lookups, or name zones wrongly), or null.
 */
function tableProblem(file: unknown): string | null {
  if (!isObject(file)) return 'not a JSON object';
  if (typeof file.tzdata !== 'string' || file.tzdata === '') return 'no "tzdata" release';
  if (!isObject(file.zones)) return 'no "zones" object';
  if (!isObject(file.links)) return 'no "links" object';
  const zones = file.zones;
  if (Object.keys(zones).length === 0) return 'it lists no zones';
  for (const [name, table] of Object.entries(zones)) {
    if (!isObject(table)) return `zone ${JSON.stringify(name)} is not an object`;
    const { types, at, type, rule } = table;
    if (!Array.isArray(types) || types.length === 0 || !types.every(isNamedOffset))
      return `zone ${JSON.stringify(name)}: "types" is not a list of [offset, name]`;
    if (!Array.isArray(rule) || !rule.every(isNamedOffset)) return `zone ${JSON.stringify(name)}: "rule" is not a list of [offset, name]`;
    if (!Array.isArray(at) || !at.every((t, i) => Number.isSafeInteger(t) && (i === 0 || t > at[i - 1])))
      return `zone ${JSON.stringify(name)}: "at" is not an ascending list of whole seconds`;
    if (!Array.isArray(type) || type.length !== at.length || !type.every((t) => Number.isSafeInteger(t) && t >= 0 && t < types.length))
      return `zone ${JSON.stringify(name)}: "type" does not index "types" once per "at"`;
  }
  for (const [name, target] of Object.entries(file.links)) {
    if (typeof target !== 'string' || !Object.hasOwn(zones, target)) return `link ${JSON.stringify(name)} names no zone of the table`;
  }
  return null;
}

function nearestNamed(table: ZoneTable, i: number, offsetSeconds: number): string | null {
  const named = (j: number) => {
    const [offset, name] = table.types[j < 0 ? 0 : table.type[j]];
    return offset === offsetSeconds ? name : null;
  };
  for (let d = 1; i - d >= -1 || i + d < table.type.length; d++) {
    const name = (i - d >= -1 ? named(i - d) : null) ?? (i + d < table.type.length ? named(i + d) : null);
    if (name !== null) return name;
  }
  return null;
}

/** Index of the last element <= value in an ascending array, -1 when there is none. */
function lastAtOrBefore(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
