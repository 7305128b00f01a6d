/**
 * `seclookup data update scamrisk [--source phishing,polkadot-addresses,ofac]`: refresh the lists
 * scamrisk reads (data/scamrisk/SOURCES.md; the phishing lists, shared with domainrep, in
 * data/phishing/README.md) from their official URLs, through the shared source-update helpers
 * (timeout, size cap, `--mirror`, atomic rewrite).
 *
 *   phishing            phishing/metamask/config.json   MetaMask eth-phishing-detect src/config.json
 *                       phishing/polkadot/all.json      polkadot{.js} phishing all.json
 *   polkadot-addresses  scamrisk/polkadot/address.json  polkadot{.js} phishing address.json
 *   ofac                scamrisk/ofac/sanctioned_addresses_<ASSET>.txt, one per asset on file,
 *                       from the `lists` branch of 0xB10C/ofac-sanctioned-digital-currency-addresses
 *
 * Each file stands alone: it is fetched, its shape checked (what the loader needs), compared with
 * the file on file, and written as downloaded (byte for byte), atomically, when it changed. A
 * file whose download fails, does not read, or lists fewer than half the entries of the file on
 * file (a truncated or hijacked source) keeps its previous content and is reported; the other
 * files still update. Files are refreshed, never created: the OFAC assets are those on file (an
 * empty `sanctioned_addresses_<ASSET>.txt` adds an asset). A list whose every file was fetched
 * (changed or not) gets the date of this run in `scamrisk/snapshots.json`, the `last_seen` of its
 * signals.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { invalidOption } from '../../errors.js';
import { hostListProblem } from '../../lib/datasets.js';
import { createSourceFetcher, writeAtomically, type SourceRequestOptions } from '../../lib/source-update.js';
import { isoWithOffset } from './scoring.js';
import { AddressListError, LISTED_ADDRESS, listSnapshotsPath, ofacAddresses, readListDates, sanctionKey, type ListName } from './lists.js';

export const SCAMRISK_SOURCES = ['phishing', 'polkadot-addresses', 'ofac'] as const;
export type ScamriskSource = (typeof SCAMRISK_SOURCES)[number];

export const METAMASK_CONFIG_URL = 'https://raw.githubusercontent.com/MetaMask/eth-phishing-detect/main/src/config.json';
export const POLKADOT_ALL_URL = 'https://polkadot.js.org/phishing/all.json';
export const POLKADOT_ADDRESS_URL = 'https://polkadot.js.org/phishing/address.json';
/** The `lists` branch, rebuilt nightly from OFAC's SDN list; `<base>/sanctioned_addresses_<ASSET>.txt`. */
export const OFAC_LISTS_BASE_URL = 'https://raw.githubusercontent.com/0xB10C/ofac-sanctioned-digital-currency-addresses/lists';

export const ofacListUrl = (asset: string): string => `${OFAC_LISTS_BASE_URL}/sanctioned_addresses_${asset}.txt`;

/** The loader's pattern for an OFAC list file (lists.ts). */
const OFAC_FILE = /^sanctioned_addresses_([A-Z0-9]+)\.txt$/;

export const SCAMRISK_DEFAULT_TIMEOUT_MS = 60_000;
/** MetaMask's config.json is the largest document (several MB, growing). */
const MAX_BYTES = 64 * 1024 * 1024;

export interface ScamriskUpdateOptions extends SourceRequestOptions {
  /** The data folder: `phishing/` and `scamrisk/` under it are read and rewritten in place. */
  dataDir: string;
  /** Sources to refresh. @default all of SCAMRISK_SOURCES */
  sources?: readonly ScamriskSource[];
  /** One line per file, for stderr. */
  onProgress?: (line: string) => void;
  /** Clock for the lists' dates in `snapshots.json`. @default () => new Date() */
  now?: () => Date;
}

export interface ScamriskUpdateReport {
  dataDir: string;
  /** Files rewritten, relative to the data folder (`phishing/metamask/config.json`). */
  updated: string[];
  /** Files whose download equals the file on file. */
  unchanged: string[];
  /** Files that kept their previous content, and why. */
  failed: { file: string; source: ScamriskSource; reason: string }[];
  /** Lists whose date `snapshots.json` now records (every file of the list fetched). */
  dated: ListName[];
}

/** One file the updater refreshes. */
interface ListFile {
  source: ScamriskSource;
  /** The list the file is (part of), for its date. */
  list: ListName;
  /** Relative to the data folder, `/`-separated. */
  file: string;
  url: string;
  /**
   * Distinct entries by part (`blacklist: 59507`), as the loader would hold them: a download
   * padded with copies of one entry counts one. Throws ListError when the text is not this list.
   */
  read(text: string): Record<string, number>;
  /** Parts compared with the file on file; the first one must list something. */
  plausible: readonly string[];
}

/** A download that cannot be used: the file keeps its content. */
class ListError extends Error {}

/** `phishing,ofac` -> sources; a TypeError (invalid_option) naming an unknown one. */
export function parseScamriskSources(text: string): ScamriskSource[] {
  const names = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) throw invalidOption(`--source needs one or more of ${SCAMRISK_SOURCES.join(', ')}`);
  for (const name of names) {
    if (!(SCAMRISK_SOURCES as readonly string[]).includes(name))
      throw invalidOption(`unknown scamrisk source ${JSON.stringify(name)}; sources: ${SCAMRISK_SOURCES.join(', ')}`);
  }
  return names as ScamriskSource[];
}

/**
 * Fetch the chosen sources' files (in parallel), check them and rewrite the changed ones.
 * Failures are reported per file, not thrown.
 */
export async function updateScamriskData(options: ScamriskUpdateOptions): Promise<ScamriskUpdateReport> {
  const { dataDir } = options;
  const progress = options.onProgress ?? (() => {});
  // In SCAMRISK_SOURCES order, whatever the order asked for.
  const sources = SCAMRISK_SOURCES.filter((source) => !options.sources || options.sources.includes(source));
  const fetcher = createSourceFetcher(
    options,
    { timeoutMs: SCAMRISK_DEFAULT_TIMEOUT_MS, maxBytes: MAX_BYTES, userAgent: 'seclookup-scamrisk-updater' },
    (reason) => new ListError(reason),
  );
  const report: ScamriskUpdateReport = { dataDir, updated: [], unchanged: [], failed: [], dated: [] };

  const files: ListFile[] = [];
  for (const source of sources) {
    if (source !== 'ofac') {
      files.push(...LIST_FILES.filter((f) => f.source === source));
      continue;
    }
    const assets = ofacAssetsOnFile(dataDir);
    if (assets.length === 0) {
      const reason = 'no sanctioned_addresses_<ASSET>.txt on file (nothing to refresh)';
      report.failed.push({ file: 'scamrisk/ofac', source, reason });
      progress(`scamrisk/ofac: failed (${reason})`);
    }
    for (const asset of assets) files.push(ofacFile(asset));
  }

  const outcomes = await Promise.all(files.map((list) => refresh(list, dataDir, fetcher.text)));
  // Reported in a stable order (the sources', then the files'), whatever order the downloads end in.
  files.forEach((list, i) => {
    const outcome = outcomes[i];
    if (outcome.kind === 'failed') {
      report.failed.push({ file: list.file, source: list.source, reason: outcome.reason });
      progress(`${list.file}: failed (${outcome.reason}), previous file kept`);
    } else {
      report[outcome.kind].push(list.file);
      progress(
        `${list.file}: ${describeCounts(outcome.counts)} (${outcome.kind === 'updated' ? `updated, was ${describeCounts(outcome.before)}` : 'unchanged'})`,
      );
    }
  });

  // A list is dated when all its files arrived; one failed OFAC asset leaves OFAC's date as it was.
  const failed = new Set(report.failed.map((f) => f.file));
  const fetched = [...new Set(files.map((f) => f.list))].filter((name) => files.every((f) => f.list !== name || !failed.has(f.file)));
  if (fetched.length > 0 && (await writeDates(dataDir, fetched, (options.now ?? (() => new Date()))(), progress))) report.dated = fetched;
  return report;
}

/**
 * Record the lists' new date in `scamrisk/snapshots.json` (the other dates kept). The lists are
 * written by then, so a failure here is only reported: the signals keep their previous dates.
 */
async function writeDates(dataDir: string, names: ListName[], at: Date, progress: (line: string) => void): Promise<boolean> {
  const path = listSnapshotsPath(dataDir);
  try {
    const dates = readListDates(dataDir);
    for (const name of names) dates[name] = isoWithOffset(at.getTime());
    await writeAtomically(path, `${JSON.stringify(dates, null, 2)}\n`);
    return true;
  } catch (error) {
    progress(`${path}: not written (${error instanceof Error ? error.message : String(error)}); the lists keep their previous dates`);
    return false;
  }
}

type Outcome = { kind: 'updated' | 'unchanged'; counts: Record<string, number>; before: Record<string, number> } | { kind: 'failed'; reason: string };

async function refresh(list: ListFile, dataDir: string, fetchText: (url: string) => Promise<string>): Promise<Outcome> {
  const path = join(dataDir, ...list.file.split('/'));
  try {
    let current: string;
    try {
      current = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ListError(`not on file (${(error as NodeJS.ErrnoException).code ?? String(error)}): nothing to refresh`);
    }
    // A file on file that no longer reads gives no baseline; the download only has to read.
    let before: Record<string, number> = {};
    try {
      before = list.read(current);
    } catch {
      // kept empty
    }

    const text = await fetchText(list.url);
    const counts = list.read(text);
    const [main] = list.plausible;
    if (counts[main] === 0) throw new ListError(`the download lists no ${main}`);
    for (const part of list.plausible) {
      const was = before[part] ?? 0;
      if (counts[part] < was / 2)
        throw new ListError(`refusing the download: ${counts[part]} ${part}, fewer than half of the ${was} on file (a truncated or broken source?)`);
    }
    if (text === current) return { kind: 'unchanged', counts, before };
    try {
      await writeAtomically(path, text);
    } catch (error) {
      throw new ListError(`cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { kind: 'updated', counts, before };
  } catch (error) {
    if (error instanceof ListError) return { kind: 'failed', reason: error.message };
    throw error;
  }
}

// --- the lists and their shapes ---------------------------------------------------------------

const LIST_FILES: readonly ListFile[] = [
  {
    source: 'phishing',
    list: 'metamask',
    file: 'phishing/metamask/config.json',
    url: METAMASK_CONFIG_URL,
    read(text) {
      const doc = jsonObject(text);
      if (doc.tolerance !== undefined && typeof doc.tolerance !== 'number') throw new ListError('unexpected shape: "tolerance" is not a number');
      return { blacklist: hostsAt(doc, 'blacklist'), whitelist: hostsAt(doc, 'whitelist'), fuzzylist: hostsAt(doc, 'fuzzylist') };
    },
    plausible: ['blacklist', 'whitelist'],
  },
  {
    source: 'phishing',
    list: 'polkadot',
    file: 'phishing/polkadot/all.json',
    url: POLKADOT_ALL_URL,
    read(text) {
      const doc = jsonObject(text);
      return { deny: hostsAt(doc, 'deny'), allow: hostsAt(doc, 'allow') };
    },
    plausible: ['deny', 'allow'],
  },
  {
    source: 'polkadot-addresses',
    list: 'polkadotAddresses',
    file: 'scamrisk/polkadot/address.json',
    url: POLKADOT_ADDRESS_URL,
    read(text) {
      const doc = jsonObject(text);
      const addresses = new Set<string>();
      for (const site of Object.keys(doc)) {
        stringArrayAt(doc, site);
        const bad = (doc[site] as string[]).find((a) => !LISTED_ADDRESS.test(a));
        if (bad !== undefined) throw new ListError(`unexpected shape: ${JSON.stringify(site)} lists ${JSON.stringify(bad.slice(0, 60))}, not an address`);
        for (const address of doc[site] as string[]) addresses.add(address);
      }
      return { addresses: addresses.size, sites: Object.keys(doc).length };
    },
    plausible: ['addresses'],
  },
];

function ofacFile(asset: string): ListFile {
  return {
    source: 'ofac',
    list: 'ofac',
    file: `scamrisk/ofac/sanctioned_addresses_${asset}.txt`,
    url: ofacListUrl(asset),
    read(text) {
      try {
        return { addresses: new Set(ofacAddresses(text).map(sanctionKey)).size };
      } catch (error) {
        if (error instanceof AddressListError) throw new ListError(error.message);
        throw error;
      }
    },
    plausible: ['addresses'],
  };
}

/** The assets with a list on file, in name order. */
function ofacAssetsOnFile(dataDir: string): string[] {
  const dir = join(dataDir, 'scamrisk', 'ofac');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => OFAC_FILE.exec(name)?.[1])
    .filter((asset): asset is string => asset !== undefined)
    .sort();
}

function jsonObject(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ListError('response is not valid JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ListError('unexpected shape: not a JSON object');
  return doc as Record<string, unknown>;
}

/** The array of strings at `doc[key]`, or a ListError. */
function stringArrayAt(doc: Record<string, unknown>, key: string): string[] {
  const value = doc[key];
  if (!Array.isArray(value)) throw new ListError(`unexpected shape: ${JSON.stringify(key)} is ${value === undefined ? 'missing' : 'not an array'}`);
  if (!value.every((entry) => typeof entry === 'string')) throw new ListError(`unexpected shape: ${JSON.stringify(key)} is not an array of strings`);
  return value;
}

/**
 * The distinct hosts of the host list at `doc[key]`, compared as the loaders do (lower case, no
 * final dot); the loader's share of non-host entries is refused here too (lists.ts).
 */
function hostsAt(doc: Record<string, unknown>, key: string): number {
  const hosts = stringArrayAt(doc, key);
  const problem = hostListProblem(hosts, { mayBeEmpty: true });
  if (problem) throw new ListError(`unexpected shape: ${JSON.stringify(key)} ${problem}`);
  return new Set(hosts.map((host) => host.trim().toLowerCase().replace(/\.$/, ''))).size;
}

function describeCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts).map(([part, count]) => `${count} ${part}`);
  return parts.length > 0 ? parts.join(', ') : 'unreadable';
}
