import { int, list, num, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import type { DomainRepSignalCode } from './types.js';

const SIGNAL_CODES = [
  'domain_age',
  'email_auth',
  'dns_resolution',
  'blocklist',
  'phishing_list',
  'tld_risk',
  'label_length',
  'label_digits',
  'label_hyphens',
  'label_entropy',
  'idn',
  'mixed_script',
  'confusable',
  'brand_lookalike',
] as const satisfies readonly DomainRepSignalCode[];
// Every code of the type is listed: a new one fails to compile here until documented.
const allCodes: [Exclude<DomainRepSignalCode, (typeof SIGNAL_CODES)[number]>] extends [never] ? true : never = true;
void allCodes;

export const DOMAINREP_DOC: ProductDoc = {
  summary: 'Risk score 0-100, level and weighted signals for a domain. Signals that fail are reported with weight 0; a score is still returned when possible.',
  query: { domain: { description: 'Domain name.', required: true } },
  result: obj({
    domain: str('Normalized domain scored: lower-case ASCII (punycode for IDN), no trailing dot.'),
    score: int('0-100; higher means more risk.', { minimum: 0, maximum: 100 }),
    level: oneOf(['low', 'medium', 'high'], 'low (score below 30), medium (30-69), high (70-100).'),
    signals: list(
      obj({
        code: oneOf(SIGNAL_CODES, 'The signal.'),
        detail: str('What was found; a signal that could not be computed has weight 0 and a detail starting "unavailable:".'),
        weight: num('Points added to the score; negative only for the trust signal of an old registration.'),
      }),
      'Every signal computed, with its weight.',
    ),
  }),
  batchInput: { description: 'A domain name, as is (an IDN in Unicode or punycode).' },
  errors: ['invalid_domain', 'lookup_failed'],
};
