import type { QuotaState, ResolvedKey } from '../metering/types.js';
import type { ProductId } from '../products/catalog.js';
import type { AnyProductModule, ProductEngine } from '../products/module.js';

/** SPEC's unlimited plans have no monthly number; we send -1 beside `quota_unlimited: true`. */
export const UNLIMITED = -1;

/**
 * The status resource of a product for one key: the plan and quota fields every product has,
 * then the product's own (from its module's `statusExtras`).
 */
export function statusResource(
  product: ProductId,
  key: ResolvedKey & { plan: { slug: string; rateLimitPerMinute: number } },
  quota: QuotaState,
  extras: Record<string, unknown>,
): Record<string, unknown> {
  return {
    status: key.status,
    product,
    plan: key.plan.slug,
    rate_limit_per_minute: key.plan.rateLimitPerMinute,
    monthly_quota: quota.limit ?? UNLIMITED,
    quota_unlimited: quota.limit === null,
    quota_remaining: quota.remaining ?? UNLIMITED,
    quota_period: quota.period,
    ...extras,
  };
}

/** A product's extra status fields, from its module's `statusExtras`. */
export function statusExtras(module: AnyProductModule | undefined, engine: () => ProductEngine, key: ResolvedKey): Record<string, unknown> {
  return module?.statusExtras ? module.statusExtras(engine(), key) : {};
}
