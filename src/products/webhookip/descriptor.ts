/** webhookip: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';
import type { WebhookIpOptions } from './types.js';

export default defineDescriptor({
  id: 'webhookip',
  load: () => import('./index.js'),
  secretPrefix: 'wk_sec_',
  publicPrefix: 'wk_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  client: {
    request: (ip: string, options?: WebhookIpOptions) => ({ method: 'GET', path: 'lookup', query: { ip, provider: options?.provider } }),
    batchInput: 'ip',
  },
});
