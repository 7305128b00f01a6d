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
 */
import type ipaddr from 'ipaddr.js';
import { LookupError } from '../errors.js';
import { formatIp, isPublicIp, isPublicIPv4Number, parseIp, parseIPv4Number } from './ip.js';

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
  if (!address) throw new LookupError('invalid_ip', `${quote(input)} is not a valid IPv4 or IPv6 address`);
  if (address.kind() === 'ipv4') {
    const octets = (address as ipaddr.IPv4).octets;
    return { ip: formatIp(address), version: 4, value: ((octets[0] << 24) >>> 0) + (octets[1] << 16) + (octets[2] << 8) + octets[3] };
  }
  return { ip: formatIp(address), version: 6, address: address as ipaddr.IPv6 };
}

/** True when the address is globally routable (see ip.ts `isPublicIp` for the registry it follows). */
export function isRoutable(input: IpInput): boolean {
  return input.version === 4 ? isPublicIPv4Number(input.value) : isPublicIp(input.address);
}

/** Throws LookupError `ip_not_routable` (422) unless the address is globally routable. */
export function requireRoutable<T extends IpInput>(input: T): T {
  if (!isRoutable(input)) {
    throw new LookupError('ip_not_routable', `${input.ip} is not a publicly routable address (private, loopback, link-local, CGNAT, multicast, documentation, reserved or another special-purpose range)`);
  }
  return input;
}

/** parseIpInput then requireRoutable: the usual prepare of an IP product. */
export function readRoutableIp(input: unknown): IpInput {
  return requireRoutable(parseIpInput(input));
}

/** The input quoted for a message, shortened: it is client text and may be long. */
function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
