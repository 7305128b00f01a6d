/**
 * Which addresses are globally routable: the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (RFC 6890 and its updates, as of 2025), the multicast blocks, and the IPv6
 * address space outside global unicast 2000::/3. Each block carries the registry's
 * "Globally Reachable" answer; the most specific block containing an address decides.
 *
 * Three IPv6 blocks embed an IPv4 address and are as routable as what they embed: 6to4
 * (2002::/16), Teredo (2001::/32: the server and the client address, both must be routable)
 * and the NAT64 well-known prefix (64:ff9b::/96). IPv4-mapped IPv6 is the IPv4 it carries.
 * The location, network and reputation of such an address are those of the IPv4 it stands for
 * (`embeddedLookupIPv4`; lib/ip-input's `lookupAddress`).
 *
 * Differences from ipaddr.js `range() === 'unicast'` (the previous rule), all deliberate:
 * blocks the registry marks globally reachable are routable here (AS112 192.31.196.0/24,
 * 192.175.48.0/24, 2001:4:112::/48, 2620:4f:8000::/48; AMT 192.52.193.0/24 and 2001:3::/32;
 * the PCP/TURN/DNS-SD anycast addresses 192.0.0.9, 192.0.0.10, 2001:1::1-3; ORCHIDv2
 * 2001:20::/28; drone DETs 2001:30::/28), and 6to4/Teredo/NAT64 follow their embedded address.
 */
import type ipaddr from 'ipaddr.js';
import { createCidrTable, type CidrTable } from './cidr-table.js';

/** `true`/`false`: the registry's Globally Reachable; `embedded`: that of the IPv4 inside. */
export type Reachability = boolean | 'embedded';

export interface SpecialBlock {
  cidr: string;
  /** The registry's name for the block. */
  name: string;
  reachable: Reachability;
}

export const IPV4_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  { cidr: '0.0.0.0/8', name: '"this network"', reachable: false },
  { cidr: '10.0.0.0/8', name: 'private-use', reachable: false },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT)', reachable: false },
  { cidr: '127.0.0.0/8', name: 'loopback', reachable: false },
  { cidr: '169.254.0.0/16', name: 'link-local', reachable: false },
  { cidr: '172.16.0.0/12', name: 'private-use', reachable: false },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments', reachable: false },
  { cidr: '192.0.0.9/32', name: 'PCP anycast', reachable: true },
  { cidr: '192.0.0.10/32', name: 'TURN anycast', reachable: true },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', reachable: false },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', reachable: true },
  { cidr: '192.52.193.0/24', name: 'AMT', reachable: true },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast', reachable: false },
  { cidr: '192.168.0.0/16', name: 'private-use', reachable: false },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service', reachable: true },
  { cidr: '198.18.0.0/15', name: 'benchmarking', reachable: false },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', reachable: false },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', reachable: false },
  { cidr: '224.0.0.0/4', name: 'multicast', reachable: false },
  { cidr: '240.0.0.0/4', name: 'reserved', reachable: false },
  { cidr: '255.255.255.255/32', name: 'limited broadcast', reachable: false },
];

export const IPV6_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  // Only 2000::/3 is allocated for global unicast; the rest of the space is reserved.
  { cidr: '::/0', name: 'reserved by the IETF (outside global unicast 2000::/3)', reachable: false },
  { cidr: '2000::/3', name: 'global unicast', reachable: true },
  { cidr: '::/128', name: 'unspecified', reachable: false },
  { cidr: '::1/128', name: 'loopback', reachable: false },
  { cidr: '64:ff9b::/96', name: 'NAT64 well-known prefix', reachable: 'embedded' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', reachable: false },
  { cidr: '100::/64', name: 'discard-only', reachable: false },
  { cidr: '100:0:0:1::/64', name: 'dummy prefix', reachable: false },
  { cidr: '2001::/23', name: 'IETF protocol assignments', reachable: false },
  { cidr: '2001::/32', name: 'Teredo', reachable: 'embedded' },
  { cidr: '2001:1::1/128', name: 'PCP anycast', reachable: true },
  { cidr: '2001:1::2/128', name: 'TURN anycast', reachable: true },
  { cidr: '2001:1::3/128', name: 'DNS-SD SRP anycast', reachable: true },
  { cidr: '2001:2::/48', name: 'benchmarking', reachable: false },
  { cidr: '2001:3::/32', name: 'AMT', reachable: true },
  { cidr: '2001:4:112::/48', name: 'AS112-v6', reachable: true },
  { cidr: '2001:10::/28', name: 'deprecated ORCHID', reachable: false },
  { cidr: '2001:20::/28', name: 'ORCHIDv2', reachable: true },
  { cidr: '2001:30::/28', name: 'drone remote ID entity tags', reachable: true },
  { cidr: '2001:db8::/32', name: 'documentation', reachable: false },
  { cidr: '2002::/16', name: '6to4', reachable: 'embedded' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service', reachable: true },
  { cidr: '3fff::/20', name: 'documentation', reachable: false },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs', reachable: false },
  { cidr: 'fc00::/7', name: 'unique local', reachable: false },
  { cidr: 'fe80::/10', name: 'link-local', reachable: false },
  { cidr: 'fec0::/10', name: 'deprecated site-local', reachable: false },
  { cidr: 'ff00::/8', name: 'multicast', reachable: false },
];

/** Why an address is not routable: the block that decided, and the IPv4 inside it if any. */
export interface NotRoutable {
  block: SpecialBlock;
  /** For 6to4/Teredo/NAT64: the embedded IPv4 block that is not routable. */
  embedded?: SpecialBlock;
}

let tables: { v4: CidrTable<SpecialBlock>; v6: CidrTable<SpecialBlock> } | undefined;

/**
 * One table per family, most specific block last in every match (entries sorted by prefix
 * length, and blocks of one length never overlap). Built on first use: cidr-table imports
 * ip.ts, which imports this module.
 */
function specialTables(): { v4: CidrTable<SpecialBlock>; v6: CidrTable<SpecialBlock> } {
  return (tables ??= { v4: tableOf(IPV4_SPECIAL_BLOCKS), v6: tableOf(IPV6_SPECIAL_BLOCKS) });
}

function tableOf(blocks: readonly SpecialBlock[]): CidrTable<SpecialBlock> {
  const bits = (block: SpecialBlock) => Number(block.cidr.split('/')[1]);
  const sorted = [...blocks].sort((a, b) => bits(a) - bits(b));
  return createCidrTable(sorted.map((block) => ({ cidr: block.cidr, value: block })));
}

function mostSpecific(matches: readonly SpecialBlock[]): SpecialBlock | undefined {
  return matches[matches.length - 1];
}

/** The special block an IPv4 address (as an unsigned 32-bit number) is in, if any. */
export function ipv4SpecialBlock(value: number): SpecialBlock | undefined {
  return mostSpecific(specialTables().v4.matchIPv4(value));
}

/** Why the IPv4 address (unsigned 32-bit) is not routable, or null when it is. */
export function ipv4NotRoutable(value: number): NotRoutable | null {
  const block = ipv4SpecialBlock(value);
  return block && block.reachable === false ? { block } : null;
}

/** Why the IPv6 address is not routable, or null when it is. */
export function ipv6NotRoutable(addr: ipaddr.IPv6): NotRoutable | null {
  const p = addr.parts;
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff) {
    return ipv4NotRoutable(p[6] * 0x10000 + p[7]); // IPv4-mapped: the IPv4 it carries
  }
  const block = mostSpecific(specialTables().v6.match(addr))!; // ::/0 is in the table
  if (block.reachable === true) return null;
  if (block.reachable === false) return { block };
  for (const value of embeddedIPv4(block, p)) {
    const inner = ipv4NotRoutable(value);
    if (inner) return { block, embedded: inner.block };
  }
  return null;
}

/**
 * The IPv4 address (unsigned 32-bit) that a 6to4, Teredo or NAT64 well-known-prefix address
 * stands for, or -1 for any other address: 6to4 (RFC 3056) the site's own public IPv4 in bits
 * 16-47, Teredo (RFC 4380) the client's public (mapped) IPv4 in the last 32 bits with every bit
 * inverted (not the server's, which only relays), NAT64 (RFC 6052) the IPv4 in the last 32 bits
 * of 64:ff9b::/96 (not 64:ff9b:1::/48, local use). These are the blocks `reachable: 'embedded'`
 * above. No table walk: the geoip, asn and riskscore lookups ask it for every IPv6 address.
 */
export function embeddedLookupIPv4(p: readonly number[]): number {
  if (p[0] === 0x2002) return p[1] * 0x10000 + p[2];
  if (p[0] === 0x2001 && p[1] === 0) return (p[6] ^ 0xffff) * 0x10000 + (p[7] ^ 0xffff);
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return p[6] * 0x10000 + p[7];
  return -1;
}

/** The IPv4 addresses a 6to4, Teredo or NAT64 address carries. */
function embeddedIPv4(block: SpecialBlock, p: readonly number[]): number[] {
  if (block.cidr === '2002::/16') return [p[1] * 0x10000 + p[2]];
  // Teredo (RFC 4380): the server address, then the client's, stored with every bit inverted.
  if (block.cidr === '2001::/32') return [p[2] * 0x10000 + p[3], (p[6] ^ 0xffff) * 0x10000 + (p[7] ^ 0xffff)];
  return [p[6] * 0x10000 + p[7]]; // NAT64 64:ff9b::/96
}
