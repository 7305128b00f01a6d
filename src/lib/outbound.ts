/**
 * The outbound-connection guard: every connection seclookup opens on a client's behalf (a TLS
 * handshake with a host the client named, an RDAP or WHOIS server) goes through here, so that
 * no spelling of a private or loopback target reaches the network.
 *
 * 1. The host is a literal only if `net.isIP` says so, and then it must also be in parseIp's
 *    strict form (no zone id). Anything numeric that `net.isIP` refuses (`127.1`,
 *    `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`) is refused outright: some resolvers and libc
 *    read those as addresses.
 * 2. A name is resolved through the DNS layer (A and AAAA), and refused if ANY address it
 *    resolves to is not public (lib/ip-special.ts: private, loopback, link-local, CGNAT,
 *    reserved, ...; IPv4-mapped IPv6 as its IPv4), so a name cannot mix a public and a
 *    private answer and hope for the private one.
 * 3. The caller connects to the checked address itself, never to the name again, so a second
 *    resolution cannot rebind it (TLS keeps the name for SNI; HTTP pins it via `lookup`).
 *
 * 4. The guard also holds the cap on sockets open at once (`maxSockets`, lib/outbound-slots.ts):
 *    every connection takes one of its slots before it connects.
 *
 * `allowPrivateTargets` lets listed CIDRs through: for tests against loopback servers and for
 * operators who deliberately look up their own network. Off by default, and dangerous: with
 * it, clients can make this server connect into that network.
 */
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { invalidOption, SeclookupError } from '../errors.js';
import type { DnsResolver } from './dns/index.js';
import { describeValue, invalidOptionFrom } from './option-checks.js';
import { createOutboundSlots, type OutboundSlots } from './outbound-slots.js';
import { createCidrMatcher, formatIp, normalizeCidrs, parseIp, type IpAddress } from './ip.js';
import { ipv4NotRoutable, ipv6NotRoutable, type NotRoutable } from './ip-special.js';
import type ipaddr from 'ipaddr.js';

export interface OutboundGuardOptions {
  /** The resolver names are checked with (the shared one). */
  dns: () => DnsResolver;
  /**
   * DANGEROUS. CIDRs of non-public targets that may be reached anyway (`127.0.0.0/8`, `::1`).
   * Only for tests and for operators who mean to look up their own network. @default none
   */
  allowPrivateTargets?: readonly string[];
  /**
   * Most outbound sockets open at once, for every product together (each is an open file). A
   * connection past it waits for one to close, within its lookup's deadline, and fails as the
   * lookup's usual upstream failure when none does (or when 8 × `maxSockets` already wait).
   * `seclookup serve` sets it from the open-files limit. @default Infinity (no cap)
   */
  maxSockets?: number;
}

/**
 * `allowPrivateTargets`, checked and normalized: an array of CIDRs (a lone string is refused, not
 * read letter by letter). TypeError `invalid_option` naming the option and the CIDR.
 */
export function checkAllowPrivateTargets(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalidOption(`allowPrivateTargets must be an array of CIDRs, such as ["127.0.0.0/8"] (got ${describeValue(value)})`);
  const notText = value.findIndex((cidr) => typeof cidr !== 'string');
  if (notText !== -1) throw invalidOption(`allowPrivateTargets[${notText}] must be a CIDR string (got ${describeValue(value[notText])})`);
  try {
    return normalizeCidrs(value);
  } catch (error) {
    throw invalidOptionFrom(`allowPrivateTargets: ${(error as Error).message}`, error);
  }
}

/** A host that passed the guard: connect to `address`, never to `host` again. */
export interface CheckedTarget {
  /** The host as asked for (lower case, no brackets, no trailing dot): the SNI name when a name. */
  host: string;
  /** True when the host was an IP literal (no SNI then). */
  literal: boolean;
  /** The checked address to connect to (the first of `addresses`). */
  address: string;
  family: 4 | 6;
  /** Every address the name resolved to, all checked; IPv4 first. */
  addresses: readonly { address: string; family: 4 | 6 }[];
}

export interface OutboundGuard {
  /**
   * Check a host (name or literal; `[v6]` brackets allowed). Rejects with SeclookupError
   * `target_refused` (not public, or an ambiguous numeric form), `name_not_found` (NXDOMAIN, or
   * no A/AAAA records), or the DNS layer's `timeout` / `upstream_failed`.
   */
  check(host: string): Promise<CheckedTarget>;
  /** A `lookup` for node:http / node:net options that answers the checked address only. */
  pinnedLookup(target: CheckedTarget): LookupFunction;
  /** The slots every outbound socket takes one of (`maxSockets`), shared by all who hold this guard. */
  readonly slots: OutboundSlots;
}

export function createOutboundGuard(options: OutboundGuardOptions): OutboundGuard {
  const cidrs = options.allowPrivateTargets === undefined ? [] : checkAllowPrivateTargets(options.allowPrivateTargets);
  const allowed = cidrs.length > 0 ? createCidrMatcher(cidrs) : null;
  const slots = createOutboundSlots(options.maxSockets);

  function refusal(addr: IpAddress): NotRoutable | null {
    if (allowed?.(addr)) return null;
    return addr.kind() === 'ipv4' ? ipv4NotRoutable(toNumber(addr as ipaddr.IPv4)) : ipv6NotRoutable(addr as ipaddr.IPv6);
  }

  function refuseAddress(host: string, addr: IpAddress, reason: NotRoutable): never {
    const what = host === formatIp(addr) ? host : `${host} (${formatIp(addr)})`;
    throw new SeclookupError('target_refused', `${what} is not a public address: ${reason.block.name} ${reason.block.cidr}`);
  }

  async function check(rawHost: string): Promise<CheckedTarget> {
    const host = normalizeHost(rawHost);
    const family = isIP(host);
    if (family !== 0) {
      const addr = parseIp(host); // null for zone ids, which net.isIP accepts
      if (!addr) throw new SeclookupError('target_refused', `${JSON.stringify(host)} is not a plain IP address`);
      const reason = refusal(addr);
      if (reason) refuseAddress(host, addr, reason);
      const address = formatIp(addr);
      const checkedFamily = addr.kind() === 'ipv4' ? 4 : 6;
      return { host, literal: true, address, family: checkedFamily, addresses: [{ address, family: checkedFamily }] };
    }
    if (looksNumeric(host)) {
      throw new SeclookupError(
        'target_refused',
        `${JSON.stringify(host)} is a numeric form some resolvers read as an IP address; write the address in standard form`,
      );
    }
    const addresses = (await resolveAll(options.dns(), host)).map((addr) => {
      const reason = refusal(addr);
      if (reason) refuseAddress(host, addr, reason);
      return { address: formatIp(addr), family: addr.kind() === 'ipv4' ? (4 as const) : (6 as const) };
    });
    addresses.sort((a, b) => a.family - b.family);
    return { host, literal: false, address: addresses[0].address, family: addresses[0].family, addresses };
  }

  return {
    check,
    slots,
    pinnedLookup: (target) => (_hostname, lookupOptions, callback) => {
      if ((lookupOptions as { all?: boolean }).all) {
        (callback as unknown as (e: null, list: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
      } else callback(null, target.address, target.family);
    },
  };
}

/** Lower case, without `[...]` around IPv6 or a trailing dot. */
function normalizeHost(host: string): string {
  let out = host.trim().toLowerCase();
  if (out.startsWith('[') && out.endsWith(']')) out = out.slice(1, -1);
  if (out.endsWith('.') && !out.endsWith('..')) out = out.slice(0, -1);
  return out;
}

/**
 * Names inet_aton and friends would read as IPv4: every label numeric (decimal, octal with a
 * leading 0, or hex `0x..`), as in `127.1`, `0x7f.1`, `2130706433`. Real names always have a
 * non-numeric top-level label.
 */
function looksNumeric(host: string): boolean {
  const last = host.slice(host.lastIndexOf('.') + 1);
  return /^(0x[0-9a-f]*|[0-9]+)$/.test(last);
}

/** Every A and AAAA address of `host`, parsed (an IPv4-mapped AAAA is its IPv4). */
async function resolveAll(dns: DnsResolver, host: string): Promise<IpAddress[]> {
  const [v4, v6] = await Promise.allSettled([dns.resolve(host, 'A'), dns.resolve(host, 'AAAA')]);
  if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
  const out: IpAddress[] = [];
  for (const answer of [v4, v6]) {
    if (answer.status !== 'fulfilled') continue;
    for (const record of answer.value.records) {
      const addr = parseIp(record);
      if (!addr) throw new SeclookupError('upstream_failed', `${host}: the DNS answer holds ${JSON.stringify(record)}, not an address`);
      out.push(addr);
    }
  }
  if (out.length === 0) {
    // One family failing while the other answered with nothing: the failure is the news.
    const failed = v4.status === 'rejected' ? v4 : v6.status === 'rejected' ? v6 : null;
    if (failed) throw failed.reason;
    throw new SeclookupError('name_not_found', `${host} has no IPv4 or IPv6 address`);
  }
  return out;
}

function toNumber(addr: ipaddr.IPv4): number {
  const o = addr.octets;
  return o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3];
}
