/**
 * The `network` of an address inside a data range. Sources give inclusive ranges
 * (`start,end`), and a merged range is often not one CIDR (1.0.4.0-1.0.7.255 is a /22, but
 * 1.0.128.0-1.0.196.255 is not a prefix at all). The answer is the largest CIDR that lies
 * inside the range and contains the address: among the aligned blocks that contain the
 * address (one per prefix length, nested), the widest that still fits. Property-tested against
 * a brute-force enumeration (test/products/asn-network.test.ts).
 */
import ipaddr from 'ipaddr.js';
import { formatIp } from '../../lib/ip.js';

/**
 * Prefix length of the largest CIDR inside [start, end] that contains `value` (all unsigned
 * 32-bit numbers, start <= value <= end), without a loop. The block of 2^k addresses holding
 * `value` starts at or after `start` for every k up to the highest bit where value and start
 * differ, and beyond that only while start's low k bits are zero: k1 = max(highest(value ^
 * start), trailingZeros(start)). Likewise it ends at or before `end` up to k2 = max(highest(value
 * ^ end), trailingOnes(end)). The widest block that fits both is 2^min(k1, k2).
 */
export function ipv4PrefixInRange(start: number, end: number, value: number): number {
  const k1 = Math.max(highestBit(value ^ start), trailingZeros(start));
  const k2 = Math.max(highestBit(value ^ end), trailingZeros(~end));
  return 32 - Math.min(k1, k2);
}

/** Index of the highest set bit of a 32-bit pattern; -1 for 0. */
function highestBit(bits: number): number {
  return 31 - Math.clz32(bits);
}

/** Trailing zero bits of a 32-bit pattern; 32 for 0. */
function trailingZeros(bits: number): number {
  return bits === 0 || (bits | 0) === 0 ? 32 : 31 - Math.clz32(bits & -bits);
}

/** `'0.'` to `'255.'`, and `'/0'` to `'/128'`: strings made once, so formatting is concatenation only. */
const OCTET_DOT = Array.from({ length: 256 }, (_, i) => `${i}.`);
const OCTET = Array.from({ length: 256 }, (_, i) => `${i}`);
const SLASH = Array.from({ length: 129 }, (_, i) => `/${i}`);

/** Dotted quad of an unsigned 32-bit number. */
export function formatIPv4(value: number): string {
  return OCTET_DOT[value >>> 24] + OCTET_DOT[(value >>> 16) & 0xff] + OCTET_DOT[(value >>> 8) & 0xff] + OCTET[value & 0xff];
}

/** The network of `value` at `prefix` as `a.b.c.d/prefix`. */
export function ipv4Network(value: number, prefix: number): string {
  const block = 2 ** (32 - prefix);
  return formatIPv4(value - (value % block)) + SLASH[prefix];
}

/** Prefix length of the largest CIDR inside [start, end] that contains `value` (128-bit). */
export function ipv6PrefixInRange(start: bigint, end: bigint, value: bigint): number {
  const size = end - start + 1n;
  let bits = size.toString(2).length - 1; // floor(log2(size))
  if (size === 1n << BigInt(bits) && start % size === 0n) return 128 - bits;
  for (; bits > 0; bits--) {
    const block = 1n << BigInt(bits);
    const first = value - (value % block);
    if (first >= start && first + block - 1n <= end) return 128 - bits;
  }
  return 128;
}

/** The network of a 128-bit `value` at `prefix`, RFC 5952 text then `/prefix`. */
export function ipv6Network(value: bigint, prefix: number): string {
  const hostBits = BigInt(128 - prefix);
  const network = (value >> hostBits) << hostBits;
  return formatIPv6BigInt(network) + SLASH[prefix];
}

/** RFC 5952 text of a 128-bit number. */
export function formatIPv6BigInt(value: bigint): string {
  const parts: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) parts.push(Number((value >> shift) & 0xffffn));
  return formatIp(new ipaddr.IPv6(parts));
}

/** Four 32-bit words (most significant first) as one 128-bit number. */
export function wordsToBigInt(w0: number, w1: number, w2: number, w3: number): bigint {
  return (BigInt(w0) << 96n) | (BigInt(w1) << 64n) | (BigInt(w2) << 32n) | BigInt(w3);
}

/** An IPv6 address's eight 16-bit groups as four 32-bit words. */
export function partsToWords(parts: readonly number[]): [number, number, number, number] {
  return [parts[0] * 0x10000 + parts[1], parts[2] * 0x10000 + parts[3], parts[4] * 0x10000 + parts[5], parts[6] * 0x10000 + parts[7]];
}
