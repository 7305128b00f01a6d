/**
 * The webhookip engine: is a public IP inside a webhook provider's published ranges?
 *
 * Input decisions: the IP must be a string; surrounding whitespace is forgiven (it is common in
 * copied values and cannot change which address is meant), anything else must be a strict
 * standard form (no `1.2.3`, no leading zeros, no zone ids). IPv4-mapped IPv6 is answered as
 * the IPv4 address, and `ip` in the result is always the canonical text (dotted quad, or
 * RFC 5952 for IPv6).
 *
 * Layout: dataset loading and validation, the engine, the `provider` option, then the fast
 * IP parsing that keeps a lookup well under a microsecond.
 */
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { LookupError } from '../../errors.js';
import { createCidrTable, type CidrTable } from '../../lib/cidr-table.js';
import { readJsonDataset } from '../../lib/datasets.js';
import { formatIp, isPublicIp, parseCidr, parseIp, type IpAddress } from '../../lib/ip.js';
import type { LookupOutcome } from '../../lookup.js';
import type { WebhookIpOptions, WebhookIpResult, WebhookProvider, WebhookRangeSource, WebhookRangesDataset } from './types.js';

export interface WebhookIpEngine {
  /**
   * Which providers' published ranges contain `ip`? Synchronous and sub-microsecond for IPv4
   * (no cache: `cached` is always false). Throws LookupError `invalid_ip` (400),
   * `invalid_provider` (400) or `ip_not_routable` (422), checked in that order.
   */
  lookup(ip: string, options?: WebhookIpOptions): LookupOutcome<WebhookIpResult>;
  /** Every provider in dataset order, with its aliases (empty when it has none). */
  readonly providers: (WebhookProvider & { aliases: string[] })[];
  /** Total CIDRs across all providers. */
  readonly cidrCount: number;
}

// --- dataset --------------------------------------------------------------------------------

/** The dataset file inside a data folder. */
export function webhookRangesPath(dataDir: string): string {
  return join(dataDir, 'webhookip', 'ranges.json');
}

/**
 * Read and validate `<dataDir>/webhookip/ranges.json`. Throws an Error naming the file and
 * the bad entry (bad CIDR, host bits set, missing or duplicate id, ...).
 */
export function loadWebhookRanges(dataDir: string): WebhookRangesDataset {
  const path = webhookRangesPath(dataDir);
  return validateWebhookRanges(readJsonDataset<unknown>(path), path);
}

/**
 * Check the shape of a ranges dataset and return it typed. `source` names it in errors (a
 * file path, or a label for a dataset built in code). Every CIDR must parse and have no host
 * bits set; ids and aliases must be unique lower-case slugs.
 */
export function validateWebhookRanges(data: unknown, source: string): WebhookRangesDataset {
  const fail = (what: string): never => {
    throw new Error(`seclookup: webhook ranges ${source}: ${what}`);
  };
  if (!isObject(data)) return fail('expected a JSON object');
  if (typeof data.generated !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(data.generated)) {
    fail('"generated" must be a YYYY-MM-DD date');
  }
  if (!Array.isArray(data.providers) || data.providers.length === 0) return fail('"providers" must be a non-empty array');

  const names = new Set<string>(); // ids and aliases share one namespace (the provider option)
  data.providers.forEach((provider: unknown, i: number) => {
    if (!isObject(provider)) return fail(`providers[${i}] must be an object`);
    const where = `providers[${i}]${typeof provider.id === 'string' ? ` (${JSON.stringify(provider.id)})` : ''}`;
    if (typeof provider.id !== 'string' || !SLUG.test(provider.id)) fail(`${where}: "id" must be a lower-case slug`);
    if (typeof provider.name !== 'string' || provider.name.trim() === '') fail(`${where}: "name" must be a non-empty string`);
    if (typeof provider.source_url !== 'string') fail(`${where}: "source_url" must be a string`);
    for (const name of [provider.id as string, ...validAliases(provider.aliases, where, fail)]) {
      if (names.has(name)) fail(`${where}: id or alias ${JSON.stringify(name)} is used twice`);
      names.add(name);
    }
    if (!Array.isArray(provider.cidrs) || provider.cidrs.length === 0) fail(`${where}: "cidrs" must be a non-empty array`);
    (provider.cidrs as unknown[]).forEach((cidr, k) => {
      const problem = cidrProblem(cidr);
      if (problem) fail(`${where}: cidrs[${k}] ${JSON.stringify(cidr)} ${problem}`);
    });
  });
  return data as unknown as WebhookRangesDataset;
}

const SLUG = /^[a-z0-9][a-z0-9-]*$/;

function validAliases(aliases: unknown, where: string, fail: (what: string) => never): string[] {
  if (aliases === undefined) return [];
  if (!Array.isArray(aliases) || !aliases.every((a) => typeof a === 'string' && SLUG.test(a))) {
    return fail(`${where}: "aliases" must be an array of lower-case slugs`);
  }
  return aliases as string[];
}

/** Why `cidr` is not a clean network CIDR, or null when it is. */
export function cidrProblem(cidr: unknown): string | null {
  if (typeof cidr !== 'string') return 'is not a string';
  let parsed: [IpAddress, number];
  try {
    parsed = parseCidr(cidr);
  } catch {
    return 'is not a valid CIDR';
  }
  const [addr, bits] = parsed;
  const bytes = addr.toByteArray();
  for (let bit = bits; bit < bytes.length * 8; bit++) {
    if (bytes[bit >> 3] & (0x80 >> (bit & 7))) return 'has host bits set after the prefix';
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// --- engine ---------------------------------------------------------------------------------

/**
 * Build the lookup engine over a dataset (validated again here, since callers may pass one
 * built in code). All CIDRs go into one {@link CidrTable} whose values are provider indexes.
 */
export function createWebhookIpEngine(dataset: WebhookRangesDataset): WebhookIpEngine {
  validateWebhookRanges(dataset, 'dataset');
  const sources = dataset.providers;
  const table: CidrTable<number> = createCidrTable(
    sources.flatMap((provider, index) => provider.cidrs.map((cidr) => ({ cidr, value: index }))),
  );
  const filters = createProviderFilters(sources);
  // Copied, so later changes to the caller's dataset object cannot reach the answers.
  const names: readonly WebhookProvider[] = sources.map((p) => ({ id: p.id, name: p.name }));

  return {
    providers: sources.map((p) => ({ id: p.id, name: p.name, aliases: [...(p.aliases ?? [])] })),
    cidrCount: table.size,
    lookup(ip, options) {
      if (typeof ip !== 'string' || ip.length === 0) throw new LookupError('invalid_ip', 'ip is required');
      const v4 = parseDottedQuad(ip);
      if (v4 >= 0) {
        // Fast path: a plain dotted quad, already in canonical form, never touches ipaddr.js.
        const only = filters.fromOptions(options);
        if (NON_PUBLIC_V4.matchIPv4(v4).length > 0) throw notRoutable(ip);
        return { result: toResult(ip, table.matchIPv4(v4), only, names), cached: false };
      }
      // Everything else: surrounding whitespace is forgiven, then a strict parse.
      const addr = parseIpQuickly(ip);
      if (!addr) throw new LookupError('invalid_ip', `${quote(ip)} is not a valid IPv4 or IPv6 address`);
      const only = filters.fromOptions(options);
      const text = addr.kind() === 'ipv6' ? formatIPv6((addr as ipaddr.IPv6).parts) : formatIp(addr);
      if (!isPublic(addr)) throw notRoutable(text);
      return { result: toResult(text, table.match(addr), only, names), cached: false };
    },
  };
}

function toResult(ip: string, matches: readonly number[], only: ReadonlySet<number> | null, names: readonly WebhookProvider[]): WebhookIpResult {
  // Fresh objects every time: nothing the caller can reach is shared with the engine.
  const providers: WebhookProvider[] = [];
  for (const index of matches) {
    if (only !== null && !only.has(index)) continue;
    providers.push({ id: names[index].id, name: names[index].name });
  }
  return { ip, matched: providers.length > 0, providers };
}

function notRoutable(ip: string): LookupError {
  return new LookupError('ip_not_routable', `${ip} is not a public address (private, loopback, reserved or special-purpose)`);
}

/** The input, JSON-quoted and cut short, for error messages. */
function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}

// --- the provider option ----------------------------------------------------------------------

/**
 * The `provider` option: comma-separated ids or aliases, case-insensitive, blanks ignored
 * (an empty option means no filter). Resolved sets are memoised per option string, since
 * callers send the same few values over and over.
 */
function createProviderFilters(sources: WebhookRangeSource[]) {
  const indexByName = new Map<string, number>();
  sources.forEach((p, i) => {
    indexByName.set(p.id, i);
    for (const alias of p.aliases ?? []) indexByName.set(alias, i);
  });
  const aliases = sources.flatMap((p) => p.aliases ?? []);
  const known = `${sources.map((p) => p.id).join(', ')}${aliases.length ? ` (aliases: ${aliases.join(', ')})` : ''}`;
  const memo = new Map<string, ReadonlySet<number> | null>();

  function resolve(option: string): ReadonlySet<number> | null {
    const hit = memo.get(option);
    if (hit !== undefined) return hit;
    if (typeof option !== 'string') throw new LookupError('invalid_provider', 'provider must be a string');
    const names = option.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    let resolved: Set<number> | null = null;
    for (const name of names) {
      const index = indexByName.get(name);
      if (index === undefined) throw new LookupError('invalid_provider', `unknown provider ${quote(name)}; known: ${known}`);
      (resolved ??= new Set()).add(index);
    }
    if (memo.size >= 256) memo.clear(); // bounded: the option is caller-controlled
    memo.set(option, resolved);
    return resolved;
  }

  return {
    /** The allowed provider indexes, or null for all providers. */
    fromOptions(options: WebhookIpOptions | undefined): ReadonlySet<number> | null {
      return options?.provider === undefined ? null : resolve(options.provider);
    },
  };
}

// --- fast IP parsing ----------------------------------------------------------------------------
// ipaddr.js (through parseIp) costs 1-20 us per address; these keep a lookup near 0.1 us. Each
// accepts a subset of what parseIp accepts and hands everything else to it; the webhookip tests
// check them against parseIp, formatIp and isPublicIp with property tests.

/**
 * Strict dotted-quad IPv4 parse, the fast path for the common case: exactly four decimal
 * parts 0-255 without leading zeros (the same language as ipaddr.js isValidFourPartDecimal,
 * so the text is already canonical). Returns the address as an unsigned 32-bit number, or -1
 * for anything else, which then goes to the general parser. About 10x cheaper than ipaddr.js.
 */
export function parseDottedQuad(text: string): number {
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
    } else {
      const d = c - 48;
      if (d < 0 || d > 9) return -1;
      if (digits > 0 && part === 0) return -1; // leading zero
      part = part * 10 + d;
      if (part > 255) return -1;
      digits++;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + part;
}

/**
 * parseIp for anything but a plain dotted quad, with a fast path for plain hex IPv6.
 * parseIp tries IPv4 first, and ipaddr.js's IPv4 check throws and catches an exception on
 * every IPv6 string (about 20 us); the hex parser below avoids that for the common forms.
 */
function parseIpQuickly(text: string): IpAddress | null {
  const trimmed = text.trim();
  const parts = parseIPv6Hex(trimmed);
  // IPv4-mapped addresses go the long way, so parseIp unwraps them to IPv4.
  if (parts && !(parts[0] === 0 && parts[1] === 0 && parts[2] === 0 && parts[3] === 0 && parts[4] === 0 && parts[5] === 0xffff)) {
    return new ipaddr.IPv6(parts);
  }
  return parseIp(trimmed);
}

/** isPublicIp, with a table lookup instead of ipaddr.js's walk over its range list for IPv6. */
function isPublic(addr: IpAddress): boolean {
  return addr.kind() === 'ipv6' ? NON_PUBLIC_V6.match(addr).length === 0 : isPublicIp(addr);
}

/**
 * Strict parse of colon-hex IPv6 (`2606:50c0::1`, `2001:DB8:0:0:0:0:0:1`): 1-4 hex digits per
 * group, at most one `::` standing for one or more zero groups. Returns the eight 16-bit
 * groups, or null for anything else (zone ids, dotted IPv4 tails, garbage), which the caller
 * hands to parseIp. It accepts a subset of what ipaddr.js accepts, with the same groups.
 */
export function parseIPv6Hex(text: string): number[] | null {
  const length = text.length;
  if (length < 2 || length > 39) return null;
  const parts: number[] = [];
  let gap = -1; // where `::` sits among the groups
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
    if (digits === 0 || parts.length === 8) return null;
    parts.push(value);
    if (i === length) break;
    if (text.charCodeAt(i) !== 58) return null;
    i++;
    if (text.charCodeAt(i) === 58) {
      if (gap >= 0) return null;
      gap = parts.length;
      i++;
    } else if (i === length) {
      return null; // a single trailing colon
    }
  }
  if (gap < 0) return parts.length === 8 ? parts : null;
  if (parts.length > 7) return null; // `::` must stand for at least one group
  const out = [0, 0, 0, 0, 0, 0, 0, 0];
  const tail = parts.length - gap; // groups after `::` go to the end
  for (let k = 0; k < gap; k++) out[k] = parts[k];
  for (let k = 0; k < tail; k++) out[8 - tail + k] = parts[gap + k];
  return out;
}

/**
 * RFC 5952 text of eight groups (lower-case hex, no leading zeros, the leftmost longest run
 * of two or more zero groups as `::`): what formatIp returns, at a fraction of the cost.
 */
export function formatIPv6(parts: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1; // a single zero group is never compressed
  for (let i = 0; i < 8; ) {
    if (parts[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && parts[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return parts.map(hex).join(':');
  const head = parts.slice(0, bestStart).map(hex).join(':');
  const tail = parts.slice(bestStart + bestLength).map(hex).join(':');
  return `${head}::${tail}`;
}

const hex = (group: number) => group.toString(16);

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f
  if (c >= 65 && c <= 70) return c - 55; // A-F
  return -1;
}

/**
 * IPv4 ranges that isPublicIp rejects, as a table for the fast path. This mirrors ipaddr.js's
 * IPv4 SpecialRanges (what `range() !== 'unicast'` means); the webhookip tests compare the
 * fast path with parseIp + isPublicIp at every boundary of ipaddr.js's own list.
 */
const NON_PUBLIC_V4 = createCidrTable(
  [
    '0.0.0.0/8', // unspecified
    '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', // private
    '100.64.0.0/10', // carrier-grade NAT
    '127.0.0.0/8', // loopback
    '169.254.0.0/16', // link-local
    '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', // reserved, documentation, benchmarking
    '192.175.48.0/24', '192.31.196.0/24', // AS112
    '192.52.193.0/24', // AMT
    '224.0.0.0/4', // multicast
    '240.0.0.0/4', // reserved
    '255.255.255.255/32', // broadcast
  ].map((cidr) => ({ cidr, value: true })),
);

/** IPv6 ranges that isPublicIp rejects: ipaddr.js's IPv6 SpecialRanges, tested the same way. */
const NON_PUBLIC_V6 = createCidrTable(
  [
    '::/128', '::1/128', // unspecified, loopback
    'fe80::/10', 'fec0::/10', 'fc00::/7', 'ff00::/8', // link-local, old site-local, unique local, multicast
    '::ffff:0:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', // IPv4 translation (mapped ones arrive as IPv4)
    '100::/64', // discard
    '2002::/16', '2001::/32', '2001::/23', '2001:2::/48', '2001:3::/32', // 6to4, Teredo, IETF reserved, benchmarking, AMT
    '2001:4:112::/48', '2620:4f:8000::/48', // AS112
    '2001:10::/28', '2001:20::/28', '2001:30::/28', // ORCHID, ORCHIDv2, drone remote ID
    '2001:db8::/32', '3fff::/20', // documentation
    '5f00::/16', // segment routing
  ].map((cidr) => ({ cidr, value: true })),
);
