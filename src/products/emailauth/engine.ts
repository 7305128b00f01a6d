import { invalidOption, isSeclookupError, LookupError } from '../../errors.js';
import { createMemoryCache, createProductCache, type ProductCache } from '../../lib/cache.js';
import { checkCacheSizeLimit, describeValue } from '../../lib/option-checks.js';
import { freshnessOf, type DnsAnswer, type DnsResolver } from '../../lib/dns/index.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import { discoverDmarc } from './dmarc-discovery.js';
import { normalizeDomain, type EmailDomain } from './domain.js';
import { dkimKey, isSpfRecord } from './records.js';
import { spfSyntaxError } from './spf-syntax.js';
import {
  DKIM_SELECTORS,
  SCORE_POINTS,
  type DkimResult,
  type DkimSelector,
  type DmarcResult,
  type EmailAuthEngineOptions,
  type EmailAuthResult,
  type SpfResult,
} from './types.js';

/** What the cache keeps per domain: the result, its JSON, and when its oldest DNS answer was fetched (ms). */
export type CachedEmailAuth = CachedResult<EmailAuthResult>;

export interface EmailAuthEngine {
  /** Validate and normalize a domain (see {@link normalizeDomain}); LookupError `invalid_domain`. */
  prepare(domain: string): EmailDomain;
  /**
   * Look up a normalized domain: SPF, DMARC and the nine DKIM selectors as TXT queries in
   * parallel (then, without a DMARC record at the domain, the DMARCbis tree walk up its parents). Synchronous on a hit of the
   * in-process cache. Rejects with LookupError `lookup_failed` when the SPF or DMARC query
   * fails, or every DKIM query does.
   */
  lookup(domain: EmailDomain): MaybePromise<LookupOutcome<EmailAuthResult>>;
}

export interface EmailAuthEngineDeps {
  /** The resolver, or a function making it on first use (so building the engine does no I/O). */
  dns: DnsResolver | (() => DnsResolver);
  /** The product cache to use (a shared store); null for none. @default a private LRU of `cacheSize` */
  cache?: ProductCache<CachedEmailAuth> | null;
  /** Clock in ms since the epoch, to turn DNS TTLs into the result's lifetime. @default Date.now */
  now?: () => number;
}

/** Entries of the emailauth cache unless `cacheSize` says otherwise. */
export const EMAIL_AUTH_CACHE_SIZE = 10_000;
/** The longest name DNS can carry (255 octets on the wire); a longer probe name cannot exist. */
const MAX_QUERY_NAME = 253;

/**
 * The emailauth engine: presence of SPF, DKIM (SPEC's selectors) and DMARC for a domain, from
 * TXT queries through the shared DNS resolver, with a presence score. A result is cached for
 * as long as the shortest-lived DNS answer it was built from still has to live.
 *
 * @param options.cacheSize entries of the private LRU made when `deps.cache` is not given
 *   (default 10000); 0 disables it.
 */
/** The `cacheSize` option, checked (TypeError `invalid_option`): a whole number from 0 to MAX_CACHE_ENTRIES. */
export function emailAuthCacheSize(value: unknown): number {
  const size = value ?? EMAIL_AUTH_CACHE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalidOption(`emailauth cacheSize must be a non-negative integer, got ${describeValue(value)}`);
  return checkCacheSizeLimit(size, 'emailauth cacheSize');
}

export function createEmailAuthEngine(deps: EmailAuthEngineDeps, options: EmailAuthEngineOptions = {}): EmailAuthEngine {
  const cacheSize = emailAuthCacheSize(options.cacheSize);
  const store =
    deps.cache !== undefined ? deps.cache : cacheSize > 0 ? createProductCache<CachedEmailAuth>(createMemoryCache({ maxEntries: cacheSize })) : null;
  const now = deps.now ?? Date.now;
  const results = createResultCache(store, copyResult, now);
  const resolver = typeof deps.dns === 'function' ? deps.dns : () => deps.dns as DnsResolver;

  async function lookUp(domain: EmailDomain): Promise<Computed<EmailAuthResult>> {
    const answers: DnsAnswer<'TXT'>[] = [];
    const txt = (name: string) => resolveTxt(resolver(), name, answers);
    const [spf, dmarc, dkim] = await Promise.all([findSpf(txt, domain), discoverDmarc(txt, domain.name), findDkim(txt, domain)]);
    const result: EmailAuthResult = { domain: domain.name, score: score(spf, dmarc, dkim), spf, dkim, dmarc };
    // Kept while every DNS answer behind it is fresh; a partial result is not kept, so the next
    // call asks again for what failed.
    const { fetchedAt, ttlMs } = freshnessOf(answers, now());
    return { result, fetchedAt, ttlMs: dkim.failed_selectors.length === 0 ? ttlMs : 0 };
  }

  const lookupNormalized = (domain: EmailDomain) => results.lookup(domain.name, () => lookUp(domain));

  const normalize = createNormalizeMemo();
  return { prepare: normalize, lookup: lookupNormalized };
}

/** Domains remembered by `createNormalizeMemo`; real traffic asks about far fewer. */
const NORMALIZE_MEMO_SIZE = 10_000;

/**
 * normalizeDomain with the valid answers remembered: its IDN mapping and two public-suffix
 * parses cost more than the rest of a cached lookup. Only accepted inputs are kept, and the
 * memo is emptied when full, so caller-chosen strings cannot grow it without bound.
 */
function createNormalizeMemo(): (input: string) => EmailDomain {
  const memo = new Map<string, EmailDomain>();
  return (input) => {
    const known = memo.get(input);
    if (known) return { ...known };
    const domain = normalizeDomain(input);
    if (memo.size >= NORMALIZE_MEMO_SIZE) memo.clear();
    memo.set(input, domain);
    return { ...domain };
  };
}

/** The TXT records at a name. */
type TxtQuery = (name: string) => Promise<string[]>;

/** A name longer than DNS allows holds no records, so it is not asked. */
const askable = (name: string) => name.length <= MAX_QUERY_NAME;

/** The TXT records at `name`, its answer noted in `answers`; DNS failures become `lookup_failed`. */
async function resolveTxt(dns: DnsResolver, name: string, answers: DnsAnswer<'TXT'>[]): Promise<string[]> {
  if (!askable(name)) return [];
  let answer: DnsAnswer<'TXT'>;
  try {
    answer = await dns.resolve(name, 'TXT');
  } catch (error) {
    if (isSeclookupError(error, 'timeout')) throw new LookupError('lookup_failed', `DNS lookup of ${name} failed: no answer in time`, { cause: error });
    if (isSeclookupError(error, 'upstream_failed'))
      throw new LookupError('lookup_failed', `DNS lookup of ${name} failed: the DNS server answered with an error`, { cause: error });
    throw error;
  }
  answers.push(answer);
  return answer.records;
}

async function findSpf(txt: TxtQuery, domain: EmailDomain): Promise<SpfResult> {
  const records = (await txt(domain.name)).filter(isSpfRecord);
  const error = records.length > 1 ? `${records.length} v=spf1 records (RFC 7208 4.5: permerror)` : records.length === 1 ? spfSyntaxError(records[0]) : null;
  return { found: records.length > 0, record: records[0] ?? null, records, valid: records.length === 1 && error === null, error };
}

/**
 * Every SPEC selector at once. A selector whose query fails is reported in `failed_selectors`
 * while any other answered; when every one fails, the lookup fails.
 */
async function findDkim(txt: TxtQuery, domain: EmailDomain): Promise<DkimResult> {
  const names = DKIM_SELECTORS.map((selector) => `${selector}._domainkey.${domain.name}`);
  const probes = await Promise.allSettled(names.map(txt));
  const selectors: DkimSelector[] = [];
  const failed: string[] = [];
  let firstFailure: unknown;
  probes.forEach((probe, i) => {
    const selector = DKIM_SELECTORS[i];
    if (probe.status === 'rejected') {
      if (!(probe.reason instanceof LookupError)) throw probe.reason;
      firstFailure ??= probe.reason;
      failed.push(selector);
      return;
    }
    for (const record of probe.value) {
      const key = dkimKey(record);
      if (key) {
        selectors.push({ selector, record, revoked: key.revoked });
        break;
      }
    }
  });
  if (failed.length > 0 && failed.length === names.filter(askable).length) throw firstFailure;
  return { found: selectors.length > 0, selectors, failed_selectors: failed };
}

function score(spf: SpfResult, dmarc: DmarcResult, dkim: DkimResult): number {
  return (spf.found ? SCORE_POINTS.spf : 0) + (dmarc.found ? SCORE_POINTS.dmarc : 0) + (dkim.found ? SCORE_POINTS.dkim : 0);
}

function copyResult(r: EmailAuthResult): EmailAuthResult {
  return {
    domain: r.domain,
    score: r.score,
    spf: { ...r.spf, records: [...r.spf.records] },
    dkim: { found: r.dkim.found, selectors: r.dkim.selectors.map((s) => ({ ...s })), failed_selectors: [...r.dkim.failed_selectors] },
    dmarc: { ...r.dmarc, records: [...r.dmarc.records] },
  };
}
