import { int, list, nullable, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

/**
 * SPEC's `YYYY-MM-DDThh:mm:ssZ` (UTC), as a pattern: isoTime's `format: date-time` does not
 * compile in test/openapi/document.test.ts, whose strict ajv has no ajv-formats.
 */
const utcSeconds = (description: string) => str(description, { pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$' });

export const WHOIS_DOC: ProductDoc = {
  summary: 'Registration metadata for a domain (RDAP, then WHOIS).',
  query: { domain: { description: 'Domain name (a subdomain is looked up as its registrable domain).', required: true } },
  result: obj({
    domain: str('Normalized registrable domain: lower-case ASCII (punycode for IDN).'),
    registrar: nullable(str('Sponsoring registrar; null when the registry does not say or redacts it.')),
    created_at: nullable(utcSeconds('YYYY-MM-DDThh:mm:ssZ; null when not published.')),
    updated_at: nullable(utcSeconds('YYYY-MM-DDThh:mm:ssZ; null when not published.')),
    expires_at: nullable(utcSeconds('YYYY-MM-DDThh:mm:ssZ; null when not published.')),
    domain_age_days: nullable(int('Whole days since created_at, when known.', { minimum: 0 })),
    status: list(str(), 'Domain status strings (EPP codes where they map to one).'),
    nameservers: list(str(), 'Nameserver hostnames, lower case, no trailing dot.'),
    source: oneOf(['rdap', 'whois'], 'The protocol that answered (beyond SPEC).'),
  }),
  errors: ['invalid_domain', 'domain_not_found', 'lookup_failed'],
  status: { database_records: int('TLDs with a known RDAP or WHOIS server.') },
};
