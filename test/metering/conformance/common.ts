/**
 * What the meter's conformance suites share, one suite per role of the Meter interface:
 * the hot path (hot-path.ts), administration (admin.ts) and the settings store (settings.ts).
 * Each store's test file calls the three with one factory; nothing here knows which store it is
 * testing.
 */
import { expect } from 'vitest';
import { hashKey, issueKeys, type IssuedKeys } from '../../../src/metering/keys.js';
import type { ConsumeOutcome, ConsumeRequest, Meter, Plan } from '../../../src/metering/types.js';
import type { ProductId } from '../../../src/products/catalog.js';

/** The lease options the suite gives a store: `now` is the clock of `usage()`. */
export interface MeterFactoryOptions {
  leaseMs: number;
  now: () => number;
}

export type MeterFactory = (options: MeterFactoryOptions) => Promise<{ meter: Meter; cleanup: () => Promise<void> }>;

/** Longer than any span the counting cases cover, so no reservation of theirs expires: leases have cases of their own. */
export const COUNTING_LEASE_MS = 400 * 86_400_000;

/** 2025-01-15T12:00:00.000Z: the start of a minute, mid-month. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
export const MINUTE = 60_000;
/** 2025-02-01T00:00:00.000Z: the first instant of the next month. */
export const FEB = Date.UTC(2025, 1, 1);

/** A configuration TypeError with the stable code invalid_option and this message. */
export function configError(message: string) {
  return expect.objectContaining({ name: 'TypeError', code: 'invalid_option', message });
}

export interface SubscribeOptions {
  product?: ProductId;
  plan?: string;
  limits?: Omit<Plan, 'slug' | 'product'>;
  ipAllow?: string[];
}

/** A subscription on `plan` (created first when limits are given) with a secret and a public key. */
export async function subscribe(meter: Meter, options: SubscribeOptions = {}): Promise<IssuedKeys> {
  const plan = options.plan ?? 'starter';
  if (options.limits) await meter.setPlan({ slug: plan, product: '*', ...options.limits });
  return issueKeys(meter, { product: options.product ?? 'useragent', plan, ipAllow: options.ipAllow });
}

/**
 * The consume request the API's gate makes (a lookup at T0) for a secret key, or a subscription's
 * secret key, with the limits its plan resolves to, and `overrides`.
 */
export async function requestFor(meter: Meter, key: string | { secretKey: string }, overrides: Partial<ConsumeRequest> = {}): Promise<ConsumeRequest> {
  const resolved = await meter.resolveKey(hashKey(typeof key === 'string' ? key : key.secretKey));
  if (!resolved?.plan) throw new Error('no such key, or a key without a plan');
  return {
    keyId: resolved.id,
    subscriptionId: resolved.subscriptionId,
    product: resolved.product,
    rateLimitPerMinute: resolved.plan.rateLimitPerMinute,
    monthlyQuota: resolved.plan.monthlyQuota,
    reserveQuota: true,
    now: T0,
    ...overrides,
  };
}

export function countOutcomes(outcomes: ConsumeOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const label = o.allowed ? 'allowed' : o.reason;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}
