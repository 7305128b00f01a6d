import type ipaddr from 'ipaddr.js';
import { parseCidr, type IpAddress } from './ip.js';

/**
 * A compiled lookup structure for a large set of CIDRs, each carrying a value.
 *
 * At build time the CIDRs are cut into sorted, non-overlapping intervals, each holding the
 * (deduplicated, entry-ordered) values of every CIDR that covers it. A lookup is one binary
 * search over plain typed arrays: O(log n), no allocation, no BigInt, never a scan over the
 * CIDRs. Building is O(n log n) plus the size of the overlaps and uses BigInt freely.
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
  const v4: Interval<T>[] = [];
  const v6: Interval<T>[] = [];
  entries.forEach((entry, order) => {
    const [addr, bits] = parseCidr(entry.cidr);
    const width = addr.kind() === 'ipv4' ? 32 : 128;
    const size = 1n << BigInt(width - bits);
    const start = (toBigInt(addr) / size) * size; // drop host bits
    (width === 32 ? v4 : v6).push({ start, end: start + size, order, value: entry.value });
  });
  const answers = new AnswerPalette<T>();

  const table4 = toSegments(v4, 32n);
  const starts4 = new Float64Array(table4.starts.map(Number));
  const answers4 = Uint32Array.from(table4.values, (values) => answers.indexOf(values));

  const table6 = toSegments(v6, 128n);
  const starts6 = new Float64Array(table6.starts.length * 4);
  table6.starts.forEach((start, i) => {
    for (let w = 0; w < 4; w++) starts6[i * 4 + w] = Number((start >> BigInt(96 - 32 * w)) & 0xffffffffn);
  });
  const answers6 = Uint32Array.from(table6.values, (values) => answers.indexOf(values));
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
  #byKey = new Map<string, number>([['', 0]]);
  #valueIds = new Map<T, number>();

  indexOf(values: readonly T[]): number {
    let key = '';
    for (const value of values) {
      let id = this.#valueIds.get(value);
      if (id === undefined) this.#valueIds.set(value, (id = this.#valueIds.size));
      key += `${id},`;
    }
    let index = this.#byKey.get(key);
    if (index === undefined) {
      this.#byKey.set(key, (index = this.list.length));
      this.list.push(values);
    }
    return index;
  }
}

/** A CIDR as the half-open integer interval [start, end). */
interface Interval<T> {
  start: bigint;
  end: bigint;
  order: number;
  value: T;
}

/**
 * Sweep the intervals into segments that tile the whole address space from 0: `starts[k]`
 * begins segment k, which lasts until `starts[k + 1]`. Neighbouring segments with the same
 * values are merged, so the arrays only grow where the answer changes.
 */
function toSegments<T>(intervals: Interval<T>[], width: bigint): { starts: bigint[]; values: (readonly T[])[] } {
  const limit = 1n << width;
  // Events sorted by point (an array, not a Map keyed by BigInt: V8 hashes wide BigInts into
  // few buckets, which made building 10,000 IPv6 CIDRs take seconds).
  const events: { point: bigint; open: boolean; interval: Interval<T> }[] = [];
  for (const interval of intervals) {
    events.push({ point: interval.start, open: true, interval });
    if (interval.end < limit) events.push({ point: interval.end, open: false, interval });
  }
  events.sort((a, b) => (a.point < b.point ? -1 : a.point > b.point ? 1 : 0));

  const starts: bigint[] = [0n];
  const values: (readonly T[])[] = [EMPTY];
  const active = new Set<Interval<T>>();
  for (let i = 0; i < events.length; ) {
    const point = events[i].point;
    let j = i;
    while (j < events.length && events[j].point === point) j++;
    for (let k = i; k < j; k++) if (!events[k].open) active.delete(events[k].interval);
    for (let k = i; k < j; k++) if (events[k].open) active.add(events[k].interval);
    i = j;
    const here = valuesOf(active);
    if (sameValues(here, values[values.length - 1])) continue;
    if (point === 0n)
      values[0] = here; // a CIDR starting at 0 replaces the empty first segment
    else {
      starts.push(point);
      values.push(here);
    }
  }
  return { starts, values };
}

/** The values of the covering intervals, in entry order, each once. */
function valuesOf<T>(active: Set<Interval<T>>): readonly T[] {
  if (active.size === 0) return EMPTY;
  const ordered = [...active].sort((a, b) => a.order - b.order);
  const out: T[] = [];
  for (const interval of ordered) if (!out.includes(interval.value)) out.push(interval.value);
  return Object.freeze(out);
}

function sameValues<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function toBigInt(addr: IpAddress): bigint {
  let out = 0n;
  for (const byte of addr.toByteArray()) out = (out << 8n) | BigInt(byte);
  return out;
}
