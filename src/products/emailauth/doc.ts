import { bool, int, list, nullable, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import { DKIM_SELECTORS, SCORE_POINTS } from './types.js';

export const EMAILAUTH_DOC: ProductDoc = {
  summary: `SPF, DKIM and DMARC presence for a domain, with a presence score (SPF ${SCORE_POINTS.spf}, DMARC ${SCORE_POINTS.dmarc}, DKIM ${SCORE_POINTS.dkim} points). Presence only, not policy strength or alignment.`,
  query: { domain: { description: 'Domain name.', required: true } },
  result: obj({
    domain: str('Normalized domain: lower-case ASCII (IDN labels as punycode), no trailing dot.'),
    score: int('0-100 presence score.', { minimum: 0, maximum: 100 }),
    spf: obj({
      found: bool('A TXT record starting v=spf1 exists.'),
      record: nullable(str('Raw record (the first when there are several); null when none.')),
      records: list(str(), 'Ours: every v=spf1 record at the domain, in answer order.'),
      valid: bool(
        'Ours: exactly one v=spf1 record and it follows the RFC 7208 grammar (several, or a syntax error, are a permerror: RFC 7208 4.5, 4.6). Include and redirect targets are not fetched.',
      ),
      error: nullable(
        str('Ours: why valid is false when a record was found (several records, or the syntax error and its term); null when valid or when none was found.'),
      ),
    }),
    dkim: obj({
      found: bool('Any probed selector returned a key record (a revoked one included).'),
      selectors: list(
        obj({
          selector: oneOf(DKIM_SELECTORS, 'The selector probed.'),
          record: str('Raw key record.'),
          revoked: bool('Ours: the key is revoked (an empty p=).'),
        }),
        `Selectors with a key record, probed as TXT at {selector}._domainkey.{domain}: ${DKIM_SELECTORS.join(', ')}.`,
      ),
      failed_selectors: list(
        oneOf(DKIM_SELECTORS),
        'Ours: selectors whose query failed while the others answered (found: false is then not conclusive). Empty normally.',
      ),
    }),
    dmarc: obj({
      found: bool(
        'A v=DMARC1 record exists at _dmarc of the domain, or one found by the DMARCbis DNS tree walk up its parents applies (its organizational or public suffix domain).',
      ),
      record: nullable(str('Raw record that applies (with several at the domain and none above, the first of them); null when none.')),
      records: list(str(), 'Ours: every v=DMARC1 record at the name the record came from, in answer order.'),
      valid: bool(
        'Ours: exactly one record where it was found (several at a name are discarded; with none above, no policy applies) and it follows the RFC 7489 syntax (a valid p=; sp, pct, adkim, aspf, rua, ruf, fo, rf, ri valid when present; unknown tags ignored).',
      ),
      error: nullable(
        str(
          'Ours: why valid is false when a record was found (several records, or the syntax error and its tag; for a missing or invalid p= or sp=, also whether receivers apply it as p=none, RFC 7489 6.6.3); null when valid or when none was found.',
        ),
      ),
      source: nullable(oneOf(['domain', 'organizational', 'public_suffix'], 'Ours: where the record was found (DMARCbis policy discovery); null when none.')),
      policy_domain: nullable(str('Ours: the domain whose _dmarc record applies; null when none.')),
    }),
  }),
  batchInput: { description: 'A domain name, as is (an IDN in Unicode or punycode).' },
  errors: ['invalid_domain', 'lookup_failed'],
  status: { database_records: int('Ours: the DKIM selectors every lookup probes (emailauth holds no database).') },
};
