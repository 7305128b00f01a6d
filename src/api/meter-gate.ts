/**
 * The meter gate: everything between a request and the meter store, in one place for status
 * and lookup routes alike. It resolves and authorizes the key (401/403), counts the request
 * against the key's per-minute rate and reserves quota in one atomic store call (429 and the
 * limit headers), refunds what a failed lookup reserved, bounds every store call with a
 * deadline, and applies the store-failure policy (`onMeterError`).
 */
import { isLookupError, refusal, type LookupError } from '../errors.js';
import { createDeadlineGroup } from '../lib/deadline.js';
import type { IpAddress } from '../lib/ip.js';
import { isPromise, type MaybePromise } from '../lib/outcome.js';
import { quotaPeriodResetAt } from '../lib/calendar.js';
import type { ConsumeOutcome, ConsumeRequest, MeterHotPath, QuotaState, RateState, Reservation } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import type { ServiceGate } from '../products/service.js';
import { createAuthenticator, hasKeyShape, type AuthenticatedKey } from './auth.js';

/** Default deadline of one meter store call. */
export const DEFAULT_METER_TIMEOUT_MS = 2_000;

export interface MeterGateOptions {
  meter: MeterHotPath;
  now: () => number;
  onMeterError: 'deny' | 'allow';
  meterTimeoutMs: number;
  onError?: (error: unknown, context: string) => void;
}

/** Response headers being collected for one request. */
export type Headers = Record<string, string>;

/** What the gate knows of the caller once its key passed. */
export interface GatePass {
  key: AuthenticatedKey;
  /** False when the store failed and `onMeterError: 'allow'` let the request through unchecked. */
  metered: boolean;
}

/** How `admit` counts one request. */
export interface AdmitOptions {
  /** Reserve quota and record usage (a lookup); false counts the rate only (status routes, rejected input). */
  reserveQuota: boolean;
  /** Let `onMeterError: 'allow'` pass the request when the store fails (lookup routes); status and service routes always need the store. */
  lenient: boolean;
  /** The rate window counted: another key's (captcha's site key) instead of the caller's. @default the key's id */
  rateKeyId?: string;
  /** A batch: count `rate` requests and reserve `quota` units instead of one of each, all or none. */
  units?: { rate: number; quota: number };
  /**
   * Without reserving quota, refuse as over quota (429) when none is left: a request that hands
   * out work only a later, billed one can redeem (captcha's challenge, before its verify).
   */
  needsQuotaLeft?: boolean;
}

/** What `admit` let through: a quota unit to refund if the lookup fails, and the quota left. */
export interface Admission {
  reservation: Reservation | null;
  quota: QuotaState | null;
}

const UNMETERED: Admission = Object.freeze({ reservation: null, quota: null });

/** Thrown when the meter store fails (or hangs) and the policy is to deny: answered 500. */
export class MeterFailure extends Error {}

export function createMeterGate(options: MeterGateOptions) {
  const { meter, now, onMeterError } = options;
  const bounded = createDeadlineGroup(options.meterTimeoutMs, 'the meter store');
  // Every store call that answers with a promise goes through the deadline; one that answers
  // synchronously cannot hang and costs no promise. A consume that answers after its deadline
  // had its request answered without it, so a unit it reserved is given back.
  const giveBackLate = (late: ConsumeOutcome) => {
    if (late.allowed && late.reservation) meter.refund(late.reservation).catch((error) => options.onError?.(error, 'meter refund'));
  };
  const boundedMeter = {
    resolveKey: (hash: string) => {
      const key = meter.resolveKey(hash);
      return isPromise(key) ? bounded(key) : key;
    },
    consume: (request: ConsumeRequest) => {
      const outcome = meter.consume(request);
      // A store whose calls settle within the turn (SQLite) cannot hang: no deadline, no extra promise.
      return isPromise(outcome) && !meter.answersWithinTurn ? bounded(outcome, giveBackLate) : outcome;
    },
    refund: (reservation: Reservation) => bounded(meter.refund(reservation)),
  };
  const auth = createAuthenticator(boundedMeter);

  /** A store failure: passed through under `allow` when `lenient`, else a MeterFailure. */
  function storeFailed(error: unknown, lenient: boolean): boolean {
    if (isLookupError(error)) throw error;
    if (lenient && onMeterError === 'allow') {
      options.onError?.(error, 'meter (allowed through)');
      return true;
    }
    throw new MeterFailure('meter store failed', { cause: error });
  }

  /**
   * The key's checks in SPEC's order: 401 missing_credentials / invalid_api_key /
   * wrong_key_type, 403 ip_not_allowed. `lenient` (lookup routes) lets the `allow` policy serve
   * a key of the right shape when the store is down; status routes always need the store.
   */
  function authenticate(
    token: string | undefined,
    product: ProductId,
    route: { requireSecret: boolean; lenient: boolean },
    clientIp: () => IpAddress | null,
  ): MaybePromise<GatePass> {
    const authorized = (key: AuthenticatedKey, metered: boolean): GatePass => {
      auth.authorize(key, route.requireSecret, clientIp);
      return { key, metered };
    };
    const afterFailure = (error: unknown): GatePass => {
      storeFailed(error, route.lenient);
      return authorized(unverifiedKey(token, product), false);
    };
    let key: MaybePromise<AuthenticatedKey>;
    try {
      key = auth.resolve(token, product);
    } catch (error) {
      return afterFailure(error);
    }
    // Synchronous when the store answered synchronously: no promise on the hot path.
    return isPromise(key) ? key.then((found) => authorized(found, true), afterFailure) : authorized(key, true);
  }

  /**
   * Count the request against the key's rate and, for a lookup, reserve one quota unit, in one
   * store call. Sets the limit headers; throws 429 when either limit is reached. Resolves with
   * the reservation to refund if the lookup then fails, and the quota after this call (both
   * null when the request went through unmetered).
   */
  function admit(pass: GatePass, product: ProductId, options: AdmitOptions, headers: Headers): MaybePromise<Admission> {
    if (!pass.metered) return UNMETERED;
    const { reserveQuota, lenient, rateKeyId = pass.key.id, units, needsQuotaLeft } = options;
    const afterFailure = (error: unknown): Admission => {
      storeFailed(error, lenient);
      return UNMETERED;
    };
    const admitted = (outcome: ConsumeOutcome): Admission => {
      setLimitHeaders(headers, outcome);
      if (!outcome.allowed) throw limited(outcome, headers);
      if (needsQuotaLeft && outcome.quota.remaining === 0) throw limited({ ...outcome, allowed: false, reason: 'quota_exceeded' }, headers);
      return { reservation: outcome.reservation, quota: outcome.quota };
    };
    let outcome: MaybePromise<ConsumeOutcome>;
    try {
      const request: ConsumeRequest = {
        keyId: rateKeyId,
        subscriptionId: pass.key.subscriptionId,
        product,
        rateLimitPerMinute: pass.key.plan.rateLimitPerMinute,
        monthlyQuota: pass.key.plan.monthlyQuota,
        reserveQuota,
        now: now(),
      };
      if (units) {
        request.rateUnits = units.rate;
        request.quotaUnits = units.quota;
      }
      outcome = boundedMeter.consume(request);
    } catch (error) {
      return afterFailure(error);
    }
    return isPromise(outcome) ? outcome.then(admitted, afterFailure) : admitted(outcome);
  }

  /**
   * A request the client got wrong (bad input, bad body) still counts against the rate, and a
   * rate-limited client hears 429 before the input error, as before any input was read. It
   * never reserves quota, and a store failure here never hides the client's own error.
   */
  async function countRejected(pass: GatePass, product: ProductId, headers: Headers): Promise<void> {
    try {
      await admit(pass, product, { reserveQuota: false, lenient: true }, headers);
    } catch (error) {
      if (isLookupError(error)) throw error;
    }
  }

  /**
   * The answer is on its way to the client: keep the reservation billed (end its lease). Not
   * awaited, so the answer does not wait for the store; the store still sends it first (Redis
   * before QUIT, SQLite at close), and one that fails leaves the lease to expire: not billed.
   */
  function commit(reservation: Reservation): void {
    const failed = (error: unknown) => options.onError?.(error, 'meter commit');
    try {
      const done = meter.commit(reservation);
      if (isPromise(done)) bounded(done).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /**
   * Give back a reservation the lookup did not use (or `{ ...reservation, units: k }`: k of a
   * batch's units). Never throws: the answer is already decided.
   */
  async function refund(reservation: Reservation, headers: Headers): Promise<void> {
    try {
      await boundedMeter.refund(reservation);
      const remaining = headers['x-quota-remaining'];
      if (remaining !== undefined && remaining !== 'unlimited') headers['x-quota-remaining'] = String(Number(remaining) + (reservation.units ?? 1));
    } catch (error) {
      options.onError?.(error, 'meter refund');
    }
  }

  function limited(outcome: Extract<ConsumeOutcome, { allowed: false }>, headers: Headers): LookupError {
    const nowSeconds = Math.floor(now() / 1000);
    const resetAt = outcome.reason === 'rate_limit_exceeded' ? outcome.rate.resetAt : quotaPeriodResetAt(now());
    headers['retry-after'] = String(Math.max(1, resetAt - nowSeconds));
    return refusal(
      outcome.reason,
      outcome.reason === 'rate_limit_exceeded' ? 'per-minute rate limit exceeded; retry after the Retry-After seconds' : 'monthly quota exhausted',
    );
  }

  /**
   * The gate as a service route uses it (products/service.ts): the key resolved without the
   * kind and allowlist checks (the service applies its own), store failures thrown as they are.
   */
  function forService(product: ProductId): ServiceGate {
    return {
      resolve: (token) => auth.resolve(token, product),
      admit: (key, { rateKeyId, reserveQuota, needsQuotaLeft }, headers) =>
        admit({ key, metered: true }, product, { reserveQuota, lenient: false, rateKeyId, needsQuotaLeft }, headers),
      refund,
      commit,
    };
  }

  return { authenticate, admit, countRejected, refund, commit, forService };
}

/**
 * With `onMeterError: 'allow'` and the store down, a key can only be checked for its shape:
 * the request is served as if from an active key of this product with no limits.
 */
export type MeterGate = ReturnType<typeof createMeterGate>;

function unverifiedKey(token: string | undefined, product: ProductId): AuthenticatedKey {
  if (!token) throw refusal('missing_credentials', 'no API key: send Authorization: Bearer <key>');
  const secret = hasKeyShape(token, product, 'secret');
  if (!secret && !hasKeyShape(token, product, 'public')) throw refusal('invalid_api_key', 'the API key is unknown, inactive or revoked');
  return {
    id: 'unverified',
    subscriptionId: 'unverified',
    product,
    kind: secret ? 'secret' : 'public',
    status: 'active',
    ipAllow: [],
    plan: { slug: 'unverified', rateLimitPerMinute: Number.MAX_SAFE_INTEGER, monthlyQuota: null },
  };
}

function setLimitHeaders(headers: Headers, outcome: { rate: RateState; quota: QuotaState }): void {
  headers['x-ratelimit-limit'] = String(outcome.rate.limit);
  headers['x-ratelimit-remaining'] = String(outcome.rate.remaining);
  headers['x-ratelimit-reset'] = String(outcome.rate.resetAt);
  headers['x-quota-limit'] = outcome.quota.limit === null ? 'unlimited' : String(outcome.quota.limit);
  headers['x-quota-remaining'] = outcome.quota.remaining === null ? 'unlimited' : String(outcome.quota.remaining);
  headers['x-quota-period'] = outcome.quota.period;
}
