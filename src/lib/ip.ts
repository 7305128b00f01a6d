/**
 * IP addresses for every product: parse, format, classify, and CIDR lists.
 *
 * ipaddr.js defines what is valid text; this module only makes the common cases fast.
 * ipaddr.js costs about 2.7 us to parse an IPv6 address and 0.5 us for toRFC5952String, while
 * lookup products aim at millions of answers per second. So plain dotted quads and plain
 * colon-hex IPv6 are parsed here (building the same ipaddr.js objects), and anything else goes
 * to ipaddr.js, minus the forms we refuse as ambiguous (see ip-input.ts). What is public is
 * ip-special.ts's table of the IANA special-purpose registries. test/lib/ip.test.ts checks
 * every fast function against plain ipaddr.js with property tests.
 */
import { invalidOption } from '../errors.js';
import ipaddr from 'ipaddr.js';
import { ipv4NotRoutable, ipv6NotRoutable } from './ip-special.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
export type IpVersion = 4 | 6;

/** The longest address text parseIp reads: eight groups with an IPv4 tail is 45 characters. */
const MAX_TEXT_LENGTH = 45;

/**
 * Parse an IPv4 or IPv6 address in its standard text forms (no shorthand like `1.2.3`, no
 * leading zeros in IPv4, no zone ids). IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is unwrapped to
 * IPv4, so one address has one identity everywhere. Returns null for anything else,
 * including surrounding whitespace (trimming is the caller's decision).
 */
export function parseIp(text: string): IpAddress | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TEXT_LENGTH) return null;
  const v4 = parseIPv4Number(text);
  if (v4 >= 0) return new ipaddr.IPv4(octetsOf(v4));
  const groups = parseIPv6Groups(text);
  if (groups) return isIPv4Mapped(groups) ? new ipaddr.IPv4(mappedOctets(groups)) : new ipaddr.IPv6(groups);
  return parseWithIpaddr(text);
}

/**
 * parseIp's language, decided by ipaddr.js alone: the slow path for whatever the fast parsers
 * do not take (dotted IPv4 tails like `64:ff9b::1.2.3.4`, and invalid text).
 */
function parseWithIpaddr(text: string): IpAddress | null {
  // Branch on ':' first: ipaddr.js's IPv4 check throws and catches internally on IPv6 text.
  if (text.includes(':')) {
    // parseIPv6Groups reads every address written without a dotted tail: what it refused is not
    // one, and ipaddr.js would say so by throwing and catching an Error (a stack per input).
    if (!text.includes('.') || text.includes('%') || !ipaddr.IPv6.isValid(text) || !hasStrictDottedTail(text)) return null;
    // The dotted tail read as its two groups, not by ipaddr.js: it reads the deprecated
    // IPv4-compatible `::8.8.8.8` as `::ffff:8.8.8.8`, which would make it 8.8.8.8 while
    // `::808:808`, the same address, is the IPv6 address it is.
    const groups = parseIPv6Groups(withHexTail(text));
    if (!groups) return null;
    return isIPv4Mapped(groups) ? new ipaddr.IPv4(mappedOctets(groups)) : new ipaddr.IPv6(groups);
  }
  // The shape ipaddr.js's check tests after parsing, tested first: its parse throws (an Error
  // and its stack, caught inside) for all other text, which is most of what reaches here.
  return FOUR_PART_DECIMAL.test(text) && ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
}

/** ipaddr.js's `isValidFourPartDecimal` pattern: four decimal parts, no leading zeros. */
const FOUR_PART_DECIMAL = /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/;

/** `64:ff9b::1.2.3.4` as `64:ff9b::102:304`: a (strict, checked) dotted tail as two hex groups. */
function withHexTail(text: string): string {
  if (!text.includes('.')) return text;
  const colon = text.lastIndexOf(':');
  const v4 = parseIPv4Number(text.slice(colon + 1));
  return `${text.slice(0, colon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
}

/** An IPv6 text's dotted IPv4 tail, if any, is a strict dotted quad (`::ffff:010.0.0.1` is not). */
function hasStrictDottedTail(text: string): boolean {
  if (!text.includes('.')) return true;
  return parseIPv4Number(text.slice(text.lastIndexOf(':') + 1)) >= 0;
}

/**
 * Parse a strict dotted quad (four decimal parts 0-255, no leading zeros: exactly the IPv4
 * text parseIp accepts, and already canonical) into an unsigned 32-bit number, or -1 for
 * anything else, including IPv6 forms that parseIp would unwrap to IPv4.
 *
 * Why it exists: it allocates nothing, and with {@link isPublicIPv4Number} and
 * `CidrTable.matchIPv4` a hot path answers an IPv4 lookup without building an ipaddr.js object
 * or formatting the address back to text (the input is the canonical text). Callers fall back
 * to parseIp when it returns -1.
 */
export function parseIPv4Number(text: string): number {
  const length = text.length;
  if (length < 7 || length > 15) return -1;
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      continue;
    }
    const digit = c - 48;
    if (digit < 0 || digit > 9) return -1;
    if (digits > 0 && part === 0) return -1; // a leading zero
    part = part * 10 + digit;
    if (part > 255) return -1;
    digits++;
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + part;
}

function octetsOf(value: number): number[] {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

/**
 * Strict colon-hex IPv6 (`2606:50c0::1`, `2001:DB8:0:0:0:0:0:1`): 1-4 hex digits per group,
 * at most one `::` standing for one or more zero groups. Returns the eight groups, or null
 * for anything else (dotted tails, zone ids, garbage), which then goes to ipaddr.js. Accepts
 * a subset of ipaddr.IPv6.isValid and reads the same groups.
 */
function parseIPv6Groups(text: string): number[] | null {
  const length = text.length;
  if (length < 2 || length > 39) return null;
  const groups: number[] = [];
  let gap = -1; // how many groups come before `::`
  let i = 0;
  if (text.charCodeAt(0) === 58 /* : */) {
    if (text.charCodeAt(1) !== 58) return null;
    gap = 0;
    i = 2;
  }
  while (i < length) {
    let value = 0;
    let digits = 0;
    for (; i < length; i++) {
      const h = hexDigit(text.charCodeAt(i));
      if (h < 0) break;
      if (++digits > 4) return null;
      value = value * 16 + h;
    }
    if (digits === 0 || groups.length === 8) return null;
    groups.push(value);
    if (i === length) break;
    if (text.charCodeAt(i) !== 58) return null;
    i++;
    if (text.charCodeAt(i) === 58) {
      if (gap >= 0) return null;
      gap = groups.length;
      i++;
    } else if (i === length) {
      return null; // a single trailing colon
    }
  }
  if (gap < 0) return groups.length === 8 ? groups : null;
  if (groups.length > 7) return null; // `::` must stand for at least one group
  return expandGap(groups, gap);
}

/** The eight groups, with zeros where `::` stood after the first `gap` groups. */
function expandGap(groups: number[], gap: number): number[] {
  const out = [0, 0, 0, 0, 0, 0, 0, 0];
  const tail = groups.length - gap;
  for (let k = 0; k < gap; k++) out[k] = groups[k];
  for (let k = 0; k < tail; k++) out[8 - tail + k] = groups[gap + k];
  return out;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f
  if (c >= 65 && c <= 70) return c - 55; // A-F
  return -1;
}

/** `::ffff:0:0/96`, which parseIp answers as IPv4 (like ipaddr.js toIPv4Address). */
function isIPv4Mapped(g: readonly number[]): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
}

function mappedOctets(g: readonly number[]): number[] {
  return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff];
}

// --- formatting ---------------------------------------------------------------------------

/** Canonical text: dotted quad for IPv4, RFC 5952 for IPv6 (what toRFC5952String returns). */
export function formatIp(addr: IpAddress): string {
  if (addr.kind() === 'ipv4') return addr.toString();
  const v6 = addr as ipaddr.IPv6;
  // parseIp never makes zone ids; a hand-built address with one is left to ipaddr.js.
  return v6.zoneId ? v6.toRFC5952String() : formatIPv6Groups(v6.parts);
}

/**
 * RFC 5952 text of eight groups: lower-case hex without leading zeros, the leftmost longest
 * run of two or more zero groups written as `::`.
 */
function formatIPv6Groups(groups: readonly number[]): string {
  const [runStart, runLength] = longestZeroRun(groups);
  if (runLength < 2) return joinHex(groups, 0, 8);
  return `${joinHex(groups, 0, runStart)}::${joinHex(groups, runStart + runLength, 8)}`;
}

/** Start and length of the leftmost longest run of zero groups (length 0 when none). */
function longestZeroRun(groups: readonly number[]): [number, number] {
  let bestStart = 0;
  let bestLength = 0;
  let i = 0;
  while (i < 8) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < 8 && groups[end] === 0) end++;
    if (end - i > bestLength) {
      bestStart = i;
      bestLength = end - i;
    }
    i = end;
  }
  return [bestStart, bestLength];
}

function joinHex(groups: readonly number[], from: number, to: number): string {
  let out = '';
  for (let i = from; i < to; i++) out += i === from ? groups[i].toString(16) : `:${groups[i].toString(16)}`;
  return out;
}

// --- public or not --------------------------------------------------------------------------

/**
 * True for globally routable addresses: not in a special-purpose block the IANA registries mark
 * as not globally reachable (private, loopback, link-local, CGNAT, multicast, broadcast,
 * documentation, benchmarking, reserved, ULA, IPv6 outside 2000::/3, ...), and for 6to4,
 * Teredo and NAT64 only when the IPv4 address they embed is routable. See ip-special.ts.
 */
export function isPublicIp(addr: IpAddress): boolean {
  if (addr.kind() === 'ipv4') {
    const o = (addr as ipaddr.IPv4).octets;
    return isPublicIPv4Number(o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3]);
  }
  return ipv6NotRoutable(addr as ipaddr.IPv6) === null;
}

/**
 * isPublicIp for an IPv4 address given as an unsigned 32-bit number (from
 * {@link parseIPv4Number}): the allocation-free partner of the IPv4 fast path.
 */
export function isPublicIPv4Number(value: number): boolean {
  return ipv4NotRoutable(value) === null;
}

// --- CIDRs --------------------------------------------------------------------------------

/** A parsed CIDR: the network address and prefix length. A bare address is a /32 or /128. */
export type Cidr = [IpAddress, number];

/** Parse `a.b.c.d/n`, `x::/n` or a bare address. Throws a TypeError naming the bad value. */
export function parseCidr(text: string): Cidr {
  const trimmed = text.trim();
  try {
    if (trimmed.includes('/')) {
      // Without a colon it can only be IPv4: skip ipaddr.parseCIDR's IPv6 attempt, the slow part.
      const [addr, bits] = trimmed.includes(':') ? ipaddr.parseCIDR(trimmed) : ipaddr.IPv4.parseCIDR(trimmed);
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
      }
      return [addr, bits];
    }
  } catch {
    throw invalidOption(`not a valid CIDR: ${JSON.stringify(text)}`);
  }
  const addr = parseIp(trimmed);
  if (!addr) throw invalidOption(`not a valid IP address or CIDR: ${JSON.stringify(text)}`);
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** Canonical `network/bits` text of a parsed CIDR (the address as given, host bits included). */
export function formatCidr([addr, bits]: Cidr): string {
  return `${formatIp(addr)}/${bits}`;
}

/**
 * True when the address has bits set after the prefix, as in `10.0.0.1/8`. Such a CIDR
 * matches the same addresses as its network (`10.0.0.0/8`), so it is almost always a typo or
 * a host address given where a network was meant, and lists of networks refuse it.
 */
export function hasHostBits([addr, bits]: Cidr): boolean {
  const bytes = addr.toByteArray();
  for (let bit = bits; bit < bytes.length * 8; bit++) {
    if (bytes[bit >> 3] & (0x80 >> (bit & 7))) return true;
  }
  return false;
}

/** The network of a CIDR: its address with every bit after the prefix cleared. */
export function networkOf([addr, bits]: Cidr): Cidr {
  const bytes = addr.toByteArray().map((byte, i) => {
    const kept = Math.min(8, Math.max(0, bits - i * 8)); // prefix bits inside this byte
    return byte & (0xff00 >> kept) & 0xff;
  });
  return [ipaddr.fromByteArray(bytes), bits];
}

/**
 * Why a CIDR is not a clean network, or null when it is: the text names both readings, the
 * network and the single address, since either may have been meant.
 */
export function hostBitsProblem(cidr: Cidr): string | null {
  if (!hasHostBits(cidr)) return null;
  const [addr, bits] = cidr;
  return `has host bits set after the /${bits} prefix; did you mean the network ${formatCidr(networkOf(cidr))}, or the single address ${formatIp(addr)}?`;
}

/**
 * Normalised text of a CIDR list, for storing allowlists in one canonical form. Throws a
 * TypeError naming the value for text that is not a CIDR, and for a CIDR with host bits set
 * (`10.0.0.1/8` would silently allow all of 10.0.0.0/8). A bare address is a /32 or /128; a
 * network given twice is kept once.
 */
export function normalizeCidrs(cidrs: readonly string[]): string[] {
  const normalized = cidrs.map((c) => {
    const cidr = parseCidr(c);
    const problem = hostBitsProblem(cidr);
    if (problem) throw invalidOption(`${JSON.stringify(c)} ${problem}`);
    return formatCidr(cidr);
  });
  // Each network once, however it was written (10.0.0.0/8 twice, 2001:DB8::/32 and 2001:db8::/32).
  return [...new Set(normalized)];
}

/**
 * A membership test over a short list of CIDRs (allowlists, trusted proxies). Linear in the
 * list length, which is fine for a handful of entries; see cidr-table for large sets.
 */
export function createCidrMatcher(cidrs: readonly string[]): (addr: IpAddress) => boolean {
  const parsed = cidrs.map(parseCidr);
  return (addr) => parsed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}
