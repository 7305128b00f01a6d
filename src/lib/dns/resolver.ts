/**
 * The one DNS resolver every DNS-using product shares: configurable upstream servers, UDP with
 * TCP fallback on truncation, a per-attempt deadline and bounded retries across servers, CNAME
 * chains followed, TXT character-strings joined, a cache that honours record TTLs (positive and
 * negative, within a floor and a ceiling), and single-flight (concurrent identical questions make
 * one upstream query).
 *
 * Why our own client: Node's `dns.promises.Resolver` takes host:port servers and falls back to
 * TCP by itself, but returns no TTLs for MX and TXT (so no TTL-honouring cache) and reports
 * NXDOMAIN and NODATA only through error codes; dns2's client returns TTLs but its TCP client has
 * no timeout and its parser costs hundreds of µs per answer. Transport and wire format here are
 * small (transport.ts, wire.ts), and every wait has a deadline.
 */
import { randomInt } from 'node:crypto';
import { invalidOption, SeclookupError } from '../../errors.js';
import { createMemoryCache, createProductCache, type CacheStore, type ProductCache } from '../cache.js';
import { resolveTimeouts, type TimeoutOptions } from '../deadline.js';
import { upstreamEnd, upstreamStart } from '../observe.js';
import {
  checkKnownNames,
  checkOptionalCacheSize,
  checkOptionalFunction,
  checkOptionsObject,
  checkTimeoutOptions,
  describeValue,
  isOptionsObject,
} from '../option-checks.js';
import { parseDnsServer, systemDnsServers, type DnsServer } from './servers.js';
import { tcpExchange, udpExchange, type Exchange } from './transport.js';
import {
  encodeName,
  encodeQuery,
  RCODE,
  RECORD_TYPES,
  WireError,
  type DnsRecordType,
  type MxData,
  type SoaData,
  type WireMessage,
  type WireRecord,
} from './wire.js';

export type { DnsRecordType, MxData } from './wire.js';

/** A record's value by type: the address (A, AAAA), `{ priority, exchange }` (MX), the joined text (TXT), the target name (NS, PTR, CNAME). */
export type DnsValue<T extends DnsRecordType> = T extends 'MX' ? MxData : string;

export interface DnsAnswer<T extends DnsRecordType> {
  /** `ok` with records; `nxdomain` (the name does not exist) and `nodata` (it has no such records) are answers too. */
  status: 'ok' | 'nxdomain' | 'nodata';
  records: DnsValue<T>[];
  /** Seconds the answer is cached for (its TTL within the cache's floor and ceiling). */
  ttl: number;
  /** True when served from the cache. */
  cached: boolean;
  /** When the answer came from upstream, ms since the epoch. */
  fetchedAt: number;
}

export interface DnsCacheOptions {
  /** A shared store (answers are JSON), else a private LRU. */
  store?: CacheStore;
  /** Entries of the private LRU; 0 disables caching. @default 10000 */
  maxEntries?: number;
  /** Floor and ceiling for positive answers, seconds. @default 10 and 3600 */
  minTtl?: number;
  maxTtl?: number;
  /** Ceiling for NXDOMAIN and NODATA (RFC 2308 TTL from the SOA), seconds; floor is minTtl. @default 300 */
  maxNegativeTtl?: number;
}

export interface DnsResolverOptions {
  /** `host:port` (or an address alone, port 53). @default the system's resolvers (/etc/resolv.conf) */
  servers?: readonly string[];
  /** Per attempt: `totalMs` for the UDP answer (and the whole TCP exchange), `connectMs` for a TCP connect. @default connect 1000, total 2000 */
  timeouts?: TimeoutOptions;
  /** Attempts per question, rotating through the servers; a timeout, SERVFAIL, REFUSED or malformed answer moves on. @default 2 */
  attempts?: number;
  /**
   * Upstream exchanges in flight at once; more wait their turn. A burst of cold lookups (an
   * emailauth lookup asks 11 questions) would otherwise send hundreds of datagrams at once and
   * lose some to the resolver's or the kernel's buffers. The wait counts against the question's
   * deadline (`attempts` × `totalMs`), and at most 4 × maxInFlight questions wait: past that the
   * resolver is saturated and a question fails at once with `timeout`. @default 256
   */
  maxInFlight?: number;
  cache?: DnsCacheOptions;
  /** Clock in ms since the epoch. @default Date.now */
  now?: () => number;
  /** Told when the cache store fails. */
  onCacheError?: (error: unknown) => void;
}

export interface DnsResolver {
  /**
   * Resolve `name` (lower-cased, trailing dot ignored). Rejects with SeclookupError `timeout`
   * (no server answered in time, or the question found no free slot within its deadline, or the
   * resolver is saturated) or `upstream_failed` (SERVFAIL, REFUSED, malformed answers), and with
   * `invalid_option` for a name that cannot be asked (empty label, over 255 octets).
   */
  resolve<T extends DnsRecordType>(name: string, type: T): Promise<DnsAnswer<T>>;
  readonly servers: readonly string[];
  /** Upstream queries sent so far (UDP and TCP), for tests and stats. */
  readonly queriesSent: number;
  /** Upstream exchanges in flight now (at most `maxInFlight`). */
  readonly queriesInFlight: number;
}

export const DNS_TIMEOUT_DEFAULTS = { connectMs: 1_000, totalMs: 2_000 } as const;

const OPTION_NAMES = ['servers', 'timeouts', 'attempts', 'maxInFlight', 'cache', 'now', 'onCacheError'] as const;
const CACHE_OPTION_NAMES = ['store', 'maxEntries', 'minTtl', 'maxTtl', 'maxNegativeTtl'] as const;

/**
 * The options' types and ranges, checked without reading /etc/resolv.conf or making anything
 * (createLookup checks its `dns` option with it at construction; createDnsResolver again).
 * TypeError `invalid_option` naming the option as `<label>.<name>`.
 */
export function checkDnsResolverOptions(value: unknown, label = 'dns'): void {
  const options = checkOptionsObject(value, label, `DNS resolver options { ${OPTION_NAMES.join(', ')} } or a resolver from createDnsResolver`);
  checkKnownNames(options, OPTION_NAMES, label);
  const { servers } = options;
  if (servers !== undefined) {
    if (!Array.isArray(servers)) throw invalidOption(`${label}.servers must be an array of "host:port" strings (got ${describeValue(servers)})`);
    servers.forEach((server: unknown, i: number) => {
      if (typeof server !== 'string') throw invalidOption(`${label}.servers[${i}] must be a "host:port" string (got ${describeValue(server)})`);
      parseDnsServer(server);
    });
  }
  checkTimeoutOptions(options.timeouts, `${label}.timeouts`);
  for (const name of ['attempts', 'maxInFlight'] as const) {
    const count = options[name];
    if (count !== undefined && (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1))
      throw invalidOption(`${label}.${name} must be a positive integer (got ${describeValue(count)})`);
  }
  checkOptionalFunction(options.now, `${label}.now`);
  checkOptionalFunction(options.onCacheError, `${label}.onCacheError`);
  if (options.cache === undefined) return;
  const cache = checkOptionsObject(options.cache, `${label}.cache`, `{ ${CACHE_OPTION_NAMES.join(', ')} }`);
  checkKnownNames(cache, CACHE_OPTION_NAMES, `${label}.cache`);
  const { store } = cache;
  if (store !== undefined && !(isOptionsObject(store) && ['get', 'set', 'delete'].every((method) => typeof store[method] === 'function')))
    throw invalidOption(`${label}.cache.store must be a CacheStore (get, set, delete) (got ${describeValue(store)})`);
  checkOptionalCacheSize(cache.maxEntries, `${label}.cache.maxEntries`);
  for (const name of ['minTtl', 'maxTtl', 'maxNegativeTtl'] as const) {
    const seconds = cache[name];
    if (seconds !== undefined && (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0))
      throw invalidOption(`${label}.cache.${name} must be a number of seconds >= 0 (got ${describeValue(seconds)})`);
  }
}
const MAX_CNAME_HOPS = 8;
/** Waiters per in-flight slot: past 4 × maxInFlight the resolver is saturated, and waiting longer only grows the backlog. */
const WAITERS_PER_SLOT = 4;

interface CachedAnswer {
  status: DnsAnswer<DnsRecordType>['status'];
  records: unknown[];
  ttl: number;
  fetchedAt: number;
}

/**
 * Build a resolver. Every option mistake throws here (TypeError, code `invalid_option`).
 *
 * @example
 * const dns = createDnsResolver({ servers: ['127.0.0.1:5353'] });
 * const mx = await dns.resolve('example.com', 'MX'); // { status: 'ok', records: [{ priority: 10, exchange: 'mx.example.com' }], ttl: 300, ... }
 */
export function createDnsResolver(options: DnsResolverOptions = {}): DnsResolver {
  checkDnsResolverOptions(options);
  const servers = options.servers?.length ? options.servers.map(parseDnsServer) : systemDnsServers();
  if (servers.length === 0) throw invalidOption('no DNS servers configured and none found in /etc/resolv.conf');
  const { connectMs, totalMs } = resolveTimeouts(options.timeouts, DNS_TIMEOUT_DEFAULTS, 'dns.timeouts');
  const attempts = options.attempts ?? 2;
  if (!Number.isSafeInteger(attempts) || attempts < 1) throw invalidOption(`dns.attempts must be a positive integer (got ${String(options.attempts)})`);
  const maxInFlight = options.maxInFlight ?? 256;
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1)
    throw invalidOption(`dns.maxInFlight must be a positive integer (got ${String(options.maxInFlight)})`);
  const slots = createSlots(maxInFlight, WAITERS_PER_SLOT * maxInFlight);
  const now = options.now ?? Date.now;
  const cacheOptions = options.cache ?? {};
  const minTtl = cacheOptions.minTtl ?? 10;
  const maxTtl = cacheOptions.maxTtl ?? 3_600;
  const maxNegativeTtl = cacheOptions.maxNegativeTtl ?? 300;
  const cache = createAnswerCache(cacheOptions, options.onCacheError);
  const inFlight = new Map<string, Promise<CachedAnswer>>();
  let queriesSent = 0;
  let nextServer = 0;

  async function resolve<T extends DnsRecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const question = normalizeName(name);
    const key = `${type} ${question}`;
    const hit = cache ? await cache.get(key) : undefined;
    if (hit && hit.fetchedAt + hit.ttl * 1000 > now()) return toAnswer<T>(hit, true);
    let pending = inFlight.get(key);
    if (!pending) {
      pending = lookUp(question, type).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return toAnswer<T>(await pending, false);
  }

  async function lookUp(name: string, type: DnsRecordType): Promise<CachedAnswer> {
    const answer = await followChain(name, type);
    cache?.set(`${type} ${name}`, answer, answer.ttl * 1000);
    return answer;
  }

  /** Ask for `name`, follow CNAMEs (in the answer, or by asking again), collect records of `type`. */
  async function followChain(name: string, type: DnsRecordType): Promise<CachedAnswer> {
    const fetchedAt = now();
    const wanted = RECORD_TYPES[type];
    let current = name;
    let ttl = Infinity;
    for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
      const message = await ask(current, wanted);
      if (message.rcode === RCODE.NXDOMAIN) return negative('nxdomain', message, fetchedAt);
      // Walk the chain as far as this answer carries it. A name met twice is a loop (`a CNAME b`,
      // `b CNAME a`): a broken zone, not a name without records.
      const walked = new Set([current]);
      for (let step = 0; step <= MAX_CNAME_HOPS; step++) {
        const records = message.answers.filter((r) => r.name === current && r.type === wanted);
        if (records.length > 0) {
          ttl = Math.min(ttl, ...records.map((r) => r.ttl));
          return { status: 'ok', records: records.map((r) => recordValue(r)), ttl: clamp(ttl, minTtl, maxTtl), fetchedAt };
        }
        const alias = message.answers.find((r) => r.name === current && r.type === RECORD_TYPES.CNAME);
        if (!alias || type === 'CNAME') break;
        ttl = Math.min(ttl, alias.ttl);
        current = alias.data as string;
        if (walked.has(current)) throw new SeclookupError('upstream_failed', `CNAME loop in the answer for ${name} (at ${current})`);
        walked.add(current);
      }
      const aliased = current !== name;
      // The chain ended at a name this answer says nothing more about: ask for it directly.
      if (aliased && !message.answers.some((r) => r.name === current) && message.authorities.length === 0) continue;
      return negative('nodata', message, fetchedAt);
    }
    throw new SeclookupError('upstream_failed', `CNAME chain from ${name} is longer than ${MAX_CNAME_HOPS} hops`);
  }

  /** NXDOMAIN / NODATA, cached for the SOA's negative TTL (RFC 2308), else the floor. */
  function negative(status: 'nxdomain' | 'nodata', message: WireMessage, fetchedAt: number): CachedAnswer {
    const soa = message.authorities.find((r) => r.type === RECORD_TYPES.SOA);
    const ttl = soa ? Math.min(soa.ttl, (soa.data as SoaData).minimum) : minTtl;
    return { status, records: [], ttl: clamp(ttl, minTtl, Math.max(minTtl, maxNegativeTtl)), fetchedAt };
  }

  /**
   * One question, up to `attempts` tries rotating through the servers; a failed try moves on.
   * The tries and their waits for a slot share one deadline, `attempts` × `totalMs`, so a question
   * stuck behind a backlog fails as a silent server's would instead of waiting for the backlog.
   */
  async function ask(name: string, type: number): Promise<WireMessage> {
    const deadline = performance.now() + attempts * totalMs;
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts && msLeft(deadline) > 0; attempt++) {
      const server = servers[nextServer++ % servers.length];
      // A question that gets no slot in time is not retried: its deadline is spent, or the resolver is saturated.
      await slots.acquire(msLeft(deadline), name);
      if (msLeft(deadline) < 1) {
        // The wait took the whole deadline: a query sent now could only time out.
        slots.release();
        break;
      }
      try {
        const message = await observedExchange(server, name, type, deadline);
        if (message.rcode === RCODE.NOERROR || message.rcode === RCODE.NXDOMAIN) return message;
        lastError = new SeclookupError('upstream_failed', `DNS server ${server.text} answered ${rcodeName(message.rcode)} for ${name}`);
      } catch (error) {
        lastError = error;
      } finally {
        slots.release();
      }
    }
    throw lastError ?? new SeclookupError('timeout', `no DNS answer for ${name} within ${attempts * totalMs} ms`);
  }

  /** One attempt, timed for the upstream observers (the wait for a slot is not counted). */
  async function observedExchange(server: DnsServer, name: string, type: number, deadline: number): Promise<WireMessage> {
    const started = upstreamStart();
    let ok = false;
    try {
      const message = await exchangeWith(server, name, type, deadline);
      ok = message.rcode === RCODE.NOERROR || message.rcode === RCODE.NXDOMAIN;
      return message;
    } finally {
      upstreamEnd('dns', ok, started);
    }
  }

  /** UDP, then TCP if truncated; each waits `totalMs` at most, and never past the question's deadline. */
  async function exchangeWith(server: DnsServer, name: string, type: number, deadline: number): Promise<WireMessage> {
    const id = randomInt(0x10000);
    let query: Buffer;
    try {
      query = encodeQuery(id, name, type);
    } catch (error) {
      throw Object.assign(invalidOption(`cannot ask for ${JSON.stringify(name)}: ${(error as WireError).message}`), { cause: error });
    }
    const exchange: Exchange = { id, name, type, query };
    queriesSent++;
    const message = await udpExchange(server, exchange, cappedMs(totalMs, deadline));
    if (!message.truncated) return message;
    queriesSent++;
    return tcpExchange(server, exchange, cappedMs(connectMs, deadline), cappedMs(totalMs, deadline));
  }

  function toAnswer<T extends DnsRecordType>(entry: CachedAnswer, cached: boolean): DnsAnswer<T> {
    // Copies: the cached entry is shared by every caller.
    return {
      status: entry.status,
      records: entry.records.map((r) => (typeof r === 'object' ? { ...(r as MxData) } : r)) as DnsValue<T>[],
      ttl: entry.ttl,
      cached,
      fetchedAt: entry.fetchedAt,
    };
  }

  return {
    resolve,
    servers: servers.map((s) => s.text),
    get queriesSent() {
      return queriesSent;
    },
    get queriesInFlight() {
      return slots.busy;
    },
  };
}

interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

/**
 * At most `size` holders at once; the others wait in arrival order, each no longer than it may,
 * and at most `maxWaiting` of them (a Set: a waiter that gives up leaves from the middle).
 */
function createSlots(size: number, maxWaiting: number) {
  let busy = 0;
  const waiting = new Set<Waiter>();
  return {
    get busy() {
      return busy;
    },
    /** A slot within `waitMs`, else SeclookupError `timeout`; at once when `maxWaiting` already wait. */
    acquire(waitMs: number, name: string): Promise<void> {
      if (busy < size) {
        busy++;
        return Promise.resolve();
      }
      if (waiting.size >= maxWaiting)
        return Promise.reject(
          new SeclookupError('timeout', `DNS resolver saturated: ${size} queries in flight and ${maxWaiting} waiting; not asking for ${name}`),
        );
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          grant: resolve,
          timer: setTimeout(() => {
            waiting.delete(waiter);
            reject(new SeclookupError('timeout', `no DNS query slot free for ${name} within ${Math.round(waitMs)} ms (${size} in flight)`));
          }, waitMs),
        };
        waiting.add(waiter);
      });
    },
    release(): void {
      // A freed slot passes straight to the next waiter, so `busy` only falls when none waits.
      const next = waiting.values().next().value as Waiter | undefined;
      if (!next) {
        busy--;
        return;
      }
      waiting.delete(next);
      clearTimeout(next.timer);
      next.grant();
    },
  };
}

function createAnswerCache(options: DnsCacheOptions, onError?: (error: unknown) => void): ProductCache<CachedAnswer> | null {
  if (options.store) return createProductCache<CachedAnswer>(options.store, { namespace: 'dns', onError });
  const maxEntries = options.maxEntries ?? 10_000;
  return maxEntries > 0 ? createProductCache<CachedAnswer>(createMemoryCache({ maxEntries }), { onError }) : null;
}

/** Lower-case, no trailing dot; checked as a wire name so a bad one fails before any query. */
function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  const plain = lower.endsWith('.') ? lower.slice(0, -1) : lower;
  try {
    encodeName(plain);
  } catch (error) {
    throw Object.assign(invalidOption(`cannot ask for ${JSON.stringify(name)}: ${(error as Error).message}`), { cause: error });
  }
  return plain;
}

function recordValue(record: WireRecord): unknown {
  // TXT: the character-strings of one record are one text (RFC 7208 3.3, RFC 6376 3.6.2.2).
  return Array.isArray(record.data) ? record.data.join('') : record.data;
}

/** Monotonic ms left before `deadline` (a `performance.now()` time). */
function msLeft(deadline: number): number {
  return deadline - performance.now();
}

/** `limitMs`, or less when the deadline is nearer; at least 1 ms so a timer still fires. */
function cappedMs(limitMs: number, deadline: number): number {
  return Math.max(1, Math.min(limitMs, Math.ceil(msLeft(deadline))));
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}

function rcodeName(rcode: number): string {
  return Object.entries(RCODE).find(([, code]) => code === rcode)?.[0] ?? `rcode ${rcode}`;
}

/**
 * How fresh a result built from `answers` is: when its oldest answer was fetched, and how long
 * until its first answer expires (an answer served from the cache has already aged), so a
 * result cached for `ttlMs` never outlives its data.
 */
export function freshnessOf(answers: readonly DnsAnswer<DnsRecordType>[], now: number): { fetchedAt: number; ttlMs: number } {
  if (answers.length === 0) return { fetchedAt: now, ttlMs: 0 };
  return {
    fetchedAt: Math.min(...answers.map((answer) => answer.fetchedAt)),
    ttlMs: Math.min(...answers.map((answer) => answer.fetchedAt + answer.ttl * 1000)) - now,
  };
}
