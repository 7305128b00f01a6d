/** domainrep: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'domainrep',
  load: () => import('./index.js'),
  secretPrefix: 'dr_sec_',
  publicPrefix: 'dr_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  starterPlan: { rateLimitPerMinute: 60, monthlyQuota: 5_000 },
  client: {
    request: oneValue('domain'),
    batchInput: 'domain',
  },
});
