/**
 * Time zone abbreviations from the tz database itself (JST, MSK, CEST, and `+0545`-style
 * numbers only where tzdata writes them), read from data/timezone/abbreviations.json, which
 * data/timezone/build-abbreviations.ts makes from the compiled tz files (see its SOURCES.md).
 * Intl cannot give them: ICU names zones only per locale and otherwise writes "GMT+9".
 *
 * The offset stays Intl's (the engine's clock): an abbreviation is given only when the tz
 * table agrees with that offset, so the two never contradict each other when Node's ICU and
 * the bundled tzdata are of different versions.
 */
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

let shared: ZoneAbbreviations | undefined;

/** The bundled table, read once per process (about 200 KB). Throws SeclookupError `dataset_missing` / `dataset_invalid`. */
export function bundledAbbreviations(): ZoneAbbreviations {
  shared ??= readAbbreviations(join(bundledDataDir(), ABBREVIATIONS_FILE));
  return shared;
}

export function readAbbreviations(path: string): ZoneAbbreviations {
  const file = readJsonDataset<AbbreviationFile>(path);
  if (typeof file?.tzdata !== 'string' || typeof file.zones !== 'object' || typeof file.links !== 'object') {
    throw new SeclookupError('dataset_invalid', `seclookup: ${path} is not a timezone abbreviation table`);
  }
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
