/** useragent: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';

export default defineDescriptor({
  id: 'useragent',
  load: () => import('./index.js'),
  secretPrefix: 'ua_sec_',
  publicPrefix: 'ua_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  client: {
    // POST rather than GET: a User-Agent of any length fits a JSON body (64 KiB), not a URL.
    request: (ua: string) => ({ method: 'POST', path: 'lookup', body: { ua } }),
    batchInput: 'ua',
  },
});
