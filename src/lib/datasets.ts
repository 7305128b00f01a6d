import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SeclookupError } from '../errors.js';

let cached: string | undefined;

/**
 * The seclookup package's root folder. Found by walking up from this module to the
 * package.json named seclookup, so it works from `src/` (tests) and from the bundled `dist/`.
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'seclookup') return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new SeclookupError('dataset_missing', 'seclookup: cannot find the package root (its data/ folder); pass dataDir');
    dir = parent;
  }
}

/** The version in seclookup's own package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The `data/` folder shipped with the package. */
export function bundledDataDir(): string {
  return join(packageRoot(), 'data');
}

/**
 * Read and parse a JSON dataset. Throws SeclookupError `dataset_missing` (the file cannot be
 * read) or `dataset_invalid` (it is not JSON), with the file named in the message.
 */
export function readJsonDataset<T>(path: string): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new SeclookupError('dataset_invalid', `seclookup: dataset ${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A host name as block and allow lists hold it: no whitespace, `/`, `@`, `:` or `,`, and a dot
 * (an optional `*.` in front). Loose on purpose: upstream lists carry IDN labels and odd names.
 */
const LISTED_HOST = /^(?:\*\.)?[^\s/@:,]+\.[^\s/@:,]+$/u;

/**
 * Entries of a host list that may fail LISTED_HOST before the file is refused: upstream lists
 * carry a few typos (`name.com,`); more than 1% means the file is not such a list.
 */
export const MAX_BAD_HOST_SHARE = 0.01;

/** What is wrong with a host list (empty when it must list something, too many non-host entries), or null. */
export function hostListProblem(entries: readonly string[], options: { mayBeEmpty?: boolean } = {}): string | null {
  if (entries.length === 0) return options.mayBeEmpty ? null : 'lists no entries';
  const bad = entries.filter((entry) => !LISTED_HOST.test(entry.trim()));
  if (bad.length > entries.length * MAX_BAD_HOST_SHARE) {
    return `${bad.length} of ${entries.length} entries are not host names (more than ${MAX_BAD_HOST_SHARE * 100}%; first: ${JSON.stringify(bad[0].slice(0, 60))})`;
  }
  return null;
}

/**
 * The date a dataset's own data records (a `"generated"` field, a header's `# Date:`, IANA's
 * `publication`, a snapshot date), as the engine that loaded it read it; `date` null when the
 * data carries none (undated). Never a file's modification time: a copy, a checkout or an
 * untar gives the files new times, and the data stays as old as it was.
 */
export interface DatasetDate {
  /** The dataset's name within its product: a file (`ranges.json`) or a group of files (`tor`). */
  dataset: string;
  /** `YYYY-MM-DD` or an ISO 8601 date-time, as the data writes it; null: the data carries no date. */
  date: string | null;
  /** A release name the data carries instead of a date (timezone's `tzdata` 2025b), for doctor. */
  version?: string;
}

/** ms since the epoch of a date as a dataset writes it (`YYYY-MM-DD` is UTC midnight); null when absent or not a date. */
export function datasetDateMs(date: string | null | undefined): number | null {
  if (typeof date !== 'string' || date.trim() === '') return null;
  const ms = Date.parse(date.trim());
  return Number.isFinite(ms) ? ms : null;
}

/** The date a parsed JSON dataset records under `field` (default `"generated"`), when it is one; else null. */
export function recordedDate(document: unknown, field = 'generated'): string | null {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return null;
  const value = (document as Record<string, unknown>)[field];
  return typeof value === 'string' && datasetDateMs(value) !== null ? value : null;
}

/** An engine's {@link DatasetDate}s as a module's `datasetAges` answers them: ms since the epoch, null for undated. */
export function datasetAgesOf(dates: readonly DatasetDate[]): { dataset: string; builtAtMs: number | null; version?: string }[] {
  return dates.map(({ dataset, date, version }) => ({ dataset, builtAtMs: datasetDateMs(date), ...(version === undefined ? {} : { version }) }));
}
