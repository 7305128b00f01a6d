/** dnsbl: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor, oneValue } from '../descriptor.js';
import { LookupError } from '../../errors.js';
import type { DnsblOptions } from './types.js';

export default defineDescriptor({
  id: 'dnsbl',
  secretPrefix: 'bl_sec_',
  publicPrefix: 'bl_pub_',
  hasFetchedAt: true,
  hasDatabaseRecords: true,
  client: {
    request: (ip: string, options?: DnsblOptions) => {
      // Every configured zone is checked over HTTP (README: dnsbl); silently checking others than
      // the caller named would be a wrong answer.
      if (options?.zones !== undefined)
        throw new LookupError('invalid_request', 'dnsbl zones cannot be chosen over HTTP: the service checks every zone it is configured with');
      return oneValue('ip')(ip);
    },
    batchInput: 'ip',
  },
});
