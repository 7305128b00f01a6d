import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
export type IpVersion = 4 | 6;

/**
 * Parse an IPv4 or IPv6 address in its standard text forms (no shorthand like `1.2.3`, no
 * zone ids). IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is unwrapped to IPv4, so one address has
 * one identity everywhere. Returns null for anything else.
 */
export function parseIp(text: string): IpAddress | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 45) return null;
  // Branch on ':' first: ipaddr.js's IPv4 check throws and catches internally on IPv6 text,
  // which costs about 20 us per address.
  if (text.includes(':')) {
    if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return null;
    const addr = ipaddr.IPv6.parse(text);
    return addr.isIPv4MappedAddress() ? addr.toIPv4Address() : addr;
  }
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
}

/** Canonical text: dotted quad for IPv4, RFC 5952 for IPv6. */
export function formatIp(addr: IpAddress): string {
  return addr.kind() === 'ipv4' ? addr.toString() : (addr as ipaddr.IPv6).toRFC5952String();
}

/**
 * True for globally routable unicast addresses. Private, loopback, link-local, CGNAT,
 * multicast, documentation, benchmarking, 6to4, Teredo and other special ranges are not.
 */
export function isPublicIp(addr: IpAddress): boolean {
  return addr.range() === 'unicast';
}

/** A parsed CIDR: the network address and prefix length. A bare address is a /32 or /128. */
export type Cidr = [IpAddress, number];

/** Parse `a.b.c.d/n`, `x::/n` or a bare address. Throws a TypeError naming the bad value. */
export function parseCidr(text: string): Cidr {
  const trimmed = text.trim();
  try {
    if (trimmed.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(trimmed);
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
        return [(addr as ipaddr.IPv6).toIPv4Address(), Math.max(0, bits - 96)];
      }
      return [addr, bits];
    }
  } catch {
    throw new TypeError(`not a valid CIDR: ${JSON.stringify(text)}`);
  }
  const addr = parseIp(trimmed);
  if (!addr) throw new TypeError(`not a valid IP address or CIDR: ${JSON.stringify(text)}`);
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** Normalised text of a CIDR list, for storing allowlists in one canonical form. */
export function normalizeCidrs(cidrs: readonly string[]): string[] {
  return cidrs.map((c) => {
    const [addr, bits] = parseCidr(c);
    return `${formatIp(addr)}/${bits}`;
  });
}

/**
 * A membership test over a short list of CIDRs (allowlists, trusted proxies). Linear in the
 * list length, which is fine for a handful of entries; see cidr-table for large sets.
 */
export function createCidrMatcher(cidrs: readonly string[]): (addr: IpAddress) => boolean {
  const parsed = cidrs.map(parseCidr);
  return (addr) => parsed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}
