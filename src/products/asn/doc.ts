import type { ProductDoc } from '../../openapi/types.js';

export const ASN_DOC: ProductDoc = {
  summary: 'Autonomous system number and network classification for a public IP.',
  query: { ip: { description: 'Public IPv4 or IPv6 address.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
};
