/**
 * Pure rules shared by every Meter store (memory, SQLite), so they decide the same way:
 * input validation, the consume decision, quota snapshots and result ordering. Stores only
 * load and save the counters these functions read and return.
 */
import { invalidOption } from '../errors.js';
import { checkKnownNames } from '../lib/option-checks.js';
import { normalizeCidrs } from '../lib/ip.js';
import { isProductId, type ProductId } from '../products/catalog.js';
import { rateWindow, rateWindowResetAt, quotaPeriod, usageDay } from '../lib/calendar.js';
import { assertValidPlan, resolvePlan } from './plans.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  NewKey,
  NewSubscription,
  Plan,
  QuotaState,
  RateState,
  Reservation,
  SubscriptionChanges,
  UsageRow,
} from './types.js';

/** A key's count in its current one-minute window. Stores keep one entry per key. */
export interface RateEntry {
  window: number;
  hits: number;
}

/** A subscription's reserved lookups in its current month. Stores keep one entry per subscription. */
export interface QuotaEntry {
  period: string;
  used: number;
}

/** What one `consume` call answers and which counters it changes. */
export interface ConsumeDecision {
  outcome: ConsumeOutcome;
  /** The rate entry to save, or null when the call counted nothing (rate limited). */
  rate: RateEntry | null;
  /** The quota entry to save, or null when no quota was reserved. */
  quota: QuotaEntry | null;
}

/**
 * How long a reservation is held before the store gives it back unless committed: longer than
 * any lookup's own deadline (whois, the slowest, 15 s), a batch's (8 s) and serve's drain (10 s).
 */
export const DEFAULT_LEASE_MS = 60_000;

/** Throws unless `leaseMs` is a whole number of milliseconds, 1 or more. */
export function checkLeaseMs(leaseMs: number): number {
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) throw invalidOption(`leaseMs must be a positive whole number of milliseconds (got ${String(leaseMs)})`);
  return leaseMs;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * Decide one `consume` call from the stored counters. Counters never move back in time: a
 * call stamped in an earlier window or month than the stored one (clock skew between callers,
 * a request that waited) counts against the stored, newer one, so it cannot reopen a window.
 */
export function decideConsume(request: ConsumeRequest, storedRate: RateEntry | undefined, storedQuota: QuotaEntry | undefined, lease = ''): ConsumeDecision {
  const window = Math.max(rateWindow(request.now), storedRate?.window ?? -Infinity);
  const hitsBefore = storedRate?.window === window ? storedRate.hits : 0;
  const day = dayOf(request.now);
  const period = latestPeriod(day.slice(0, 7), storedQuota?.period);
  const usedBefore = storedQuota?.period === period ? storedQuota.used : 0;
  const limit = request.rateLimitPerMinute;
  // A batch's units fit whole or not at all; a single request is one unit of each.
  const rateUnits = request.rateUnits ?? 1;
  const quotaUnits = request.quotaUnits ?? 1;

  if (hitsBefore + rateUnits > limit) {
    const outcome: ConsumeOutcome = {
      allowed: false,
      reason: 'rate_limit_exceeded',
      rate: rateState(limit, hitsBefore, window),
      quota: quotaState(request.monthlyQuota, usedBefore, period),
    };
    return { outcome, rate: null, quota: null };
  }

  // From here the call counts against the window, even if the quota then rejects it.
  const rate: RateEntry = { window, hits: hitsBefore + rateUnits };
  const rateNow = rateState(limit, rate.hits, window);
  if (!request.reserveQuota) {
    const outcome: ConsumeOutcome = { allowed: true, rate: rateNow, quota: quotaState(request.monthlyQuota, usedBefore, period), reservation: null };
    return { outcome, rate, quota: null };
  }
  if (request.monthlyQuota !== null && usedBefore + quotaUnits > request.monthlyQuota) {
    const outcome: ConsumeOutcome = { allowed: false, reason: 'quota_exceeded', rate: rateNow, quota: quotaState(request.monthlyQuota, usedBefore, period) };
    return { outcome, rate, quota: null };
  }
  // Unlimited plans still count `used`, so usage so far is known.
  const quota: QuotaEntry = { period, used: usedBefore + quotaUnits };
  const reservation: Reservation = { subscriptionId: request.subscriptionId, product: request.product, period, day, lease };
  if (quotaUnits !== 1) reservation.units = quotaUnits;
  const outcome: ConsumeOutcome = { allowed: true, rate: rateNow, quota: quotaState(request.monthlyQuota, quota.used, period), reservation };
  return { outcome, rate, quota };
}

/** Quota left in the month of `now`, from the subscription's stored entry (if any). */
export function snapshotQuota(stored: QuotaEntry | undefined, monthlyQuota: number | null, now: number): QuotaState {
  const period = quotaPeriod(now);
  return quotaState(monthlyQuota, stored?.period === period ? stored.used : 0, period);
}

/**
 * The entry after refunding `units` of `period` (never below 0); unchanged when the stored
 * month differs or is at 0.
 */
export function refundEntry(stored: QuotaEntry | undefined, period: string, units = 1): QuotaEntry | undefined {
  if (!stored || stored.period !== period || stored.used <= 0) return stored;
  return { period, used: Math.max(0, stored.used - units) };
}

function rateState(limit: number, hits: number, window: number): RateState {
  return { limit, remaining: Math.max(0, limit - hits), resetAt: rateWindowResetAt(window * 60_000) };
}

function quotaState(limit: number | null, used: number, period: string): QuotaState {
  return limit === null ? { limit: null, remaining: null, period } : { limit, remaining: Math.max(0, limit - used), period };
}

const DAY_MS = 86_400_000;
let cachedDayIndex = Number.NaN;
let cachedDay = '';

/**
 * usageDay(now), remembered for the current day: formatting a Date costs more than the rest of
 * a memory-store consume. UTC days are whole multiples of DAY_MS, so the day index is exact.
 */
function dayOf(now: number): string {
  const dayIndex = Math.floor(now / DAY_MS);
  if (dayIndex !== cachedDayIndex) {
    cachedDay = usageDay(now);
    cachedDayIndex = dayIndex;
  }
  return cachedDay;
}

/** `YYYY-MM` strings sort chronologically as text. */
function latestPeriod(period: string, stored: string | undefined): string {
  return stored !== undefined && stored > period ? stored : period;
}

/**
 * Check a new subscription against the plan table and return its normalised IP allowlist.
 * `plansWithSlug` returns the plan rows of one slug (or the whole table). Throws a TypeError
 * naming the bad field.
 */
export function validateSubscription(input: NewSubscription, plansWithSlug: (slug: string) => readonly Plan[]): string[] {
  if (typeof input.product !== 'string' || !isProductId(input.product)) {
    throw invalidOption(`unknown product ${JSON.stringify(input.product)}`);
  }
  if (typeof input.plan !== 'string' || !resolvePlan(plansWithSlug(input.plan), input.plan, input.product)) {
    throw invalidOption(`unknown plan "${input.plan}" for product ${input.product}`);
  }
  validateNewKeys(input.keys);
  return checkIpAllow(input.ipAllow);
}

/**
 * Check a subscription's changes against its product and the plan table, as validateSubscription
 * checks a new one; returns the fields given, the IP allowlist normalised. Throws a TypeError
 * naming the bad field.
 */
export function validateSubscriptionChanges(
  changes: SubscriptionChanges,
  product: ProductId,
  plansWithSlug: (slug: string) => readonly Plan[],
): SubscriptionChanges {
  if (typeof changes !== 'object' || changes === null) throw invalidOption('changes must be an object: { plan?, ipAllow? }');
  // A misspelled name (`ipallow`) would otherwise leave the subscription as it was, and report success.
  checkKnownNames(changes as Record<string, unknown>, ['plan', 'ipAllow'], 'changes');
  if (changes.plan === undefined && changes.ipAllow === undefined) throw invalidOption('changes must name plan or ipAllow (nothing to change)');
  const valid: SubscriptionChanges = {};
  if (changes.plan !== undefined) {
    if (typeof changes.plan !== 'string' || !resolvePlan(plansWithSlug(changes.plan), changes.plan, product)) {
      throw invalidOption(`unknown plan "${changes.plan}" for product ${product}`);
    }
    valid.plan = changes.plan;
  }
  if (changes.ipAllow !== undefined) valid.ipAllow = checkIpAllow(changes.ipAllow);
  return valid;
}

/** True when `id` has the form every store gives subscription and key ids (a counter from 1). */
export function looksLikeStoredId(id: string): boolean {
  return typeof id === 'string' && /^[1-9]\d*$/.test(id);
}

/** The error every store throws for a subscription id it does not hold. */
export function noSubscriptionError(subscriptionId: string): TypeError {
  return invalidOption(`no subscription ${JSON.stringify(subscriptionId)}`);
}

/** An IP allowlist, normalised; throws a TypeError when it is no array of CIDR strings or one is invalid. */
function checkIpAllow(ipAllow: unknown): string[] {
  if (!Array.isArray(ipAllow) || ipAllow.some((c) => typeof c !== 'string')) {
    throw invalidOption('ipAllow must be an array of CIDR strings');
  }
  return normalizeCidrs(ipAllow);
}

/** Check keys to store: kinds, hashes, prefixes, no hash twice. Throws a TypeError naming the bad field. */
export function validateNewKeys(keys: readonly NewKey[]): void {
  if (!Array.isArray(keys)) throw invalidOption('keys must be an array');
  const hashes = new Set<string>();
  for (const key of keys) {
    if (key.kind !== 'secret' && key.kind !== 'public') throw invalidOption(`key kind must be "secret" or "public" (got ${JSON.stringify(key.kind)})`);
    if (typeof key.hash !== 'string' || !SHA256_HEX.test(key.hash)) throw invalidOption('key hash must be a SHA-256 digest in lowercase hex');
    if (typeof key.prefix !== 'string') throw invalidOption('key prefix must be a string');
    if (hashes.has(key.hash)) throw duplicateKeyError();
    hashes.add(key.hash);
  }
}

/** The error both stores throw when a key hash is already stored. */
export function duplicateKeyError(): Error {
  return new Error('a key with this hash already exists');
}

/** assertValidPlan plus the product check it leaves out. */
export function assertStorablePlan(plan: Plan): void {
  assertValidPlan(plan);
  if (plan.product !== '*' && !isProductId(plan.product)) {
    throw invalidOption(`plan product must be a product id or "*" (got ${JSON.stringify(plan.product)})`);
  }
}

/** Throws unless `period` is a `YYYY-MM` month. */
/** A quota period: a month as `YYYY-MM`. */
export function isValidPeriod(period: string): boolean {
  return typeof period === 'string' && PERIOD.test(period);
}

export function assertValidPeriod(period: string): void {
  if (!isValidPeriod(period)) {
    throw invalidOption(`period must be a month as YYYY-MM (got ${JSON.stringify(period)})`);
  }
}

/** True when `idOrHash` has the form of a key hash rather than an id. */
export function looksLikeKeyHash(idOrHash: string): boolean {
  return SHA256_HEX.test(idOrHash);
}

/** Plans by slug, then product with `'*'` first. */
export function comparePlans(a: Plan, b: Plan): number {
  return compareText(a.slug, b.slug) || compareProduct(a.product, b.product);
}

/** Usage rows by day, then subscription (numeric ids in numeric order), then product. */
export function compareUsageRows(a: UsageRow, b: UsageRow): number {
  return compareText(a.day, b.day) || compareIds(a.subscriptionId, b.subscriptionId) || compareText(a.product, b.product);
}

/** Ids in creation order: shorter first, then as text, so counter ids (no leading zeros) sort by value. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || compareText(a, b);
}

function compareProduct(a: ProductId | '*', b: ProductId | '*'): number {
  if (a === b) return 0;
  if (a === '*') return -1;
  if (b === '*') return 1;
  return compareText(a, b);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Run a store method that can answer synchronously: its value as it is, or, when it throws, a
 * rejected promise, so a store's failures always arrive as rejections (see Meter.resolveKey).
 */
export function answerNow<T>(work: () => T): T | Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error);
  }
}
