import type { ProductDoc } from '../../openapi/types.js';

export const RISKSCORE_DOC: ProductDoc = {
  summary: 'Risk and threat intelligence, location and network data for an IP.',
  query: { ip: { description: 'IPv4 or IPv6 address.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_ip', 'ip_not_found', 'ip_not_routable', 'lookup_failed', 'upstream_unconfigured'],
};
