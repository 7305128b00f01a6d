/**
 * Generated breach data for tests and benches: distinct uniform random hashes in ascending
 * order, with counts, produced one prefix at a time (so even tens of millions take little
 * memory), written as a `HASH:COUNT` file or straight into a store. Deterministic per seed.
 * Not part of the published package.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { HASH_BYTES as HASH_LENGTH, PREFIX_COUNT as PREFIXES } from './hash.js';
import { StoreWriter, type StoreSink } from './store.js';

// Local copies for the hot loops (see import.ts).
const HASH_BYTES = HASH_LENGTH;
const PREFIX_COUNT = PREFIXES;

/** mulberry32: 32 random bits per call. */
function random32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export interface GenerateOptions {
  /** Hashes to make (about; each prefix gets its share, rounded at random). */
  records: number;
  seed?: number;
  /** Only prefixes below this (a slice of the prefix space at the density of `records` over all of it). @default 2^20 */
  prefixLimit?: number;
}

/**
 * Call `emit(hash, count)` for each hash in ascending order (the hash array is reused). Counts
 * are 1 to about 1,000, skewed low.
 */
export function generateHashes(options: GenerateOptions, emit: (hash: Uint8Array, count: number) => void): number {
  const next = random32(options.seed ?? 1);
  const perPrefix = options.records / PREFIX_COUNT;
  const base = Math.floor(perPrefix);
  const extra = perPrefix - base;
  const limit = options.prefixLimit ?? PREFIX_COUNT;
  const hash = new Uint8Array(HASH_BYTES);
  let made = 0;
  let tops = new Uint32Array(64);
  for (let prefix = 0; prefix < limit; prefix++) {
    const n = base + (next() / 2 ** 32 < extra ? 1 : 0);
    if (n === 0) continue;
    if (tops.length < n) tops = new Uint32Array(n * 2);
    // The 28 bits after the prefix, distinct and sorted; the other 112 bits at random.
    for (let i = 0; i < n; i++) tops[i] = next() >>> 4;
    const sorted = n > 16 ? tops.subarray(0, n).sort() : insertionSort(tops, n);
    for (let i = 1; i < n; i++) if (sorted[i] <= sorted[i - 1]) sorted[i] = sorted[i - 1] + 1;
    hash[0] = prefix >>> 12;
    hash[1] = (prefix >>> 4) & 0xff;
    for (let i = 0; i < n; i++) {
      const top = sorted[i];
      if (top >= 2 ** 28) break; // bumped past the end of the range: rare, dropped
      hash[2] = ((prefix & 0x0f) << 4) | (top >>> 24);
      hash[3] = (top >>> 16) & 0xff;
      hash[4] = (top >>> 8) & 0xff;
      hash[5] = top & 0xff;
      for (let b = 6; b < HASH_BYTES; b += 4) {
        const r = next();
        hash[b] = r >>> 24;
        hash[b + 1] = (r >>> 16) & 0xff;
        if (b + 2 < HASH_BYTES) hash[b + 2] = (r >>> 8) & 0xff;
        if (b + 3 < HASH_BYTES) hash[b + 3] = r & 0xff;
      }
      const r = next();
      emit(hash, 1 + Math.floor(((r & 0xffff) / 0x10000) ** 3 * 1000));
      made++;
    }
  }
  return made;
}

/** Sort the first `n` values in place (small ranges: cheaper than a subarray and a native sort). */
function insertionSort(values: Uint32Array, n: number): Uint32Array {
  for (let i = 1; i < n; i++) {
    const value = values[i];
    let j = i - 1;
    while (j >= 0 && values[j] > value) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = value;
  }
  return values;
}

const HEX = Buffer.from('0123456789ABCDEF');

/**
 * Write generated hashes as `HASH:COUNT` lines (LF, or CRLF) to `path`. Returns how many, and
 * every `sampleEvery`-th hash with its count, for lookups.
 */
export function writeHashFile(
  path: string,
  options: GenerateOptions & { crlf?: boolean; sampleEvery?: number },
): { records: number; samples: { hash: Buffer; count: number }[] } {
  const fd = openSync(path, 'w');
  const chunk = Buffer.allocUnsafe(4 * 1024 * 1024);
  let used = 0;
  const samples: { hash: Buffer; count: number }[] = [];
  const every = options.sampleEvery ?? 1000;
  let i = 0;
  try {
    const records = generateHashes(options, (hash, count) => {
      if (used > chunk.length - 64) {
        writeSync(fd, chunk, 0, used);
        used = 0;
      }
      for (let b = 0; b < HASH_BYTES; b++) {
        chunk[used++] = HEX[hash[b] >>> 4];
        chunk[used++] = HEX[hash[b] & 0x0f];
      }
      chunk[used++] = 0x3a;
      // The count's decimal digits (1 to 1,000), written by hand: String() per line cost more than the rest.
      if (count >= 1000) chunk[used++] = 0x30 + Math.floor(count / 1000);
      if (count >= 100) chunk[used++] = 0x30 + (Math.floor(count / 100) % 10);
      if (count >= 10) chunk[used++] = 0x30 + (Math.floor(count / 10) % 10);
      chunk[used++] = 0x30 + (count % 10);
      if (options.crlf) chunk[used++] = 13;
      chunk[used++] = 10;
      if (i++ % every === 0) samples.push({ hash: Buffer.from(hash), count });
    });
    writeSync(fd, chunk, 0, used);
    return { records, samples };
  } finally {
    closeSync(fd);
  }
}

/** Write generated hashes straight into a store file (no text, no import). */
export function writeStoreFile(
  path: string,
  options: GenerateOptions & { sampleEvery?: number },
): { records: number; samples: { hash: Buffer; count: number }[] } {
  const fd = openSync(path, 'w');
  const sink: StoreSink = {
    write(data, length, position) {
      let done = 0;
      while (done < length) done += writeSync(fd, data, done, length - done, position + done);
    },
  };
  const writer = new StoreWriter(sink);
  const samples: { hash: Buffer; count: number }[] = [];
  const every = options.sampleEvery ?? 1000;
  let i = 0;
  try {
    const records = generateHashes(options, (hash, count) => {
      writer.add(hash, 0, count);
      if (i++ % every === 0) samples.push({ hash: Buffer.from(hash), count });
    });
    writer.finish();
    return { records, samples };
  } finally {
    closeSync(fd);
  }
}
