/**
 * The dnsbl engine: is a public IPv4 address listed in the configured DNS blocklists?
 *
 * One A query per zone (`4.3.2.1.zen.spamhaus.org` for 1.2.3.4), all zones in parallel through
 * the shared resolver, each bounded by the resolver's own deadline or `zoneTimeoutMs`. Answers
 * are classified in classify.ts; a zone that fails is reported in `failed_zones`, never as
 * clean, and when every zone fails the lookup is 502 `lookup_failed`.
 *
 * Cache: complete results (every zone answered) are kept until the earliest of their DNS
 * answers expires, so `cached: true` never outlives the data. A result with a failed zone is
 * not kept: the next lookup asks the failed zones again, while the zones that answered come
 * from the resolver's own cache.
 */
import { invalidOption, LookupError, quoteInput } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import type { DatasetDate } from '../../lib/datasets.js';
import { checkMs, withDeadline } from '../../lib/deadline.js';
import { freshnessOf, type DnsAnswer, type DnsResolver } from '../../lib/dns/index.js';
import { checkCacheSizeLimit, describeValue } from '../../lib/option-checks.js';
import { parseIpInput, requireRoutable } from '../../lib/ip-input.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import { classifyAnswer, classifyFailure, type ZoneVerdict } from './classify.js';
import type { DnsblFailedZone, DnsblListing, DnsblOptions, DnsblResult, DnsblZone } from './types.js';
import { canonicalZoneName, compileZone, copyZone, type CompiledZone } from './zones.js';

/** What the cache keeps per query: the result, its JSON, and when its oldest DNS answer was fetched. */
export type CachedDnsbl = CachedResult<DnsblResult>;

/** A checked query: the canonical IP, the zones to ask and the cache key. */
export interface DnsblQuery {
  ip: string;
  /** The IP as an unsigned 32-bit number. */
  value: number;
  zones: readonly CompiledZone[];
  /** The IP, then the chosen zones when the `zones` option narrowed them. */
  cacheKey: string;
}

export interface DnsblEngine {
  /**
   * Check the input, with no I/O: LookupError `invalid_ip` (400: missing, malformed),
   * `invalid_request` (400: an unknown name in the `zones` option), `ip_not_routable` (422:
   * IPv6, private, loopback, CGNAT, reserved), in that order.
   */
  prepare(ip: string, options?: DnsblOptions): DnsblQuery;
  /**
   * Query the zones (or answer from the cache, synchronously with the in-process cache).
   * Rejects with LookupError `lookup_failed` (502) when every zone failed.
   */
  lookup(query: DnsblQuery): MaybePromise<LookupOutcome<DnsblResult>>;
  /** The configured zones, in order (copies). */
  readonly zones: DnsblZone[];
  /** The dates of the data files its zones were read from (zones.json's `generated`); empty for zones given in code. */
  readonly dataDates: readonly DatasetDate[];
}

export interface DnsblEngineDeps {
  /** Checked zone definitions (zones.ts), in the order results list them. */
  zones: readonly DnsblZone[];
  /** The shared resolver, asked for only at the first query. */
  dns: () => DnsResolver;
  cache: ProductCache<CachedDnsbl> | null;
  /** Clock in ms, for the age of cached DNS answers. */
  now: () => number;
  /** Per-zone deadline in ms; undefined leaves it to the resolver. */
  zoneTimeoutMs?: number;
  /** The dates of the data files the zones were read from. @default none */
  dataDates?: readonly DatasetDate[];
}

/** Entries of the dnsbl result cache unless `cacheSize` says otherwise. */
export const DNSBL_CACHE_SIZE = 10_000;

export function createDnsblEngine(deps: DnsblEngineDeps): DnsblEngine {
  if (deps.zoneTimeoutMs !== undefined) checkMs(deps.zoneTimeoutMs, 'dnsbl zoneTimeoutMs');
  const zones = deps.zones.map(compileZone);
  const selections = createZoneSelections(zones);

  function prepare(ip: string, options?: DnsblOptions): DnsblQuery {
    const input = parseIpInput(ip);
    const selection = selections.pick(options?.zones);
    if (input.version === 6) {
      throw new LookupError('ip_not_routable', `${input.ip} is an IPv6 address; DNSBL zones are checked for public IPv4 addresses only`);
    }
    const { ip: text, value } = requireRoutable(input);
    return { ip: text, value, zones: selection.zones, cacheKey: selection.key ? `${text} ${selection.key}` : text };
  }

  const results = createResultCache(deps.cache, copyResult);
  const check = (query: DnsblQuery) => results.lookup(query.cacheKey, () => queryZones(query));

  async function queryZones(query: DnsblQuery): Promise<Computed<DnsblResult>> {
    const dns = deps.dns();
    const reversed = reverseOctets(query.value); // made here, not in prepare: a cache hit never needs it
    const answers = await Promise.all(query.zones.map((zone) => askZone(dns, zone, reversed)));
    const failed = answers.filter((a) => a.verdict.kind === 'failed');
    if (failed.length === answers.length) {
      const reasons = failed.map(({ zone, verdict }) => `${zone.zone}: ${(verdict as { reason: string }).reason}`).join('; ');
      throw new LookupError('lookup_failed', `every DNSBL zone failed (${reasons}); retry later`);
    }
    const answered = answers.flatMap((a) => (a.dns ? [a.dns] : []));
    const { fetchedAt, ttlMs } = freshnessOf(answered, deps.now());
    // Kept until its first DNS answer expires; a result with a failed zone is not kept, so the
    // next lookup asks the failed zones again (the others answer from the resolver's cache).
    return { result: toResult(query.ip, answers), fetchedAt, ttlMs: failed.length === 0 ? ttlMs : 0 };
  }

  async function askZone(dns: DnsResolver, zone: CompiledZone, reversed: string): Promise<ZoneAnswer> {
    const question = dns.resolve(`${reversed}.${zone.zone}`, 'A');
    try {
      const answer = await (deps.zoneTimeoutMs === undefined ? question : withDeadline(question, deps.zoneTimeoutMs, `DNSBL zone ${zone.zone}`));
      return { zone, verdict: classifyAnswer(zone, answer), dns: answer };
    } catch (error) {
      const verdict = classifyFailure(error);
      if (!verdict) throw error;
      return { zone, verdict };
    }
  }

  return {
    prepare,
    lookup: check,
    get zones() {
      return deps.zones.map(copyZone);
    },
    dataDates: [...(deps.dataDates ?? [])],
  };
}

interface ZoneAnswer {
  zone: CompiledZone;
  verdict: ZoneVerdict;
  /** The DNS answer, when there was one. */
  dns?: DnsAnswer<'A'>;
}

function toResult(ip: string, answers: ZoneAnswer[]): DnsblResult {
  const lists: DnsblListing[] = [];
  const failedZones: DnsblFailedZone[] = [];
  for (const { zone, verdict } of answers) {
    if (verdict.kind === 'listed') lists.push({ zone: zone.zone, name: zone.name, responses: verdict.responses, meanings: verdict.meanings });
    if (verdict.kind === 'failed') {
      const failure: DnsblFailedZone = { zone: zone.zone, name: zone.name, reason: verdict.reason, message: verdict.message };
      if (verdict.responses) failure.responses = verdict.responses;
      failedZones.push(failure);
    }
  }
  return { ip, listed: lists.length > 0, list_count: lists.length, lists, checked: answers.length, failed_zones: failedZones };
}

function copyResult(r: DnsblResult): DnsblResult {
  return {
    ip: r.ip,
    listed: r.listed,
    list_count: r.list_count,
    lists: r.lists.map((l) => ({ zone: l.zone, name: l.name, responses: [...l.responses], meanings: [...l.meanings] })),
    checked: r.checked,
    failed_zones: r.failed_zones.map((f) => (f.responses ? { ...f, responses: [...f.responses] } : { ...f })),
  };
}

/**
 * The `zones` option: configured zone names, comma-separated or as an array, case-insensitive;
 * empty means every zone. Resolved selections are memoised per option string, as callers send
 * the same few over and over.
 */
function createZoneSelections(zones: readonly CompiledZone[]) {
  const all = { zones, key: '' };
  const indexByName = new Map(zones.map((zone, i) => [zone.zone, i]));
  const memo = new Map<string, { zones: readonly CompiledZone[]; key: string }>();

  function resolve(option: string): { zones: readonly CompiledZone[]; key: string } {
    const names = option.split(',').map(canonicalZoneName).filter(Boolean);
    const chosen = new Set<number>();
    for (const name of names) {
      const index = indexByName.get(name);
      if (index === undefined) {
        throw new LookupError('invalid_request', `unknown DNSBL zone ${quoteInput(name)}; configured: ${zones.map((z) => z.zone).join(', ')}`);
      }
      chosen.add(index);
    }
    if (chosen.size === 0 || chosen.size === zones.length) return all;
    const picked = [...chosen].sort((a, b) => a - b).map((i) => zones[i]);
    return { zones: picked, key: picked.map((z) => z.zone).join(',') };
  }

  return {
    pick(option: DnsblOptions['zones']): { zones: readonly CompiledZone[]; key: string } {
      if (option === undefined) return all;
      if (typeof option !== 'string' && !(Array.isArray(option) && option.every((name) => typeof name === 'string'))) {
        throw new LookupError('invalid_request', 'zones must be a string of comma-separated zone names or an array of them');
      }
      const text = typeof option === 'string' ? option : option.join(',');
      let selection = memo.get(text);
      if (!selection) {
        selection = resolve(text);
        if (memo.size >= 256) memo.clear(); // bounded: the option may come from callers
        memo.set(text, selection);
      }
      return selection;
    },
  };
}

/** `4.3.2.1` for 1.2.3.4 (an unsigned 32-bit number). */
function reverseOctets(value: number): string {
  return `${value & 0xff}.${(value >>> 8) & 0xff}.${(value >>> 16) & 0xff}.${value >>> 24}`;
}

/** Checked `cacheSize`: a non-negative whole number. */
export function checkCacheSize(value: unknown): number {
  const size = value ?? DNSBL_CACHE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalidOption(`dnsbl cacheSize must be a non-negative integer (got ${describeValue(value)})`);
  return checkCacheSizeLimit(size, 'dnsbl cacheSize');
}
