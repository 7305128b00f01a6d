/**
 * The asn engine: the origin AS, its organization and the covering network of a public IP,
 * from local data (sources.ts), optionally completed by a Team Cymru style DNS source
 * (cymru.ts) for `country_code`, `registry` and `allocated`.
 *
 * Local answers are synchronous and never cached (a binary search is faster than a cache).
 * With the DNS source on, answers go through the shared result cache, kept while the DNS
 * answer is fresh. When the DNS source fails (timeout, SERVFAIL, garbage) the answer comes from
 * the local data with those three fields null, and is not cached; with no local record either,
 * the lookup fails with 502 `lookup_failed` **(ours)**.
 *
 * A 6to4, Teredo or NAT64 well-known-prefix address is answered for the IPv4 address it carries
 * (lib/ip-input `lookupAddress`: the relay's 2002::/16 or 2001::/32 route says nothing about the
 * host): `ip` is the input, `asn`, `as_org` and `network` (an IPv4 prefix) the IPv4's, and the
 * DNS source is asked about the IPv4. `record(input)` does the same, for geoip and riskscore.
 */
import { invalidOption, isSeclookupError, LookupError } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import { checkMs, withDeadline } from '../../lib/deadline.js';
import { freshnessOf, type DnsResolver } from '../../lib/dns/index.js';
import { lookupAddress, readRoutableIp, type IpInput } from '../../lib/ip-input.js';
import { createJsonMemo, JSON_MEMO_SIZE, LazyJsonOutcome } from '../../lib/json-memo.js';
import { checkCacheSizeLimit, checkKnownNames, describeValue } from '../../lib/option-checks.js';
import type { LookupOutcome } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import { CYMRU_ZONE, CYMRU_ZONE6, cymruName, parseCymruAnswer } from './cymru.js';
import { partsToWords } from './network.js';
import { createOrgClassifier } from './network-type.js';
import type { LocalSource } from './sources.js';
import type { AsnCymruOptions, AsnEngine, AsnNetworkType, AsnRecord, AsnResult } from './types.js';

export type { AsnEngine } from './types.js';

export interface AsnEngineDeps {
  local: LocalSource;
  cymru?: boolean | AsnCymruOptions;
  /** The shared resolver, asked for only at the first DNS query. */
  dns: () => DnsResolver;
  /** The result cache, used only with the DNS source. */
  cache: ProductCache<CachedAsn> | null;
  now: () => number;
  /** Local answers whose JSON is kept (by address; the local data never changes under an engine). @default JSON_MEMO_SIZE; 0 for none */
  jsonMemoSize?: number;
}

export type CachedAsn = CachedResult<AsnResult>;

/** Result cache entries unless `cacheSize` says otherwise (only with the DNS source). */
export const ASN_CACHE_SIZE = 10_000;

const TYPE_CODES: readonly AsnNetworkType[] = ['unknown', 'hosting', 'isp', 'education', 'government'];

export function createAsnEngine(deps: AsnEngineDeps): AsnEngine {
  const { local } = deps;
  const cymru = resolveCymru(deps.cymru);
  const classify = createOrgClassifier();
  const builtAtMs = local.builtAtMs;

  // The fast path over the CSV index: the result is built straight from the arrays, and each
  // organization's network_type is classified once (by name number; 255 = not yet).
  const index = local.index?.data;
  const ipv4 = local.index?.ipv4;
  const ipv6 = local.index?.ipv6;
  const typeOfOrg = index ? new Uint8Array(index.orgNames.length).fill(255) : null;
  const orgType = (n: number): AsnNetworkType => {
    let code = typeOfOrg![n];
    if (code === 255) code = typeOfOrg![n] = TYPE_CODES.indexOf(classify(index!.orgNames[n]));
    return TYPE_CODES[code];
  };

  function localResult(given: IpInput): AsnResult {
    const query = lookupAddress(given);
    if (query !== given) {
      const result = localResult(query);
      result.ip = given.ip;
      return result;
    }
    if (index) {
      if (query.version === 4) {
        const block = ipv4!.find(query.value);
        if (block < 0) return emptyResult(query.ip);
        const i = ipv4!.row(block);
        const n = index.v4.orgs[i];
        return {
          ip: query.ip,
          asn: index.v4.asns[i],
          as_org: index.orgNames[n],
          network: ipv4!.network(block),
          country_code: null,
          registry: null,
          allocated: null,
          network_type: orgType(n),
        };
      }
      const words = partsToWords(query.address.parts);
      const i = ipv6!.find(words);
      if (i < 0) return emptyResult(query.ip);
      const n = index.v6.orgs[i];
      return {
        ip: query.ip,
        asn: index.v6.asns[i],
        as_org: index.orgNames[n],
        network: ipv6!.network(i, words),
        country_code: null,
        registry: null,
        allocated: null,
        network_type: orgType(n),
      };
    }
    const record = local.find(query);
    return record ? fromRecord(query.ip, record) : emptyResult(query.ip);
  }

  function fromRecord(ip: string, record: AsnRecord): AsnResult {
    return {
      ip,
      asn: record.asn,
      as_org: record.org,
      network: record.network,
      country_code: null,
      registry: null,
      allocated: null,
      network_type: classify(record.org),
    };
  }

  // A local answer is a pure function of the address: its JSON is made once per address.
  const localAnswers = createJsonMemo<AsnResult>(deps.jsonMemoSize ?? JSON_MEMO_SIZE);
  const localLookup = (query: IpInput): LookupOutcome<AsnResult> => {
    const result = localResult(query);
    // The JSON is made when the API reads it, from a result built again (the one handed out is the caller's to change).
    return new LazyJsonOutcome(result, false, new Date(builtAtMs), () => localAnswers.json(query.ip, () => localResult(query), local));
  };

  let lookup: AsnEngine['lookup'] = localLookup;
  if (cymru) {
    const results = createResultCache(deps.cache, (r: AsnResult) => ({ ...r }));
    lookup = (query) => results.lookup(query.ip, () => withDnsSource(query));
  }

  async function withDnsSource(given: IpInput): Promise<Computed<AsnResult>> {
    const query = lookupAddress(given);
    const record = local.find(query);
    const question = deps.dns().resolve(cymruName(query, cymru!.zone, cymru!.zone6), 'TXT');
    let answer;
    try {
      answer = await (cymru!.timeoutMs === undefined ? question : withDeadline(question, cymru!.timeoutMs, 'asn DNS source'));
    } catch (error) {
      if (!isSeclookupError(error, 'timeout') && !isSeclookupError(error, 'upstream_failed')) throw error;
      return fallback(given, record, (error as Error).message);
    }
    const { fetchedAt, ttlMs } = freshnessOf([answer], deps.now());
    if (answer.status !== 'ok') {
      // The DNS source has no route for it: the local data's answer, which the DNS answer confirms as current.
      return { result: record ? fromRecord(given.ip, record) : emptyResult(given.ip), fetchedAt, ttlMs };
    }
    const origin = parseCymruAnswer(answer.records, query);
    if (!origin) return fallback(given, record, `the DNS source answered ${answer.records.length} TXT record(s), none usable`);
    const org = record && record.asn === origin.asn ? record.org : local.orgOf(origin.asn);
    const result: AsnResult = {
      ip: given.ip,
      asn: origin.asn,
      as_org: org,
      network: origin.network,
      country_code: origin.country_code,
      registry: origin.registry,
      allocated: origin.allocated,
      network_type: classify(org),
    };
    return { result, fetchedAt, ttlMs };
  }

  /** The DNS source failed: the local answer, not cached, or 502 when there is none. */
  function fallback(query: IpInput, record: AsnRecord | null, why: string): Computed<AsnResult> {
    if (!record) throw new LookupError('lookup_failed', `asn: the DNS source failed (${why}) and the local data has no record for ${query.ip}; retry later`);
    return { result: fromRecord(query.ip, record), fetchedAt: builtAtMs, ttlMs: 0 };
  }

  return {
    prepare: (ip) => readRoutableIp(ip),
    lookup: (query) => lookup(query),
    record: (input) => local.find(lookupAddress(input)),
    databaseRecords: local.records,
    source: local.info,
    cymru: cymru ? { zone: cymru.zone, zone6: cymru.zone6 } : null,
  };
}

function emptyResult(ip: string): AsnResult {
  return { ip, asn: null, as_org: null, network: null, country_code: null, registry: null, allocated: null, network_type: 'unknown' };
}

/** The DNS source's settings, checked; null when it is off. */
export function resolveCymru(option: unknown): { zone: string; zone6: string; timeoutMs?: number } | null {
  if (option === undefined || option === false) return null;
  if (option !== true && (typeof option !== 'object' || option === null || Array.isArray(option)))
    throw invalidOption(`asn: cymru must be true, false or { zone, zone6, timeoutMs } (got ${describeValue(option)})`);
  const settings: AsnCymruOptions = option === true ? {} : (option as AsnCymruOptions);
  checkKnownNames(settings as Record<string, unknown>, ['zone', 'zone6', 'timeoutMs'], 'asn cymru');
  const zone = checkZone(settings.zone ?? CYMRU_ZONE, 'zone');
  const zone6 = checkZone(settings.zone6 ?? CYMRU_ZONE6, 'zone6');
  if (settings.timeoutMs !== undefined) checkMs(settings.timeoutMs, 'asn cymru.timeoutMs');
  return { zone, zone6, timeoutMs: settings.timeoutMs };
}

/** A zone name, lower case without a trailing dot; TypeError `invalid_option` otherwise. */
export function checkZone(zone: unknown, name: string): string {
  const text = typeof zone === 'string' ? zone.trim().toLowerCase().replace(/\.$/, '') : '';
  if (!/^(?=.{1,200}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)+$/.test(text)) {
    throw invalidOption(`asn: cymru.${name} must be a DNS zone name like ${name === 'zone' ? CYMRU_ZONE : CYMRU_ZONE6} (got ${JSON.stringify(zone)})`);
  }
  return text;
}

/** Checked `cacheSize`: a non-negative whole number. */
export function checkCacheSize(value: unknown): number {
  const size = value ?? ASN_CACHE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalidOption(`asn cacheSize must be a non-negative integer (got ${describeValue(value)})`);
  return checkCacheSizeLimit(size, 'asn cacheSize');
}
