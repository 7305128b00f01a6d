/**
 * The emailauth input: a mail domain, normalized to the ASCII name its records live under, and
 * its organizational domain for the DMARC fallback. Synchronous and free of I/O (the API runs
 * it before quota is reserved).
 */
import { domainToASCII } from 'node:url';
import { getDomain, parse } from 'tldts';
import { LookupError } from '../../errors.js';

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
export const MAX_INPUT_LENGTH = 1024;
const MAX_NAME_LENGTH = 253;
/** RFC 1123 2.1 / RFC 5321 4.1.2 labels: letters, digits, inner hyphens, 1 to 63 of them. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// tldts reads our input as a hostname (no URL parsing: ours is checked already). Validity is
// judged on the ICANN section alone, so `isIcann` says the TLD is real even under a private
// suffix, and a private suffix itself (github.io) stays a valid, registrable domain.
const ICANN_ONLY = { extractHostname: false, allowPrivateDomains: false, detectIp: true } as const;
const WITH_PRIVATE = { extractHostname: false, allowPrivateDomains: true, detectIp: false } as const;

/**
 * Normalize a domain: trim, lower-case, IDN to punycode (`url.domainToASCII`, UTS #46), one
 * trailing dot dropped. Throws LookupError `invalid_domain` unless the result is a hostname of
 * LDH labels (1-63 octets each, 253 in all) under a known ICANN public suffix with a registrable
 * part: IP addresses, unknown TLDs (`foo.notatld`), bare public suffixes (`co.uk`), URLs,
 * addresses and names with `_` or `*` are refused. Subdomains are accepted (`mail.example.com`
 * may publish its own records).
 */
export function normalizeDomain(input: unknown): EmailDomain {
  if (typeof input !== 'string') throw invalid('a domain name is required');
  const trimmed = input.trim();
  if (trimmed === '') throw invalid('a domain name is required');
  if (trimmed.length > MAX_INPUT_LENGTH) throw invalid(`domain is longer than ${MAX_INPUT_LENGTH} characters`);
  let name = domainToASCII(trimmed.toLowerCase());
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '') throw invalid('not a valid domain name');
  if (name.length > MAX_NAME_LENGTH) throw invalid(`domain is longer than ${MAX_NAME_LENGTH} characters`);
  if (!name.split('.').every((label) => LDH_LABEL.test(label))) throw invalid('not a valid domain name: labels are letters, digits and inner hyphens, 1 to 63 each');
  const parsed = parse(name, ICANN_ONLY);
  if (parsed.isIp) throw invalid('an IP address is not a domain name');
  if (parsed.isIcann !== true) throw invalid('not under a known public suffix');
  if (parsed.domain === null) throw invalid('a public suffix alone is not a registrable domain');
  // A private suffix (github.io) has no registrable domain in the whole list: it is its own.
  return { name, organizational: getDomain(name, WITH_PRIVATE) ?? parsed.domain };
}

function invalid(message: string): LookupError {
  return new LookupError('invalid_domain', message);
}
