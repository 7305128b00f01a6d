/**
 * An in-process Meter on plain Maps: for tests, embedding and single-process deployments that
 * accept losing counters on restart. Every method runs synchronously inside its promise, so
 * `consume` is atomic by construction.
 */
import { DEFAULT_PLANS, resolvePlan } from './plans.js';
import { SeclookupError, invalidOption } from '../errors.js';
import {
  answerNow,
  assertStorablePlan,
  assertValidPeriod,
  comparePlans,
  compareUsageRows,
  decideConsume,
  duplicateKeyError,
  refundEntry,
  snapshotQuota,
  validateNewKeys,
  validateSubscription,
  type QuotaEntry,
  type RateEntry,
} from './store-logic.js';
import type { ProductId } from '../products/catalog.js';
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
  UsageRow,
} from './types.js';

export interface MemoryMeterOptions {
  /** The starting plan table. @default DEFAULT_PLANS */
  plans?: readonly Plan[];
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
  const keysById = new Map<string, KeyRecord>();
  const keysByHash = new Map<string, KeyRecord>();
  const rateByKey = new Map<string, RateEntry>();
  const quotaBySubscription = new Map<string, QuotaEntry>();
  const usageRows = new Map<string, UsageRow>();
  const settings = new Map<string, string>();
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

  function keyInfo(key: KeyRecord): KeyInfo {
    const sub = key.subscription;
    return { id: key.id, subscriptionId: sub.id, product: sub.product, kind: key.kind, status: key.status, prefix: key.prefix, plan: sub.plan, ipAllow: [...sub.ipAllow], createdAt: key.createdAt };
  }

  return {
    // Synchronous: everything is in memory (see Meter.resolveKey).
    resolveKey: (hash: string) =>
      answerNow(() => {
        ensureOpen();
        const key = keysByHash.get(hash);
        if (!key) return null;
        const sub = key.subscription;
        return { id: key.id, subscriptionId: sub.id, product: sub.product, kind: key.kind, status: key.status, ipAllow: [...sub.ipAllow], plan: resolvePlan(plans.list(), sub.plan, sub.product) };
      }),

    consume: (request: ConsumeRequest) =>
      answerNow((): ConsumeOutcome => {
        ensureOpen();
        const decision = decideConsume(request, rateByKey.get(request.keyId), quotaBySubscription.get(request.subscriptionId));
        if (decision.rate) rateByKey.set(request.keyId, decision.rate);
        if (decision.quota) quotaBySubscription.set(request.subscriptionId, decision.quota);
        if (decision.outcome.allowed && decision.outcome.reservation) addUsage(decision.outcome.reservation, decision.outcome.reservation.units ?? 1);
        return decision.outcome;
      }),

    async refund(reservation: Reservation): Promise<void> {
      ensureOpen();
      const units = reservation.units ?? 1;
      const entry = refundEntry(quotaBySubscription.get(reservation.subscriptionId), reservation.period, units);
      if (entry) quotaBySubscription.set(reservation.subscriptionId, entry);
      addUsage(reservation, -units);
    },

    async quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState> {
      ensureOpen();
      return snapshotQuota(quotaBySubscription.get(subscriptionId), monthlyQuota, now);
    },

    async createSubscription(input: NewSubscription): Promise<CreatedSubscription> {
      ensureOpen();
      const ipAllow = validateSubscription(input, () => plans.list());
      if (input.keys.some((k) => keysByHash.has(k.hash))) throw duplicateKeyError();
      const sub: SubscriptionRecord = { id: String(++lastSubscriptionId), product: input.product, plan: input.plan, ipAllow };
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
      const sub = [...keysById.values()].find((key) => key.subscription.id === subscriptionId)?.subscription;
      if (!sub) throw invalidOption(`no subscription ${JSON.stringify(subscriptionId)}`);
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
      return plans.list().map((p) => ({ ...p })).sort(comparePlans);
    },

    async usage(period?: string): Promise<UsageRow[]> {
      ensureOpen();
      if (period !== undefined) assertValidPeriod(period);
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
    this.rows.set(`${plan.slug}\u0000${plan.product}`, { slug: plan.slug, product: plan.product, rateLimitPerMinute: plan.rateLimitPerMinute, monthlyQuota: plan.monthlyQuota });
    this.cached = null;
  }

  list(): readonly Plan[] {
    this.cached ??= [...this.rows.values()];
    return this.cached;
  }
}
