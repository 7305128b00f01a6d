import type { ProductDoc } from '../../openapi/types.js';

export const EMAILVAL_DOC: ProductDoc = {
  summary: 'Checks e-mail format, disposable-domain status and MX presence only.',
  query: { email: { description: 'E-mail address (URL-encoded on the path form).', required: true } },
  result: { type: 'object' },
  errors: ['invalid_email', 'lookup_failed'],
};
