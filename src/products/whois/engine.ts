/**
 * The whois engine: registration data for a domain, RDAP first, port-43 WHOIS where the TLD
 * has no RDAP service.
 *
 * 1. The input is normalized to its registrable domain (lib/domain.ts): `www.example.co.uk`
 *    is looked up as `example.co.uk`; under a private suffix a registry operates
 *    (servers.json `privateSuffixes`: CentralNic's `br.com`, ...), `www.example.br.com` as
 *    `example.br.com`, at that registry's WHOIS server.
 * 2. RDAP: the TLD's base URL (options, rdap-overrides.json, IANA's bootstrap; HTTPS first),
 *    `GET <base>domain/<name>` with `Accept: application/rdap+json`, redirects followed (each
 *    hop through the guard, at most `maxRedirects`). 404 is "not registered". When the
 *    registry's answer is thin (no registrar, creation or expiry date) and it links to the
 *    registrar's RDAP record, that record fills the gaps (never replaces a registry value).
 * 3. WHOIS: the TLD's server (options, servers.json, else whois.iana.org's `refer:`), the query
 *    written as that server wants it, the answer parsed (parse.ts); a registry's "not found"
 *    text is "not registered"; a thin answer with a `Registrar WHOIS Server:` is completed
 *    from that server, once.
 * Failures (timeouts, refused or unreachable servers, answers too large, garbage, a target the
 * guard refuses) are 502 `lookup_failed`, never cached. Results are cached for `ttlMs`; "not
 * registered", and results whose registrar step failed, for `shortTtlMs`.
 */
import { performance } from 'node:perf_hooks';
import { invalidOption, isSeclookupError, LookupError } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import type { DatasetDate } from '../../lib/datasets.js';
import { checkMs, resolveTimeouts, type TimeoutOptions } from '../../lib/deadline.js';
import { parseDomainName } from '../../lib/domain.js';
import { checkCacheSizeLimit, checkTimeoutOptions, describeValue } from '../../lib/option-checks.js';
import type { OutboundGuard } from '../../lib/outbound.js';
import { isPromise, type LookupOutcome, type MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import { rdapGet, whoisQuery, type CallContext } from './fetch.js';
import { readWhoisAnswer } from './answer.js';
import { refusalIn } from './answer-forms.js';
import { NotADomainObject, readRdapDomain } from './rdap.js';
import { copyResult, detached, fillGaps, isThin, toResult, type RegistrationRecord } from './record.js';
import {
  bySuffix,
  formatAddress,
  IANA_WHOIS_SERVER,
  knownTldCount,
  parseServerAddress,
  privateRegistrable,
  whoisQueryFor,
  WHOIS_PORT,
  type ServerAddress,
  type ServerTables,
} from './servers.js';
import type { WhoisEngineOptions, WhoisResult, WhoisSource } from './types.js';

/** A checked query: the registrable domain to look up. */
export interface WhoisQuery {
  domain: string;
}

/** "Not registered", cached like a result; its JSON starts `{"not_found"` where a result's starts `{"domain"`. */
interface NotFound {
  not_found: true;
  domain: string;
  source: WhoisSource;
}
type CacheValue = WhoisResult | NotFound;
/** The third character of a cached entry's JSON: `n` of `{"not_found"`, never `d` of `{"domain"`. */
const NOT_FOUND_MARK = 'n'.charCodeAt(0);

export type CachedWhois = CachedResult<CacheValue>;

export interface WhoisEngine {
  /** Normalize the input to its registrable domain; LookupError `invalid_domain`. No I/O. */
  prepare(domain: string): WhoisQuery;
  /** Look it up (or answer from the cache). Rejects with LookupError `domain_not_found` or `lookup_failed`. */
  lookup(query: WhoisQuery): MaybePromise<LookupOutcome<WhoisResult>>;
  /** TLDs with a known RDAP or WHOIS server (status `database_records`). */
  readonly knownTlds: number;
  /** IANA's `publication` of the bootstrap in use. */
  readonly bootstrapPublication: string | null;
  /** The dates its data files record (rdap-bootstrap.json's `publication`, the tables' `updated`). */
  readonly dataDates: readonly DatasetDate[];
}

export interface WhoisEngineDeps {
  tables: ServerTables;
  /** The outbound guard, asked for at the first lookup. */
  guard: () => OutboundGuard;
  cache: ProductCache<CachedWhois> | null;
  /** Clock for fetched_at and domain_age_days (deadlines use a monotonic clock). */
  now: () => number;
}

export const WHOIS_CACHE_SIZE = 10_000;
const DEFAULTS = {
  timeouts: { connectMs: 3_000, totalMs: 8_000 },
  lookupTimeoutMs: 15_000,
  maxBytes: 1024 * 1024,
  maxRedirects: 3,
  ttlMs: 60 * 60_000,
  shortTtlMs: 10 * 60_000,
} as const;
/** How long whois.iana.org's answer for a TLD is kept. */
const REFERRAL_TTL_MS = 24 * 60 * 60_000;
/** How long an IANA answer that is no record of the TLD (a notice, an error) stands before IANA is asked again. */
const IANA_RETRY_MS = 60_000;
const NORMALIZE_MEMO_SIZE = 10_000;

/** Checked engine options with their defaults. */
export function resolveWhoisOptions(options: WhoisEngineOptions | Readonly<Record<string, unknown>> = {}) {
  const given = options as Readonly<Record<string, unknown>>;
  checkTimeoutOptions(given.timeouts, 'whois timeouts');
  const timeouts = resolveTimeouts(given.timeouts as TimeoutOptions | undefined, DEFAULTS.timeouts, 'whois timeouts');
  const whole = (value: unknown, fallback: number, label: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const v = value ?? fallback;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
      throw invalidOption(
        `whois ${label} must be a whole number >= ${min}${max < Number.MAX_SAFE_INTEGER ? ` and <= ${max}` : ''} (got ${describeValue(value)})`,
      );
    return v;
  };
  return {
    timeouts,
    lookupTimeoutMs: checkMs((given.lookupTimeoutMs ?? DEFAULTS.lookupTimeoutMs) as number, 'whois lookupTimeoutMs'),
    maxBytes: whole(given.maxBytes, DEFAULTS.maxBytes, 'maxBytes', 1),
    maxRedirects: whole(given.maxRedirects, DEFAULTS.maxRedirects, 'maxRedirects', 0),
    cacheSize: checkCacheSizeLimit(whole(given.cacheSize, WHOIS_CACHE_SIZE, 'cacheSize', 0), 'whois cacheSize'),
    ttlMs: checkMs((given.ttlMs ?? DEFAULTS.ttlMs) as number, 'whois ttlMs'),
    shortTtlMs: checkMs((given.shortTtlMs ?? DEFAULTS.shortTtlMs) as number, 'whois shortTtlMs'),
    ianaServer: parseServerAddress((given.ianaServer ?? IANA_WHOIS_SERVER) as string, 'whois ianaServer'),
    whoisPort: whole(given.whoisPort, WHOIS_PORT, 'whoisPort', 1, 65_535),
  };
}

export function createWhoisEngine(deps: WhoisEngineDeps, options: WhoisEngineOptions = {}): WhoisEngine {
  const settings = resolveWhoisOptions(options);
  const { tables } = deps;
  const results = createResultCache<CacheValue>(deps.cache, (value) => ('not_found' in value ? { ...value } : copyResult(value)), deps.now);
  const inflight = new Map<string, Promise<Computed<CacheValue>>>();
  const referrals = new Map<string, { server: ServerAddress | null; until: number; failure?: string }>();
  const memo = new Map<string, string>();

  function prepare(input: string): WhoisQuery {
    const known = typeof input === 'string' ? memo.get(input) : undefined;
    if (known) return { domain: known };
    const { name, registrable } = parseDomainName(input);
    // Under a registry-operated private suffix (CentralNic's br.com, ...) the registry holds
    // example.br.com, not the ICANN registrable domain br.com.
    const domain = privateRegistrable(name, tables.privateSuffixes) ?? registrable;
    if (memo.size >= NORMALIZE_MEMO_SIZE) memo.clear();
    memo.set(input, domain);
    return { domain };
  }

  function lookup(query: WhoisQuery): MaybePromise<LookupOutcome<WhoisResult>> {
    const outcome = results.lookup(query.domain, () => shared(query.domain));
    return isPromise(outcome) ? outcome.then(found) : found(outcome);
  }

  /** A cached "not registered" becomes the 404 again; anything else is a result. */
  function found(outcome: LookupOutcome<CacheValue>): LookupOutcome<WhoisResult> {
    if (outcome.json !== undefined && outcome.json.charCodeAt(2) === NOT_FOUND_MARK) {
      const { domain, source } = outcome.result as NotFound;
      throw new LookupError('domain_not_found', `${domain} is not registered (the registry's ${source === 'rdap' ? 'RDAP' : 'WHOIS'} service says so)`);
    }
    return outcome as LookupOutcome<WhoisResult>;
  }

  /** One upstream lookup per domain at a time: concurrent callers share it. */
  function shared(domain: string): Promise<Computed<CacheValue>> {
    let pending = inflight.get(domain);
    if (!pending) {
      pending = retrieve(domain).finally(() => inflight.delete(domain));
      inflight.set(domain, pending);
    }
    return pending;
  }

  async function retrieve(domain: string): Promise<Computed<CacheValue>> {
    const ctx: CallContext = {
      guard: deps.guard(),
      connectMs: settings.timeouts.connectMs,
      totalMs: settings.timeouts.totalMs,
      maxBytes: settings.maxBytes,
      maxRedirects: settings.maxRedirects,
      deadline: performance.now() + settings.lookupTimeoutMs,
    };
    try {
      // A private suffix's registry answers on port 43 only (RDAP's bootstrap knows its TLD's registry).
      const rdap = privateRegistrable(domain, tables.privateSuffixes) === null ? bySuffix(tables.rdap, domain) : undefined;
      return rdap?.value ? await viaRdap(domain, rdap.value[0], ctx) : await viaWhois(domain, ctx);
    } catch (error) {
      throw failure(error, domain);
    }
  }

  function done(domain: string, record: RegistrationRecord, source: WhoisSource, partial: boolean): Computed<CacheValue> {
    const now = deps.now();
    return { result: toResult(domain, record, now, source), fetchedAt: now, ttlMs: partial ? settings.shortTtlMs : settings.ttlMs };
  }

  function notFound(domain: string, source: WhoisSource): Computed<CacheValue> {
    return { result: { not_found: true, domain, source }, fetchedAt: deps.now(), ttlMs: settings.shortTtlMs };
  }

  async function viaRdap(domain: string, base: string, ctx: CallContext): Promise<Computed<CacheValue>> {
    const response = await rdapGet(`${base}domain/${domain}`, ctx);
    const host = new URL(response.url).host;
    if (response.status === 404) return notFound(domain, 'rdap');
    if (response.status !== 200) throw upstream(`the RDAP server ${host} answered HTTP ${response.status}`);
    const answer = readRdap(response.body, host, domain);
    let record = answer.record;
    let partial = false;
    if (isThin(record) && answer.registrarLink) {
      // The registrar's record only fills gaps; its failure leaves the registry's facts standing.
      try {
        const registrar = await rdapGet(answer.registrarLink, ctx);
        if (registrar.status === 200) record = fillGaps(record, readRdap(registrar.body, new URL(registrar.url).host, domain).record);
        else partial = registrar.status !== 404;
      } catch (error) {
        if (!isSeclookupError(error) && !(error instanceof LookupError)) throw error;
        partial = true;
      }
    }
    return done(domain, record, 'rdap', partial);
  }

  /** The domain object in an RDAP answer, which must be about `domain` (another domain's data is never passed off as its). */
  function readRdap(body: Buffer, host: string, domain: string) {
    let json: unknown;
    try {
      // A byte order mark before the JSON may be ignored (RFC 8259 8.1); JSON.parse would refuse it.
      const text = body.toString('utf8');
      json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch {
      throw upstream(`the RDAP server ${host} answered something that is not JSON`);
    }
    let answer;
    try {
      answer = readRdapDomain(json);
    } catch (error) {
      if (error instanceof NotADomainObject) throw upstream(`the RDAP server ${host}: ${error.message}`);
      throw error;
    }
    if (answer.name !== null && answer.name !== domain)
      throw upstream(`the RDAP server ${host} answered about ${JSON.stringify(answer.name.slice(0, 64))}, not ${domain}`);
    return answer;
  }

  async function viaWhois(domain: string, ctx: CallContext): Promise<Computed<CacheValue>> {
    const server = await whoisServerFor(domain, ctx);
    const answer = readWhoisAnswer(await whoisQuery(server, whoisQueryFor(server, domain), ctx), formatAddress(server));
    if (answer.kind === 'not_found') return notFound(domain, 'whois');
    if (answer.kind === 'failed') throw upstream(answer.message);
    let record = answer.record;
    let partial = false;
    if (isThin(record) && answer.referral && answer.referral !== server.host) {
      const registrar: ServerAddress = { host: answer.referral, port: settings.whoisPort };
      try {
        const second = readWhoisAnswer(await whoisQuery(registrar, whoisQueryFor(registrar, domain), ctx), formatAddress(registrar));
        if (second.kind === 'record') record = fillGaps(record, second.record);
        // A refused or unreadable registrar answer leaves the registry's facts, kept briefly.
        else if (second.kind === 'failed') partial = true;
      } catch (error) {
        if (!isSeclookupError(error)) throw error;
        partial = true;
      }
    }
    return done(domain, record, 'whois', partial);
  }

  /**
   * The table's server for the TLD, else the one whois.iana.org names (`refer:`), remembered a
   * day; so is IANA's own record of the TLD naming none. Any other answer (a rate-limit notice,
   * an error, garbage) is remembered only a minute: one bad answer must not take a TLD away for
   * a day, and IANA is not asked again on every lookup meanwhile.
   */
  async function whoisServerFor(domain: string, ctx: CallContext): Promise<ServerAddress> {
    const listed = bySuffix(tables.whois, domain);
    if (listed?.value) return listed.value;
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    let known = referrals.get(tld);
    // By the engine's clock, as the result cache's entries expire.
    if (!known || known.until <= deps.now()) {
      const answer = await whoisQuery(settings.ianaServer, tld, ctx);
      const refer = /^(?:refer|whois):\s*(\S+)\s*$/im.exec(answer)?.[1] ?? null;
      // Detached: a host cut from IANA's answer would keep the whole answer for as long as it is remembered.
      const server = refer && /^[a-z0-9.-]+$/i.test(refer) ? { host: detached(refer.toLowerCase()), port: settings.whoisPort } : null;
      known =
        server !== null || ianaRecordOf(answer, tld)
          ? { server, until: deps.now() + REFERRAL_TTL_MS }
          : { server, until: deps.now() + IANA_RETRY_MS, failure: `whois.iana.org gave no record of .${tld}${quotedRefusal(answer)}` };
      if (referrals.size >= 4_096) referrals.clear();
      referrals.set(tld, known);
    }
    if (!known.server) throw upstream(known.failure ?? `no RDAP or WHOIS server is known for .${tld}`);
    return known.server;
  }

  return {
    prepare,
    lookup,
    knownTlds: knownTldCount(tables),
    bootstrapPublication: tables.publication,
    dataDates: [...tables.dates],
  };
}

/** IANA's record of a TLD: a `domain:` line naming it (`domain:       ORG`). */
function ianaRecordOf(answer: string, tld: string): boolean {
  const named = /^domain:[ \t]*(\S+)[ \t]*$/im.exec(answer)?.[1];
  return named !== undefined && named.toLowerCase() === tld.toLowerCase();
}

/** `: "<the line that refused>"` when the answer is a known refusal form, else nothing. */
function quotedRefusal(answer: string): string {
  const refused = refusalIn(answer);
  return refused ? `: ${JSON.stringify(refused.line)}` : '';
}

function upstream(message: string): LookupError {
  return new LookupError('lookup_failed', message);
}

/** Outbound failures as SPEC's 502 `lookup_failed`; anything else (a bug) as it is. */
function failure(error: unknown, domain: string): unknown {
  if (error instanceof LookupError) return error;
  if (isSeclookupError(error) && error.code !== 'invalid_option') {
    return new LookupError('lookup_failed', `whois lookup of ${domain} failed: ${error.message}`, { cause: error });
  }
  return error;
}
