/** timezone: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'timezone',
  load: () => import('./index.js'),
  secretPrefix: 'tz_sec_',
  publicPrefix: 'tz_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  client: {
    request: oneValue('ip'),
    batchInput: 'ip',
  },
});
