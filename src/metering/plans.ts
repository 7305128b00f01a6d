import { invalidOption } from '../errors.js';
import type { ProductId } from '../products/catalog.js';
import type { ProductDescriptor } from '../products/descriptor.js';
import { PRODUCT_DESCRIPTORS } from '../products/descriptors.js';
import type { Plan, ResolvedPlan } from './types.js';

/**
 * The plan table a new store starts with. Starter limits follow SPEC.md's status-route
 * examples, as each product's descriptor declares them; enterprise is 3,000 per minute with no monthly cap.
 */
export const DEFAULT_PLANS: readonly Plan[] = Object.freeze([
  { slug: 'starter', product: '*', rateLimitPerMinute: 120, monthlyQuota: 10_000 },
  ...(PRODUCT_DESCRIPTORS as readonly ProductDescriptor<ProductId>[]).flatMap(({ id, starterPlan }) =>
    starterPlan ? [{ slug: 'starter', product: id, ...starterPlan }] : [],
  ),
  { slug: 'enterprise', product: '*', rateLimitPerMinute: 3_000, monthlyQuota: null },
]);

/** Pick the row for `product` from a plan table: the product's own row, else the `'*'` row. */
export function resolvePlan(plans: readonly Plan[], slug: string, product: ProductId): ResolvedPlan | null {
  const row = plans.find((p) => p.slug === slug && p.product === product) ?? plans.find((p) => p.slug === slug && p.product === '*');
  return row ? { slug: row.slug, rateLimitPerMinute: row.rateLimitPerMinute, monthlyQuota: row.monthlyQuota } : null;
}

/** Throws a clear message for a plan no store should accept. */
export function assertValidPlan(plan: Plan): void {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(plan.slug)) {
    throw invalidOption(`plan slug must be 1-64 characters of a-z, 0-9, '-' or '_' (got ${JSON.stringify(plan.slug)})`);
  }
  if (!Number.isSafeInteger(plan.rateLimitPerMinute) || plan.rateLimitPerMinute < 1) {
    throw invalidOption(`rate limit must be a positive integer (got ${plan.rateLimitPerMinute})`);
  }
  if (plan.monthlyQuota !== null && (!Number.isSafeInteger(plan.monthlyQuota) || plan.monthlyQuota < 0)) {
    throw invalidOption(`monthly quota must be a non-negative integer or unlimited (got ${plan.monthlyQuota})`);
  }
}
