/**
 * The scamrisk engine: validate and normalize an identifier (sync), then gather signals from
 * the bundled lists, the report database and the other engines, and score them (scoring.ts).
 */
import { invalidOption, LookupError } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import { checkCacheSizeLimit, describeValue } from '../../lib/option-checks.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import type { ProductEngine } from '../module.js';
import type { AsnResult } from '../asn/types.js';
import type { DnsblResult } from '../dnsbl/types.js';
import type { EmailAuthResult } from '../emailauth/types.js';
import type { EmailValResult } from '../emailval/types.js';
import type { RiskScoreResult } from '../riskscore/types.js';
import type { WhoisResult } from '../whois/types.js';
import { parseDomainName } from '../../lib/domain.js';
import { parseIdentifier, unicodeHost, type Identifier } from './identifiers.js';
import { levenshtein, type ScamLists } from './lists.js';
import { createMemoryReportStore, createSqliteReportStore, type NewReport, type ReportStore, type StoredReport } from './reports.js';
import { assess, assessmentJson, isoWithOffset, reportFinding, type Finding } from './scoring.js';
import {
  IDENTIFIER_TYPES,
  SIGNAL_SEVERITY,
  SOFT_SOURCES,
  type IdentifierType,
  type ScamriskEngineOptions,
  type ScamriskRequest,
  type ScamriskResult,
  type SignalCode,
  type SoftSource,
} from './types.js';

export interface ScamriskQuery {
  identifier: Identifier;
}

export interface ScamriskEngine {
  /**
   * Read `{ type, value }` or `{ <type>: value }` (plus an optional phone `region`); LookupError
   * invalid_request / invalid_identifier. The identifier is remembered and handed to later calls
   * with the same input: treat it as read-only.
   */
  prepare(request: ScamriskRequest): ScamriskQuery;
  /** Synchronous on a cache hit in a local cache (the API then answers without a promise); a promise otherwise. */
  lookup(query: ScamriskQuery): MaybePromise<LookupOutcome<ScamriskResult>>;
  /** The normalized form reports are filed under. */
  normalize(type: IdentifierType, value: string, region?: string): Identifier;
  /** File a report against a value (normalized here). */
  report(report: Omit<NewReport, 'identifier'> & { value: string; region?: string }): Promise<StoredReport>;
  readonly reports: ReportStore;
  readonly lists: ScamLists;
  /** Close the report database if the engine opened it (a `reports` path); a store passed in stays the caller's. */
  close(): Promise<void>;
}

export interface ScamriskEngineDeps {
  lists: ScamLists;
  options: ScamriskEngineOptions | undefined;
  now: () => number;
  /** Another product's engine (EngineContext.engine), for the soft sources. */
  engine: (id: SoftSource) => unknown;
  /** The assessment cache (EngineContext.cache, sized by scamriskCacheSettings); none when absent or null. */
  cache?: ProductCache<CachedScamrisk> | null;
}

/** What the assessment cache holds per identifier. */
export type CachedScamrisk = CachedResult<ScamriskResult>;

const DEFAULT_SOURCE_TIMEOUT_MS = 3000;
/** How long an assessment is reused (ours: SPEC leaves the cache lifetime open). Short, because reports filed elsewhere show only after it. */
export const SCAMRISK_CACHE_TTL_MS = 60_000;
/** Assessments kept in the private LRU. */
export const SCAMRISK_CACHE_SIZE = 10_000;
const KNOWN_TYPES: ReadonlySet<string> = new Set(IDENTIFIER_TYPES);
/** Parsed identifiers remembered by raw input (each a few hundred bytes); the memo starts over when full. */
const PARSED_IDENTIFIERS = 4096;

/** The checked cache settings of the options, for EngineContext.cache: `cacheSize` entries for `cacheTtlMs`. */
export function scamriskCacheSettings(options: { readonly cacheSize?: unknown; readonly cacheTtlMs?: unknown } | undefined): {
  maxEntries: number;
  ttlMs: number;
} {
  const maxEntries = options?.cacheSize ?? SCAMRISK_CACHE_SIZE;
  if (typeof maxEntries !== 'number' || !Number.isSafeInteger(maxEntries) || maxEntries < 0)
    throw invalidOption(`scamrisk cacheSize must be a non-negative integer (got ${describeValue(options?.cacheSize)})`);
  checkCacheSizeLimit(maxEntries, 'scamrisk cacheSize');
  const ttlMs = options?.cacheTtlMs ?? SCAMRISK_CACHE_TTL_MS;
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 0)
    throw invalidOption(`scamrisk cacheTtlMs must be a non-negative integer (got ${describeValue(options?.cacheTtlMs)})`);
  // A TTL of 0 would keep entries until evicted in the store: no TTL means no cache.
  return { maxEntries: ttlMs === 0 ? 0 : maxEntries, ttlMs };
}

const REPORT_STORE_METHODS = ['add', 'dispute', 'find', 'list', 'count', 'close'] as const;

/**
 * The options' types and ranges, checked without opening the report database (createLookup runs
 * it at construction, the engine again when built): TypeError `invalid_option` naming the option.
 */
export function checkScamriskOptions(options: ScamriskEngineOptions | Readonly<Record<string, unknown>>): {
  disable: readonly SoftSource[];
  sourceTimeoutMs: number;
  defaultRegion: string | undefined;
  cacheTtlMs: number;
} {
  const given = options as Readonly<Record<string, unknown>>;
  const { ttlMs: cacheTtlMs } = scamriskCacheSettings(given);
  const { reports } = given;
  if (
    reports !== undefined &&
    !(typeof reports === 'string' && reports !== '') &&
    !(
      typeof reports === 'object' &&
      reports !== null &&
      REPORT_STORE_METHODS.every((method) => typeof (reports as Record<string, unknown>)[method] === 'function')
    )
  )
    throw invalidOption(
      `scamrisk reports must be the path of an SQLite file or a ReportStore (an object with ${REPORT_STORE_METHODS.join(', ')}) (got ${describeValue(reports)})`,
    );
  const disable = given.disable ?? [];
  if (!Array.isArray(disable)) throw invalidOption(`scamrisk disable must be an array of sources (${SOFT_SOURCES.join(', ')}) (got ${describeValue(disable)})`);
  for (const source of disable)
    if (!(SOFT_SOURCES as readonly unknown[]).includes(source))
      throw invalidOption(`scamrisk disable: unknown source ${JSON.stringify(source)}; known: ${SOFT_SOURCES.join(', ')}`);
  const sourceTimeoutMs = given.sourceTimeoutMs ?? DEFAULT_SOURCE_TIMEOUT_MS;
  if (typeof sourceTimeoutMs !== 'number' || !Number.isSafeInteger(sourceTimeoutMs) || sourceTimeoutMs < 1)
    throw invalidOption(`scamrisk sourceTimeoutMs must be a positive integer (got ${describeValue(given.sourceTimeoutMs)})`);
  const region = given.defaultRegion;
  if (region !== undefined && (typeof region !== 'string' || !/^[A-Za-z]{2}$/.test(region)))
    throw invalidOption(`scamrisk defaultRegion must be an ISO 3166 alpha-2 code (got ${describeValue(region)})`);
  return { disable: disable as SoftSource[], sourceTimeoutMs, defaultRegion: region?.toUpperCase(), cacheTtlMs };
}

/** Cache keys made so far, per identifier object (a remembered identifier comes back as the same object). */
const cacheKeys = new WeakMap<Identifier, string>();

/**
 * The cache key of an identifier: its type and the normalized form reports are filed under. The
 * same string object for a remembered identifier, so the cache does not hash a new string each time.
 * A URL with user information (dropped from its normalized form) is its own entry, marked but
 * without the credentials: its assessment has the credentials_in_url signal the bare URL's lacks.
 */
function cacheKey(identifier: Identifier): string {
  let key = cacheKeys.get(identifier);
  if (key === undefined) cacheKeys.set(identifier, (key = plainCacheKey(identifier) + (identifier.url?.hasCredentials ? CREDENTIALS_MARK : '')));
  return key;
}

const CREDENTIALS_MARK = '\n+credentials';
const plainCacheKey = (identifier: Identifier) => `${identifier.type}:${identifier.normalized}`;

export function createScamriskEngine({ lists, options = {}, now, engine, cache = null }: ScamriskEngineDeps): ScamriskEngine {
  const { cacheTtlMs, disable, sourceTimeoutMs: timeoutMs, defaultRegion } = checkScamriskOptions(options);
  const results = createResultCache<ScamriskResult>(cache, (result) => structuredClone(result), now);
  const disabled = new Set<SoftSource>(disable);
  const reports: ReportStore =
    typeof options.reports === 'string' ? createSqliteReportStore(options.reports, { now }) : (options.reports ?? createMemoryReportStore({ now }));

  // Parsed identifiers by type (and region) and raw value: parsing a phone number or checking an
  // address costs more than a cached assessment, and the same values come back. Bounded (all
  // forgotten when full); refusals are not kept. Two levels, so the value is looked up as given.
  const parsed = new Map<string, Map<string, Identifier>>();
  let parsedCount = 0;
  function normalize(type: IdentifierType, value: string, region?: string): Identifier {
    const effectiveRegion = region ?? defaultRegion;
    const group = effectiveRegion === undefined ? type : `${type}\n${effectiveRegion}`;
    let byValue = parsed.get(group);
    let identifier = byValue?.get(value);
    if (identifier === undefined) {
      identifier = parseIdentifier(type, value, { region: effectiveRegion });
      if (parsedCount >= PARSED_IDENTIFIERS) {
        parsed.clear();
        parsedCount = 0;
        byValue = undefined;
      }
      if (!byValue) parsed.set(group, (byValue = new Map()));
      byValue.set(value, identifier);
      parsedCount++;
    }
    return identifier;
  }

  function prepare(given: ScamriskRequest): ScamriskQuery {
    if (typeof given !== 'object' || given === null || Array.isArray(given))
      throw new LookupError('invalid_request', 'send { "type": ..., "value": ... } or { "<type>": value }');
    // Read as any object: an HTTP body is whatever the client sent, whatever the type says.
    const request = given as Readonly<Record<string, unknown>>;
    // The common shape, { type, value } with a known type and a value, straight to normalize:
    // what the general reading below would do with it, without its arrays.
    const { type: givenType, value: givenValue } = request;
    if (typeof givenType === 'string' && typeof givenValue === 'string' && givenValue !== '' && KNOWN_TYPES.has(givenType) && Object.keys(request).length === 2)
      return { identifier: normalize(givenType as IdentifierType, givenValue) };
    const keys = Object.keys(request).filter((k) => request[k] !== undefined);
    const region = request.region;
    if (region !== undefined && (typeof region !== 'string' || !/^[A-Za-z]{2}$/.test(region)))
      throw new LookupError('invalid_request', 'region must be an ISO 3166 alpha-2 code');
    const rest = keys.filter((k) => k !== 'region');
    const typed = rest.filter((k) => (IDENTIFIER_TYPES as readonly string[]).includes(k));
    let type: unknown;
    let value: unknown;
    if (typed.length > 0) {
      if (rest.length !== 1) throw new LookupError('invalid_request', 'the typed shorthand takes exactly one key, the type name (and optionally region)');
      type = typed[0];
      value = request[typed[0]];
    } else {
      const extra = rest.filter((k) => k !== 'type' && k !== 'value');
      if (extra.length > 0)
        throw new LookupError('invalid_request', `unknown field ${JSON.stringify(extra[0])}; send type and value, or one of ${IDENTIFIER_TYPES.join(', ')}`);
      type = request.type;
      value = request.value;
      if (typeof type !== 'string' || type === '') throw new LookupError('invalid_request', 'type is required');
      if (!(IDENTIFIER_TYPES as readonly string[]).includes(type))
        throw new LookupError('invalid_request', `unknown type ${JSON.stringify(type.slice(0, 32))}; supported: ${IDENTIFIER_TYPES.join(', ')}`);
    }
    if (typeof value !== 'string' || value === '') throw new LookupError('invalid_request', 'value is required (a string)');
    if (region !== undefined && type !== 'phone') throw new LookupError('invalid_request', 'region applies to phone numbers only');
    return { identifier: normalize(type as IdentifierType, value, region as string | undefined) };
  }

  /** A soft source: its engine, or null when disabled, absent (riskscore) or failing to load. */
  function softEngine<E>(id: SoftSource): E | null {
    if (disabled.has(id)) return null;
    try {
      return engine(id) as E;
    } catch {
      return null;
    }
  }

  /**
   * A repeat within the TTL is the cached assessment (SPEC: `cached: true`, a fresh request_id
   * from the API). Not async: a hit in a local cache is handed back in this turn, so the API
   * neither awaits it nor watches for the client leaving.
   */
  function assessQuery(query: ScamriskQuery): MaybePromise<LookupOutcome<ScamriskResult>> {
    return results.lookup(cacheKey(query.identifier), () => compute(query));
  }

  async function compute({ identifier }: ScamriskQuery): Promise<Computed<ScamriskResult>> {
    const at = now();
    const seenNow = isoWithOffset(at);
    const findings: Finding[] = [];
    const queried = new Set<string>();
    const responded = new Set<string>();
    const add = (code: SignalCode, source: string, confidence: number, lastSeen: string, detail?: string, points?: number) =>
      findings.push({ signal: { code, severity: SIGNAL_SEVERITY[code], confidence, last_seen: lastSeen, source, ...(detail ? { detail } : {}) }, points });
    const local = (source: string) => {
      queried.add(source);
      responded.add(source);
    };

    /** Run a soft source under the deadline; its failures only leave it out of `sources_responded`. */
    async function soft<R>(source: SoftSource, input: string): Promise<R | null> {
      const found = softEngine<ProductEngine<[string]>>(source);
      if (!found) return null;
      queried.add(source);
      let timer: NodeJS.Timeout | undefined;
      try {
        const outcome = (await Promise.race([
          Promise.resolve().then(() => found.lookup(found.prepare(input))),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs))),
        ])) as LookupOutcome<R>;
        responded.add(source);
        return outcome.result;
      } catch {
        return null;
      } finally {
        clearTimeout(timer);
      }
    }

    const tasks: Promise<void>[] = [];
    const host = identifier.domain?.name;

    // The report database: needed. A failure is 500 assessment_failed.
    queried.add('reports');
    let found: StoredReport[];
    try {
      found = [...(await reports.find(identifier.type, identifier.normalized))];
      // A report on a domain speaks for every address, page and subdomain under it (gmail.com:
      // every mailbox), so only a verified one (an operator's) carries over to them; unverified
      // ones stay the domain's own.
      for (const name of coveringDomains(identifier)) found.push(...(await reports.find('domain', name)).filter((report) => report.verified));
    } catch (error) {
      throw new LookupError('assessment_failed', 'the report database failed; retry with backoff', { cause: error });
    }
    responded.add('reports');
    const reportPart = reportFinding(found, at);
    if (reportPart) findings.push(...reportPart);

    // Host checks: lists and structure (domain, url, and an e-mail's domain).
    const hostToCheck = host ?? identifier.email?.domain;
    if (hostToCheck) {
      local('metamask');
      local('polkadot');
      const path = identifier.url ? new URL(identifier.url.href).pathname : undefined;
      for (const match of lists.phishing(hostToCheck, path)) add('phishing_domain', match.source, 0.95, lists.dates[match.source], `listed: ${match.entry}`);
    }
    if (host && identifier.domain) {
      local('structure');
      structureSignals(identifier, lists, seenNow, add);
      for (const entry of lists.fuzzy(host)) add('lookalike_domain', 'metamask', 0.8, lists.dates.metamask, `close to ${entry}`);
    }
    if (identifier.url) {
      if (identifier.url.hasCredentials) add('credentials_in_url', 'structure', 0.9, seenNow, 'user information before the host');
      if (identifier.ip) {
        local('structure');
        add('ip_host_url', 'structure', 0.7, seenNow);
      }
    }

    if (identifier.crypto) {
      local('ofac');
      local('polkadot');
      local('structure');
      const { crypto } = identifier;
      for (const asset of lists.sanctioned(crypto.normalized)) add('sanctioned_address', 'ofac', 0.99, lists.dates.ofac, `asset: ${asset}`);
      for (const campaign of lists.scamCampaigns(crypto.normalized))
        add('scam_address', 'polkadot', 0.9, lists.dates.polkadotAddresses, `campaign: ${campaign}`);
    }

    if (identifier.phone) {
      local('phone_metadata');
      const { phone } = identifier;
      if (!phone.valid) add('invalid_phone_number', 'phone_metadata', 0.9, seenNow);
      if (phone.kind === 'PREMIUM_RATE' || phone.kind === 'SHARED_COST') add('premium_rate_number', 'phone_metadata', 0.9, seenNow, phone.kind.toLowerCase());
      if (phone.kind === 'VOIP') add('voip_number', 'phone_metadata', 0.8, seenNow);
      if (phone.kind === 'TOLL_FREE') add('toll_free_number', 'phone_metadata', 0.9, seenNow);
    }

    if (identifier.email) {
      const email = identifier.email;
      tasks.push(
        soft<EmailValResult>('emailval', email.email).then((r) => {
          if (!r) return;
          if (r.disposable) add('disposable_email', 'emailval', 0.95, seenNow);
          if (r.valid_format && !r.has_mx)
            add(
              'no_mx',
              'emailval',
              0.9,
              seenNow,
              r.risk.reasons.find((x) => x.startsWith('no_mx') || x === 'null_mx' || x === 'domain_not_found'),
            );
          if (r.risk.reasons.includes('role_account')) add('role_account', 'emailval', 0.9, seenNow);
        }),
        soft<EmailAuthResult>('emailauth', email.domain).then((r) => {
          if (r && !r.spf.found && !r.dmarc.found) add('missing_email_auth', 'emailauth', 0.7, seenNow, 'no SPF and no DMARC');
        }),
      );
    }

    const whoisDomain = identifier.domain?.registrable ?? identifier.email?.domain;
    if (whoisDomain) {
      tasks.push(
        soft<WhoisResult>('whois', whoisDomain).then((r) => {
          const age = r?.domain_age_days;
          if (age === null || age === undefined) return;
          if (age < 30) add('young_domain', 'whois', 0.85, seenNow, `registered ${age} days ago`);
          else if (age < 180) add('recent_domain', 'whois', 0.7, seenNow, `registered ${age} days ago`);
        }),
      );
    }

    if (identifier.type === 'ip' && identifier.ip) {
      const ip = identifier.ip.ip;
      tasks.push(
        soft<AsnResult>('asn', ip).then((r) => {
          if (r?.network_type === 'hosting') add('hosting_network', 'asn', 0.7, seenNow, r.as_org ? `AS${r.asn} ${r.as_org}` : undefined);
        }),
      );
      if (identifier.ip.version === 4) {
        tasks.push(
          soft<DnsblResult>('dnsbl', ip).then((r) => {
            if (r?.listed) add('dnsbl_listed', 'dnsbl', Math.min(0.95, 0.6 + 0.1 * r.list_count), seenNow, r.lists.map((l) => l.name).join(', '));
          }),
        );
      }
      tasks.push(
        soft<RiskScoreResult>('riskscore', ip).then((r) => {
          if (r) riskscoreSignals(r, seenNow, add);
        }),
      );
    }

    await Promise.all(tasks);
    const result = assess({
      identifier,
      findings,
      reports: found,
      queried: queried.size,
      responded: responded.size,
      now: at,
    });
    // An assessment missing a source that failed is not kept: the next one may get it.
    return { result, json: assessmentJson(result), ttlMs: responded.size < queried.size ? 0 : cacheTtlMs };
  }

  return {
    prepare,
    lookup: assessQuery,
    normalize,
    async report({ value, region, ...rest }) {
      const identifier = normalize(rest.type, value, region);
      try {
        const stored = await reports.add({ ...rest, identifier: identifier.normalized });
        // The next assessment of this identifier shows the report at once (others on its domain: after the TTL),
        // a URL's with and without user information alike.
        cache?.delete?.(plainCacheKey(identifier));
        if (identifier.type === 'url') cache?.delete?.(plainCacheKey(identifier) + CREDENTIALS_MARK);
        return stored;
      } catch (error) {
        if (error instanceof TypeError) throw new LookupError('invalid_request', error.message);
        throw error;
      }
    },
    reports,
    lists,
    async close() {
      if (typeof options.reports === 'string') await reports.close();
    },
  };
}

type Add = (code: SignalCode, source: string, confidence: number, lastSeen: string, detail?: string, points?: number) => void;

/** Brand in a subdomain, IDN and mixed scripts, look-alikes of brands. */
function structureSignals(identifier: Identifier, lists: ScamLists, seen: string, add: Add): void {
  const name = identifier.domain!;
  const label = name.registrable.slice(0, -(name.publicSuffix.length + 1));
  const subLabels = name.name === name.registrable ? [] : name.name.slice(0, -(name.registrable.length + 1)).split('.');
  const brands = lists.brands;
  const inSub = brands.find((brand) => label !== brand && subLabels.some((l) => l === brand || l.startsWith(`${brand}-`) || l.endsWith(`-${brand}`)));
  if (inSub) add('brand_in_subdomain', 'structure', 0.8, seen, `brand: ${inSub}`);
  if (name.name.split('.').some((l) => l.startsWith('xn--'))) {
    add('idn_domain', 'structure', 1, seen);
    const unicode = unicodeHost(name.name);
    const unicodeLabel = unicode.split('.').slice(0, -name.publicSuffix.split('.').length).pop() ?? '';
    const skeleton = toSkeleton(unicodeLabel);
    const scripts = scriptsOf(unicodeLabel);
    if (scripts.size > 1) add('mixed_script_domain', 'structure', 0.85, seen, [...scripts].join('+'));
    const target = brands.find((b) => skeleton === b || (skeleton.length > 4 && levenshtein(skeleton, b, 1) <= 1));
    if (target) add('lookalike_domain', 'structure', 0.9, seen, `confusable with ${target}`);
  } else {
    const target = brands.find((b) => b.length >= 5 && label !== b && levenshtein(label, b, 1) <= 1);
    if (target) add('lookalike_domain', 'structure', 0.7, seen, `one edit from ${target}`);
  }
}

/** Common Cyrillic and Greek letters that look like Latin ones (a subset of Unicode's confusables). */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ɡ: 'g',
  һ: 'h',
  ӏ: 'l',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  κ: 'k',
  ι: 'i',
  τ: 't',
  υ: 'u',
  ε: 'e',
  '0': 'o',
  '1': 'l',
};

function toSkeleton(label: string): string {
  return [...label.normalize('NFKC')].map((c) => CONFUSABLES[c] ?? c).join('');
}

function scriptsOf(label: string): Set<string> {
  const scripts = new Set<string>();
  for (const c of label) {
    if (/\p{Script=Latin}/u.test(c)) scripts.add('latin');
    else if (/\p{Script=Cyrillic}/u.test(c)) scripts.add('cyrillic');
    else if (/\p{Script=Greek}/u.test(c)) scripts.add('greek');
    else if (/\p{L}/u.test(c)) scripts.add('other');
  }
  return scripts;
}

/** Signals from a riskscore answer: its risk score (high or critical), anonymity and hosting flags. */
function riskscoreSignals({ intelligence }: RiskScoreResult, seen: string, add: Add): void {
  const { risk, flags } = intelligence;
  if (risk.score >= 60) add('ip_threat_intel', 'riskscore', Math.min(1, risk.score / 100), seen, `${intelligence.verdict}: risk ${risk.score} (${risk.level})`);
  if (flags.is_tor) add('tor_exit', 'riskscore', 0.9, seen);
  if (flags.is_vpn || flags.is_proxy) add('vpn_or_proxy', 'riskscore', 0.8, seen);
  if (flags.is_hosting) add('hosting_network', 'riskscore', 0.8, seen, intelligence.tags.join(', '));
}

/**
 * The domains whose verified reports count for an identifier beyond its own reports: a URL's
 * host or an e-mail's domain and their parents, a domain's parents, each up to its registrable
 * domain (`login.evil-shop.com` -> `evil-shop.com`; never a public suffix).
 */
export function coveringDomains(identifier: Identifier): string[] {
  const own = identifier.type === 'domain';
  let name = identifier.domain;
  if (!name && identifier.type === 'email' && identifier.email) {
    try {
      name = parseDomainName(identifier.email.domain);
    } catch {
      return [identifier.email.domain]; // not a name under a known suffix: its own reports only
    }
  }
  if (!name || (identifier.type !== 'url' && identifier.type !== 'email' && !own)) return [];
  const names: string[] = [];
  let current = name.name;
  if (!own) names.push(current);
  while (current !== name.registrable && current.includes('.')) {
    current = current.slice(current.indexOf('.') + 1);
    names.push(current);
  }
  return names;
}
