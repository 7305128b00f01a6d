/**
 * The emailauth input: a mail domain, normalized to the ASCII name its records live under
 * (lib/domain.ts, shared with whois). Synchronous and free of I/O (the API runs it before quota
 * is reserved). DMARC finds the organizational domain by walking the DNS (dmarc-discovery.ts),
 * not from the public suffix list.
 */
import { MAX_DOMAIN_INPUT_LENGTH, parseDomainName } from '../../lib/domain.js';

export interface EmailDomain {
  /** The normalized domain: lower-case ASCII, punycode for IDN labels, no trailing dot. */
  name: string;
}

/** Raw input longer than this is refused before any IDN mapping (a domain is at most 253 octets). */
export const MAX_INPUT_LENGTH = MAX_DOMAIN_INPUT_LENGTH;

/**
 * Normalize a domain (see {@link parseDomainName}): LookupError `invalid_domain` for anything
 * that is not a hostname under a known ICANN public suffix with a registrable part.
 * Subdomains are accepted (`mail.example.com` may publish its own records).
 */
export function normalizeDomain(input: unknown): EmailDomain {
  return { name: parseDomainName(input).name };
}
