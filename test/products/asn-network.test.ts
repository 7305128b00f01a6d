/**
 * The arithmetic under the asn index, against brute-force references: the network of an address
 * inside a range (largest CIDR inside the range that holds the address), the painting of
 * overlapping ranges, and the CSV name field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paintRanges, readName, type RowRange } from '../../src/products/asn/csv-index.js';
import { formatIPv6BigInt, ipv4Network, ipv4PrefixInRange, ipv6Network, ipv6PrefixInRange } from '../../src/products/asn/network.js';
import { equal, same } from '../cheap-expect.js';

/**
 * Brute force: every prefix length, every aligned block of that size inside [start, end]
 * (enumerated block by block), keep the widest that holds the address.
 */
function bruteForcePrefix(start: bigint, end: bigint, value: bigint, width: number): number {
  for (let prefix = 0; prefix <= width; prefix++) {
    const size = 1n << BigInt(width - prefix);
    // Aligned blocks of this size that lie inside the range.
    const first = ((start + size - 1n) / size) * size;
    for (let block = first; block + size - 1n <= end; block += size) {
      if (block <= value && value <= block + size - 1n) return prefix;
    }
  }
  throw new Error('unreachable: the address alone is a block');
}

/** The classic range -> CIDR list (greedy from the start): another independent reference. */
function rangeToCidrs(start: bigint, end: bigint, width: number): [bigint, number][] {
  const out: [bigint, number][] = [];
  let at = start;
  while (at <= end) {
    let bits = 0;
    while (bits < width && at % (1n << BigInt(bits + 1)) === 0n && at + (1n << BigInt(bits + 1)) - 1n <= end) bits++;
    out.push([at, width - bits]);
    at += 1n << BigInt(bits);
  }
  return out;
}

const u32 = fc.integer({ min: 0, max: 0xffffffff });
/** A range of at most `span` addresses and an address inside it. */
const v4RangeWithin = (span: number) =>
  fc.tuple(u32, fc.integer({ min: 0, max: span - 1 }), fc.double({ min: 0, max: 1, noNaN: true })).map(([start, length, where]) => {
    const s = Math.min(start, 0xffffffff - length);
    const e = s + length;
    return { s, e, v: s + Math.floor(where * (length + 1 - 1e-9)) };
  });

describe('ipv4PrefixInRange: the largest CIDR inside the range that holds the address', () => {
  it('matches brute force on small ranges (every block enumerated)', () => {
    fc.assert(
      fc.property(v4RangeWithin(5000), ({ s, e, v }) => {
        same(ipv4PrefixInRange(s, e, v), bruteForcePrefix(BigInt(s), BigInt(e), BigInt(v), 32));
      }),
      { numRuns: 3000 },
    );
  });

  it('matches the greedy range -> CIDR decomposition on ranges of any size', () => {
    fc.assert(
      fc.property(u32, u32, fc.double({ min: 0, max: 1, noNaN: true }), (a, b, where) => {
        const [s, e] = a <= b ? [a, b] : [b, a];
        const v = s + Math.floor(where * (e - s));
        const cidr = rangeToCidrs(BigInt(s), BigInt(e), 32).find(([n, p]) => BigInt(v) >= n && BigInt(v) < n + (1n << BigInt(32 - p)))!;
        same(ipv4PrefixInRange(s, e, v), cidr[1]);
        same(ipv4Network(v, ipv4PrefixInRange(s, e, v)), `${[24, 16, 8, 0].map((k) => Number((cidr[0] >> BigInt(k)) & 255n)).join('.')}/${cidr[1]}`);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    // [start, end, address, network]
    ['1.0.4.0', '1.0.7.255', '1.0.5.9', '1.0.4.0/22'], // one CIDR
    ['1.0.128.0', '1.0.196.255', '1.0.128.5', '1.0.128.0/18'], // not one CIDR: the /18 at its start
    ['1.0.128.0', '1.0.196.255', '1.0.196.7', '1.0.196.0/24'], // ... and the /24 at its end
    ['1.0.128.0', '1.0.196.255', '1.0.193.1', '1.0.192.0/22'],
    ['10.0.0.1', '10.0.0.6', '10.0.0.1', '10.0.0.1/32'],
    ['10.0.0.1', '10.0.0.6', '10.0.0.3', '10.0.0.2/31'],
    ['0.0.0.0', '255.255.255.255', '8.8.8.8', '0.0.0.0/0'],
    ['0.0.0.0', '255.255.255.254', '8.8.8.8', '0.0.0.0/1'],
  ])('[%s, %s] holds %s in %s', (start, end, address, network) => {
    const n = (text: string) => text.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
    expect(ipv4Network(n(address), ipv4PrefixInRange(n(start), n(end), n(address)))).toBe(network);
  });
});

describe('ipv6PrefixInRange', () => {
  const u128 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
  it('matches brute force on small ranges, anywhere in the space', () => {
    fc.assert(
      fc.property(u128, fc.bigInt({ min: 0n, max: 3000n }), fc.bigInt({ min: 0n, max: 3000n }), (start, length, offset) => {
        const s = start > (1n << 128n) - 1n - length ? (1n << 128n) - 1n - length : start;
        const e = s + length;
        const v = s + (offset % (length + 1n));
        same(ipv6PrefixInRange(s, e, v), bruteForcePrefix(s, e, v, 128));
      }),
      { numRuns: 2000 },
    );
  });

  it('matches the greedy decomposition on wide ranges', () => {
    fc.assert(
      fc.property(u128, u128, u128, (a, b, where) => {
        const [s, e] = a <= b ? [a, b] : [b, a];
        const v = s + (where % (e - s + 1n));
        const cidr = rangeToCidrs(s, e, 128).find(([n, p]) => v >= n && v < n + (1n << BigInt(128 - p)))!;
        same(ipv6PrefixInRange(s, e, v), cidr[1]);
        same(ipv6Network(v, cidr[1]), `${formatIPv6BigInt(cidr[0])}/${cidr[1]}`);
      }),
      { numRuns: 500 },
    );
  });
});

describe('paintRanges: overlapping ranges, the later start wins', () => {
  /** The winner at each address: the range with the latest start, then the shortest, then the later row. */
  function paintByAddress(ranges: RowRange<number>[], universe: number): (number | null)[] {
    return Array.from({ length: universe }, (_, x) => {
      const holding = ranges.filter((r) => r.start <= x && x <= r.end);
      holding.sort((a, b) => b.start - a.start || a.end - b.end || b.row - a.row);
      return holding.length ? holding[0].row : null;
    });
  }

  const ranges = fc.array(
    fc.tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 63 })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const),
    { maxLength: 12 },
  );

  it('gives every address to the same row as painting address by address, in sorted non-overlapping segments', () => {
    fc.assert(
      fc.property(ranges, (pairs) => {
        const rows: RowRange<number>[] = pairs.map(([start, end], row) => ({ start, end, row }));
        const segments = paintRanges(rows, 1);
        for (let k = 1; k < segments.length; k++) {
          if (!(segments[k].start > segments[k - 1].end)) expect(segments[k].start).toBeGreaterThan(segments[k - 1].end);
        }
        const painted: (number | null)[] = Array.from({ length: 64 }, () => null);
        for (const segment of segments) for (let x = segment.start; x <= segment.end; x++) painted[x] = segment.row;
        equal(painted, paintByAddress(rows, 64));
      }),
      { numRuns: 3000 },
    );
  });

  it('works on bigints the same way', () => {
    const segments = paintRanges(
      [
        { start: 10n, end: 20n, row: 0 },
        { start: 15n, end: 25n, row: 1 },
      ],
      1n,
    );
    expect(segments).toEqual([
      { start: 10n, end: 14n, row: 0 },
      { start: 15n, end: 25n, row: 1 },
    ]);
  });
});

describe('readName: the CSV name field', () => {
  it.each([
    ['Cloudflare', 'Cloudflare'],
    ['"Cloudflare, Inc."', 'Cloudflare, Inc.'],
    ['"LLC ""SPUTNIK"""', 'LLC "SPUTNIK"'],
    ['""', ''],
    ['', ''],
  ])('reads %s as %j', (field, name) => {
    expect(readName(field, 0, field.length)).toBe(name);
  });

  it.each([['"unterminated'], ['"a"b'], ['a"b'], ['a,b']])('refuses %s', (field) => {
    expect(readName(field, 0, field.length)).toBeNull();
  });
});
