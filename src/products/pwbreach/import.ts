/**
 * The importer behind `seclookup data import pwbreach FILE...`: builds a store (store.ts) from
 * the two formats the public data comes in, streaming, in memory that does not grow with the input.
 *
 * - A file of `HASH:COUNT` lines (40 hex digits), as the official downloader writes in
 *   single-file mode (and the bundled sample is): any file whose name is not a prefix.
 * - Per-prefix files of `SUFFIX:COUNT` lines (35 hex digits), named by their prefix (`00000`
 *   or `00000.txt`, any case), as the downloader writes by default; given one by one or as the
 *   folder holding them (other entries of the folder are ignored and reported). A folder must
 *   hold every prefix, unless `allowPartial`: a missing one would make its passwords "not breached".
 *
 * Inputs are read in the order given (a folder's files by prefix). Hex is read in either case;
 * CRLF and LF line endings, blank lines and a UTF-8 byte order mark are accepted; a line with
 * count 0 is range-API padding and skipped. A hash listed more than once keeps its largest count.
 *
 * Sorted input (the downloader's output is) is written straight to the store in one pass. The
 * first hash out of order switches to the unsorted path, which starts again from the first
 * input (refused when an input is a pipe, which cannot be read twice): records go to bucket files
 * by their leading bits (about two million records, 48 MB, per bucket), then each bucket is
 * sorted in memory and appended to the store.
 *
 * A corrupt line (anything else; one longer than MAX_LINE_BYTES is cut off there) is counted,
 * with the file and line number of the first few (never the line's text: a wrong file could
 * hold plaintext passwords). By default any corrupt line
 * refuses the import; with `skipCorrupt` the good lines are imported. The store is written to
 * a temporary file beside it and renamed over it only when complete, so it is never seen
 * half-written; a refused or failed import leaves the previous store as it was.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { mayCreateFilesIn, statOrNull } from '../../lib/file-access.js';
import { HASH_BYTES as HASH_LENGTH, HEX_VALUE, PREFIX_COUNT } from './hash.js';
import { memorySink, StoreWriter, type StoreSink } from './store.js';

export interface ImportSource {
  path: string;
  /** `hash`: HASH:COUNT lines; `suffix`: SUFFIX:COUNT lines under `prefix`. */
  kind: 'hash' | 'suffix';
  prefix: number;
  size: number;
  /** A regular file, which can be read twice (a pipe or a terminal cannot). */
  regular: boolean;
}

/** A folder of per-prefix files that lacks some of the 2^20 prefixes. */
export interface PartialFolder {
  path: string;
  /** Prefixes with no file in the folder. */
  missing: number;
  /** The first few missing prefixes, as 5 hex digits. */
  firstMissing: string[];
}

export interface ImportOptions {
  /** The store to write (replaced atomically). */
  out: string;
  /** Import the good lines when some are corrupt. @default false (refuse) */
  skipCorrupt?: boolean;
  /** Folder for the bucket files of unsorted input: an existing folder this user may write (never created). @default beside `out` */
  tmpDir?: string;
  /** A line per phase. */
  onProgress?: (line: string) => void;
  /** Called after every chunk read and every bucket sorted. */
  onProgressBar?: (progress: { phase: string; done: number; total: number; unit: 'bytes' | 'buckets' }) => void;
  /** Records per bucket aimed at on the unsorted path (tests make it small). @default 2,097,152 */
  bucketRecords?: number;
  /**
   * Import a folder of per-prefix files that lacks some prefixes. Every password under a
   * missing prefix would read "not breached", so such a folder is refused by default.
   * @default false
   */
  allowPartial?: boolean;
}

export interface ImportReport {
  /** Input files read. */
  files: number;
  /** Entries of the folders given that are not per-prefix files (ignored). */
  ignored: string[];
  /** Folders of per-prefix files that lack some prefixes (imported with `allowPartial`). */
  partial: PartialFolder[];
  bytes: number;
  /** Non-blank lines read. */
  lines: number;
  /** Distinct hashes written. */
  hashes: number;
  /** Lines whose hash was already listed (merged: the largest count kept). */
  duplicates: number;
  /** Lines with count 0 (range-API padding), skipped. */
  padding: number;
  corrupt: number;
  /** `file:line` of the first corrupt lines. */
  corruptAt: string[];
  /** Counts above the store's largest (2^28 - 1), stored as that. */
  capped: number;
  /** Whether the input was sorted (one pass) or went through buckets. */
  sorted: boolean;
  buckets: number;
  seconds: number;
  /** The store written (null when nothing was written). */
  out: string | null;
  storeBytes: number;
}

/** Why an import wrote nothing; the report says what was read. */
export class ImportRefused extends Error {
  constructor(
    message: string,
    readonly report: ImportReport,
  ) {
    super(message);
    this.name = 'ImportRefused';
  }
}

// Module-local copies of the constants hot loops read per character: a test runner that turns
// imports into property reads (vitest) made the importer three times slower without them.
const HEX = HEX_VALUE;
const HASH_BYTES = HASH_LENGTH;

const CHUNK_BYTES = 4 * 1024 * 1024;
const BUCKET_RECORD_BYTES = 24;
const DEFAULT_BUCKET_RECORDS = 2 ** 21;
const MAX_BUCKET_BITS = 12;
/** Record indexes within a bucket must fit beside its sort key (see sortBucket). */
const MAX_BUCKET_INDEX_BITS = 26;
const BUCKET_BUFFER_TOTAL = 64 * 1024 * 1024;
const CORRUPT_SAMPLES = 5;
const PREFIX_FILE = /^([0-9a-f]{5})(?:\.txt)?$/i;
const MISSING_SAMPLES = 3;

/**
 * The inputs named on the command line: files and folders of per-prefix files, and the folders
 * that lack some prefixes. Throws when one cannot be read.
 */
export function resolveSources(paths: readonly string[]): { sources: ImportSource[]; ignored: string[]; partial: PartialFolder[] } {
  const sources: ImportSource[] = [];
  const ignored: string[] = [];
  const partial: PartialFolder[] = [];
  for (const path of paths) {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      const found = prefixFilesIn(path, ignored);
      sources.push(...found);
      const gap = missingPrefixes(path, found);
      if (gap) partial.push(gap);
    } else {
      const match = PREFIX_FILE.exec(basename(path));
      const regular = stat.isFile();
      sources.push(
        match
          ? { path, kind: 'suffix', prefix: parseInt(match[1], 16), size: stat.size, regular }
          : { path, kind: 'hash', prefix: -1, size: stat.size, regular },
      );
    }
  }
  return { sources, ignored, partial };
}

/** The per-prefix files of a folder, by prefix; its other entries go to `ignored`. */
function prefixFilesIn(folder: string, ignored: string[]): ImportSource[] {
  const found: ImportSource[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const match = PREFIX_FILE.exec(entry.name);
    if (!match || !entry.isFile()) {
      ignored.push(join(folder, entry.name));
      continue;
    }
    const file = join(folder, entry.name);
    found.push({ path: file, kind: 'suffix', prefix: parseInt(match[1], 16), size: statSync(file).size, regular: true });
  }
  return found.sort((a, b) => a.prefix - b.prefix || (a.path < b.path ? -1 : 1));
}

/** The prefixes a folder's files (sorted by prefix) do not cover, or null when it has them all. */
function missingPrefixes(folder: string, files: readonly ImportSource[]): PartialFolder | null {
  const present = new Uint8Array(PREFIX_COUNT);
  for (const file of files) present[file.prefix] = 1;
  let missing = 0;
  const firstMissing: string[] = [];
  for (let prefix = 0; prefix < PREFIX_COUNT; prefix++) {
    if (present[prefix]) continue;
    missing++;
    if (firstMissing.length < MISSING_SAMPLES) firstMissing.push(prefix.toString(16).toUpperCase().padStart(5, '0'));
  }
  return missing === 0 ? null : { path: folder, missing, firstMissing };
}

/** Why a partial folder is refused (or, allowed, what it means), in one line. */
export function describePartialFolder(gap: PartialFolder): string {
  return (
    `${gap.path} lacks ${gap.missing.toLocaleString('en-US')} of the ${PREFIX_COUNT.toLocaleString('en-US')} prefix files ` +
    `(first missing: ${gap.firstMissing.join(', ')}${gap.missing > gap.firstMissing.length ? ', ...' : ''}): ` +
    'every password under a missing prefix would read "not breached"'
  );
}

/** Thrown by the sorted path at the first hash out of order. */
class OutOfOrder extends Error {}

/**
 * The longest line that can be valid: 40 hex digits, `:`, a count of at most 15 digits and a
 * CR. A longer one is corrupt whatever follows, so it is cut off there (see LineReader).
 */
export const MAX_LINE_BYTES = 2 * HASH_BYTES + 1 + 15 + 1;

/**
 * Splits chunks into lines and lines into hashes and counts. Lines may straddle chunks: the
 * start of one waits in a buffer of MAX_LINE_BYTES, and a line longer than that (a file with
 * no line breaks) is counted as corrupt at once and skipped to its newline, so memory and time
 * stay bounded whatever the input. `onRecord` gets a scratch array it must copy from before
 * returning.
 */
export class LineReader {
  readonly hash = new Uint8Array(HASH_BYTES);
  lines = 0;
  padding = 0;
  corrupt = 0;
  readonly corruptAt: string[] = [];
  /** The first corrupt line is shaped like an NTLM hash list's (HIBP publishes both lists). */
  firstCorruptIsNtlm = false;
  private source!: ImportSource;
  private lineNumber = 0;
  /** The start of a line that continues in the next chunk. */
  private readonly carry = Buffer.allocUnsafe(MAX_LINE_BYTES);
  private carried = 0;
  /** A line began in an earlier chunk (held in `carry`, or being skipped). */
  private partial = false;
  /** The partial line is too long: already counted as corrupt, skipped to its newline. */
  private skipping = false;
  private atStart = true;

  constructor(private readonly onRecord: (hash: Uint8Array, count: number) => void) {}

  begin(source: ImportSource): void {
    this.source = source;
    this.lineNumber = 0;
    this.resetPartial();
    this.atStart = true;
  }

  feed(chunk: Buffer, length: number): void {
    let start = 0;
    if (this.atStart && length > 0) {
      this.atStart = false;
      if (length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) start = 3;
    }
    let newline = this.nextNewline(chunk, start, length);
    if (this.partial) {
      this.extend(chunk, start, newline < 0 ? length : newline);
      if (newline < 0) return;
      this.endPartial();
      start = newline + 1;
      newline = this.nextNewline(chunk, start, length);
    }
    while (newline >= 0) {
      this.line(chunk, start, newline);
      start = newline + 1;
      newline = this.nextNewline(chunk, start, length);
    }
    if (start < length) {
      this.partial = true;
      this.extend(chunk, start, length);
    }
  }

  /** The next LF at or after `from` within the chunk's `length` bytes, or -1. */
  private nextNewline(chunk: Buffer, from: number, length: number): number {
    const at = chunk.indexOf(10, from);
    return at >= 0 && at < length ? at : -1;
  }

  /** Add `chunk[from, to)` to the partial line; past MAX_LINE_BYTES it is corrupt, counted now. */
  private extend(chunk: Buffer, from: number, to: number): void {
    if (this.skipping) return;
    if (this.carried + (to - from) > MAX_LINE_BYTES) {
      this.lineNumber++;
      this.lines++;
      this.bad();
      this.skipping = true;
      this.carried = 0;
      return;
    }
    chunk.copy(this.carry, this.carried, from, to);
    this.carried += to - from;
  }

  /** The partial line's newline arrived (or its file ended). */
  private endPartial(): void {
    if (!this.skipping) this.line(this.carry, 0, this.carried);
    this.resetPartial();
  }

  private resetPartial(): void {
    this.carried = 0;
    this.partial = false;
    this.skipping = false;
  }

  /** `file:line` of the line being read. */
  where(): string {
    return `${this.source.path}:${this.lineNumber}`;
  }

  end(): void {
    if (this.partial) this.endPartial();
  }

  private line(buf: Buffer, start: number, end: number): void {
    this.lineNumber++;
    if (end > start && buf[end - 1] === 13) end--;
    if (end === start) return;
    this.lines++;
    const hash = this.hash;
    let colon: number;
    if (this.source.kind === 'hash') {
      colon = start + 40;
      if (end - start < 42 || buf[colon] !== 0x3a) return this.bad(buf[start + 32] === 0x3a && isHex(buf, start, start + 32));
      for (let i = 0; i < HASH_BYTES; i++) {
        const hi = HEX[buf[start + 2 * i]];
        const lo = HEX[buf[start + 2 * i + 1]];
        if ((hi | lo) < 0) return this.bad();
        hash[i] = (hi << 4) | lo;
      }
    } else {
      colon = start + 35;
      if (end - start < 37 || buf[colon] !== 0x3a) return this.bad();
      const prefix = this.source.prefix;
      const first = HEX[buf[start]];
      if (first < 0) return this.bad();
      hash[0] = prefix >>> 12;
      hash[1] = (prefix >>> 4) & 0xff;
      hash[2] = ((prefix & 0x0f) << 4) | first;
      for (let i = 0; i < 17; i++) {
        const hi = HEX[buf[start + 1 + 2 * i]];
        const lo = HEX[buf[start + 2 + 2 * i]];
        if ((hi | lo) < 0) return this.bad();
        hash[3 + i] = (hi << 4) | lo;
      }
    }
    // A decimal count of at most 15 digits (exact as a double).
    if (end - colon - 1 > 15) return this.bad();
    let count = 0;
    for (let i = colon + 1; i < end; i++) {
      const digit = buf[i] - 0x30;
      if (digit < 0 || digit > 9) return this.bad();
      count = count * 10 + digit;
    }
    if (count === 0) {
      this.padding++;
      return;
    }
    this.onRecord(hash, count);
  }

  /** `ntlm`: the line is 32 hex digits and a colon, as in HIBP's NTLM list. */
  private bad(ntlm = false): void {
    if (this.corrupt === 0) this.firstCorruptIsNtlm = ntlm;
    this.corrupt++;
    if (this.corruptAt.length < CORRUPT_SAMPLES) this.corruptAt.push(`${this.source.path}:${this.lineNumber}`);
  }
}

/** Whether `buf[from, to)` is all hex digits. */
function isHex(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (HEX[buf[i]] < 0) return false;
  return true;
}

/** Said when the first corrupt line is an NTLM hash: the commonest mix-up, as HIBP offers both downloads. */
const NTLM_HINT = ' (32 hex digits and a count: an NTLM hash list; pwbreach needs the SHA-1 one, pwned-passwords-sha1)';

function compareHashes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number): number {
  for (let i = 0; i < HASH_BYTES; i++) {
    const diff = a[aAt + i] - b[bAt + i];
    if (diff !== 0) return diff;
  }
  return 0;
}

/** Where bucket records (20-byte hash, u32 LE count) wait for sorting: files, or memory. */
interface Buckets {
  append(bucket: number, hash: Uint8Array, count: number): void;
  /** Every record of a bucket (called once per bucket, in order, after the last append). */
  take(bucket: number): Buffer;
  dispose(): void;
}

function memoryBuckets(count: number): Buckets {
  const parts: Buffer[][] = Array.from({ length: count }, () => []);
  const pending: Buffer[] = Array.from({ length: count }, () => Buffer.allocUnsafe(BUCKET_RECORD_BYTES * 4096));
  const used = new Uint32Array(count);
  return {
    append(bucket, hash, value) {
      let buffer = pending[bucket];
      if (used[bucket] === buffer.length) {
        parts[bucket].push(buffer);
        buffer = pending[bucket] = Buffer.allocUnsafe(buffer.length);
        used[bucket] = 0;
      }
      writeBucketRecord(buffer, used[bucket], hash, value);
      used[bucket] += BUCKET_RECORD_BYTES;
    },
    take(bucket) {
      const all = Buffer.concat([...parts[bucket], pending[bucket].subarray(0, used[bucket])]);
      parts[bucket] = [];
      return all;
    },
    dispose() {},
  };
}

function fileBuckets(count: number, dir: string): Buckets {
  // Only the bucket folder itself: its parent (tmpDir, or the store's folder) exists already.
  mkdirSync(dir);
  const size = BUCKET_RECORD_BYTES * Math.max(256, Math.min(40_000, Math.floor(BUCKET_BUFFER_TOTAL / count / BUCKET_RECORD_BYTES)));
  const buffers: (Buffer | null)[] = new Array(count).fill(null);
  const used = new Uint32Array(count);
  const path = (bucket: number) => join(dir, `bucket-${bucket}`);
  const flush = (bucket: number) => {
    if (used[bucket] === 0) return;
    const fd = openSync(path(bucket), 'a');
    try {
      writeAll(fd, buffers[bucket]!, used[bucket], null);
    } finally {
      closeSync(fd);
    }
    used[bucket] = 0;
  };
  return {
    append(bucket, hash, value) {
      const buffer = (buffers[bucket] ??= Buffer.allocUnsafe(size));
      writeBucketRecord(buffer, used[bucket], hash, value);
      used[bucket] += BUCKET_RECORD_BYTES;
      if (used[bucket] === size) flush(bucket);
    },
    take(bucket) {
      flush(bucket);
      buffers[bucket] = null;
      let data: Buffer;
      try {
        data = readFileSync(path(bucket));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
        throw error;
      }
      unlinkSync(path(bucket));
      return data;
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function writeBucketRecord(buffer: Buffer, at: number, hash: Uint8Array, count: number): void {
  for (let i = 0; i < HASH_BYTES; i++) buffer[at + i] = hash[i];
  const value = Math.min(count, 0xffffffff);
  buffer[at + 20] = value & 0xff;
  buffer[at + 21] = (value >>> 8) & 0xff;
  buffer[at + 22] = (value >>> 16) & 0xff;
  buffer[at + 23] = value >>> 24;
}

/** The count of a bucket record (u32 little-endian after the hash). */
function bucketCount(data: Uint8Array, at: number): number {
  return (data[at + 20] | (data[at + 21] << 8) | (data[at + 22] << 16)) + data[at + 23] * 0x1000000;
}

/** Bytes 0-3 or 4-7 of a hash as an unsigned 32-bit number. */
function word(data: Uint8Array, at: number): number {
  return ((data[at] << 24) | (data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3]) >>> 0;
}

/**
 * Sort one bucket's records by hash and hand them to `emit` in order, duplicates merged (largest
 * count). Keys are 64-bit: the hash bits after the bucket's common leading bits, with the low
 * bits replaced by the record's index, sorted natively as a BigUint64Array. Records whose kept
 * bits are equal (rare: 38 or more bits alike) are put in order by comparing whole hashes.
 */
function sortBucket(data: Buffer, commonBits: number, emit: (data: Buffer, at: number, count: number) => void): number {
  const n = data.length / BUCKET_RECORD_BYTES;
  if (n === 0) return 0;
  const indexBits = Math.max(1, Math.ceil(Math.log2(n)));
  if (indexBits > MAX_BUCKET_INDEX_BITS) throw new Error(`a bucket of ${n} records is too large to sort (the input's hashes are far from uniform)`);
  const keys = new BigUint64Array(n);
  const words = new Uint32Array(keys.buffer);
  const mask = 2 ** indexBits - 1;
  for (let i = 0, at = 0; i < n; i++, at += BUCKET_RECORD_BYTES) {
    const hi = word(data, at);
    const lo = word(data, at + 4);
    const high = commonBits === 0 ? hi : ((hi << commonBits) | (lo >>> (32 - commonBits))) >>> 0;
    const low = commonBits === 0 ? lo : (lo << commonBits) >>> 0;
    words[2 * i] = (((low >>> indexBits) << indexBits) | i) >>> 0;
    words[2 * i + 1] = high;
  }
  keys.sort();
  let duplicates = 0;
  for (let j = 0; j < n; ) {
    const high = words[2 * j + 1];
    const kept = words[2 * j] >>> indexBits;
    let k = j + 1;
    while (k < n && words[2 * k + 1] === high && words[2 * k] >>> indexBits === kept) k++;
    if (k === j + 1) {
      const at = (words[2 * j] & mask) * BUCKET_RECORD_BYTES;
      emit(data, at, bucketCount(data, at));
    } else {
      // Records alike in every kept bit: order them by whole hash, merge the equal ones.
      const run: number[] = [];
      for (let r = j; r < k; r++) run.push((words[2 * r] & mask) * BUCKET_RECORD_BYTES);
      run.sort((a, b) => compareHashes(data, a, data, b));
      let previous = run[0];
      let best = bucketCount(data, previous);
      for (let r = 1; r < run.length; r++) {
        const at = run[r];
        const count = bucketCount(data, at);
        if (compareHashes(data, previous, data, at) === 0) {
          duplicates++;
          best = Math.max(best, count);
          continue;
        }
        emit(data, previous, best);
        previous = at;
        best = count;
      }
      emit(data, previous, best);
    }
    j = k;
  }
  return duplicates;
}

/** A store file written beside its final path and renamed over it when complete. */
interface FileTarget {
  sink: StoreSink;
  commit(): void;
  abort(): void;
}

function fileTarget(out: string): FileTarget {
  const dir = dirname(out);
  // The store's own folder only (DATA_DIR/pwbreach): a data folder that does not exist is refused before.
  if (!statOrNull(dir)) mkdirSync(dir);
  removeStale(dir, basename(out));
  const temp = join(dir, `.${basename(out)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  // The store keeps its permissions (an operator's 0600 stays 0600); a new one is 0644.
  const previous = statOrNull(out);
  const fd = openSync(temp, 'wx', 0o644);
  if (previous) fchmodSync(fd, previous.mode & 0o777);
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    sink: { write: (data, length, position) => writeAll(fd, data, length, position) },
    commit() {
      fsyncSync(fd);
      close();
      renameSync(temp, out);
      syncDir(dir);
    },
    abort() {
      close();
      rmSync(temp, { force: true });
    },
  };
}

function writeAll(fd: number, data: Uint8Array, length: number, position: number | null): void {
  let done = 0;
  while (done < length) done += writeSync(fd, data, done, length - done, position === null ? null : position + done);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a folder; the rename itself is atomic either way.
  }
}

/** Temporary files and bucket folders of an import that was killed (its process is gone). */
function removeStale(dir: string, base: string): void {
  const pattern = new RegExp(`^\\.${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(?:tmp|buckets)-(\\d+)-`);
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const match = pattern.exec(entry);
    if (match && !isAlive(Number(match[1]))) rmSync(join(dir, entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Run {
  sources: readonly ImportSource[];
  ignored: string[];
  partial: PartialFolder[];
  options: ImportOptions;
  newSink(): { sink: StoreSink; commit(): void; abort(): void };
  newBuckets(count: number): Buckets;
}

/**
 * The import, as steps: it yields after every chunk read and bucket sorted, so the async driver
 * can let the event loop run (signals, progress) and the sync one (the bundled sample) need not.
 */
function* importSteps(run: Run): Generator<void, ImportReport> {
  const started = performance.now();
  const total = run.sources.reduce((sum, s) => sum + s.size, 0);
  try {
    return yield* attempt(run, total, started, 'sorted');
  } catch (error) {
    if (!(error instanceof OutOfOrder)) throw error;
    refuseSecondRead(run.sources, error);
    run.options.onProgress?.(`${error.message}: sorting through buckets (reading the input again)`);
    return yield* attempt(run, total, started, 'unsorted');
  }
}

/**
 * Unsorted input is read twice; a pipe (or a FIFO, a terminal) gives only what is left the
 * second time, which would import part of the input without a word.
 */
function refuseSecondRead(sources: readonly ImportSource[], error: OutOfOrder): void {
  const stream = sources.find((source) => !source.regular);
  if (stream) {
    throw new Error(
      `${error.message}, and ${stream.path} is not a regular file, which unsorted input must be (it is read twice): sort the input first (LC_ALL=C sort) or save it to a file and import that`,
    );
  }
}

function* attempt(run: Run, total: number, started: number, mode: 'sorted' | 'unsorted'): Generator<void, ImportReport> {
  const { options } = run;
  const target = run.newSink();
  const writer = new StoreWriter(target.sink);
  let duplicates = 0;
  let buckets: Buckets | null = null;
  let bucketBits = 0;
  let onRecord: (hash: Uint8Array, count: number) => void;

  const pending = new Uint8Array(HASH_BYTES);
  let pendingCount = -1;
  if (mode === 'sorted') {
    onRecord = (hash, count) => {
      if (pendingCount < 0) {
        pending.set(hash);
        pendingCount = count;
        return;
      }
      const order = compareHashes(pending, 0, hash, 0);
      if (order < 0) {
        writer.add(pending, 0, pendingCount);
        pending.set(hash);
        pendingCount = count;
      } else if (order === 0) {
        duplicates++;
        if (count > pendingCount) pendingCount = count;
      } else {
        throw new OutOfOrder(`${lines.where()}: hashes are not in ascending order`);
      }
    };
  } else {
    const estimate = Math.ceil(total / 40);
    bucketBits = Math.min(MAX_BUCKET_BITS, Math.max(0, Math.ceil(Math.log2(Math.max(1, estimate / (options.bucketRecords ?? DEFAULT_BUCKET_RECORDS))))));
    buckets = run.newBuckets(2 ** bucketBits);
    const shift = 32 - bucketBits;
    const into = buckets;
    onRecord =
      bucketBits === 0
        ? (hash, count) => into.append(0, hash, count)
        : (hash, count) => into.append(((hash[0] << 24) | (hash[1] << 16) | (hash[2] << 8) | hash[3]) >>> shift, hash, count);
  }

  const lines = new LineReader((hash, count) => onRecord(hash, count));
  let done = 0;
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  try {
    options.onProgress?.(`reading ${run.sources.length} file(s), ${formatBytes(total)}${mode === 'unsorted' ? ` into ${2 ** bucketBits} bucket(s)` : ''}`);
    for (const source of run.sources) {
      lines.begin(source);
      const fd = openSync(source.path, 'r');
      try {
        for (;;) {
          const n = readSync(fd, chunk, 0, CHUNK_BYTES, null);
          if (n === 0) break;
          lines.feed(chunk, n);
          done += n;
          options.onProgressBar?.({ phase: 'reading', done, total, unit: 'bytes' });
          yield;
        }
        lines.end();
      } finally {
        closeSync(fd);
      }
    }
    if (mode === 'sorted') {
      if (pendingCount >= 0) writer.add(pending, 0, pendingCount);
    } else {
      const count = 2 ** bucketBits;
      options.onProgress?.(`sorting ${count} bucket(s)`);
      const emit = (data: Buffer, at: number, value: number) => writer.add(data, at, value);
      for (let b = 0; b < count; b++) {
        duplicates += sortBucket(buckets!.take(b), bucketBits, emit);
        options.onProgressBar?.({ phase: 'sorting', done: b + 1, total: count, unit: 'buckets' });
        yield;
      }
    }

    const report: ImportReport = {
      files: run.sources.length,
      ignored: run.ignored,
      partial: run.partial,
      bytes: done,
      lines: lines.lines,
      hashes: writer.records,
      duplicates,
      padding: lines.padding,
      corrupt: lines.corrupt,
      corruptAt: lines.corruptAt,
      capped: writer.capped,
      sorted: mode === 'sorted',
      buckets: mode === 'sorted' ? 0 : 2 ** bucketBits,
      seconds: (performance.now() - started) / 1000,
      out: null,
      storeBytes: 0,
    };
    if (lines.corrupt > 0 && !options.skipCorrupt) {
      target.abort();
      throw new ImportRefused(
        `${lines.corrupt} corrupt line(s), first at ${lines.corruptAt.join(', ')}${lines.firstCorruptIsNtlm ? NTLM_HINT : ''}; nothing was imported (the store is unchanged)`,
        report,
      );
    }
    if (writer.records === 0) {
      target.abort();
      throw new ImportRefused('no hashes found in the input; nothing was imported (the store is unchanged)', report);
    }
    report.storeBytes = writer.finish();
    target.commit();
    report.out = options.out;
    report.seconds = (performance.now() - started) / 1000;
    return report;
  } catch (error) {
    target.abort();
    throw error;
  } finally {
    buckets?.dispose();
  }
}

/**
 * Import files and folders into the store at `options.out`, replacing it atomically. Resolves
 * with what was read and written; rejects with ImportRefused (corrupt lines, no hashes) or the
 * file system's error, the previous store unchanged either way.
 */
export async function importBreachFiles(paths: readonly string[], options: ImportOptions): Promise<ImportReport> {
  // Before any work: an import of gigabytes must not end in a rename that cannot succeed.
  const problem = importTargetProblem(options.out, options.tmpDir);
  if (problem) throw new Error(problem);
  const { sources, ignored, partial } = resolveSources(paths);
  // Before any work too: a missing prefix is a hole in the store that nothing would show.
  if (partial.length > 0 && !options.allowPartial)
    throw new Error(`${describePartialFolder(partial[0])}; download the rest, or import it as it is with --allow-partial`);
  // An import cut short (Ctrl-C) left its buckets in tmpDir, as large as the store: the store's
  // own folder is swept by fileTarget, tmpDir here.
  if (options.tmpDir !== undefined) removeStale(options.tmpDir, basename(options.out));
  const bucketDir = join(options.tmpDir ?? dirname(options.out), `.${basename(options.out)}.buckets-${process.pid}-${randomBytes(4).toString('hex')}`);
  const steps = importSteps({
    sources,
    ignored,
    partial,
    options,
    newSink: () => fileTarget(options.out),
    newBuckets: (count) => fileBuckets(count, bucketDir),
  });
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Why an import could not write its store to `out` or its bucket files to `tmpDir`, in one line,
 * or null: `out` is a folder (or not a file), the folder it goes in (or, when that is still to be
 * made, its parent: the data folder) does not exist or is not a folder this user may write, or
 * `tmpDir` is not an existing folder this user may write. Only the store's own folder is ever
 * created: a mistyped data folder or `tmpDir` would be made anywhere, and left behind.
 */
export function importTargetProblem(out: string, tmpDir?: string): string | null {
  const target = statOrNull(out);
  if (target?.isDirectory()) return `${out} is a folder: the store is a file (give its path, such as ${join(out, 'passwords.pwb')})`;
  if (target && !target.isFile()) return `${out} is not a regular file`;
  let folder = dirname(out);
  let stats = statOrNull(folder);
  if (stats === null) {
    folder = dirname(folder);
    stats = statOrNull(folder);
    if (stats === null) return `cannot write ${out}: the folder ${folder} does not exist`;
  }
  if (!stats.isDirectory()) return `cannot write ${out}: ${folder} is not a folder`;
  if (!mayCreateFilesIn(folder)) return `cannot write ${out}: this user may not create files in ${folder}`;
  if (tmpDir !== undefined) {
    const temp = statOrNull(tmpDir);
    if (temp === null) return `the temporary folder ${tmpDir} does not exist`;
    if (!temp.isDirectory()) return `the temporary folder ${tmpDir} is not a folder`;
    if (!mayCreateFilesIn(tmpDir)) return `this user may not create files in the temporary folder ${tmpDir}`;
  }
  return null;
}

/**
 * Build a store in memory from `HASH:COUNT` files (the bundled sample), synchronously. Throws
 * ImportRefused on a corrupt line.
 */
export function buildStoreInMemory(paths: readonly string[]): Buffer {
  const { sources, ignored, partial } = resolveSources(paths);
  let built = memorySink();
  const steps = importSteps({
    sources,
    ignored,
    partial,
    options: { out: '(memory)' },
    newSink: () => {
      built = memorySink();
      return { sink: built, commit: () => {}, abort: () => {} };
    },
    newBuckets: (count) => memoryBuckets(count),
  });
  for (let step = steps.next(); !step.done; step = steps.next());
  return built.bytes();
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
