import type { ProductDoc } from '../../openapi/types.js';

export const GEOIP_DOC: ProductDoc = {
  summary: 'Geolocation and network metadata for an IP, from local MMDB files.',
  query: { ip: { description: 'IPv4 or IPv6 address.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_ip', 'ip_not_found', 'ip_not_routable', 'lookup_failed'],
};
