/** tls: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';
import type { TlsOptions } from './types.js';

export default defineDescriptor({
  id: 'tls',
  load: () => import('./index.js'),
  secretPrefix: 'tl_sec_',
  publicPrefix: 'tl_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  starterPlan: { rateLimitPerMinute: 60, monthlyQuota: 5_000 },
  client: {
    request: (host: string, options?: TlsOptions) => ({
      method: 'GET',
      path: 'lookup',
      query: { host, port: options?.port === undefined ? undefined : String(options.port) },
    }),
    batchInput: 'host',
  },
});
