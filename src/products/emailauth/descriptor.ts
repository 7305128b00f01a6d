/** emailauth: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'emailauth',
  load: () => import('./index.js'),
  secretPrefix: 'ea_sec_',
  publicPrefix: 'ea_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('domain'),
    batchInput: 'domain',
  },
});
