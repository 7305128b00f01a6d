/** riskscore: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'riskscore',
  load: () => import('./index.js'),
  secretPrefix: 'rs_sec_',
  publicPrefix: 'rs_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('ip'),
    batchInput: 'ip',
  },
});
