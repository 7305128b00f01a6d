/**
 * An in-process Meter on plain Maps: for tests, embedding and single-process deployments that
 * accept losing counters on restart. Every method runs synchronously inside its promise, so
 * `consume` is atomic by construction.
 */
import { DEFAULT_PLANS, resolvePlan } from '../plans.js';
import { SeclookupError } from '../../errors.js';
import {
  answerNow,
  assertStorablePlan,
  checkLeaseMs,
  DEFAULT_LEASE_MS,
  assertValidPeriod,
  comparePlans,
  compareUsageRows,
  decideConsume,
  duplicateKeyError,
  noSubscriptionError,
  refundEntry,
  snapshotQuota,
  validateNewKeys,
  validateSubscription,
  validateSubscriptionChanges,
  type QuotaEntry,
  type RateEntry,
} from '../store-logic.js';
import type { ProductId } from '../../products/catalog.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  CreatedSubscription,
  KeyInfo,
  KeyKind,
  KeyStatus,
  Meter,
  NewKey,
  NewSubscription,
  Plan,
  QuotaState,
  Reservation,
  SubscriptionChanges,
  UsageRow,
} from '../types.js';

export interface MemoryMeterOptions {
  /** The starting plan table. @default DEFAULT_PLANS */
  plans?: readonly Plan[];
  /** How long a reservation is held before it is given back unless committed, in ms. @default 60000 */
  leaseMs?: number;
  /** Clock of `usage()`, which gives expired leases back first (the other calls take `now`). @default Date.now */
  now?: () => number;
}

/** A reservation not yet committed or refunded: what it holds and when it goes back. */
interface Lease {
  reservation: Reservation;
  units: number;
  expiresAt: number;
}

interface SubscriptionRecord {
  id: string;
  product: ProductId;
  plan: string;
  ipAllow: string[];
}

interface KeyRecord {
  id: string;
  subscription: SubscriptionRecord;
  kind: KeyKind;
  hash: string;
  prefix: string;
  status: KeyStatus;
  createdAt: string;
}

/**
 * Create a Meter that keeps everything in memory. Counters stay bounded: one rate entry per
 * key (replaced when its minute changes) and one quota entry per subscription (replaced when
 * its month changes); usage grows by one row per subscription and day.
 */
export function createMemoryMeter(options: MemoryMeterOptions = {}): Meter {
  const plans = new PlanTable(options.plans ?? DEFAULT_PLANS);
  const subscriptionsById = new Map<string, SubscriptionRecord>();
  const keysById = new Map<string, KeyRecord>();
  const keysByHash = new Map<string, KeyRecord>();
  const rateByKey = new Map<string, RateEntry>();
  const quotaBySubscription = new Map<string, QuotaEntry>();
  const usageRows = new Map<string, UsageRow>();
  const settings = new Map<string, string>();
  const leaseMs = checkLeaseMs(options.leaseMs ?? DEFAULT_LEASE_MS);
  const clock = options.now ?? Date.now;
  // Open leases by subscription, in the order they were taken (so, nearly, of expiry).
  const leasesBySubscription = new Map<string, Map<string, Lease>>();
  let lastLeaseId = 0;
  let lastSubscriptionId = 0;
  let lastKeyId = 0;
  let closed = false;

  function ensureOpen(): void {
    if (closed) throw new SeclookupError('store_failed', 'meter is closed');
  }

  /** Add `delta` billed lookups to the reservation's usage row; a row never goes below zero. */
  function addUsage(reservation: Reservation, delta: number): void {
    const id = `${reservation.subscriptionId}\u0000${reservation.product}\u0000${reservation.day}`;
    const row = usageRows.get(id);
    if (row) row.lookups = Math.max(0, row.lookups + delta);
    else if (delta > 0) usageRows.set(id, { subscriptionId: reservation.subscriptionId, product: reservation.product, day: reservation.day, lookups: delta });
  }

  /** Give `units` of a reservation back to its month's quota and its day's usage. */
  function giveBack(reservation: Reservation, units: number): void {
    const entry = refundEntry(quotaBySubscription.get(reservation.subscriptionId), reservation.period, units);
    if (entry) quotaBySubscription.set(reservation.subscriptionId, entry);
    addUsage(reservation, -units);
  }

  /** Give back the subscription's leases that expired by `now`, oldest first. */
  function reclaim(subscriptionId: string, now: number): void {
    const leases = leasesBySubscription.get(subscriptionId);
    if (!leases) return;
    for (const [id, lease] of leases) {
      if (lease.expiresAt > now) break;
      giveBack(lease.reservation, lease.units);
      leases.delete(id);
    }
    if (leases.size === 0) leasesBySubscription.delete(subscriptionId);
  }

  function openLease(reservation: Reservation, now: number): void {
    let leases = leasesBySubscription.get(reservation.subscriptionId);
    if (!leases) leasesBySubscription.set(reservation.subscriptionId, (leases = new Map()));
    leases.set(reservation.lease, { reservation, units: reservation.units ?? 1, expiresAt: now + leaseMs });
  }

  function subscriptionOf(subscriptionId: string): SubscriptionRecord {
    const sub = subscriptionsById.get(subscriptionId);
    if (!sub) throw noSubscriptionError(subscriptionId);
    return sub;
  }

  function keyInfo(key: KeyRecord): KeyInfo {
    const sub = key.subscription;
    return {
      id: key.id,
      subscriptionId: sub.id,
      product: sub.product,
      kind: key.kind,
      status: key.status,
      prefix: key.prefix,
      plan: sub.plan,
      ipAllow: [...sub.ipAllow],
      createdAt: key.createdAt,
    };
  }

  return {
    // Synchronous: everything is in memory (see Meter.resolveKey).
    resolveKey: (hash: string) =>
      answerNow(() => {
        ensureOpen();
        const key = keysByHash.get(hash);
        if (!key) return null;
        const sub = key.subscription;
        return {
          id: key.id,
          subscriptionId: sub.id,
          product: sub.product,
          kind: key.kind,
          status: key.status,
          ipAllow: [...sub.ipAllow],
          plan: resolvePlan(plans.list(), sub.plan, sub.product),
        };
      }),

    consume: (request: ConsumeRequest) =>
      answerNow((): ConsumeOutcome => {
        ensureOpen();
        reclaim(request.subscriptionId, request.now);
        const decision = decideConsume(request, rateByKey.get(request.keyId), quotaBySubscription.get(request.subscriptionId), String(lastLeaseId + 1));
        if (decision.rate) rateByKey.set(request.keyId, decision.rate);
        if (decision.quota) quotaBySubscription.set(request.subscriptionId, decision.quota);
        const reservation = decision.outcome.allowed ? decision.outcome.reservation : null;
        if (reservation) {
          lastLeaseId++;
          addUsage(reservation, reservation.units ?? 1);
          openLease(reservation, request.now);
        }
        return decision.outcome;
      }),

    async refund(reservation: Reservation): Promise<void> {
      ensureOpen();
      const leases = leasesBySubscription.get(reservation.subscriptionId);
      const lease = leases?.get(reservation.lease);
      if (!lease) return;
      giveBack(lease.reservation, Math.min(reservation.units ?? 1, lease.units));
      leases!.delete(reservation.lease);
    },

    commit: (reservation: Reservation) =>
      answerNow(() => {
        ensureOpen();
        leasesBySubscription.get(reservation.subscriptionId)?.delete(reservation.lease);
      }),

    async quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState> {
      ensureOpen();
      reclaim(subscriptionId, now);
      return snapshotQuota(quotaBySubscription.get(subscriptionId), monthlyQuota, now);
    },

    async createSubscription(input: NewSubscription): Promise<CreatedSubscription> {
      ensureOpen();
      const ipAllow = validateSubscription(input, () => plans.list());
      if (input.keys.some((k) => keysByHash.has(k.hash))) throw duplicateKeyError();
      const sub: SubscriptionRecord = { id: String(++lastSubscriptionId), product: input.product, plan: input.plan, ipAllow };
      subscriptionsById.set(sub.id, sub);
      const createdAt = new Date().toISOString();
      const keys = input.keys.map((k) => {
        const key: KeyRecord = { id: String(++lastKeyId), subscription: sub, kind: k.kind, hash: k.hash, prefix: k.prefix, status: 'active', createdAt };
        keysById.set(key.id, key);
        keysByHash.set(key.hash, key);
        return keyInfo(key);
      });
      return { subscriptionId: sub.id, keys };
    },

    async addKeys(subscriptionId: string, newKeys: NewKey[]): Promise<KeyInfo[]> {
      ensureOpen();
      validateNewKeys(newKeys);
      const sub = subscriptionOf(subscriptionId);
      if (newKeys.some((k) => keysByHash.has(k.hash))) throw duplicateKeyError();
      const createdAt = new Date().toISOString();
      return newKeys.map((k) => {
        const key: KeyRecord = { id: String(++lastKeyId), subscription: sub, kind: k.kind, hash: k.hash, prefix: k.prefix, status: 'active', createdAt };
        keysById.set(key.id, key);
        keysByHash.set(key.hash, key);
        return keyInfo(key);
      });
    },

    async listKeys(): Promise<KeyInfo[]> {
      ensureOpen();
      // Map iteration follows insertion, which is creation order.
      return [...keysById.values()].map(keyInfo);
    },

    async updateSubscription(subscriptionId: string, changes: SubscriptionChanges): Promise<KeyInfo[]> {
      ensureOpen();
      const sub = subscriptionOf(subscriptionId);
      const valid = validateSubscriptionChanges(changes, sub.product, () => plans.list());
      // resolveKey reads the record on every call: the change applies at once.
      if (valid.plan !== undefined) sub.plan = valid.plan;
      if (valid.ipAllow !== undefined) sub.ipAllow = valid.ipAllow;
      return [...keysById.values()].filter((key) => key.subscription === sub).map(keyInfo);
    },

    async revokeKey(idOrHash: string): Promise<KeyInfo | null> {
      ensureOpen();
      const key = keysById.get(idOrHash) ?? keysByHash.get(idOrHash);
      if (!key) return null;
      key.status = 'revoked';
      return keyInfo(key);
    },

    async setPlan(plan: Plan): Promise<void> {
      ensureOpen();
      plans.set(plan);
    },

    async listPlans(): Promise<Plan[]> {
      ensureOpen();
      return plans
        .list()
        .map((p) => ({ ...p }))
        .sort(comparePlans);
    },

    async usage(period?: string): Promise<UsageRow[]> {
      ensureOpen();
      if (period !== undefined) assertValidPeriod(period);
      const now = clock();
      for (const subscriptionId of [...leasesBySubscription.keys()]) reclaim(subscriptionId, now);
      const rows = [...usageRows.values()].filter((row) => period === undefined || row.day.startsWith(`${period}-`));
      return rows.map((row) => ({ ...row })).sort(compareUsageRows);
    },

    async getSetting(name: string): Promise<string | null> {
      ensureOpen();
      return settings.get(name) ?? null;
    },

    async setSettingIfAbsent(name: string, value: string): Promise<string> {
      ensureOpen();
      if (!settings.has(name)) settings.set(name, value);
      return settings.get(name)!;
    },

    async setSetting(name: string, value: string): Promise<void> {
      ensureOpen();
      settings.set(name, value);
    },

    async close(): Promise<void> {
      closed = true;
    },
  };
}

/** Plans keyed by (slug, product), with the array form resolvePlan reads cached between changes. */
class PlanTable {
  private readonly rows = new Map<string, Plan>();
  private cached: Plan[] | null = null;

  constructor(initial: readonly Plan[]) {
    for (const plan of initial) this.set(plan);
  }

  set(plan: Plan): void {
    assertStorablePlan(plan);
    this.rows.set(`${plan.slug}\u0000${plan.product}`, {
      slug: plan.slug,
      product: plan.product,
      rateLimitPerMinute: plan.rateLimitPerMinute,
      monthlyQuota: plan.monthlyQuota,
    });
    this.cached = null;
  }

  list(): readonly Plan[] {
    this.cached ??= [...this.rows.values()];
    return this.cached;
  }
}
