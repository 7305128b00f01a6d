/** captcha: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';

export default defineDescriptor({
  id: 'captcha',
  secretPrefix: 'tf_sec_',
  publicPrefix: 'tf_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  starterPlan: { rateLimitPerMinute: 60, monthlyQuota: 10_000 },
  statusKeyParam: 'sitekey',
});
