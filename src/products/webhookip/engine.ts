/**
 * The webhookip engine: is a public IP inside a webhook provider's published ranges?
 *
 * Input decisions: the IP must be a string; surrounding whitespace is forgiven (it is common in
 * copied values and cannot change which address is meant), anything else must be a strict
 * standard form (no `1.2.3`, no leading zeros, no zone ids). IPv4-mapped IPv6 is answered as
 * the IPv4 address, and `ip` in the result is always the canonical text (dotted quad, or
 * RFC 5952 for IPv6).
 *
 * Layout: dataset loading and validation, the engine, then the `provider` option. Parsing,
 * classifying and formatting addresses is lib/ip's job (fast paths included).
 */
import { join } from 'node:path';
import { LookupError, quoteInput, SeclookupError } from '../../errors.js';
import { createCidrTable, type CidrTable } from '../../lib/cidr-table.js';
import { readJsonDataset } from '../../lib/datasets.js';
import { hasHostBits, isPublicIp, parseCidr, type Cidr, type IpAddress } from '../../lib/ip.js';
import { parseIpInput, requireRoutable } from '../../lib/ip-input.js';
import { LazyJsonOutcome } from '../../lib/json-memo.js';
import type { LookupOutcome } from '../../lib/outcome.js';
import type { WebhookIpOptions, WebhookIpResult, WebhookProvider, WebhookRangeSource, WebhookRangesDataset } from './types.js';

export interface WebhookIpEngine {
  /**
   * Which providers' published ranges contain `ip`? Synchronous and sub-microsecond for IPv4
   * (no cache: `cached` is always false). Throws LookupError `invalid_ip` (400),
   * `invalid_provider` (400) or `ip_not_routable` (422), checked in that order.
   */
  prepare(ip: string, options?: WebhookIpOptions): WebhookIpQuery;
  /** The match for a prepared query; cannot fail. */
  lookup(query: WebhookIpQuery): LookupOutcome<WebhookIpResult>;
  /** Every provider in dataset order, with its aliases (empty when it has none). */
  readonly providers: (WebhookProvider & { aliases: string[] })[];
  /** Total CIDRs across all providers. */
  readonly cidrCount: number;
  /** The dataset's `generated` date (YYYY-MM-DD): the date of the ranges it answers from. */
  readonly generated: string;
}

/** A checked webhookip query: canonical IP text, the parsed address, the allowed providers. */
export interface WebhookIpQuery {
  ip: string;
  /** IPv4 as a number (the fast path), otherwise the parsed address. */
  address: number | IpAddress;
  /** Provider indexes allowed by the `provider` option; null for all. */
  only: ReadonlySet<number> | null;
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
 * file path, or a label for a dataset built in code). Every CIDR must parse, have no host bits
 * set, be public and no broader than WEBHOOK_PREFIX_FLOOR; ids and aliases must be unique
 * lower-case slugs.
 */
export function validateWebhookRanges(data: unknown, source: string): WebhookRangesDataset {
  const fail = (what: string): never => {
    throw new SeclookupError('dataset_invalid', `seclookup: webhook ranges ${source}: ${what}`);
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
      const problem = webhookRangeProblem(cidr);
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
  let parsed: Cidr;
  try {
    parsed = parseCidr(cidr);
  } catch {
    return 'is not a valid CIDR';
  }
  return hasHostBits(parsed) ? 'has host bits set after the prefix' : null;
}

/**
 * The narrowest prefix length a provider range may have: no webhook sender owns more than a /8
 * of IPv4 or a /16 of IPv6, so a broader range (up to `0.0.0.0/0`, which would match every
 * address) is a broken feed or a bad hand edit. The loader and `data update` both apply it.
 */
export const WEBHOOK_PREFIX_FLOOR = { ipv4: 8, ipv6: 16 } as const;

/**
 * Why `cidr` cannot be a webhook provider range, or null: not a clean network CIDR, broader than
 * WEBHOOK_PREFIX_FLOOR, or not public address space.
 */
export function webhookRangeProblem(cidr: unknown): string | null {
  const problem = cidrProblem(cidr);
  if (problem) return problem;
  const [address, bits] = parseCidr(cidr as string);
  const floor = WEBHOOK_PREFIX_FLOOR[address.kind()];
  if (bits < floor) return `is broader than /${floor} (it would match addresses no provider owns)`;
  if (!isPublicIp(address)) return 'is not a public range';
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
  const table: CidrTable<number> = createCidrTable(sources.flatMap((provider, index) => provider.cidrs.map((cidr) => ({ cidr, value: index }))));
  const filters = createProviderFilters(sources);
  // Copied, so later changes to the caller's dataset object cannot reach the answers.
  const names: readonly WebhookProvider[] = sources.map((p) => ({ id: p.id, name: p.name }));
  // Each provider's JSON, made once: an answer's JSON is put together from them (toJson).
  const namesJson: readonly string[] = names.map((p) => JSON.stringify(p));

  function prepare(ip: string, options?: WebhookIpOptions): WebhookIpQuery {
    const input = parseIpInput(ip);
    const only = filters.fromOptions(options);
    requireRoutable(input);
    return { ip: input.ip, address: input.version === 4 ? input.value : input.address, only };
  }

  function match(query: WebhookIpQuery): LookupOutcome<WebhookIpResult> {
    const matches = typeof query.address === 'number' ? table.matchIPv4(query.address) : table.match(query.address);
    // The JSON is made when the API reads it, from the matches (not from the result, which is the caller's).
    return new LazyJsonOutcome(toResult(query.ip, matches, query.only, names), false, undefined, () => toJson(query.ip, matches, query.only, namesJson));
  }

  return {
    providers: sources.map((p) => ({ id: p.id, name: p.name, aliases: [...(p.aliases ?? [])] })),
    cidrCount: table.size,
    generated: dataset.generated,
    prepare,
    lookup: match,
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

/** `JSON.stringify(toResult(...))`, byte for byte, from the providers' JSON made once. */
function toJson(ip: string, matches: readonly number[], only: ReadonlySet<number> | null, namesJson: readonly string[]): string {
  let providers = '';
  for (const index of matches) {
    if (only !== null && !only.has(index)) continue;
    providers += providers === '' ? namesJson[index] : `,${namesJson[index]}`;
  }
  return `{"ip":${JSON.stringify(ip)},"matched":${providers !== ''},"providers":[${providers}]}`;
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
    const names = option
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    let resolved: Set<number> | null = null;
    for (const name of names) {
      const index = indexByName.get(name);
      if (index === undefined) throw new LookupError('invalid_provider', `unknown provider ${quoteInput(name)}; known: ${known}`);
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
