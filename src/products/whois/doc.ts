import type { ProductDoc } from '../../openapi/types.js';

export const WHOIS_DOC: ProductDoc = {
  summary: 'Registration metadata for a domain (RDAP, then WHOIS).',
  query: { domain: { description: 'Domain name.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_domain', 'domain_not_found', 'lookup_failed'],
};
