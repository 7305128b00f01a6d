/**
 * The riskscore engine: one provider answers each lookup. `local` (the default) combines the
 * bundled open data (local.ts, one CidrTable for every range list, Sets for ASN lists) with the
 * geoip and asn engines for location and network; `ipinfo` and `ipqualityscore` ask an upstream
 * API (upstream.ts) through the shared result cache. With the local provider configured, its
 * data must load (a missing or broken list fails the build, naming the file); with an upstream
 * it is not read at all. With neither (`local: false` and no upstream), lookups are 503
 * `upstream_unconfigured` (checked in prepare: never billed).
 *
 * A 6to4, Teredo or NAT64 well-known-prefix address is judged by the IPv4 address it carries
 * (lib/ip-input `lookupAddress`), which is the IPv4 the traffic comes from: the 6to4 site's own
 * public address, the Teredo client's public (mapped) address, the IPv4 sender behind a NAT64
 * translator. Lists, ASN, location, the DNSBL zones and an upstream are all asked about that
 * IPv4; `ip` stays the input. Matching the IPv6 text instead judged every 6to4 address by the
 * 2002::/16 block (a cloud list has it whole; the relay's ASN made each one "hosting").
 */
import { LookupError, SeclookupError, invalidOption } from '../../errors.js';
import type { OutboundSlots } from '../../lib/outbound-slots.js';
import type { ProductCache } from '../../lib/cache.js';
import { resolveTimeouts } from '../../lib/deadline.js';
import { lookupAddress, readRoutableIp, type IpInput } from '../../lib/ip-input.js';
import { checkCacheSizeLimit, checkOptionalBoolean, checkOptionalString, checkTimeoutOptions, describeValue } from '../../lib/option-checks.js';
import { isPromise, type LookupOutcome, type MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult } from '../../lib/result-cache.js';
import { sharedFileData } from '../../lib/shared-file-data.js';
import type { AsnRecord } from '../asn/types.js';
import { createOrgClassifier } from '../asn/network-type.js';
import type { DnsblEngine } from '../dnsbl/engine.js';
import type { DnsblListing } from '../dnsbl/types.js';
import type { Geo } from '../geoip/record.js';
import type { EngineContext } from '../module.js';
import { loadLocalData, localDataFiles, matchInput, rangeEvidence, type LocalData, type RangeEvidence } from './local.js';
import { DEFAULT_IPSUM_THRESHOLD, NO_EVIDENCE, intelligenceOf, type Intelligence } from './score.js';
import { createUpstreamClient, UPSTREAM_URLS, type UpstreamClient } from './upstream.js';
import type { ProviderName, RiskScoreEngineOptions, RiskScoreLocation, RiskScoreResult } from './types.js';
import { redactUserinfo } from '../../lib/redact-url.js';

export interface RiskScoreEngine {
  /** 400 `invalid_ip`, 422 `ip_not_routable`, then 503 `upstream_unconfigured` when no provider can answer. No I/O. */
  prepare(ip: string): IpInput;
  lookup(input: IpInput): MaybePromise<LookupOutcome<RiskScoreResult>>;
  /** The provider that answers: `local`, `ipinfo`, `ipqualityscore`, or null when none can. */
  readonly provider: ProviderName | null;
  /** Entries of the local datasets (0 when the local data is not loaded). */
  readonly databaseRecords: number;
  /**
   * The local data, when loaded (its groups, snapshot, filtered entries), and why not otherwise
   * (an upstream is configured, or `local: false`). Never "missing": missing data fails the build.
   */
  readonly local: LocalData | null;
  readonly localUnavailable: string | null;
}

export interface RiskScoreEngineDeps {
  options: RiskScoreEngineOptions | undefined;
  dataDir: string;
  /** The engines it builds on (EngineContext.engine, typed by the module's `needs`). */
  engine: EngineContext<unknown, 'geoip' | 'asn' | 'dnsbl'>['engine'];
  cache: <V>(settings: { ttlMs?: number; maxEntries: number }) => ProductCache<V> | null;
  now: () => number;
  /** The cap on outbound sockets an upstream call takes a slot of (the outbound guard's). @default none */
  slots?: OutboundSlots;
}

const NO_ZONES: readonly string[] = Object.freeze([]);
/** The 503 a client reads when no provider can answer (the local data turned off, no upstream). */
export const NO_PROVIDER = 'riskscore has no provider here: the local data is turned off and no upstream is configured';

export const UPSTREAM_TIMEOUTS = { connectMs: 2_000, totalMs: 5_000 } as const;
export const DEFAULT_CACHE_SIZE = 10_000;
export const DEFAULT_CACHE_TTL_MS = 3_600_000;
/**
 * Local answers are kept for less: the lists only change with a restart, but the geoip engine
 * may reload its database while running (`watch`), and its location should show within minutes.
 */
export const LOCAL_CACHE_TTL_MS = 600_000;

export function createRiskScoreEngine(deps: RiskScoreEngineDeps): RiskScoreEngine {
  const options = checkRiskScoreOptions(deps.options ?? {});
  const upstreamKind = options.provider === 'ipinfo' || options.provider === 'ipqualityscore' ? options.provider : null;

  let local: LocalData | null = null;
  let localUnavailable: string | null = null;
  if (upstreamKind) localUnavailable = `provider ${upstreamKind} is configured`;
  else if (options.local === false) localUnavailable = 'the local provider is disabled';
  else {
    // The local provider is the one configured, so its data is needed: a missing or broken
    // list fails the build (SeclookupError `dataset_missing` / `dataset_invalid` naming the
    // file), as every product's data does, and `serve` stops at start. Never a 503 per lookup.
    local = sharedFileData('riskscore-local', localDataFiles(deps.dataDir), () => loadLocalData(deps.dataDir));
  }

  const upstream: UpstreamClient | null = upstreamKind
    ? createUpstreamClient(
        upstreamKind,
        options.url ?? UPSTREAM_URLS[upstreamKind],
        options.key!,
        resolveTimeouts(options.timeouts, UPSTREAM_TIMEOUTS, 'riskscore timeouts'),
        deps.slots,
      )
    : null;
  const provider: ProviderName | null = upstreamKind ?? (local ? 'local' : null);
  const threshold = options.ipsumThreshold ?? DEFAULT_IPSUM_THRESHOLD;
  const resultCache = upstream
    ? createResultCache<RiskScoreResult>(
        deps.cache<CachedResult<RiskScoreResult>>({ maxEntries: options.cacheSize ?? DEFAULT_CACHE_SIZE, ttlMs: options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS }),
        copyResult,
      )
    : null;
  // Local answers without DNSBL evidence are pure functions of the data: cached by address with
  // their JSON, so a repeated lookup costs one map read (DNSBL answers have TTLs of their own).
  const localStore =
    local && !options.dnsbl
      ? deps.cache<CachedResult<RiskScoreResult>>({ maxEntries: options.cacheSize ?? DEFAULT_CACHE_SIZE, ttlMs: options.cacheTtlMs ?? LOCAL_CACHE_TTL_MS })
      : null;
  const localCache = localStore ? createResultCache<RiskScoreResult>(localStore, copyResult) : null;

  // Other engines, found on first use; one that is not available leaves its fields null.
  const geo = lazyEngine(() => deps.engine('geoip'));
  const asn = lazyEngine(() => deps.engine('asn'));
  const dnsbl = options.dnsbl ? lazyEngine(() => withPolicyCodes(deps.engine('dnsbl'))) : () => null;
  const classify = createOrgClassifier(50_000);
  const intelligenceMemo = new WeakMap<object, Intelligence[]>();

  function asnRecord(input: IpInput) {
    const engine = asn();
    if (!engine) return null;
    try {
      return engine.record(input);
    } catch {
      return null; // a helper engine failing for one address leaves those fields null
    }
  }

  function geoRecord(input: IpInput): Geo | null {
    const engine = geo();
    if (!engine) return null;
    try {
      return engine.locate(input);
    } catch {
      return null;
    }
  }

  /** The result for the evidence (no closures on this path: it runs 200,000+ times a second). */
  function localResult(
    data: LocalData,
    input: IpInput,
    ranges: RangeEvidence,
    record: AsnRecord | null,
    networkType: string,
    where: Geo | null,
    dnsblZones: readonly string[],
  ): RiskScoreResult {
    const vpnAsn = record !== null && data.vpnAsns.has(record.asn);
    const datacenterAsn = record !== null && data.datacenterAsns.has(record.asn);
    const hostingAsn = networkType === 'hosting';
    const asnDrop = record !== null && data.dropAsns.has(record.asn);
    let intelligence: Intelligence;
    if (dnsblZones.length === 0) {
      // The evidence is the table's answer plus four ASN facts: its intelligence is computed
      // once per such combination and copied out (the memo never leaves the engine).
      let slots = intelligenceMemo.get(ranges);
      if (!slots) intelligenceMemo.set(ranges, (slots = new Array(16)));
      const bits = (vpnAsn ? 1 : 0) | (datacenterAsn ? 2 : 0) | (hostingAsn ? 4 : 0) | (asnDrop ? 8 : 0);
      intelligence = copyIntelligence((slots[bits] ??= intelligenceOf({ ...NO_EVIDENCE, ...ranges, vpnAsn, datacenterAsn, hostingAsn, asnDrop }, threshold)));
    } else intelligence = intelligenceOf({ ...NO_EVIDENCE, ...ranges, vpnAsn, datacenterAsn, hostingAsn, asnDrop, dnsblZones }, threshold);
    return {
      ip: input.ip,
      provider: 'local',
      location: locationOf(where),
      network: {
        isp: record?.org ?? where?.isp ?? where?.org ?? null,
        asn: record?.asn ?? where?.asn ?? null,
        connection_type: intelligence.flags.is_hosting ? 'hosting' : record ? networkType : null,
      },
      intelligence,
      is_eu: where?.isEu ?? null,
    };
  }

  /** SPEC: `cached` is true for riskscore answers from the local database, cache or not. */
  function fromLocalDatabase(outcome: LookupOutcome<RiskScoreResult>): LookupOutcome<RiskScoreResult> {
    return outcome.cached ? outcome : { result: outcome.result, cached: true, json: outcome.json, fetchedAt: outcome.fetchedAt };
  }

  function cachedLocalLookup(data: LocalData, input: IpInput): MaybePromise<LookupOutcome<RiskScoreResult>> {
    const outcome = localCache!.lookup(input.ip, () => ({ result: localAnswer(data, input, NO_ZONES), fetchedAt: data.snapshot.getTime() }));
    return isPromise(outcome) ? outcome.then(fromLocalDatabase) : fromLocalDatabase(outcome);
  }

  /** The local answer from the lists, the ASN facts and the location, with the DNSBL zones given. */
  function localAnswer(data: LocalData, input: IpInput, dnsblZones: readonly string[]): RiskScoreResult {
    const sender = lookupAddress(input); // 6to4, Teredo, NAT64: the IPv4 inside
    const record = asnRecord(sender);
    const networkType = record ? classify(record.org) : 'unknown';
    return localResult(data, input, rangeEvidence(matchInput(data.table, sender)), record, networkType, geoRecord(sender), dnsblZones);
  }

  /** The local answer, computed; asks the dnsbl engine first when enabled (IPv4). */
  function localLookup(data: LocalData, input: IpInput): MaybePromise<LookupOutcome<RiskScoreResult>> {
    const sender = lookupAddress(input);
    const bl = sender.version === 4 ? dnsbl() : null;
    if (!bl) return { result: localAnswer(data, input, NO_ZONES), cached: true, fetchedAt: data.snapshot };
    let checked: MaybePromise<LookupOutcome<{ lists: readonly DnsblListing[] }>>;
    try {
      checked = bl.engine.lookup(bl.engine.prepare(sender.ip));
    } catch {
      checked = { result: { lists: [] }, cached: true };
    }
    const withZones = (o: LookupOutcome<{ lists: readonly DnsblListing[] }>): LookupOutcome<RiskScoreResult> => ({
      result: localAnswer(data, input, abuseListings(o.result.lists, bl.policyCodes)),
      cached: o.cached,
      fetchedAt: data.snapshot,
    });
    if (!isPromise(checked)) return withZones(checked);
    // A DNSBL failure is no evidence, never a failed lookup.
    return checked.then(withZones, () => ({ result: localAnswer(data, input, NO_ZONES), cached: false, fetchedAt: data.snapshot }));
  }

  function upstreamLookup(client: UpstreamClient, kind: ProviderName, input: IpInput): MaybePromise<LookupOutcome<RiskScoreResult>> {
    return resultCache!.lookup(`${kind}:${input.ip}`, async () => {
      const answer = await client.lookup(lookupAddress(input).ip);
      const intelligence = intelligenceOf(answer.evidence, threshold);
      for (const tag of answer.extraTags) if (!intelligence.tags.includes(tag)) intelligence.tags.push(tag);
      const result: RiskScoreResult = { ip: input.ip, provider: kind, location: answer.location, network: answer.network, intelligence, is_eu: answer.isEu };
      return { result, fetchedAt: deps.now() };
    });
  }

  return {
    provider,
    local,
    localUnavailable,
    databaseRecords: local?.records ?? 0,
    prepare(ip) {
      const input = readRoutableIp(ip);
      // A fixed text: what a client reads never carries the server's configuration or paths.
      if (!provider) throw new LookupError('upstream_unconfigured', NO_PROVIDER);
      return input;
    },
    lookup(input) {
      if (upstream) return upstreamLookup(upstream, upstreamKind!, input);
      if (!local) throw new LookupError('upstream_unconfigured', NO_PROVIDER);
      return localCache ? cachedLocalLookup(local, input) : localLookup(local, input);
    },
  };
}

/** A deep copy of a result (the cached one never leaves the engine), field by field: several times faster than structuredClone. */
function copyResult(r: RiskScoreResult): RiskScoreResult {
  return {
    ip: r.ip,
    provider: r.provider,
    location: { ...r.location, country: { ...r.location.country } },
    network: { ...r.network },
    intelligence: copyIntelligence(r.intelligence),
    is_eu: r.is_eu,
  };
}

function copyIntelligence(i: Intelligence): Intelligence {
  return {
    verdict: i.verdict,
    description: i.description,
    risk: { score: i.risk.score, level: i.risk.level },
    threat: { score: i.threat.score, level: i.threat.level },
    flags: { ...i.flags },
    anonymous_confidence: i.anonymous_confidence,
    tags: i.tags.slice(),
    categories: i.categories.slice(),
  };
}

function locationOf(geo: Geo | null): RiskScoreLocation {
  return {
    country: { code: geo?.countryCode ?? null, name: geo?.countryName ?? null },
    city: geo?.city ?? null,
    region: geo?.region ?? null,
    latitude: geo?.latitude ?? null,
    longitude: geo?.longitude ?? null,
    timezone: geo?.timezoneId ?? null,
  };
}

/** The dnsbl engine, with each zone's policy listing codes (zones.json `"policy": true`). */
function withPolicyCodes(engine: DnsblEngine): { engine: DnsblEngine; policyCodes: ReadonlyMap<string, ReadonlySet<string>> } {
  const policyCodes = new Map(engine.zones.map((zone) => [zone.zone, new Set(zone.listing_codes.filter((c) => c.policy).map((c) => c.code))]));
  return { engine, policyCodes };
}

/**
 * The zones whose listing says the address misbehaved: a listing made only of policy codes
 * (Spamhaus PBL: an end-user range that should not send mail directly, whatever it does) is
 * no evidence of abuse. Most consumer addresses are on the PBL.
 */
function abuseListings(lists: readonly DnsblListing[], policyCodes: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const zones: string[] = [];
  for (const { zone, responses } of lists) {
    const policy = policyCodes.get(zone);
    if (!policy || !responses.every((code) => policy.has(code))) zones.push(zone);
  }
  return zones;
}

/** An engine built on first use; null for good when it cannot be built (not installed, data missing). */
function lazyEngine<E>(build: () => E): () => E | null {
  let engine: E | null | undefined;
  return () => {
    if (engine === undefined) {
      try {
        engine = build();
      } catch {
        engine = null;
      }
    }
    return engine;
  };
}

/**
 * The options' types and ranges, checked without loading any data (createLookup runs it at
 * construction, the engine again when built): TypeError `invalid_option` naming the option.
 */
export function checkRiskScoreOptions(options: RiskScoreEngineOptions | Readonly<Record<string, unknown>>): RiskScoreEngineOptions {
  const given = options as Readonly<Record<string, unknown>>;
  const provider = given.provider ?? 'local';
  if (typeof provider !== 'string' || !['local', 'ipinfo', 'ipqualityscore'].includes(provider))
    throw invalidOption(`riskscore provider must be local, ipinfo or ipqualityscore (got ${JSON.stringify(provider)})`);
  if (given.key !== undefined && typeof given.key !== 'string')
    throw invalidOption(`riskscore key must be a string, the API key or token (got ${describeValue(given.key)})`);
  checkOptionalString(given.url, 'riskscore url', 'an http(s) URL');
  checkTimeoutOptions(given.timeouts, 'riskscore timeouts');
  checkOptionalBoolean(given.local, 'riskscore local');
  checkOptionalBoolean(given.dnsbl, 'riskscore dnsbl');
  if (provider !== 'local') {
    if (typeof given.key !== 'string' || given.key.trim() === '') throw invalidOption(`riskscore provider ${provider} needs a key (the API key or token)`);
    // A token is printable ASCII; a character pasted with it (a zero-width space, a curly quote)
    // would make every request fail before it is sent. Its position is named, never the key.
    const stray = given.key.trim().search(/[^\x21-\x7e]/);
    if (stray !== -1) throw invalidOption(`riskscore key must be the token as issued, printable ASCII without spaces (character ${stray + 1} is not)`);
    const url = (given.url ?? UPSTREAM_URLS[provider as keyof typeof UPSTREAM_URLS]) as string;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidOption(`riskscore url must be an http(s) URL (got ${JSON.stringify(redactUserinfo(url))})`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw invalidOption(`riskscore url must be an http(s) URL (got ${JSON.stringify(redactUserinfo(url))})`);
    if (parsed.username || parsed.password || parsed.search || parsed.hash)
      throw invalidOption('riskscore url must have no credentials, query or fragment: give the key as key');
  }
  const threshold = given.ipsumThreshold;
  if (threshold !== undefined && (typeof threshold !== 'number' || !Number.isSafeInteger(threshold) || threshold < 1 || threshold > 10))
    throw invalidOption(`riskscore ipsumThreshold must be 1 to 10 (got ${describeValue(threshold)})`);
  for (const name of ['cacheSize', 'cacheTtlMs'] as const) {
    const value = given[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0))
      throw invalidOption(`riskscore ${name} must be a whole number >= 0 (got ${describeValue(value)})`);
  }
  if (given.cacheSize !== undefined) checkCacheSizeLimit(given.cacheSize as number, 'riskscore cacheSize');
  return options as RiskScoreEngineOptions;
}

export { SeclookupError };
