/** emailval: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'emailval',
  load: () => import('./index.js'),
  secretPrefix: 'ev_sec_',
  publicPrefix: 'ev_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('email'),
    batchInput: 'email',
  },
});
