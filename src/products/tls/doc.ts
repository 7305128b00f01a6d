import type { ProductDoc } from '../../openapi/types.js';

export const TLS_DOC: ProductDoc = {
  summary: 'Certificate metadata (validity, issuer, subject, SANs, protocol, fingerprint) for a public hostname.',
  query: { host: { description: 'Hostname; a scheme, a path and a :port may be included.', required: true } },
  result: { type: 'object' },
  errors: ['invalid_host', 'host_not_allowed', 'lookup_failed'],
};
