import type { ProductDoc } from '../../openapi/types.js';

export const DNSBL_DOC: ProductDoc = {
  summary: 'Checks a public IPv4 address against a configured set of DNS blocklist zones.',
  query: { ip: { description: 'Public IPv4 address (IPv6 is 422 ip_not_routable).', required: true } },
  result: { type: 'object' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
};
