/**
 * The domainrep engine: a risk score for a domain from weighted signals.
 *
 * Network signals, all at once, each within `signalTimeoutMs`:
 * - `domain_age`: the whois product's `created_at` for the registrable domain;
 * - `email_auth`: the emailauth product's SPF and DMARC for the site;
 * - `dns_resolution`: A, AAAA and MX of the name through the shared resolver;
 * - `blocklist`: one A query per domain blocklist zone (`<site>.dbl.spamhaus.org`), answers
 *   classified by lib/blocklist-zone.ts (only documented codes are listings).
 * Static signals, from the name and the bundled data: `phishing_list`, `tld_risk` and the
 * lexical ones (lexical.ts).
 *
 * A signal that fails is kept with weight 0 and a detail starting `unavailable:`, and the score
 * is made of the others. When every network signal fails the lookup is 502 `lookup_failed`: a
 * score from the name alone would pass a guess off as a reputation. Results are cached no longer
 * than the DNS answers, whois and emailauth results behind them stay fresh (at most `maxTtlMs`);
 * a result with an unavailable signal is not cached. Concurrent lookups of one name share one
 * computation.
 */
import { parse } from 'tldts';
import { invalidOption, isSeclookupError, LookupError, SeclookupError } from '../../errors.js';
import { classifyAnswer, classifyFailure, compileZone, type ZoneVerdict } from '../../lib/blocklist-zone.js';
import type { ProductCache } from '../../lib/cache.js';
import type { DatasetDate } from '../../lib/datasets.js';
import { checkMs, withDeadline } from '../../lib/deadline.js';
import { freshnessOf, type DnsAnswer, type DnsRecordType, type DnsResolver } from '../../lib/dns/index.js';
import { parseDomainName } from '../../lib/domain.js';
import { checkCacheSizeLimit, describeValue } from '../../lib/option-checks.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import type { EmailAuthEngine } from '../emailauth/engine.js';
import type { EmailAuthResult } from '../emailauth/types.js';
import type { WhoisEngine } from '../whois/engine.js';
import type { WhoisResult } from '../whois/types.js';
import { copyDomainZone, type Brand, type PhishingLists, type TldRiskTable } from './data.js';
import { createBrandMatcher, idnSignals, phishingSignal, shapeSignals, tldSignal, type NameParts } from './lexical.js';
import { levelOf, scoreOf } from './score.js';
import type { DomainRepResult, DomainRepSignal, DomainZone } from './types.js';

export type CachedDomainRep = CachedResult<DomainRepResult>;

/** A checked query: the normalized name and its parts (`registrable` is what whois looks up). */
export interface DomainRepQuery extends NameParts {}

export interface DomainRepEngine {
  /** Normalize the input (lib/domain.ts); LookupError `invalid_domain`. No I/O. */
  prepare(domain: string): DomainRepQuery;
  /** Score it (or answer from the cache). Rejects with LookupError `lookup_failed` when every network signal failed. */
  lookup(query: DomainRepQuery): MaybePromise<LookupOutcome<DomainRepResult>>;
  /** The configured blocklist zones (copies). */
  readonly zones: DomainZone[];
  /** The dates its data files record (zones.json, tld-risk.json, brands.json: `generated`). */
  readonly dataDates: readonly DatasetDate[];
}

export interface DomainRepEngineDeps {
  zones: readonly DomainZone[];
  tldRisk: TldRiskTable;
  brands: readonly Brand[];
  phishing: PhishingLists;
  dns: () => DnsResolver;
  whois: () => WhoisEngine;
  emailauth: () => EmailAuthEngine;
  cache: ProductCache<CachedDomainRep> | null;
  now: () => number;
  signalTimeoutMs?: number;
  maxTtlMs?: number;
  /** The dates the data files read record. @default none */
  dataDates?: readonly DatasetDate[];
}

export const DOMAINREP_CACHE_SIZE = 10_000;
export const DOMAINREP_DEFAULTS = { signalTimeoutMs: 10_000, maxTtlMs: 60 * 60_000 } as const;
const NORMALIZE_MEMO_SIZE = 10_000;
const DAY_MS = 86_400_000;
/** The longest name DNS can carry. */
const MAX_QUERY_NAME = 253;

/** Weights of the network signals (README: domainrep, "Signals and weights"). */
export const WEIGHTS = {
  age: { under30Days: 35, under90Days: 25, under180Days: 15, underOneYear: 8, fiveYearsOrMore: -10, noCreationDate: 5, notRegistered: 40 },
  emailAuth: { noSpf: 10, noDmarc: 10 },
  resolution: { nxdomain: 50, noRecords: 15 },
} as const;

/** What one signal gave: the signal, and for network signals whether it was computed and how long it stays fresh. */
interface SignalOutcome {
  signal: DomainRepSignal;
  failed: boolean;
  /** When the data behind it stops being fresh (ms since the epoch), when known. */
  expiresAt?: number;
  /** DNS answers behind it, for their TTLs. */
  answers?: DnsAnswer<DnsRecordType>[];
}

export function checkCacheSize(value: unknown): number {
  const size = value ?? DOMAINREP_CACHE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalidOption(`domainrep cacheSize must be a non-negative integer (got ${describeValue(value)})`);
  return checkCacheSizeLimit(size, 'domainrep cacheSize');
}

export function createDomainRepEngine(deps: DomainRepEngineDeps): DomainRepEngine {
  const signalTimeoutMs = checkMs(deps.signalTimeoutMs ?? DOMAINREP_DEFAULTS.signalTimeoutMs, 'domainrep signalTimeoutMs');
  const maxTtlMs = checkMs(deps.maxTtlMs ?? DOMAINREP_DEFAULTS.maxTtlMs, 'domainrep maxTtlMs');
  const zones = deps.zones.map((zone) => ({
    definition: zone,
    compiled: compileZone(zone),
    weights: new Map(zone.listing_codes.map((c) => [c.code, c.weight])),
  }));
  const brands = createBrandMatcher(deps.brands);
  const results = createResultCache(deps.cache, copyResult, deps.now);
  const inflight = new Map<string, Promise<Computed<DomainRepResult>>>();
  const memo = new Map<string, DomainRepQuery>();

  function prepare(input: string): DomainRepQuery {
    const known = typeof input === 'string' ? memo.get(input) : undefined;
    if (known) return known;
    const { name, registrable, publicSuffix } = parseDomainName(input);
    const withPrivate = parse(name, { allowPrivateDomains: true, extractHostname: false });
    // A name that is itself a private suffix (github.io, vercel.app, s3.amazonaws.com) has no
    // site under the whole list: its site is then its ICANN registrable domain, whose own suffix
    // is the ICANN one (github.io: label github, not github.io minus its private suffix).
    const site = withPrivate.domain ?? registrable;
    const siteSuffix = withPrivate.domain !== null && withPrivate.publicSuffix !== null ? withPrivate.publicSuffix : publicSuffix;
    const query: DomainRepQuery = Object.freeze({
      name,
      registrable,
      site,
      label: site.slice(0, site.length - siteSuffix.length - 1),
      subdomain: name.length > site.length ? name.slice(0, name.length - site.length - 1) : '',
      tld: name.slice(name.lastIndexOf('.') + 1),
    });
    if (memo.size >= NORMALIZE_MEMO_SIZE) memo.clear();
    memo.set(input, query);
    return query;
  }

  function lookup(query: DomainRepQuery): MaybePromise<LookupOutcome<DomainRepResult>> {
    return results.lookup(query.name, () => shared(query));
  }

  function shared(query: DomainRepQuery): Promise<Computed<DomainRepResult>> {
    let pending = inflight.get(query.name);
    if (!pending) {
      pending = compute(query).finally(() => inflight.delete(query.name));
      inflight.set(query.name, pending);
    }
    return pending;
  }

  async function compute(query: DomainRepQuery): Promise<Computed<DomainRepResult>> {
    const [age, auth, resolution, ...listings] = await Promise.all([
      soft('domain_age', 'whois', () => ageSignal(query)),
      soft('email_auth', 'emailauth', () => emailAuthSignal(query)),
      soft('dns_resolution', 'DNS', () => resolutionSignal(query)),
      ...zones.map((zone) => soft('blocklist', `${zone.compiled.name} (${zone.compiled.zone})`, () => zoneSignal(query, zone))),
    ]);
    const network = [age, auth, resolution, ...listings];
    if (network.every((outcome) => outcome.failed)) {
      throw new LookupError(
        'lookup_failed',
        `no reputation source answered for ${query.name} (${network.map((o) => o.signal.detail.replace(/^unavailable: /, '')).join('; ')}); retry later`,
      );
    }
    if (!resolution.failed && resolution.signal.weight === WEIGHTS.resolution.nxdomain && !auth.failed) {
      await notApplicableWhenMissing(query, auth);
    }
    const signals: DomainRepSignal[] = [
      ...network.map((outcome) => outcome.signal),
      phishingSignal(query.name, deps.phishing),
      tldSignal(query, deps.tldRisk),
      ...shapeSignals(query),
      ...idnSignals(query),
    ];
    const brand = brands.match(query);
    if (brand) signals.push(brand);
    const score = scoreOf(signals);
    const result: DomainRepResult = { domain: query.name, score, level: levelOf(score), signals };
    return { result, ttlMs: network.some((o) => o.failed) ? 0 : ttlOf(network) };
  }

  /** How long the result stays fresh: until the first DNS answer, whois or emailauth result behind it expires, at most maxTtlMs. */
  function ttlOf(outcomes: SignalOutcome[]): number {
    const now = deps.now();
    let ttl = freshnessOf(
      outcomes.flatMap((o) => o.answers ?? []),
      now,
    ).ttlMs;
    for (const outcome of outcomes) if (outcome.expiresAt !== undefined) ttl = Math.min(ttl, outcome.expiresAt - now);
    return Math.max(0, Math.min(ttl, maxTtlMs));
  }

  /** Run one network signal within its deadline; a failure is the signal, unavailable, with weight 0. */
  async function soft(code: DomainRepSignal['code'], source: string, run: () => Promise<SignalOutcome>): Promise<SignalOutcome> {
    try {
      return await withDeadline(run(), signalTimeoutMs, `domainrep ${source} signal`);
    } catch (error) {
      if (!(error instanceof LookupError) && !isSeclookupError(error)) throw error;
      return { signal: { code, detail: `unavailable: ${source}: ${error.message}`, weight: 0 }, failed: true };
    }
  }

  async function ageSignal(query: DomainRepQuery): Promise<SignalOutcome> {
    const whois = deps.whois();
    let outcome: LookupOutcome<WhoisResult>;
    try {
      outcome = await whois.lookup(whois.prepare(query.registrable));
    } catch (error) {
      if (error instanceof LookupError && error.code === 'domain_not_found') {
        return {
          signal: { code: 'domain_age', detail: `${query.registrable} is not registered: the registry has no record of it`, weight: WEIGHTS.age.notRegistered },
          failed: false,
        };
      }
      throw error;
    }
    const created = outcome.result.created_at;
    const expiresAt = outcome.expiresAt;
    if (created === null) {
      return {
        signal: { code: 'domain_age', detail: `the registry does not publish when ${query.registrable} was registered`, weight: WEIGHTS.age.noCreationDate },
        failed: false,
        expiresAt,
      };
    }
    const days = Math.max(0, Math.floor((deps.now() - Date.parse(created)) / DAY_MS));
    const w = WEIGHTS.age;
    const weight =
      days < 30
        ? w.under30Days
        : days < 90
          ? w.under90Days
          : days < 180
            ? w.under180Days
            : days < 365
              ? w.underOneYear
              : days >= 5 * 365
                ? w.fiveYearsOrMore
                : 0;
    const age = days < 365 ? `${days} day${days === 1 ? '' : 's'} ago` : `${Math.floor(days / 365)} year${days < 730 ? '' : 's'} ago`;
    if (query.site !== query.registrable) {
      // A site under a private suffix (alice.github.io, x.pages.dev): the registry only knows the
      // platform's domain, whose age says nothing of when this site appeared. An old platform is
      // no trust signal for a customer's site made yesterday; a young one still counts.
      return {
        signal: {
          code: 'domain_age',
          detail: `${query.registrable}, the platform ${query.site} is hosted on, was registered ${age} (${created.slice(0, 10)}); the age of ${query.site} itself is unknown`,
          weight: Math.max(0, weight),
        },
        failed: false,
        expiresAt,
      };
    }
    return { signal: { code: 'domain_age', detail: `registered ${age} (${created.slice(0, 10)})`, weight }, failed: false, expiresAt };
  }

  async function emailAuthSignal(query: DomainRepQuery): Promise<SignalOutcome> {
    const emailauth = deps.emailauth();
    const outcome: LookupOutcome<EmailAuthResult> = await emailauth.lookup(emailauth.prepare(query.site));
    const { spf, dmarc } = outcome.result;
    const missing = [!spf.found && 'no SPF record', !dmarc.found && 'no DMARC record'].filter(Boolean);
    const weight = (spf.found ? 0 : WEIGHTS.emailAuth.noSpf) + (dmarc.found ? 0 : WEIGHTS.emailAuth.noDmarc);
    // The site's records; for a subdomain the detail says whose they are.
    const whose = query.name === query.site ? query.site : `${query.site} (the site of ${query.name})`;
    const detail = missing.length ? `${whose}: ${missing.join(', ')}` : `${whose} publishes SPF and DMARC (emailauth score ${outcome.result.score})`;
    return { signal: { code: 'email_auth', detail, weight }, failed: false, expiresAt: outcome.expiresAt };
  }

  /**
   * The name does not exist: email_auth, which reads the site's records, is "not applicable" when
   * the site does not exist either (its missing SPF and DMARC would count the same fact twice).
   * The site of a missing subdomain (www.example.com) is asked again, from the resolver's cache
   * after emailauth's queries; when it exists, the signal stays what it measured there.
   */
  async function notApplicableWhenMissing(query: DomainRepQuery, auth: SignalOutcome): Promise<void> {
    if (query.name !== query.site) {
      let answer: DnsAnswer<'TXT'>;
      try {
        answer = await withDeadline(deps.dns().resolve(query.site, 'TXT'), signalTimeoutMs, 'domainrep site existence check');
      } catch (error) {
        if (!(error instanceof LookupError) && !isSeclookupError(error)) throw error;
        return; // the site's records were read; whether the site exists is unknown: keep them
      }
      auth.answers = [...(auth.answers ?? []), answer];
      if (answer.status !== 'nxdomain') return;
    }
    auth.signal = { code: 'email_auth', detail: `not applicable: ${query.site} does not exist in DNS`, weight: 0 };
  }

  async function resolutionSignal(query: DomainRepQuery): Promise<SignalOutcome> {
    const dns = deps.dns();
    const types = ['A', 'AAAA', 'MX'] as const;
    const settled = await Promise.allSettled(types.map((type) => dns.resolve(query.name, type) as Promise<DnsAnswer<DnsRecordType>>));
    const answers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    for (const s of settled) if (s.status === 'rejected' && !isSeclookupError(s.reason)) throw s.reason;
    if (answers.some((a) => a.status === 'nxdomain')) {
      return {
        signal: { code: 'dns_resolution', detail: `${query.name} does not exist in DNS (NXDOMAIN)`, weight: WEIGHTS.resolution.nxdomain },
        failed: false,
        answers,
      };
    }
    const found = types.filter(
      (_, i) => settled[i].status === 'fulfilled' && (settled[i] as PromiseFulfilledResult<DnsAnswer<DnsRecordType>>).value.records.length > 0,
    );
    if (found.length > 0)
      return { signal: { code: 'dns_resolution', detail: `${query.name} resolves (${found.join(', ')})`, weight: 0 }, failed: false, answers };
    if (answers.length < types.length) {
      const failure = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult;
      throw failure.reason;
    }
    return {
      signal: { code: 'dns_resolution', detail: `${query.name} exists but has no A, AAAA or MX records`, weight: WEIGHTS.resolution.noRecords },
      failed: false,
      answers,
    };
  }

  async function zoneSignal(query: DomainRepQuery, zone: (typeof zones)[number]): Promise<SignalOutcome> {
    const { compiled } = zone;
    const label = `${compiled.name} (${compiled.zone})`;
    const asked = `${query.site}.${compiled.zone}`;
    if (asked.length > MAX_QUERY_NAME)
      return { signal: { code: 'blocklist', detail: `not listed on ${label}: the name is too long to be listed`, weight: 0 }, failed: false };
    let answer: DnsAnswer<'A'> | undefined;
    let verdict: ZoneVerdict;
    try {
      answer = await deps.dns().resolve(asked, 'A');
      verdict = classifyAnswer(compiled, answer);
    } catch (error) {
      const failed = classifyFailure(error);
      if (!failed) throw error;
      verdict = failed;
    }
    return zoneOutcome(verdict, zone, label, answer);
  }

  function zoneOutcome(verdict: ZoneVerdict, zone: (typeof zones)[number], label: string, answer: DnsAnswer<'A'> | undefined): SignalOutcome {
    if (verdict.kind === 'failed') {
      throw new SeclookupError('upstream_failed', `${verdict.reason}: ${verdict.message}`);
    }
    const answers = answer ? [answer] : [];
    if (verdict.kind === 'clean') return { signal: { code: 'blocklist', detail: `not listed on ${label}`, weight: 0 }, failed: false, answers };
    const weight = Math.max(...verdict.codes.map((code) => zone.weights.get(code) ?? 0));
    const what = verdict.codes.map((code, i) => `${code} ${verdict.meanings[i]}`).join('; ');
    return { signal: { code: 'blocklist', detail: `listed on ${label}: ${what}`, weight }, failed: false, answers };
  }

  return {
    prepare,
    lookup,
    get zones() {
      return zones.map((zone) => copyDomainZone(zone.definition));
    },
    dataDates: [...(deps.dataDates ?? [])],
  };
}

function copyResult(r: DomainRepResult): DomainRepResult {
  return { domain: r.domain, score: r.score, level: r.level, signals: r.signals.map((s) => ({ ...s })) };
}
