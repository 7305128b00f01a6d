/**
 * The emailauth input: a mail domain, normalized to the ASCII name its records live under
 * (lib/domain.ts, shared with whois), and its organizational domain for the DMARC fallback.
 * Synchronous and free of I/O (the API runs it before quota is reserved).
 */
import { getDomain } from 'tldts';
import { MAX_DOMAIN_INPUT_LENGTH, parseDomainName } from '../../lib/domain.js';

export interface EmailDomain {
  /** The normalized domain: lower-case ASCII, punycode for IDN labels, no trailing dot. */
  name: string;
  /**
   * Its organizational domain (RFC 7489 3.2): the registrable domain under the whole public
   * suffix list, private section included (`alice.github.io`, not `github.io`), as OpenDMARC
   * reads it; `name` itself or a parent.
   */
  organizational: string;
}

/** Raw input longer than this is refused before any IDN mapping (a domain is at most 253 octets). */
export const MAX_INPUT_LENGTH = MAX_DOMAIN_INPUT_LENGTH;
const WITH_PRIVATE = { extractHostname: false, allowPrivateDomains: true, detectIp: false } as const;

/**
 * Normalize a domain (see {@link parseDomainName}): LookupError `invalid_domain` for anything
 * that is not a hostname under a known ICANN public suffix with a registrable part.
 * Subdomains are accepted (`mail.example.com` may publish its own records).
 */
export function normalizeDomain(input: unknown): EmailDomain {
  const { name, registrable } = parseDomainName(input);
  // A private suffix (github.io) has no registrable domain in the whole list: it is its own.
  return { name, organizational: getDomain(name, WITH_PRIVATE) ?? registrable };
}
