import type { ProductDoc } from '../../openapi/types.js';

export const TIMEZONE_DOC: ProductDoc = {
  summary: 'IANA timezone, UTC offset and abbreviation for a public IP, plus country and city when available.',
  query: { ip: { description: 'Public IPv4 or IPv6 address.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
};
