import type { ProductDoc } from '../../openapi/types.js';

export const EMAILAUTH_DOC: ProductDoc = {
  summary: 'SPF, DKIM and DMARC presence for a domain, with a presence score.',
  query: { domain: { description: 'Domain name.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_domain', 'lookup_failed'],
};
