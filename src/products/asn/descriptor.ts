/** asn: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'asn',
  load: () => import('./index.js'),
  secretPrefix: 'as_sec_',
  publicPrefix: 'as_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('ip'),
    batchInput: 'ip',
  },
});
