import type { ProductDoc } from '../../openapi/types.js';

export const DOMAINREP_DOC: ProductDoc = {
  summary: 'Risk score 0-100, level and weighted signals for a domain.',
  query: { domain: { description: 'Domain name.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_domain', 'lookup_failed'],
};
