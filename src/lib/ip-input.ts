/**
 * An IP address as a client sends it to an IP product: the one place that decides which
 * text is an address (400 `invalid_ip`) and which addresses may be looked up (422
 * `ip_not_routable`). Every IP product reads its input through here, so they agree.
 *
 * Accepted: a dotted quad, or IPv6 text (RFC 4291 forms, any letter case, with or without
 * `::`, with a dotted IPv4 tail); surrounding whitespace is forgiven. IPv4-mapped IPv6
 * (`::ffff:1.2.3.4`) is the IPv4 address it carries. Refused as ambiguous, rather than
 * guessed: leading zeros (`010.0.0.1` is octal to some parsers), integers (`3232235777`,
 * `0xC0A80001`), shortened IPv4 (`10.1`), zone ids (`fe80::1%eth0`), brackets (`[::1]`),
 * ports, CIDR suffixes.
 *
 * A 6to4, Teredo or NAT64 well-known-prefix address is an IPv6 address (its `ip` is the IPv6
 * text) that stands for an IPv4 one: `lookupAddress` gives the address whose location, network
 * and reputation answer for it (geoip, timezone, asn, riskscore).
 */
import type ipaddr from 'ipaddr.js';
import { LookupError, quoteInput } from '../errors.js';
import { formatIp, parseIp, parseIPv4Number } from './ip.js';
import { embeddedLookupIPv4, ipv4NotRoutable, ipv6NotRoutable, type NotRoutable } from './ip-special.js';

/** A well-formed address read from input: its canonical text and parsed form. */
export type IpInput = IPv4Input | IPv6Input;

export interface IPv4Input {
  /** Canonical text: the dotted quad. */
  ip: string;
  version: 4;
  /** The address as an unsigned 32-bit number. */
  value: number;
}

export interface IPv6Input {
  /** Canonical text: RFC 5952 (lower case, shortest `::`). */
  ip: string;
  version: 6;
  /** Never IPv4-mapped: that is an IPv4Input. */
  address: ipaddr.IPv6;
}

/** Read an address; throws LookupError `invalid_ip` (400) for missing, malformed or ambiguous text. */
export function parseIpInput(input: unknown): IpInput {
  if (typeof input !== 'string' || input.trim() === '') throw new LookupError('invalid_ip', 'ip is required');
  const value = parseIPv4Number(input); // the common case, allocation-free: already canonical
  if (value >= 0) return { ip: input, version: 4, value };
  const address = parseIp(input.trim());
  if (!address) throw new LookupError('invalid_ip', `${quoteInput(input)} is not a valid IPv4 or IPv6 address`);
  if (address.kind() === 'ipv4') {
    const octets = (address as ipaddr.IPv4).octets;
    return { ip: formatIp(address), version: 4, value: ((octets[0] << 24) >>> 0) + (octets[1] << 16) + (octets[2] << 8) + octets[3] };
  }
  return { ip: formatIp(address), version: 6, address: address as ipaddr.IPv6 };
}

/** Why the address is not globally routable (ip-special.ts), or null when it is. */
export function notRoutableReason(input: IpInput): NotRoutable | null {
  return input.version === 4 ? ipv4NotRoutable(input.value) : ipv6NotRoutable(input.address);
}

/** True when the address is globally routable. */
export function isRoutable(input: IpInput): boolean {
  return notRoutableReason(input) === null;
}

/**
 * Throws LookupError `ip_not_routable` (422) unless the address is globally routable; the
 * message names the special-purpose block (`10.0.0.1 is not publicly routable: private-use
 * 10.0.0.0/8`).
 */
export function requireRoutable<T extends IpInput>(input: T): T {
  const reason = notRoutableReason(input);
  if (reason) throw new LookupError('ip_not_routable', `${input.ip} is not publicly routable: ${describe(reason)}`);
  return input;
}

function describe({ block, embedded }: NotRoutable): string {
  const outer = `${block.name} ${block.cidr}`;
  return embedded ? `${outer} carrying an IPv4 address in ${embedded.name} ${embedded.cidr}` : outer;
}

/** parseIpInput then requireRoutable: the usual prepare of an IP product. */
export function readRoutableIp(input: unknown): IpInput {
  return requireRoutable(parseIpInput(input));
}

/**
 * The address whose location, network and reputation answer for this one: for 6to4
 * (`2002:0808:0808::1`), Teredo (`2001:0:...`, the client's public IPv4, not the server's) and
 * the NAT64 well-known prefix (`64:ff9b::808:808`), the IPv4 address it carries (`8.8.8.8`);
 * any other address is itself. The geoip, timezone, asn and riskscore lookups ask for this
 * address and answer with the input's `ip`; the routability check already follows the embedded
 * IPv4 (ip-special.ts). Without it, a 6to4 or Teredo address is the relay operator's single
 * 2002::/16 or 2001::/32 record (DB-IP: Hurricane Electric, Los Angeles) and a NAT64 one is in
 * no database, while MaxMind's files alias those blocks to the IPv4 tree: answers would depend
 * on the file loaded.
 */
export function lookupAddress(input: IpInput): IpInput {
  if (input.version === 4) return input;
  const value = embeddedLookupIPv4(input.address.parts);
  if (value < 0) return input;
  return { ip: `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`, version: 4, value };
}
