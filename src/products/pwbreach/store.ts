/**
 * The local breach store: every hash once, sorted, in fixed-width 21-byte records behind an
 * index of the 2^20 prefixes, so a prefix's range is one contiguous read and memory stays the
 * 4 MB index whatever the number of hashes. A file is read with positional reads (`readSync`
 * at an offset; no mmap), so a billion hashes need no more memory than a thousand.
 *
 * File layout (integers little-endian unless said otherwise):
 *
 *   offset 0        header, 64 bytes: magic `SLPWB\0\0\1`, u32 record size (21), u32 prefix
 *                   bits (20), u32 record count, u32 0, f64 sum of the counts, zeros
 *   offset 64       index: 2^20 + 1 u32, the number of the first record of each prefix (the last
 *                   entry is the record count), so prefix p is records index[p] to index[p+1]
 *   offset 4194372  records, ascending by hash
 *
 * A record holds the hash minus its prefix (140 bits) and its count (28 bits), 168 bits in all:
 *
 *   byte 0      high nibble: count bits 27-24; low nibble: the hash's 6th hex digit (byte 2, low half)
 *   bytes 1-17  hash bytes 3-19
 *   bytes 18-20 count bits 23-0, big-endian
 *
 * Records compare as hashes when byte 0's high nibble is ignored. Counts above 2^28 - 1
 * (268,435,455; the largest public count is a few tens of millions) are stored as that.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { SeclookupError } from '../../errors.js';
import { PREFIX_COUNT } from './hash.js';
import type { BreachRange } from './range.js';

export const RECORD_BYTES = 21;
export const MAX_COUNT = 2 ** 28 - 1;
export const HEADER_BYTES = 64;
export const INDEX_OFFSET = HEADER_BYTES;
export const INDEX_ENTRIES = PREFIX_COUNT + 1;
export const RECORDS_OFFSET = INDEX_OFFSET + INDEX_ENTRIES * 4;
/** The index holds u32 record numbers. */
export const MAX_RECORDS = 2 ** 32 - 1;
const MAGIC = Buffer.from([0x53, 0x4c, 0x50, 0x57, 0x42, 0x00, 0x00, 0x01]); // "SLPWB" 0 0 1

/** Ranges at most this long are read whole; longer ones through a window around the estimated position. */
const SMALL_RANGE = 96;

/** The hash's prefix (hash.ts's prefixOf, kept local to the hot paths here). */
function prefixAt(hash: Uint8Array, offset: number): number {
  return (hash[offset] << 12) | (hash[offset + 1] << 4) | (hash[offset + 2] >> 4);
}

/** Write a record for the hash at `hash[offset..offset+20)` with `count` (already capped) at `out[at]`. */
export function encodeRecord(hash: Uint8Array, offset: number, count: number, out: Uint8Array, at: number): void {
  out[at] = ((count >>> 24) << 4) | (hash[offset + 2] & 0x0f);
  for (let i = 1; i < 18; i++) out[at + i] = hash[offset + 2 + i];
  out[at + 18] = (count >>> 16) & 0xff;
  out[at + 19] = (count >>> 8) & 0xff;
  out[at + 20] = count & 0xff;
}

export function decodeCount(records: Uint8Array, at: number): number {
  return (records[at] >>> 4) * 0x1000000 + ((records[at + 18] << 16) | (records[at + 19] << 8) | records[at + 20]);
}

/** Compare a full hash with a record (of the hash's prefix): negative when the hash sorts first. */
function compareToRecord(hash: Uint8Array, records: Uint8Array, at: number): number {
  const nibble = (hash[2] & 0x0f) - (records[at] & 0x0f);
  if (nibble !== 0) return nibble;
  for (let i = 1; i < 18; i++) {
    const diff = hash[2 + i] - records[at + i];
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Binary search over `n` records: the record number of `hash`, or -(insertion point) - 1. */
function search(hash: Uint8Array, records: Uint8Array, n: number): number {
  let lo = 0;
  let hi = n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = compareToRecord(hash, records, mid * RECORD_BYTES);
    if (cmp === 0) return mid;
    if (cmp > 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

/** Where the store's bytes come from: a file read at offsets, or memory. */
interface ByteSource {
  /** `length` bytes at `position`, valid until the next call (`copy`: a buffer of its own). */
  read(position: number, length: number, copy?: boolean): Uint8Array;
  /** Fill `target` with the bytes at `position` (the index, read once into its own array). */
  readInto(position: number, target: Uint8Array): void;
  close(): void;
}

/** Whether this machine stores a Uint32Array's words little-endian, as the file does. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The index as the file's bytes (u32 little-endian): one copy of the array's memory, not a
 * million `writeUInt32LE` calls (a fifth of building the bundled sample's store took those).
 */
function indexBytes(index: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(index.buffer, index.byteOffset, index.byteLength);
  return LITTLE_ENDIAN ? bytes : Buffer.from(bytes).swap32();
}

function fileSource(path: string, fd: number): ByteSource {
  let scratch = Buffer.allocUnsafe(64 * 1024);
  const readInto = (position: number, target: Uint8Array, length = target.length) => {
    let got = 0;
    while (got < length) {
      const n = readSync(fd, target, got, length - got, position + got);
      if (n === 0) throw new SeclookupError('dataset_invalid', `seclookup: breach store ${path} ended early (truncated?)`);
      got += n;
    }
  };
  return {
    read(position, length, copy = false) {
      if (!copy && scratch.length < length) scratch = Buffer.allocUnsafe(Math.max(length, scratch.length * 2));
      const target = copy ? Buffer.allocUnsafe(length) : scratch;
      readInto(position, target, length);
      return target.subarray(0, length);
    },
    readInto,
    close: () => closeSync(fd),
  };
}

function memorySource(bytes: Uint8Array): ByteSource {
  return {
    read: (position, length, copy = false) => (copy ? Buffer.from(bytes.subarray(position, position + length)) : bytes.subarray(position, position + length)),
    readInto: (position, target) => target.set(bytes.subarray(position, position + target.length)),
    close: () => {},
  };
}

/** A local store, open. */
export interface BreachStore {
  /** Distinct hashes held. */
  readonly records: number;
  /** Sum of every count. */
  readonly countSum: number;
  /** The file, or null for a store held in memory (the bundled sample). */
  readonly path: string | null;
  /** The count of a hash, 0 when absent. */
  count(hash: Uint8Array): number;
  /** Every hash and count under a prefix. */
  range(prefix: number): BreachRange;
  close(): void;
}

/** Stores up to this size are read into memory when opened (see openStoreFile). */
export const DEFAULT_MEMORY_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Open a store file: reads the header and the 4 MB index, checks them against the file size.
 * A file of at most `memoryMaxBytes` (default 64 MiB, about 3 million hashes) is read whole
 * into memory, so its lookups make no system call; a larger one is read per lookup at an
 * offset, and memory stays the index and one read buffer however large the file.
 */
export function openStoreFile(path: string, { memoryMaxBytes = DEFAULT_MEMORY_MAX_BYTES }: { memoryMaxBytes?: number } = {}): BreachStore {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read breach store ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const size = fstatSync(fd).size;
    const file = fileSource(path, fd);
    if (size > memoryMaxBytes) return openStore(file, size, path);
    const bytes = file.read(0, size, true);
    closeSync(fd);
    return openStore(memorySource(bytes), size, path);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // Already closed after reading it into memory.
    }
    throw error;
  }
}

/** A store held in memory (as `buildStoreInMemory` makes it). */
export function openStoreBuffer(bytes: Uint8Array, label = 'in-memory breach store'): BreachStore {
  return openStore(memorySource(bytes), bytes.length, null, label);
}

function openStore(source: ByteSource, size: number, path: string | null, label = `breach store ${path}`): BreachStore {
  const invalid = (why: string) =>
    new SeclookupError('dataset_invalid', `seclookup: ${label} is not a valid store: ${why}; rebuild it with \`seclookup data import pwbreach\``);
  if (size < RECORDS_OFFSET) throw invalid('too short');
  const header = Buffer.from(source.read(0, HEADER_BYTES, true));
  if (!header.subarray(0, 8).equals(MAGIC)) throw invalid('wrong magic number (not a seclookup breach store, or another version)');
  if (header.readUInt32LE(8) !== RECORD_BYTES || header.readUInt32LE(12) !== 20) throw invalid('unknown record layout');
  const records = header.readUInt32LE(16);
  const countSum = header.readDoubleLE(24);
  if (size !== RECORDS_OFFSET + records * RECORD_BYTES) throw invalid(`size ${size} does not match its ${records} records (truncated or appended to)`);
  // Read straight into an aligned array of its own (a read buffer's offset need not be a multiple of 4).
  const index = new Uint32Array(INDEX_ENTRIES);
  source.readInto(INDEX_OFFSET, new Uint8Array(index.buffer));
  if (!LITTLE_ENDIAN) Buffer.from(index.buffer).swap32();
  if (index[0] !== 0 || index[PREFIX_COUNT] !== records) throw invalid('index does not cover the records');
  if (!ascending(index)) throw invalid('index out of order');

  const readRecords = (first: number, count: number, copy = false) => source.read(RECORDS_OFFSET + first * RECORD_BYTES, count * RECORD_BYTES, copy);

  function count(hash: Uint8Array): number {
    const prefix = prefixAt(hash, 0);
    const start = index[prefix];
    const n = index[prefix + 1] - start;
    if (n === 0) return 0;
    if (n <= SMALL_RANGE) {
      const bytes = readRecords(start, n);
      const at = search(hash, bytes, n);
      return at >= 0 ? decodeCount(bytes, at * RECORD_BYTES) : 0;
    }
    // SHA-1 hashes are uniform, so a hash's place in its range is about its suffix's fraction
    // of the suffix space, give or take a few square roots of the range's length: read only a
    // window there. When the hash falls outside the window (data that is not uniform), read it all.
    const fraction = ((hash[2] & 0x0f) * 0x1000000 + ((hash[3] << 16) | (hash[4] << 8) | hash[5])) / 0x10000000;
    const guess = Math.floor(fraction * n);
    const half = Math.ceil(2 * Math.sqrt(n)) + 8;
    const lo = Math.max(0, guess - half);
    const hi = Math.min(n, guess + half);
    const window = readRecords(start + lo, hi - lo);
    const at = search(hash, window, hi - lo);
    if (at >= 0) return decodeCount(window, at * RECORD_BYTES);
    const insertion = -at - 1;
    if ((insertion === 0 && lo > 0) || (insertion === hi - lo && hi < n)) {
      const bytes = readRecords(start, n);
      const found = search(hash, bytes, n);
      return found >= 0 ? decodeCount(bytes, found * RECORD_BYTES) : 0;
    }
    return 0;
  }

  function range(prefix: number): BreachRange {
    const start = index[prefix];
    const n = index[prefix + 1] - start;
    return storeRange(n === 0 ? new Uint8Array(0) : readRecords(start, n, true), n);
  }

  return { records, countSum, path, count, range, close: () => source.close() };
}

/** Whether no entry is greater than the next. */
function ascending(index: Uint32Array): boolean {
  for (let p = 1; p < index.length; p++) if (index[p - 1] > index[p]) return false;
  return true;
}

const UPPER_HEX = '0123456789ABCDEF';

/** A range read from the store: its records, copied. */
function storeRange(bytes: Uint8Array, n: number): BreachRange {
  return {
    size: n,
    count(hash) {
      const at = search(hash, bytes, n);
      return at >= 0 ? decodeCount(bytes, at * RECORD_BYTES) : 0;
    },
    lines() {
      const out: string[] = new Array(n);
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0, at = 0; i < n; i++, at += RECORD_BYTES) {
        out[i] = `${UPPER_HEX[bytes[at] & 0x0f]}${buffer.toString('hex', at + 1, at + 18).toUpperCase()}:${decodeCount(bytes, at)}`;
      }
      return out;
    },
  };
}

/** Where a store being written goes: a temporary file renamed into place, or memory. */
export interface StoreSink {
  write(data: Uint8Array, length: number, position: number): void;
}

/**
 * Writes a store from hashes given in strictly ascending order (the caller merges duplicates):
 * records are buffered and written in order; `finish` writes the header and the index.
 */
export class StoreWriter {
  /**
   * The index, filled in as records arrive (in order, so a prefix's first record comes after
   * every earlier prefix's): one fill per prefix met, not a pass over all 2^20 at the end.
   */
  private readonly index = new Uint32Array(INDEX_ENTRIES);
  /** The prefix of the last record added; -1 before the first. */
  private lastPrefix = -1;
  records = 0;
  countSum = 0;
  /** Counts above MAX_COUNT, stored as MAX_COUNT. */
  capped = 0;
  private readonly buffer = Buffer.allocUnsafe(RECORD_BYTES * 100_000);
  private used = 0;
  private position = RECORDS_OFFSET;

  constructor(private readonly sink: StoreSink) {}

  add(hash: Uint8Array, offset: number, count: number): void {
    if (this.records === MAX_RECORDS)
      throw new SeclookupError('dataset_invalid', `more than ${MAX_RECORDS} distinct hashes: the store's index cannot address them`);
    if (count > MAX_COUNT) {
      this.capped++;
      count = MAX_COUNT;
    }
    const prefix = prefixAt(hash, offset);
    if (prefix !== this.lastPrefix) this.startPrefix(prefix);
    encodeRecord(hash, offset, count, this.buffer, this.used);
    this.used += RECORD_BYTES;
    this.records++;
    this.countSum += count;
    if (this.used === this.buffer.length) this.flush();
  }

  /** The first record of `prefix` is the next one; the prefixes skipped since the last record have none, so they start there too. */
  private startPrefix(prefix: number): void {
    if (prefix < this.lastPrefix) throw new Error('StoreWriter: hashes must come in ascending order');
    if (prefix === this.lastPrefix + 1) this.index[prefix] = this.records;
    else this.index.fill(this.records, this.lastPrefix + 1, prefix + 1);
    this.lastPrefix = prefix;
  }

  private flush(): void {
    if (this.used === 0) return;
    this.sink.write(this.buffer, this.used, this.position);
    this.position += this.used;
    this.used = 0;
  }

  /** Write the remaining records, the index and the header. Returns the store's size in bytes. */
  finish(): number {
    this.flush();
    const head = Buffer.alloc(RECORDS_OFFSET);
    MAGIC.copy(head, 0);
    head.writeUInt32LE(RECORD_BYTES, 8);
    head.writeUInt32LE(20, 12);
    head.writeUInt32LE(this.records, 16);
    head.writeDoubleLE(this.countSum, 24);
    // The prefixes after the last record's, and the end entry, hold the record count.
    this.index.fill(this.records, this.lastPrefix + 1);
    this.lastPrefix = PREFIX_COUNT;
    head.set(indexBytes(this.index), INDEX_OFFSET);
    this.sink.write(head, head.length, 0);
    return RECORDS_OFFSET + this.records * RECORD_BYTES;
  }
}

/** A sink into a growing buffer, for stores built in memory (the bundled sample). */
export function memorySink(): StoreSink & { bytes(): Buffer } {
  let buffer = Buffer.alloc(RECORDS_OFFSET + 64 * 1024);
  let size = 0;
  return {
    write(data, length, position) {
      const end = position + length;
      if (end > buffer.length) {
        const grown = Buffer.alloc(Math.max(end, buffer.length * 2));
        buffer.copy(grown, 0, 0, size);
        buffer = grown;
      }
      buffer.set(data.subarray(0, length), position);
      size = Math.max(size, end);
    },
    bytes: () => buffer.subarray(0, size),
  };
}
