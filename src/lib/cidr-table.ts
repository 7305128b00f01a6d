import type ipaddr from 'ipaddr.js';
import { parseCidr, parseIp, parseIPv4Number, type IpAddress } from './ip.js';

/**
 * A compiled lookup structure for a large set of CIDRs, each carrying a value.
 *
 * At build time the CIDRs are cut into sorted, non-overlapping intervals, each holding the
 * (deduplicated, entry-ordered) values of every CIDR that covers it. A lookup is one binary
 * search over plain typed arrays: O(log n), no allocation, no BigInt, never a scan over the
 * CIDRs. Building is O(n log n) plus the size of the overlaps, on plain numbers for IPv4 and
 * on BigInt for IPv6.
 */
export interface CidrTable<T> {
  /**
   * Values of every CIDR that contains `addr`, in entry order, each value once (compared
   * with `===`). IPv4-mapped IPv6 addresses match as their IPv4 address, like `parseIp`.
   * The returned array is shared and frozen: copy it before changing it.
   */
  match(addr: IpAddress): readonly T[];
  /** The same for an IPv4 address given as an unsigned 32-bit integer (`a*2^24 + b*2^16 + ...`). */
  matchIPv4(value: number): readonly T[];
  /** Number of entries the table was built from. */
  readonly size: number;
}

export interface CidrTableEntry<T> {
  /** `a.b.c.d/n`, `x::/n` or a bare address. Host bits are ignored (the network is used). */
  cidr: string;
  value: T;
}

const EMPTY: readonly never[] = Object.freeze([]);

/**
 * A table in plain arrays, as {@link compileCidrTable} builds it: what a cache file keeps, so a
 * later start skips the build ({@link cidrTableFrom}).
 */
export interface CompiledCidrTable<T> {
  /** Number of entries the table was built from. */
  size: number;
  /** Each distinct answer once (answers[0] is the empty one); the segments hold indexes into it. */
  answers: (readonly T[])[];
  /** IPv4 segment starts, ascending from 0, and each segment's answer. */
  starts4: Float64Array;
  answers4: Uint32Array;
  /** IPv6 segment starts as four 32-bit words each, most significant first, and each segment's answer. */
  starts6: Float64Array;
  answers6: Uint32Array;
}

/**
 * Compile `entries` into a {@link CidrTable}. Throws a TypeError naming the bad CIDR.
 *
 * @example
 * const table = createCidrTable([{ cidr: '140.82.112.0/20', value: 'github' }]);
 * table.match(parseIp('140.82.112.5')!); // ['github']
 */
export function createCidrTable<T>(entries: readonly CidrTableEntry<T>[]): CidrTable<T> {
  return cidrTableFrom(compileCidrTable(entries));
}

/** The build step of {@link createCidrTable}, stopping at plain arrays. */
export function compileCidrTable<T>(entries: readonly CidrTableEntry<T>[]): CompiledCidrTable<T> {
  // Each family's CIDRs in entry order, so an interval's index orders it like its entry.
  const v4: Intervals<number, T> = { start: [], end: [], value: [] };
  const v6: Intervals<bigint, T> = { start: [], end: [], value: [] };
  entries.forEach((entry) => {
    const [addr, bits] = parseCidrQuickly(entry.cidr) ?? numericCidr(parseCidr(entry.cidr));
    if (typeof addr === 'number') {
      const size = 2 ** (32 - bits);
      const start = addr - (addr % size); // drop host bits
      push(v4, start, start + size, entry.value);
    } else {
      const hostBits = BigInt(128 - bits);
      const start = (addr >> hostBits) << hostBits;
      push(v6, start, start + (1n << hostBits), entry.value);
    }
  });
  // One palette for both families, IPv4 first: answers are numbered in the order they first appear.
  const answers = new AnswerPalette<T>();

  const table4 = toSegments(v4, IPV4_SPACE, answers);
  const starts4 = new Float64Array(table4.starts);
  const answers4 = Uint32Array.from(table4.answers);

  const table6 = toSegments(v6, IPV6_SPACE, answers);
  const starts6 = new Float64Array(table6.starts.length * 4);
  table6.starts.forEach((start, i) => {
    for (let w = 0; w < 4; w++) starts6[i * 4 + w] = Number((start >> BigInt(96 - 32 * w)) & 0xffffffffn);
  });
  const answers6 = Uint32Array.from(table6.answers);
  return { size: entries.length, answers: answers.list, starts4, answers4, starts6, answers6 };
}

/** A table from its compiled arrays (which it keeps: do not change them afterwards). */
export function cidrTableFrom<T>(compiled: CompiledCidrTable<T>): CidrTable<T> {
  const { answers, starts4, answers4, starts6, answers6 } = compiled;
  if (starts4.length === 0 || starts4.length !== answers4.length || starts6.length !== answers6.length * 4 || answers6.length === 0) {
    throw new TypeError('cidr table: the compiled arrays do not match');
  }
  for (const list of [answers4, answers6]) for (const i of list) if (i >= answers.length) throw new TypeError('cidr table: an answer index is out of range');

  function matchIPv4(value: number): readonly T[] {
    // Last segment whose start <= value; segment 0 starts at 0, so one always exists.
    let lo = 0;
    let hi = starts4.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts4[mid] <= value) lo = mid;
      else hi = mid - 1;
    }
    return answers[answers4[lo]];
  }

  function matchIPv6(parts: number[]): readonly T[] {
    const w0 = parts[0] * 0x10000 + parts[1];
    const w1 = parts[2] * 0x10000 + parts[3];
    const w2 = parts[4] * 0x10000 + parts[5];
    const w3 = parts[6] * 0x10000 + parts[7];
    let lo = 0;
    let hi = answers6.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const k = mid * 4;
      // Lexicographic compare of the 128-bit start with the address: start <= address?
      const le =
        starts6[k] !== w0 ? starts6[k] < w0 : starts6[k + 1] !== w1 ? starts6[k + 1] < w1 : starts6[k + 2] !== w2 ? starts6[k + 2] < w2 : starts6[k + 3] <= w3;
      if (le) lo = mid;
      else hi = mid - 1;
    }
    return answers[answers6[lo]];
  }

  return {
    size: compiled.size,
    matchIPv4,
    match(addr) {
      if (addr.kind() === 'ipv4') {
        const o = (addr as ipaddr.IPv4).octets;
        return matchIPv4(o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3]);
      }
      const p = (addr as ipaddr.IPv6).parts;
      if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff) {
        return matchIPv4(p[6] * 0x10000 + p[7]);
      }
      return matchIPv6(p);
    },
  };
}

/** Distinct answers, each kept once: segments with the same values share one frozen array. */
class AnswerPalette<T> {
  readonly list: (readonly T[])[] = [EMPTY];
  // A trie of the answers by their values, one level a value (a Map, so keys compare like
  // SameValueZero): finding an answer allocates nothing, which matters at one lookup a segment.
  #root: PaletteNode<T> = { index: 0, next: null };

  /** The index of an answer with these values (`values` itself is not kept). */
  indexOf(values: readonly T[]): number {
    let node = this.#root;
    for (const value of values) {
      node.next ??= new Map();
      let child = node.next.get(value);
      if (child === undefined) node.next.set(value, (child = { index: -1, next: null }));
      node = child;
    }
    if (node.index < 0) {
      node.index = this.list.length;
      this.list.push(Object.freeze(values.slice())); // a copy: the caller reuses its array
    }
    return node.index;
  }
}

interface PaletteNode<T> {
  /** The answer whose values lead here, or -1. */
  index: number;
  next: Map<T, PaletteNode<T>> | null;
}

// --- parsing -----------------------------------------------------------------------------

/** A CIDR's address (IPv4 as a number below 2^32, IPv6 as a bigint below 2^128) and prefix length. */
type NumericCidr = [number, number] | [bigint, number];

/**
 * The common CIDR forms read without ipaddr.js: `a.b.c.d/n`, a bare `a.b.c.d`, and plain
 * colon-hex `x:y::/n`. Returns null for any other text (IPv4-mapped, dotted IPv6 tails, zone
 * ids, whitespace, leading zeros, garbage), which then goes to parseCidr. What it takes,
 * parseCidr reads the same way; the point is speed: ipaddr.js costs several microseconds a
 * CIDR, more than the rest of the build.
 */
function parseCidrQuickly(text: string): NumericCidr | null {
  if (typeof text !== 'string') return null; // parseCidr says what is wrong
  const slash = text.indexOf('/');
  if (slash < 0) {
    const addr = parseIPv4Number(text);
    return addr < 0 ? null : [addr, 32];
  }
  const bits = parsePrefixLength(text, slash + 1);
  if (bits < 0) return null;
  const addrText = text.slice(0, slash);
  const v4 = parseIPv4Number(addrText);
  if (v4 >= 0) return bits <= 32 ? [v4, bits] : null;
  // Without a dot, parseIp reads only strict colon-hex, by the groups ipaddr.js reads too.
  // It unwraps IPv4-mapped addresses, whose prefix parseCidr rewrites: left to parseCidr.
  if (addrText.includes('.')) return null;
  const addr = parseIp(addrText);
  return addr?.kind() === 'ipv6' ? [bigIntOf(addr as ipaddr.IPv6), bits] : null;
}

/** The digits from `from` to the end as a prefix length 0-128 (`0`, `24`, `128`; not `024`), or -1. */
function parsePrefixLength(text: string, from: number): number {
  const length = text.length - from;
  if (length < 1 || length > 3 || (length > 1 && text[from] === '0')) return -1;
  let bits = 0;
  for (let i = from; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    bits = bits * 10 + digit;
  }
  return bits <= 128 ? bits : -1;
}

/** A parseCidr result as numbers: IPv4 (also IPv4-mapped CIDRs, which parseCidr unwraps) as a number. */
function numericCidr([addr, bits]: [IpAddress, number]): NumericCidr {
  if (addr.kind() === 'ipv4') {
    const o = (addr as ipaddr.IPv4).octets;
    return [o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3], bits];
  }
  return [bigIntOf(addr as ipaddr.IPv6), bits];
}

/** The address as a 128-bit integer, built from four 32-bit words (fewer BigInt steps than eight groups). */
function bigIntOf({ parts: p }: ipaddr.IPv6): bigint {
  const word = (i: number) => BigInt(p[i] * 0x10000 + p[i + 1]);
  return (word(0) << 96n) | (word(2) << 64n) | (word(4) << 32n) | word(6);
}

// --- sweeping ----------------------------------------------------------------------------

/**
 * One family's CIDRs as half-open intervals [start, end), as parallel arrays in entry order:
 * interval i's index orders it like its entry. Points are numbers for IPv4 (exact below 2^53,
 * and far cheaper than BigInt) and bigints for IPv6.
 */
interface Intervals<P extends number | bigint, T> {
  start: P[];
  end: P[];
  value: T[];
}

function push<P extends number | bigint, T>(intervals: Intervals<P, T>, start: P, end: P, value: T): void {
  intervals.start.push(start);
  intervals.end.push(end);
  intervals.value.push(value);
}

/**
 * An address space: its first address, its end (an interval reaching it never closes), and how
 * to order points in it.
 */
interface AddressSpace<P extends number | bigint> {
  zero: P;
  limit: P;
  /** Indexes into `points`, ordered by point (ties in index order). */
  order(points: readonly P[]): ArrayLike<number>;
}

const IPV4_SPACE: AddressSpace<number> = { zero: 0, limit: 2 ** 32, order: orderByUint32 };
// A comparator sort, not a Map keyed by BigInt: V8 hashes wide BigInts into few buckets, which
// made building 10,000 IPv6 CIDRs take seconds.
const IPV6_SPACE: AddressSpace<bigint> = {
  zero: 0n,
  limit: 1n << 128n,
  order: (points) => indexes(points.length).sort((a, b) => (points[a] < points[b] ? -1 : points[a] > points[b] ? 1 : 0)),
};

/** Where each segment starts, and its answer (an index into the palette). */
interface Segments<P> {
  starts: P[];
  answers: number[];
}

/**
 * Sweep the intervals into segments that tile the whole address space from 0: `starts[k]`
 * begins segment k, which lasts until `starts[k + 1]` and answers `answers[k]` (an index into
 * `palette`). Neighbouring segments with the same values are merged, so the arrays only grow
 * where the answer changes.
 */
function toSegments<P extends number | bigint, T>(intervals: Intervals<P, T>, space: AddressSpace<P>, palette: AnswerPalette<T>): Segments<P> {
  // Events: interval i opens at its start (who = i) and closes at its end (who = ~i), unless
  // it reaches the end of the space.
  const points: P[] = [];
  const who: number[] = [];
  intervals.start.forEach((start, i) => {
    points.push(start);
    who.push(i);
    if (intervals.end[i] < space.limit) {
      points.push(intervals.end[i]);
      who.push(~i);
    }
  });
  const order = space.order(points);

  const starts: P[] = [space.zero];
  const answers: number[] = [0];
  let last: readonly T[] = EMPTY;
  const active: number[] = []; // indexes of the intervals covering the current point, ascending
  const here: T[] = []; // their values, reused from point to point
  for (let k = 0; k < order.length; ) {
    const point = points[order[k]];
    for (; k < order.length && points[order[k]] === point; k++) {
      const i = who[order[k]];
      if (i >= 0) insertSorted(active, i);
      else removeSorted(active, ~i);
    }
    valuesOf(active, intervals.value, here);
    if (sameValues(here, last)) continue;
    const answer = palette.indexOf(here);
    // The palette's copy holds the same values as `here` to `===`: the palette tells values
    // apart by SameValueZero, which differs from `===` only at NaN, never `===` to anything.
    last = palette.list[answer];
    if (point === space.zero)
      answers[0] = answer; // a CIDR starting at 0 replaces the empty first segment
    else {
      starts.push(point);
      answers.push(answer);
    }
  }
  return { starts, answers };
}

function indexes(count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(i);
  return out;
}

/** How many keys {@link orderByUint32} packs with their index: 2^21 indexes and 2^32 keys fit in 53 bits. */
const PACKED = 2 ** 21;

/**
 * Indexes into `keys` (each below 2^32) ordered by key, ties in index order. Each key is packed
 * with its index into one float64 (exact below 2^53) so that the native typed-array sort does
 * the work: several times faster than a sort with a comparator, which is kept for more keys.
 */
function orderByUint32(keys: readonly number[]): ArrayLike<number> {
  const count = keys.length;
  if (count > PACKED) return indexes(count).sort((a, b) => keys[a] - keys[b]);
  const packed = new Float64Array(count);
  for (let i = 0; i < count; i++) packed[i] = keys[i] * PACKED + i;
  packed.sort();
  // Unpacked in a loop (Uint32Array.from with a map function is several times slower).
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = packed[i] - Math.floor(packed[i] / PACKED) * PACKED;
  return order;
}

/** Insert into an ascending array; mostly an append, as intervals opening together come in index order. */
function insertSorted(list: number[], item: number): void {
  let i = list.length;
  list.push(item);
  for (; i > 0 && list[i - 1] > item; i--) list[i] = list[i - 1];
  list[i] = item;
}

/** Remove an item (which is there), keeping the order. */
function removeSorted(list: number[], item: number): void {
  let i = list.lastIndexOf(item);
  for (; i < list.length - 1; i++) list[i] = list[i + 1];
  list.pop();
}

/** Into `out`: the values of the intervals in `active`, in entry order, each once. */
function valuesOf<T>(active: readonly number[], value: readonly T[], out: T[]): void {
  out.length = 0;
  for (const i of active) if (!out.includes(value[i])) out.push(value[i]);
}

function sameValues<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
