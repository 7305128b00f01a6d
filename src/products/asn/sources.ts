/**
 * The local data of the asn product, one of three sources (README: asn):
 *
 * - default: the npm package `@ip-location-db/asn` (pinned, an optional dependency), its
 *   `asn-ipv4.csv` and `asn-ipv6.csv` compiled into the cached index (csv-index.ts);
 * - `csv`: CSV files in the same format (a newer download, say), compiled the same way;
 * - `database`: a MaxMind DB with AS numbers (mmdb.ts).
 *
 * Every source answers `find` synchronously from memory. `builtAt` is what `fetched_at` says for
 * answers from local data **(ours)**: the npm package's version encodes its build hour
 * (`2.3.2026061719` is 2026-06-17 19:00 UTC); CSV files given by path use their newest mtime;
 * a MaxMind DB its metadata build_epoch. It is fixed for the engine's life.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { invalidOption, SeclookupError } from '../../errors.js';
import type { IpInput } from '../../lib/ip-input.js';
import { describeValue } from '../../lib/option-checks.js';
import { sharedFileData } from '../../lib/shared-file-data.js';
import { loadAsnIndex, stampOf, type AsnIndexData } from './csv-index.js';
import { openAsnMmdb } from './mmdb.js';
import { ipv4Network, ipv4PrefixInRange, ipv6Network, ipv6PrefixInRange, partsToWords, wordsToBigInt } from './network.js';
import type { AsnEngineOptions, AsnRecord, AsnSourceInfo } from './types.js';

/** The npm package of the default data, and the version seclookup pins. */
export const ASN_PACKAGE = '@ip-location-db/asn';
export const ASN_PACKAGE_VERSION = '2.3.2026061719';
const PACKAGE_FILES = ['asn-ipv4.csv', 'asn-ipv6.csv'];

/** The local data, opened. */
export interface LocalSource {
  info: AsnSourceInfo;
  /** database_records: ranges in the index (IPv4 + IPv6), or networks in the MaxMind DB. */
  records: number;
  builtAtMs: number;
  /** The record of an address, or null. */
  find(input: IpInput): AsnRecord | null;
  /** The first organization name the data gives an AS, for answers of the DNS source. */
  orgOf(asn: number): string | null;
  /** The CSV index and its searches, for the engine's fast path (null for a MaxMind DB). */
  index: { data: AsnIndexData; ipv4: IPv4Finder; ipv6: IPv6Finder } | null;
}

/** Open the source the options name. `resolveFrom` is where the npm package is looked up from. */
export function openLocalSource(options: AsnEngineOptions, resolveFrom: string = import.meta.url): LocalSource {
  checkLocalSourceOptions(options);
  if (options.database !== undefined) return mmdbSource(options.database);
  if (options.csv !== undefined) {
    const files = typeof options.csv === 'string' ? [options.csv] : options.csv;
    const stamp = stampOf(files, null);
    return csvSource('csv', files, null, Math.floor(Math.max(...stamp.sources.map((s) => s.mtimeMs))), options.indexDir);
  }
  const located = locateAsnPackage(resolveFrom);
  return csvSource('npm', located.files, `${ASN_PACKAGE}@${located.version}`, located.builtAtMs, options.indexDir);
}

/** The source options' types (createLookup checks them at construction, before any file is read). */
export function checkLocalSourceOptions(options: { readonly database?: unknown; readonly csv?: unknown; readonly indexDir?: unknown }): void {
  if (options.database !== undefined && options.csv !== undefined) throw invalidOption('asn: give either database (a MaxMind DB) or csv (CSV files), not both');
  if (options.database !== undefined && (typeof options.database !== 'string' || options.database === ''))
    throw invalidOption(`asn: database must be a file path (got ${describeValue(options.database)})`);
  if (options.indexDir !== undefined && (typeof options.indexDir !== 'string' || options.indexDir === ''))
    throw invalidOption(`asn: indexDir must be a folder path (got ${describeValue(options.indexDir)})`);
  if (options.csv !== undefined) {
    const files = typeof options.csv === 'string' ? [options.csv] : options.csv;
    if (!Array.isArray(files) || files.length === 0 || !files.every((f) => typeof f === 'string' && f !== ''))
      throw invalidOption(`asn: csv must be a file path or a non-empty array of them (got ${describeValue(options.csv)})`);
  }
}

/**
 * The installed `@ip-location-db/asn`: its CSV files, version, and the build time its version
 * encodes (else the newest file mtime). Throws `dataset_missing` saying what to install or set.
 */
export function locateAsnPackage(resolveFrom: string = import.meta.url): { dir: string; version: string; files: string[]; builtAtMs: number } {
  let manifestPath: string;
  try {
    manifestPath = createRequire(resolveFrom).resolve(`${ASN_PACKAGE}/package.json`);
  } catch (error) {
    throw new SeclookupError(
      'dataset_missing',
      `seclookup: asn: no data: the npm package ${ASN_PACKAGE} is not installed (npm install ${ASN_PACKAGE}@${ASN_PACKAGE_VERSION}), ` +
        'and neither a MaxMind ASN database (asn.database, --asn-db FILE) nor CSV files (asn.csv, --asn-csv FILE) are configured',
      { cause: error },
    );
  }
  const dir = dirname(manifestPath);
  let version: string;
  try {
    version = String((JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: unknown }).version ?? '');
  } catch (error) {
    throw new SeclookupError('dataset_invalid', `seclookup: asn: cannot read ${manifestPath}: ${(error as Error).message}`, { cause: error });
  }
  const files = PACKAGE_FILES.map((name) => join(dir, name));
  const stamp = stampOf(files, null); // throws dataset_missing naming a missing file
  const builtAtMs = versionDate(version) ?? Math.floor(Math.max(...stamp.sources.map((s) => s.mtimeMs)));
  return { dir, version, files, builtAtMs };
}

/** `2.3.2026061719` -> 2026-06-17T19:00:00Z in ms; null when the version has no such date. */
export function versionDate(version: string): number | null {
  const match = /^\d+\.\d+\.(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(version);
  if (!match) return null;
  const [year, month, day, hour] = match.slice(1).map(Number);
  const ms = Date.UTC(year, month - 1, day, hour);
  const date = new Date(ms);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getUTCHours() === hour ? ms : null;
}

function csvSource(kind: 'npm' | 'csv', files: readonly string[], packageId: string | null, builtAtMs: number, indexDir: string | undefined): LocalSource {
  // Its index and searches take a quarter of a second to load: shared by this process's engines.
  const shareAs = `asn-csv\0${kind}\0${packageId}\0${builtAtMs}\0${indexDir ?? ''}`;
  return sharedFileData(shareAs, files, () => indexedSource(kind, files, packageId, builtAtMs, indexDir));
}

function indexedSource(kind: 'npm' | 'csv', files: readonly string[], packageId: string | null, builtAtMs: number, indexDir: string | undefined): LocalSource {
  const { data, info } = loadAsnIndex({ files, packageId, indexDir });
  const { v4, v6, orgNames } = data;
  const ipv4 = createIPv4Finder(data);
  const ipv6 = createIPv6Finder(data);
  let orgByAsn: Map<number, number> | undefined;

  function find(input: IpInput): AsnRecord | null {
    if (input.version === 4) {
      const block = ipv4.find(input.value);
      if (block < 0) return null;
      const i = ipv4.row(block);
      return { asn: v4.asns[i], org: orgNames[v4.orgs[i]], network: ipv4.network(block) };
    }
    const words = partsToWords(input.address.parts);
    const i = ipv6.find(words);
    if (i < 0) return null;
    return { asn: v6.asns[i], org: orgNames[v6.orgs[i]], network: ipv6.network(i, words) };
  }

  return {
    info: { kind, files: [...files], package: packageId, builtAt: new Date(builtAtMs), index: info, databaseType: null },
    records: v4.asns.length + v6.asns.length,
    builtAtMs,
    find,
    orgOf(asn) {
      if (!orgByAsn) {
        orgByAsn = new Map();
        for (const table of [v4, v6]) {
          for (let i = 0; i < table.asns.length; i++) if (table.orgs[i] !== 0 && !orgByAsn.has(table.asns[i])) orgByAsn.set(table.asns[i], table.orgs[i]);
        }
      }
      const n = orgByAsn.get(asn);
      return n === undefined ? null : orgNames[n];
    },
    index: { data, ipv4, ipv6 },
  };
}

/**
 * The IPv4 search over an index. Each range is cut into the CIDR blocks it is made of (the
 * largest aligned blocks, as `network` defines them: the npm data's 411,937 ranges, those of a
 * reserved AS left out, make 564,554 blocks), so a lookup finds the block holding the address
 * and every answer's network is the block's, whose text is made once. A table of the first block
 * at each /16 narrows the binary search to the few blocks of the address's /16.
 */
export interface IPv4Finder {
  /** The block holding the address, or -1. */
  find(value: number): number;
  /** The range (row of the index) a block belongs to. */
  row(block: number): number;
  /** The block's network, `a.b.c.d/n`. */
  network(block: number): string;
}

export function createIPv4Finder(data: AsnIndexData): IPv4Finder {
  const { starts, ends } = data.v4;
  // Written straight into typed arrays, grown when full: no half-million-element JS arrays to
  // build and collect (a one-shot `seclookup lookup` builds this once and exits).
  let capacity = starts.length + (starts.length >>> 1) + 16;
  let blockStarts = new Uint32Array(capacity);
  let blockPrefixes = new Uint8Array(capacity);
  let blockRows = new Uint32Array(capacity);
  let n = 0;
  for (let i = 0; i < starts.length; i++) {
    const end = ends[i];
    for (let at = starts[i]; at <= end; ) {
      const prefix = ipv4PrefixInRange(at, end, at); // the widest block starting here
      if (n === capacity) {
        capacity *= 2;
        blockStarts = grown(blockStarts, new Uint32Array(capacity));
        blockPrefixes = grown(blockPrefixes, new Uint8Array(capacity));
        blockRows = grown(blockRows, new Uint32Array(capacity));
      }
      blockStarts[n] = at;
      blockPrefixes[n] = prefix;
      blockRows[n] = i;
      n++;
      at += 2 ** (32 - prefix);
    }
  }
  // bucket[h]: the number of blocks starting before h * 2^16.
  const bucket = new Uint32Array(65537);
  for (let h = 0, i = 0; h <= 65536; h++) {
    while (i < n && blockStarts[i] < h * 65536) i++;
    bucket[h] = i;
  }
  const texts: (string | undefined)[] = new Array<string | undefined>(n);
  return {
    find(value) {
      const h = value >>> 16;
      let lo = bucket[h] === 0 ? 0 : bucket[h] - 1;
      let hi = bucket[h + 1] - 1;
      if (hi < 0 || blockStarts[lo] > value) return -1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (blockStarts[mid] <= value) lo = mid;
        else hi = mid - 1;
      }
      return value - blockStarts[lo] < 2 ** (32 - blockPrefixes[lo]) ? lo : -1;
    },
    row: (block) => blockRows[block],
    network: (block) => (texts[block] ??= ipv4Network(blockStarts[block], blockPrefixes[block])),
  };
}

/** `into` holding `from` at its start. */
function grown<T extends Uint32Array | Uint8Array>(from: T, into: T): T {
  into.set(from);
  return into;
}

/**
 * The IPv6 search over an index: binary search over the starts (four 32-bit words each), and the
 * network text, kept once made for ranges that are one CIDR (found out at their first lookup).
 */
export interface IPv6Finder {
  /** The range holding the address (four 32-bit words), or -1. */
  find(words: readonly number[]): number;
  network(i: number, words: readonly number[]): string;
}

export function createIPv6Finder(data: AsnIndexData): IPv6Finder {
  const { starts, ends } = data.v6;
  const n = starts.length / 4;
  /** Per range: its prefix length when it is one CIDR, 254 when not, 255 not known yet. */
  const cidrPrefix = new Uint8Array(n).fill(255);
  const texts: (string | undefined)[] = new Array<string | undefined>(n);
  const big = (a: Uint32Array, i: number) => wordsToBigInt(a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]);
  const compare = (a: Uint32Array, i: number, w: readonly number[]) => {
    const at = 4 * i;
    for (let k = 0; k < 4; k++) {
      const d = a[at + k] - w[k];
      if (d !== 0) return d;
    }
    return 0;
  };
  return {
    find(w) {
      let lo = 0;
      let hi = n - 1;
      if (hi < 0 || compare(starts, 0, w) > 0) return -1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (compare(starts, mid, w) <= 0) lo = mid;
        else hi = mid - 1;
      }
      return compare(ends, lo, w) >= 0 ? lo : -1;
    },
    network(i, w) {
      let p = cidrPrefix[i];
      if (p === 255) {
        const start = big(starts, i);
        const prefix = ipv6PrefixInRange(start, big(ends, i), start);
        p = cidrPrefix[i] = 1n << BigInt(128 - prefix) === big(ends, i) - start + 1n ? prefix : 254;
      }
      if (p !== 254) return (texts[i] ??= ipv6Network(big(starts, i), p));
      const value = wordsToBigInt(w[0], w[1], w[2], w[3]);
      return ipv6Network(value, ipv6PrefixInRange(big(starts, i), big(ends, i), value));
    },
  };
}

function mmdbSource(path: string): LocalSource {
  const db = openAsnMmdb(path);
  return {
    info: { kind: 'mmdb', files: [path], package: null, builtAt: new Date(db.builtAt), index: null, databaseType: db.databaseType },
    records: db.networks,
    builtAtMs: db.builtAt,
    find: db.find,
    orgOf: db.orgOf,
    index: null,
  };
}
