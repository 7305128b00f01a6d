import type { ProductDoc } from '../../openapi/types.js';

export const SCAMRISK_DOC: ProductDoc = {
  summary: 'Risk assessment of an identifier (email, phone, ip, username, address, crypto, domain, url). Concerns identifier risk only; a no-match result is not proof of safety.',
  result: { type: 'object' },
  errors: ['invalid_request', 'invalid_identifier', 'assessment_failed'],
  extraRoutes: {
    report: { summary: 'File a report against an identifier', result: { type: 'object' }, errors: ['invalid_request', 'invalid_identifier', 'assessment_failed'] },
  },
};
