/** geoip: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';

export default defineDescriptor({
  id: 'geoip',
  load: () => import('./index.js'),
  secretPrefix: 'geo_sec_',
  publicPrefix: 'geo_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: oneValue('ip'),
    batchInput: 'ip',
  },
});
