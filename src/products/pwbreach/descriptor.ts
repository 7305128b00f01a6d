/** pwbreach: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';
import type { PwbreachInput } from './types.js';

export default defineDescriptor({
  id: 'pwbreach',
  load: () => import('./index.js'),
  secretPrefix: 'pb_sec_',
  publicPrefix: 'pb_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  starterPlan: { rateLimitPerMinute: 60, monthlyQuota: 10_000 },
  client: {
    // Always POST: a password never goes into a URL (the server refuses ?password=).
    request: (input: PwbreachInput) => ({
      method: 'POST',
      path: 'lookup',
      body: typeof input === 'string' ? { password: input } : { password: input?.password, sha1: input?.sha1 },
    }),
    batchInput: 'sha1',
  },
});
