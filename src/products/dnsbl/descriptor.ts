/** dnsbl: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';
import type { DnsblOptions } from './types.js';

export default defineDescriptor({
  id: 'dnsbl',
  load: () => import('./index.js'),
  secretPrefix: 'bl_sec_',
  publicPrefix: 'bl_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: (ip: string) => oneValue('ip')(ip),
    // Every configured zone is checked over HTTP (README: dnsbl); silently checking others than
    // the caller named would be a wrong answer.
    refuse: (_ip: string, options?: DnsblOptions) =>
      options?.zones !== undefined ? 'dnsbl zones cannot be chosen over HTTP: the service checks every zone it is configured with' : undefined,
    batchInput: 'ip',
  },
});
