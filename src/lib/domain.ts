/**
 * Domain input shared by the domain products (emailauth, whois): a name normalized to the
 * ASCII form DNS and registries use, checked against the ICANN section of the public suffix
 * list (tldts). Synchronous and free of I/O, so the API runs it before quota is reserved.
 */
import { domainToASCII } from 'node:url';
import { parse } from 'tldts';
import { LookupError } from '../errors.js';

export interface DomainName {
  /** The normalized name: lower-case ASCII, punycode for IDN labels, no trailing dot. */
  name: string;
  /**
   * Its registrable domain under the ICANN section of the public suffix list: the name a
   * registry holds (`example.co.uk` for `www.example.co.uk`; `github.io` for
   * `alice.github.io`, since `github.io` is a private suffix, registered at .io).
   */
  registrable: string;
  /** The ICANN public suffix the name is under (`co.uk`, `com`). */
  publicSuffix: string;
}

/** Raw input longer than this is refused before any IDN mapping (a domain is at most 253 octets). */
export const MAX_DOMAIN_INPUT_LENGTH = 1024;
const MAX_NAME_LENGTH = 253;
/** RFC 1123 2.1 / RFC 5321 4.1.2 labels: letters, digits, inner hyphens, 1 to 63 of them. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// tldts reads our input as a hostname (no URL parsing: ours is checked already). Validity is
// judged on the ICANN section alone, so `isIcann` says the TLD is real even under a private
// suffix, and a private suffix itself (github.io) stays a valid, registrable domain.
const ICANN_ONLY = { extractHostname: false, allowPrivateDomains: false, detectIp: true } as const;

/**
 * Normalize a domain: trim, lower-case, IDN to punycode (`url.domainToASCII`, UTS #46), one
 * trailing dot dropped. Throws LookupError `invalid_domain` unless the result is a hostname of
 * LDH labels (1-63 octets each, 253 in all) under a known ICANN public suffix with a registrable
 * part: IP addresses, unknown TLDs (`foo.notatld`), bare public suffixes (`co.uk`), URLs,
 * addresses and names with `_` or `*` are refused.
 */
export function parseDomainName(input: unknown): DomainName {
  if (typeof input !== 'string') throw invalid('a domain name is required');
  const trimmed = input.trim();
  if (trimmed === '') throw invalid('a domain name is required');
  if (trimmed.length > MAX_DOMAIN_INPUT_LENGTH) throw invalid(`domain is longer than ${MAX_DOMAIN_INPUT_LENGTH} characters`);
  let name = domainToASCII(trimmed.toLowerCase());
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '') throw invalid('not a valid domain name');
  if (name.length > MAX_NAME_LENGTH) throw invalid(`domain is longer than ${MAX_NAME_LENGTH} characters`);
  if (!name.split('.').every((label) => LDH_LABEL.test(label)))
    throw invalid('not a valid domain name: labels are letters, digits and inner hyphens, 1 to 63 each');
  const parsed = parse(name, ICANN_ONLY);
  if (parsed.isIp) throw invalid('an IP address is not a domain name');
  if (parsed.isIcann !== true || parsed.publicSuffix === null) throw invalid('not under a known public suffix');
  if (parsed.domain === null) throw invalid('a public suffix alone is not a registrable domain');
  return { name, registrable: parsed.domain, publicSuffix: parsed.publicSuffix };
}

function invalid(message: string): LookupError {
  return new LookupError('invalid_domain', message);
}

/** Printable ASCII without upper-case letters: already in the form `listEntryToAscii` would give. */
const PLAIN_ASCII = /^[\x21-\x40\x5b-\x7e]+$/;

/**
 * A domain list entry in the form checked names have here (lower-case, IDN to punycode by
 * `url.domainToASCII`, no trailing dot), a `*.` prefix kept; null when it has no ASCII form.
 * Lists write some names in Unicode (polkadot's `aavè.com`) while the name checked is
 * `xn--aav-8la.com`. Entries already in plain ASCII skip the conversion (a tenth of a second
 * for 110,000 entries).
 */
export function listEntryToAscii(raw: string): string | null {
  let entry = raw.trim().toLowerCase();
  if (entry.endsWith('.')) entry = entry.slice(0, -1);
  if (PLAIN_ASCII.test(entry)) return entry;
  const wildcard = entry.startsWith('*.');
  const ascii = domainToASCII(wildcard ? entry.slice(2) : entry);
  if (ascii === '') return null;
  return wildcard ? `*.${ascii}` : ascii;
}
