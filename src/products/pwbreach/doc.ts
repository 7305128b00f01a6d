import type { ProductDoc } from '../../openapi/types.js';

export const PWBREACH_DOC: ProductDoc = {
  summary: 'Reports whether a password (or its SHA-1 hex) appears in breach data and how often.',
  result: { type: 'object' },
  errors: ['invalid_password', 'lookup_failed'],
  extraRoutes: {
    'range/:prefix': { summary: 'The SHA-1 suffixes and counts under a 5-hex-digit prefix (k-anonymity range API)', result: { contentType: 'text/plain', schema: { type: 'string' } }, errors: ['invalid_request', 'lookup_failed'] },
  },
};
