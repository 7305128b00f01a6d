/**
 * The CSV data (ip-location-db's asn format) compiled once into a compact index of sorted typed
 * arrays, searched by binary search, and cached on disk so later starts load it in tens of
 * milliseconds instead of parsing half a million CSV rows.
 *
 * CSV: `start,end,asn,org` per line, no header, inclusive ranges of IPv4 or IPv6 addresses in
 * text form (the `-num` variants are refused with a message), the name quoted when it holds a
 * comma or a quote (`"LLC ""SPUTNIK"""`). IPv4 and IPv6 rows may share a file. Rows with a
 * reserved AS (0, private, documentation: reserved.ts) are left out. Rows are sorted if needed, and overlapping ranges are
 * cut so that the later-starting one wins (see paintRanges).
 *
 * The index file (`seclookup-asn-v<format>-<hash of the source paths>.idx`, written and checked
 * by lib/compiled-file.ts, beside the CSV files or in `indexDir`): its stamp is the package name
 * and version and each source file's path, size and mtime; its sections are the IPv4 starts,
 * ends, ASNs and name numbers (Uint32 each), the IPv6 starts and ends (four Uint32 words each,
 * most significant first), ASNs and name numbers, then the names as one JSON array (entry 0 is
 * null: no name).
 */
import { createHash } from 'node:crypto';
import { isReservedAsn } from './reserved.js';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type ipaddr from 'ipaddr.js';
import { SeclookupError } from '../../errors.js';
import { fileStamp, loadOrCompile, uint32Section, type CompiledFileContents } from '../../lib/compiled-file.js';
import { realPathOrResolved } from '../../lib/file-access.js';
import { parseIp, parseIPv4Number } from '../../lib/ip.js';
import { partsToWords, wordsToBigInt } from './network.js';
import type { AsnIndexInfo } from './types.js';

/** Bumped whenever the layout or the meaning of the index changes. */
/** 3: rows with a reserved AS left out (2 dropped AS 0 only): an index of format 2 is compiled again. */
export const INDEX_FORMAT = 3;
const KIND = { magic: 'SLASNIDX', format: INDEX_FORMAT };
const STALE = 'the source data changed (package version, or a file size or mtime)';

/** The compiled data: typed arrays over sorted, non-overlapping ranges. */
export interface AsnIndexData {
  v4: { starts: Uint32Array; ends: Uint32Array; asns: Uint32Array; orgs: Uint32Array };
  /** starts and ends hold four words per range. */
  v6: { starts: Uint32Array; ends: Uint32Array; asns: Uint32Array; orgs: Uint32Array };
  /** Organization names by number; entry 0 is null (no name). */
  orgNames: (string | null)[];
}

/** What identifies the data an index was built from. */
export interface AsnIndexStamp {
  /** `name@version` of the npm package the files come from, else null. */
  package: string | null;
  sources: { path: string; size: number; mtimeMs: number }[];
}

export interface LoadIndexOptions {
  files: readonly string[];
  /** `name@version` when the files come from an npm package. */
  packageId: string | null;
  indexDir?: string;
  /** The last-resort folder. @default `<os.tmpdir()>/seclookup-<uid>` */
  fallbackDir?: string;
}

/** Load the index of `files` from a valid cache file, or compile it and cache it. */
export function loadAsnIndex(options: LoadIndexOptions): { data: AsnIndexData; info: AsnIndexInfo } {
  const files = options.files.map(realPathOrResolved); // one index per file, whatever symlinks lead to it
  return loadOrCompile({
    kind: KIND,
    // The format is in the name too, so two seclookup versions side by side do not overwrite each other's file.
    name: `seclookup-asn-v${INDEX_FORMAT}-${createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 16)}.idx`,
    dir: options.indexDir ? resolve(options.indexDir) : dirname(files[0]),
    fallbackDir: options.fallbackDir,
    stamp: stampOf(files, options.packageId),
    staleReason: STALE,
    compile: () => compileAsnCsv(files),
    encode: encodeIndex,
    decode: decodeIndex,
  });
}

/** The stamp of the sources now: sizes and mtimes read from the files. */
export function stampOf(files: readonly string[], packageId: string | null): AsnIndexStamp {
  return {
    package: packageId,
    sources: files.map((path) => {
      try {
        return fileStamp(path);
      } catch (error) {
        throw new SeclookupError('dataset_missing', `seclookup: asn: cannot read ${path}: ${(error as Error).message}`, { cause: error });
      }
    }),
  };
}

function encodeIndex(data: AsnIndexData) {
  const names = Buffer.from(JSON.stringify(data.orgNames), 'utf8');
  return {
    meta: { v4: data.v4.asns.length, v6: data.v6.asns.length },
    sections: [data.v4.starts, data.v4.ends, data.v4.asns, data.v4.orgs, data.v6.starts, data.v6.ends, data.v6.asns, data.v6.orgs, names],
  };
}

function decodeIndex({ meta, sections }: CompiledFileContents): AsnIndexData | string {
  const { v4, v6 } = (meta ?? {}) as { v4?: number; v6?: number };
  if (!Number.isSafeInteger(v4) || !Number.isSafeInteger(v6) || sections.length !== 9) return 'corrupt header (counts)';
  const words = sections.slice(0, 8).map(uint32Section);
  const expected = [v4!, v4!, v4!, v4!, 4 * v6!, 4 * v6!, v6!, v6!];
  if (words.some((w, i) => w.length !== expected[i])) return 'corrupt header (counts)';
  let orgNames: (string | null)[];
  try {
    orgNames = JSON.parse(sections[8].toString('utf8')) as (string | null)[];
  } catch {
    return 'corrupt organization names';
  }
  if (!Array.isArray(orgNames) || orgNames[0] !== null) return 'corrupt organization names';
  return {
    v4: { starts: words[0], ends: words[1], asns: words[2], orgs: words[3] },
    v6: { starts: words[4], ends: words[5], asns: words[6], orgs: words[7] },
    orgNames,
  };
}

// --- compiling the CSV --------------------------------------------------------------------------

interface Builder {
  /** IPv4: start, end as numbers; IPv6: 4 words each. */
  starts: number[];
  ends: number[];
  asns: number[];
  orgs: number[];
}

/** Parse and compile CSV files into the index. Throws `dataset_missing` / `dataset_invalid` naming the file and line. */
export function compileAsnCsv(files: readonly string[]): AsnIndexData {
  const v4: Builder = { starts: [], ends: [], asns: [], orgs: [] };
  const v6: Builder = { starts: [], ends: [], asns: [], orgs: [] };
  const orgNames: (string | null)[] = [null];
  const orgNumbers = new Map<string, number>();
  // Most ASes have one name: try the AS's last name before hashing the text.
  const lastByAsn = new Map<number, number>();
  const orgNumber = (name: string, asn: number): number => {
    if (name === '') return 0;
    const last = lastByAsn.get(asn);
    if (last !== undefined && orgNames[last] === name) return last;
    let n = orgNumbers.get(name);
    if (n === undefined) {
      n = orgNames.length;
      orgNames.push(name);
      orgNumbers.set(name, n);
    }
    lastByAsn.set(asn, n);
    return n;
  };
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new SeclookupError('dataset_missing', `seclookup: asn: cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
    parseCsv(text, file, v4, v6, orgNumber);
  }
  return { v4: finishV4(v4), v6: finishV6(v6), orgNames };
}

function invalid(file: string, line: number, what: string): SeclookupError {
  return new SeclookupError('dataset_invalid', `seclookup: asn: ${file}:${line}: ${what}`);
}

function parseCsv(text: string, file: string, v4: Builder, v6: Builder, orgNumber: (name: string, asn: number) => number): void {
  let position = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let lineNumber = 0;
  while (position < text.length) {
    let stop = text.indexOf('\n', position);
    if (stop < 0) stop = text.length;
    const lineStart = position;
    const lineEnd = stop > lineStart && text.charCodeAt(stop - 1) === 13 /* \r */ ? stop - 1 : stop;
    position = stop + 1;
    lineNumber++;
    if (lineEnd === lineStart) continue;
    // start, end and asn never need quotes; the name may be quoted.
    const c1 = text.indexOf(',', lineStart);
    const c2 = c1 < 0 || c1 >= lineEnd ? -1 : text.indexOf(',', c1 + 1);
    const c3 = c2 < 0 || c2 >= lineEnd ? -1 : text.indexOf(',', c2 + 1);
    if (c3 < 0 || c3 >= lineEnd) throw invalid(file, lineNumber, 'expected 4 fields (start,end,asn,org)');
    const startText = text.slice(lineStart, c1);
    const endText = text.slice(c1 + 1, c2);
    const asn = parseAsn(text, c2 + 1, c3);
    if (asn < 0) throw invalid(file, lineNumber, `bad AS number ${JSON.stringify(text.slice(c2 + 1, c3))}`);
    const org = readName(text, c3 + 1, lineEnd);
    if (org === null) throw invalid(file, lineNumber, 'bad organization name: expected 4 fields (start,end,asn,org), a quoted name ending on its line');

    const start4 = parseIPv4Number(startText);
    const end4 = start4 >= 0 ? parseIPv4Number(endText) : -1;
    if (start4 >= 0 && end4 >= 0) {
      if (end4 < start4) throw invalid(file, lineNumber, `range ends before it starts (${startText} > ${endText})`);
      if (isReservedAsn(asn)) continue;
      v4.starts.push(start4);
      v4.ends.push(end4);
      v4.asns.push(asn);
      v4.orgs.push(orgNumber(org, asn));
      continue;
    }
    if (/^\d+$/.test(startText))
      throw invalid(
        file,
        lineNumber,
        'numeric addresses (the -num files) are not supported: use the files with addresses in text form (asn-ipv4.csv, asn-ipv6.csv)',
      );
    const start = parseIp(startText);
    const end = parseIp(endText);
    if (!start || !end) throw invalid(file, lineNumber, `not an IP address range: ${JSON.stringify(`${startText},${endText}`)}`);
    if (start.kind() !== end.kind()) throw invalid(file, lineNumber, `range mixes IPv4 and IPv6 (${startText}, ${endText})`);
    if (isReservedAsn(asn)) continue;
    if (start.kind() === 'ipv4') {
      // IPv4-mapped IPv6 text: the IPv4 addresses it carries.
      const s = parseIPv4Number(start.toString());
      const e = parseIPv4Number(end.toString());
      if (e < s) throw invalid(file, lineNumber, `range ends before it starts (${startText} > ${endText})`);
      v4.starts.push(s);
      v4.ends.push(e);
      v4.asns.push(asn);
      v4.orgs.push(orgNumber(org, asn));
      continue;
    }
    const s = partsToWords((start as ipaddr.IPv6).parts);
    const e = partsToWords((end as ipaddr.IPv6).parts);
    if (compareWords(e, 0, s, 0) < 0) throw invalid(file, lineNumber, `range ends before it starts (${startText} > ${endText})`);
    v6.starts.push(s[0], s[1], s[2], s[3]);
    v6.ends.push(e[0], e[1], e[2], e[3]);
    v6.asns.push(asn);
    v6.orgs.push(orgNumber(org, asn));
  }
}

/** Decimal digits from..to as an AS number (1 to 10 digits, at most 2^32 - 1), or -1. */
function parseAsn(text: string, from: number, to: number): number {
  if (to <= from || to - from > 10) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value > 0xffffffff ? -1 : value;
}

/**
 * The last field, from..to (the end of the line): unquoted text without quotes or commas, or a
 * quoted one (RFC 4180: `"a, b"`, `""` for a quote) that ends exactly at the end of the line.
 * Null when malformed.
 */
export function readName(text: string, from: number, to: number): string | null {
  if (text.charCodeAt(from) !== 34 /* " */) {
    const name = text.slice(from, to);
    return name.includes('"') || name.includes(',') ? null : name;
  }
  let value = '';
  let at = from + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0 || quote >= to) return null;
    value += text.slice(at, quote);
    if (quote + 1 < to && text.charCodeAt(quote + 1) === 34) {
      value += '"';
      at = quote + 2;
      continue;
    }
    return quote + 1 === to ? value : null;
  }
}

/** Compare 4-word addresses a[i..i+3] and b[j..j+3]. */
function compareWords(a: ArrayLike<number>, i: number, b: ArrayLike<number>, j: number): number {
  for (let w = 0; w < 4; w++) {
    const d = a[i + w] - b[j + w];
    if (d !== 0) return d;
  }
  return 0;
}

function finishV4(rows: Builder): AsnIndexData['v4'] {
  const { starts, ends } = rows;
  const out: Builder = { starts: [], ends: [], asns: [], orgs: [] };
  resolveOverlaps(
    sortRows(rows, (a, b) => starts[a] - starts[b] || ends[b] - ends[a]),
    {
      startAfterEnd: (j, k) => starts[j] > ends[k],
      endAfter: (j, k) => ends[j] > ends[k],
      range: (i) => ({ start: starts[i], end: ends[i], row: i }),
      push: (row, segment) => {
        out.starts.push(segment ? segment.start : starts[row]);
        out.ends.push(segment ? segment.end : ends[row]);
        out.asns.push(rows.asns[row]);
        out.orgs.push(rows.orgs[row]);
      },
      one: 1,
    },
  );
  return { starts: Uint32Array.from(out.starts), ends: Uint32Array.from(out.ends), asns: Uint32Array.from(out.asns), orgs: Uint32Array.from(out.orgs) };
}

function finishV6(rows: Builder): AsnIndexData['v6'] {
  const { starts, ends } = rows;
  const out: Builder = { starts: [], ends: [], asns: [], orgs: [] };
  const big = (words: number[], i: number) => wordsToBigInt(words[4 * i], words[4 * i + 1], words[4 * i + 2], words[4 * i + 3]);
  resolveOverlaps(
    sortRows(rows, (a, b) => compareWords(starts, 4 * a, starts, 4 * b) || compareWords(ends, 4 * b, ends, 4 * a)),
    {
      startAfterEnd: (j, k) => compareWords(starts, 4 * j, ends, 4 * k) > 0,
      endAfter: (j, k) => compareWords(ends, 4 * j, ends, 4 * k) > 0,
      range: (i) => ({ start: big(starts, i), end: big(ends, i), row: i }),
      push: (row, segment) => {
        if (segment) {
          out.starts.push(...bigIntToWords(segment.start));
          out.ends.push(...bigIntToWords(segment.end));
        } else {
          for (let w = 0; w < 4; w++) {
            out.starts.push(starts[4 * row + w]);
            out.ends.push(ends[4 * row + w]);
          }
        }
        out.asns.push(rows.asns[row]);
        out.orgs.push(rows.orgs[row]);
      },
      one: 1n,
    },
  );
  return { starts: Uint32Array.from(out.starts), ends: Uint32Array.from(out.ends), asns: Uint32Array.from(out.asns), orgs: Uint32Array.from(out.orgs) };
}

/**
 * The rows in order (by start, then longest first, then file order): the row numbers as they
 * are when already sorted (the usual case), else a sorted permutation.
 */
function sortRows(rows: Builder, compare: (a: number, b: number) => number): number[] {
  const n = rows.asns.length;
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = 1; i < n; i++) {
    if (compare(i - 1, i) > 0) return order.sort((a, b) => compare(a, b) || a - b);
  }
  return order;
}

interface OverlapOps<T extends number | bigint> {
  /** Row j starts after row k ends. */
  startAfterEnd(j: number, k: number): boolean;
  /** Row j ends after row k. */
  endAfter(j: number, k: number): boolean;
  range(row: number): RowRange<T>;
  /** Output a whole row, or a piece of it. */
  push(row: number, segment?: RowRange<T>): void;
  one: T;
}

/**
 * Walk the sorted rows and output them, cutting only where they overlap: a run of rows that
 * overlap one another (a cluster) goes through paintRanges, every other row is output as is.
 */
function resolveOverlaps<T extends number | bigint>(order: readonly number[], ops: OverlapOps<T>): void {
  let i = 0;
  while (i < order.length) {
    let j = i + 1;
    let widest = order[i]; // the row of the cluster that ends last
    while (j < order.length && !ops.startAfterEnd(order[j], widest)) {
      if (ops.endAfter(order[j], widest)) widest = order[j];
      j++;
    }
    if (j === i + 1) ops.push(order[i]);
    else
      for (const segment of paintRanges(
        order.slice(i, j).map((row) => ops.range(row)),
        ops.one,
      ))
        ops.push(segment.row, segment);
    i = j;
  }
}

function bigIntToWords(value: bigint): number[] {
  return [96n, 64n, 32n, 0n].map((shift) => Number((value >> shift) & 0xffffffffn));
}

/** An inclusive range of a source row: numbers for IPv4, bigints for IPv6. */
export interface RowRange<T extends number | bigint> {
  start: T;
  end: T;
  /** The row it came from (file order). */
  row: number;
}

/**
 * Sorted, non-overlapping segments from ranges that may overlap or come unsorted **(ours)**:
 * where ranges overlap, the one that starts later wins (it is the more specific assignment
 * inside the other); on equal starts the shorter wins, then the later row. The npm data has one
 * such overlap (214.95.0.0-215.0.255.255, AS749, and 215.0.0.0-215.1.3.255, AS721). Adjacent
 * pieces of one row stay separate segments. Property-tested against painting address by address.
 * `one` is 1 or 1n.
 */
export function paintRanges<T extends number | bigint>(ranges: readonly RowRange<T>[], one: T): RowRange<T>[] {
  const add = (value: T, delta: T) => ((value as number) + (delta as number)) as T;
  const sub = (value: T, delta: T) => ((value as number) - (delta as number)) as T;
  const order = (a: RowRange<T>, b: RowRange<T>) =>
    a.start !== b.start ? (a.start < b.start ? -1 : 1) : a.end !== b.end ? (a.end > b.end ? -1 : 1) : a.row - b.row;
  let sorted = ranges;
  for (let i = 1; i < ranges.length; i++) {
    if (order(ranges[i - 1], ranges[i]) > 0) {
      sorted = [...ranges].sort(order);
      break;
    }
  }
  const out: RowRange<T>[] = [];
  /** Open ranges, innermost last; `next` is the first address of each not yet given out. */
  const stack: { range: RowRange<T>; next: T }[] = [];
  const emit = (from: T, to: T, row: number) => {
    if (from <= to) out.push({ start: from, end: to, row });
  };
  const close = () => {
    const top = stack.pop()!;
    emit(top.next, top.range.end, top.range.row);
    // The first address neither it nor a range inside it gave out (an inner range may reach past it).
    const covered = top.next > top.range.end ? top.next : add(top.range.end, one);
    const below = stack[stack.length - 1];
    if (below && below.next < covered) below.next = covered;
  };
  for (const range of sorted) {
    while (stack.length > 0 && stack[stack.length - 1].range.end < range.start) close();
    const top = stack[stack.length - 1];
    if (top) {
      emit(top.next, sub(range.start, one), top.range.row);
      if (top.next < range.start) top.next = range.start;
    }
    stack.push({ range, next: range.start });
  }
  while (stack.length > 0) close();
  return out;
}
