/** whois: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'whois',
  load: () => import('./index.js'),
  secretPrefix: 'wh_sec_',
  publicPrefix: 'wh_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('domain'),
    batchInput: 'domain',
  },
});
