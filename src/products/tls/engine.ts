/**
 * The tls engine: the certificate a host presents on a port, from one TLS handshake.
 *
 * prepare (synchronous, no I/O) reads the input into a target (target.ts). The lookup asks the
 * outbound guard whether the host may be reached (it resolves a name and refuses any
 * non-public address: 422 `host_not_allowed`), connects to a checked address with the name as
 * SNI (IPv4 first; the next address when one refuses or cannot be routed to), and reads the leaf certificate without verifying it (handshake.ts). The socket holds one
 * of the guard's slots (its cap on sockets open at once) until it closes; a check waits for one
 * within its own deadline. Any failure to get a certificate, a slot included, is 502
 * `lookup_failed`, never cached.
 *
 * Results are cached for `cacheTtlMs` (5 minutes) by `host:port`, and never past the moment
 * `valid` or `days_remaining` would change; concurrent checks of one target share one
 * handshake.
 */
import { invalidOption, isSeclookupError, LookupError } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import { checkMs, resolveTimeouts, withDeadline, type TimeoutOptions } from '../../lib/deadline.js';
import { checkCacheSizeLimit, checkTimeoutOptions, describeValue } from '../../lib/option-checks.js';
import type { Socket } from 'node:net';
import type { OutboundGuard } from '../../lib/outbound.js';
import type { OutboundSlot } from '../../lib/outbound-slots.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { createResultCache, type CachedResult, type Computed } from '../../lib/result-cache.js';
import { certificateFacts, msUntilChange, toResult, type CertificateFacts } from './certificate.js';
import { handshake, type Handshake, type HandshakeTarget } from './handshake.js';
import { parseTarget, type TlsTarget } from './target.js';
import type { TlsEngineOptions, TlsOptions, TlsResult } from './types.js';

export type CachedTls = CachedResult<TlsResult>;

/** The deadlines of a check unless `timeouts` says otherwise. */
export const TLS_TIMEOUTS: Readonly<Required<TimeoutOptions>> = Object.freeze({ connectMs: 3_000, totalMs: 5_000 });
export const TLS_CACHE_SIZE = 10_000;
export const TLS_CACHE_TTL_MS = 5 * 60_000;

export interface TlsEngine {
  /**
   * Read a host (and the `port` option) into a target, with no I/O: LookupError `invalid_host`
   * (400) or `host_not_allowed` (422, loopback names and numeric look-alikes).
   */
  prepare(host: string, options?: TlsOptions): TlsTarget;
  /**
   * Check a target: from the cache, or by one handshake. Rejects with LookupError
   * `host_not_allowed` (422: the host is or resolves to a non-public address) or
   * `lookup_failed` (502: no address, DNS failure, refused, reset, timeout, not TLS).
   */
  lookup(target: TlsTarget): MaybePromise<LookupOutcome<TlsResult>>;
}

export interface TlsEngineDeps {
  /** The outbound guard (shared). */
  outbound: () => OutboundGuard;
  cache: ProductCache<CachedTls> | null;
  /** Clock in ms since the epoch: `valid` and `days_remaining` are computed against it. */
  now: () => number;
}

/** Checked engine options, for createEngine (throws TypeError `invalid_option`). */
export function checkTlsOptions(options: TlsEngineOptions | Readonly<Record<string, unknown>> | undefined): {
  timeouts: Required<TimeoutOptions>;
  cacheSize: number;
  cacheTtlMs: number;
} {
  const given = (options ?? {}) as Readonly<Record<string, unknown>>;
  const cacheSize = given.cacheSize ?? TLS_CACHE_SIZE;
  if (typeof cacheSize !== 'number' || !Number.isSafeInteger(cacheSize) || cacheSize < 0)
    throw invalidOption(`tls cacheSize must be a non-negative integer (got ${describeValue(given.cacheSize)})`);
  checkTimeoutOptions(given.timeouts, 'tls timeouts');
  return {
    timeouts: resolveTimeouts(given.timeouts as TimeoutOptions | undefined, TLS_TIMEOUTS, 'tls timeouts'),
    cacheSize: checkCacheSizeLimit(cacheSize, 'tls cacheSize'),
    cacheTtlMs: checkMs((given.cacheTtlMs ?? TLS_CACHE_TTL_MS) as number, 'tls cacheTtlMs'),
  };
}

export function createTlsEngine(deps: TlsEngineDeps, options?: TlsEngineOptions): TlsEngine {
  const { timeouts, cacheTtlMs } = checkTlsOptions(options);
  const results = createResultCache(deps.cache, copyResult);
  const inFlight = new Map<string, Promise<Computed<TlsResult>>>();

  function checkOnce(target: TlsTarget): Promise<Computed<TlsResult>> {
    let pending = inFlight.get(target.key);
    if (!pending) {
      pending = connect(target).finally(() => inFlight.delete(target.key));
      inFlight.set(target.key, pending);
    }
    return pending;
  }

  async function connect(target: TlsTarget): Promise<Computed<TlsResult>> {
    const started = performance.now();
    const checked = await withDeadline(deps.outbound().check(target.host), timeouts.totalMs, `resolving ${target.host}`).catch((error: unknown) => {
      throw guardFailure(target, error);
    });
    const leftAt = () => Math.floor(timeouts.totalMs - (performance.now() - started));
    const spent = () => new LookupError('lookup_failed', `${target.key}: no TLS handshake within ${timeouts.totalMs} ms; retry later`);
    // Every address the name has, IPv4 first (the guard checked them all): one that refuses or
    // cannot be routed to is skipped for the next, as openssl s_client and curl do, so a host
    // with one dead address (or an IPv6 address this machine cannot reach) still answers.
    const addresses = checked.literal ? [checked.address] : checked.addresses.map((a) => a.address);
    let done: Handshake | undefined;
    let where = '';
    for (let i = 0; done === undefined; i++) {
      const address = addresses[i];
      where = checked.literal ? target.key : `${target.key} (${address.includes(':') ? `[${address}]` : address})`;
      if (leftAt() < 1) throw spent();
      const slot = await takeSlot(deps.outbound(), leftAt(), where);
      const left = leftAt();
      if (left < 1) {
        slot.release();
        throw spent();
      }
      // The handshake gets its own deadline, or what is left of the whole check's if that is shorter.
      const budget = Math.min(timeouts.connectMs, left);
      const late = budget === timeouts.connectMs ? `no TLS handshake within ${budget} ms` : `no TLS handshake within the check's ${timeouts.totalMs} ms`;
      const peer = { address, port: target.port, servername: checked.literal ? undefined : checked.host };
      const at = where;
      done = await handshakeHolding(slot, peer, budget, late).catch((error: unknown) => {
        if (!isSeclookupError(error)) throw error;
        if (i + 1 < addresses.length && unreachable(error)) return undefined;
        throw new LookupError('lookup_failed', `${at}: ${error.message}`, { cause: error });
      });
    }
    const facts = readCertificate(done, where);
    const now = deps.now();
    return { result: toResult(target.host, target.port, facts, done.protocol, now), ttlMs: Math.min(cacheTtlMs, msUntilChange(facts, now)) };
  }

  // Parsed inputs, memoised: clients send the same few hosts over and over, and parsing (URL
  // forms, IDN mapping) costs more than the cache hit it leads to. Bounded; errors not kept.
  const parsed = new Map<string, TlsTarget>();
  function prepare(host: string, callOptions?: TlsOptions): TlsTarget {
    const port = callOptions?.port;
    const memoKey =
      typeof host === 'string' && host.length <= MEMO_INPUT_LENGTH && (port === undefined || typeof port === 'number' || typeof port === 'string')
        ? port === undefined
          ? host
          : `${host}\u0000${typeof port}${port}`
        : null;
    let target = memoKey === null ? undefined : parsed.get(memoKey);
    if (!target) {
      target = Object.freeze(parseTarget(host, port));
      if (memoKey !== null) {
        if (parsed.size >= MEMO_ENTRIES) parsed.clear();
        parsed.set(memoKey, target);
      }
    }
    return target;
  }

  const check = (target: TlsTarget) => results.lookup(target.key, () => checkOnce(target));
  return { prepare, lookup: check };
}

/** Inputs memoised by prepare: at most this many, each at most this long. */
const MEMO_ENTRIES = 4_096;
const MEMO_INPUT_LENGTH = 256;

/**
 * A slot for the handshake's socket (the guard's cap, shared by every outbound connection),
 * waited for within `waitMs`; none in time is 502 `lookup_failed`, as any failure to connect.
 */
async function takeSlot(guard: OutboundGuard, waitMs: number, where: string): Promise<OutboundSlot> {
  try {
    return await guard.slots.acquire(waitMs);
  } catch (error) {
    if (!isSeclookupError(error)) throw error;
    throw new LookupError('lookup_failed', `${where}: ${error.message}`, { cause: error });
  }
}

/** The handshake, its socket holding `slot` until it closes. */
function handshakeHolding(slot: OutboundSlot, peer: HandshakeTarget, timeoutMs: number, late: string): Promise<Handshake> {
  let socketMade = false;
  const hold = (socket: Socket) => {
    socketMade = true;
    slot.releaseOnClose(socket);
  };
  return handshake(peer, timeoutMs, late, hold).catch((error: unknown) => {
    if (!socketMade) slot.release(); // failed before a socket was made: no close will give it back
    throw error;
  });
}

/** The socket errors that say nothing listens at that address, or it cannot be reached: another address may do. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);
function unreachable(error: Error): boolean {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && UNREACHABLE.has(code);
}

/** The certificate's facts; one that cannot be read (a malformed validity time) is the server's failure. */
function readCertificate(done: Handshake, where: string): CertificateFacts {
  try {
    return certificateFacts(done.certificate);
  } catch (error) {
    if (!isSeclookupError(error)) throw error;
    throw new LookupError('lookup_failed', `${where}: ${error.message}`, { cause: error });
  }
}

/** The guard's refusals and DNS failures, as the API answers them. */
function guardFailure(target: TlsTarget, error: unknown): unknown {
  if (!isSeclookupError(error)) return error;
  switch (error.code) {
    case 'target_refused':
      return new LookupError('host_not_allowed', error.message, { cause: error });
    case 'name_not_found':
      return new LookupError('lookup_failed', `${error.message}; nothing to connect to`, { cause: error });
    case 'timeout':
    case 'upstream_failed':
      return new LookupError('lookup_failed', `could not resolve ${target.host} (${error.code}); retry later`, { cause: error });
    default:
      return error;
  }
}

function copyResult(r: TlsResult): TlsResult {
  return { ...r, san: [...r.san] };
}
