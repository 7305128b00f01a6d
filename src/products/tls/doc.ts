import { bool, int, isoTime, list, obj, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

export const TLS_DOC: ProductDoc = {
  summary: 'Certificate metadata (validity, issuer, subject, SANs, protocol, fingerprint) for a public hostname.',
  query: {
    host: { description: 'Hostname; a scheme, a path and a :port may be included.', required: true },
    port: {
      description:
        'TLS port to check (ours: SPEC does not name the parameter). When absent: the port in host, else 443. When host carries a :port, this must be absent or the same port: another is 400 invalid_host (`?host=example.com:8443&port=443`).',
      schema: int(undefined, { minimum: 1, maximum: 65535 }),
    },
  },
  result: obj(
    {
      host: str('Normalized hostname checked (ASCII, lower case), or the canonical IP address.'),
      port: int('TLS port used; default 443.'),
      valid: bool('True when the presented certificate is currently inside its validity window.'),
      issuer: str("Issuer distinguished name, RFC 4514 order: `CN=R11, O=Let's Encrypt, C=US`."),
      subject: str('Subject distinguished name, same form; empty when the certificate has none.'),
      not_before: isoTime('YYYY-MM-DDThh:mm:ssZ.', 'seconds'),
      not_after: isoTime('YYYY-MM-DDThh:mm:ssZ.', 'seconds'),
      days_remaining: int('Days until expiry, rounded down; negative when expired.'),
      san: list(str(), 'Subject Alternative Name hostnames (dNSName).'),
      protocol: str('Negotiated TLS protocol (TLSv1.3, TLSv1.2) when available.'),
      fingerprint_sha256: str('SHA-256 fingerprint of the certificate, lowercase hex.', { pattern: '^[0-9a-f]{64}$' }),
    },
    { optional: ['protocol'] },
  ),
  batchInput: { description: 'A hostname, as is; a scheme, a path and a :port may be included (port 443 when it carries none).' },
  errors: ['invalid_host', 'host_not_allowed', 'lookup_failed'],
};
