import type { AuthenticatedKey } from './auth.js';
import type { QuotaState } from '../metering/types.js';
import { PRODUCTS, SCAMRISK_TYPES, type ProductId } from '../products/catalog.js';

/** SPEC's unlimited plans have no monthly number; we send -1 beside `quota_unlimited: true`. */
export const UNLIMITED = -1;

/** The status resource of a product for one key. */
export function statusResource(product: ProductId, key: AuthenticatedKey, quota: QuotaState): Record<string, unknown> {
  const status: Record<string, unknown> = {
    status: key.status,
    product,
    plan: key.plan.slug,
    rate_limit_per_minute: key.plan.rateLimitPerMinute,
    monthly_quota: quota.limit ?? UNLIMITED,
    quota_unlimited: quota.limit === null,
    quota_remaining: quota.remaining ?? UNLIMITED,
    quota_period: quota.period,
  };
  // None of the products that list database_records ships a local database yet.
  if (PRODUCTS[product].hasDatabaseRecords) status.database_records = 0;
  if (product === 'scamrisk') status.supported_types = [...SCAMRISK_TYPES];
  if (product === 'captcha') {
    // Site-key domain settings arrive with the captcha product; until then none are configured.
    Object.assign(status, { domains_configured: false, domain_count: 0, ip_restrictions: key.ipAllow.length > 0 });
  }
  return status;
}
