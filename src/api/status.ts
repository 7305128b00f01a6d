import type { QuotaState, ResolvedKey } from '../metering/types.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import type { AnyProductModule } from '../products/module.js';

/** SPEC's unlimited plans have no monthly number; we send -1 beside `quota_unlimited: true`. */
export const UNLIMITED = -1;

/**
 * The status resource of a product for one key: the plan and quota fields every product has,
 * then the product's own (from its module's `statusExtras`, or the placeholders of a product
 * not built yet).
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

/** A product's extra status fields: its module's, or the placeholders below. */
export function statusExtras(product: ProductId, module: AnyProductModule | undefined, engine: () => unknown, key: ResolvedKey): Record<string, unknown> {
  if (module?.statusExtras) return module.statusExtras(engine(), key);
  return placeholderExtras(product, key);
}

/**
 * What the status route of a product without its engine says: no local database yet
 * (`database_records: 0`) and captcha with no site-key domains
 * configured. Each product replaces these with its module's `statusExtras` when it ships.
 */
export function placeholderExtras(product: ProductId, key: ResolvedKey): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  if (PRODUCTS[product].hasDatabaseRecords) extras.database_records = 0;
  if (product === 'captcha') Object.assign(extras, { domains_configured: false, domain_count: 0, ip_restrictions: key.ipAllow.length > 0 });
  return extras;
}
