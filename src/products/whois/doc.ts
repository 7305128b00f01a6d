import { int, isoTime, list, nullable, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

export const WHOIS_DOC: ProductDoc = {
  summary: 'Registration metadata for a domain (RDAP, then WHOIS).',
  query: { domain: { description: 'Domain name (a subdomain is looked up as its registrable domain).', required: true } },
  result: obj({
    domain: str('Normalized registrable domain: lower-case ASCII (punycode for IDN).'),
    registrar: nullable(str('Sponsoring registrar; null when the registry does not say or redacts it.')),
    created_at: nullable(isoTime('YYYY-MM-DDThh:mm:ssZ; null when not published.', 'seconds')),
    updated_at: nullable(isoTime('YYYY-MM-DDThh:mm:ssZ; null when not published.', 'seconds')),
    expires_at: nullable(isoTime('YYYY-MM-DDThh:mm:ssZ; null when not published.', 'seconds')),
    domain_age_days: nullable(int('Whole days since created_at, when known.', { minimum: 0 })),
    status: list(str(), 'Domain status strings (EPP codes where they map to one).'),
    nameservers: list(str(), 'Nameserver hostnames, lower case, no trailing dot.'),
    source: oneOf(['rdap', 'whois'], 'The protocol that answered (beyond SPEC).'),
  }),
  batchInput: { description: 'A domain name, as is (a subdomain is looked up as its registrable domain).' },
  errors: ['invalid_domain', 'domain_not_found', 'lookup_failed'],
  status: { database_records: int('TLDs with a known RDAP or WHOIS server.') },
};
