import { bool, int, list, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';
import { EMAIL_FORMAT_REASONS, EMAIL_LIMITS_NOTE, EMAIL_MX_REASONS, type EmailRiskReason } from './types.js';

/** Every code `risk.reasons` may hold, in the order they can appear. */
const REASONS = [
  'invalid_format',
  ...EMAIL_FORMAT_REASONS,
  'disposable_domain',
  ...EMAIL_MX_REASONS,
  'role_account',
] as const satisfies readonly EmailRiskReason[];

export const EMAILVAL_DOC: ProductDoc = {
  summary: 'Checks e-mail format, disposable-domain status and MX presence only. It does not verify the mailbox, detect catch-all, or score deliverability.',
  query: { email: { description: 'E-mail address (URL-encoded on the path form; a + left unencoded in the query string reads as a space).', required: true } },
  result: obj({
    email: str('Normalized address (domain lower-cased ASCII); for a malformed one, the trimmed input.'),
    domain: str('Domain part (normalized when valid); empty when none can be found.'),
    valid_format: bool('Whether the address passed format normalization. A malformed address is still a 200 answer, with false here.'),
    disposable: bool(
      'The domain is on the disposable list, or a parent up to the registrable domain is listed with its subdomains; false when the format is invalid.',
    ),
    has_mx: bool(
      'MX records found (a null MX, and an exchange that is an IP address rather than a host name, do not count); false when the format is invalid.',
    ),
    mx: list(str(), 'Each "priority host", sorted by priority then host (host names only); empty when none or the format is invalid.'),
    risk: obj({
      level: oneOf(['low', 'medium', 'high'], 'high: invalid format, disposable domain or no MX; medium: role-like local part; low: none of these.'),
      reasons: list(
        oneOf(REASONS),
        'Machine-readable codes: invalid_format then the format reason; or disposable_domain, the MX reason (no_mx, no_mx_implicit_a, null_mx, no_mx_hostname, domain_not_found) and role_account, each when it applies. Empty when low.',
      ),
    }),
    limits_note: str('Present on every success; restates that only format, disposable domains and MX are checked.', { const: EMAIL_LIMITS_NOTE }),
  }),
  batchInput: { description: 'An e-mail address, exactly as written: not percent-encoded, and a + is a plus.' },
  errors: ['invalid_email', 'lookup_failed'],
  status: { database_records: int("Domains on the disposable list (the product's only database).") },
};
