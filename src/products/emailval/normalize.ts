/**
 * E-mail address format normalization: synchronous, no I/O, never throws for a string.
 *
 * Accepted: `local@domain` where the local part is an RFC 5322 dot-atom (ASCII atext, plus
 * letters, marks and digits of any script as RFC 6531/6532 SMTPUTF8 allows) of at most 64
 * octets, and the domain is a host name of two or more labels. The domain is lower-cased and
 * converted to ASCII (punycode) with Node's `url.domainToASCII`; the local part keeps its case.
 *
 * Rejected, each with its own reason code (see {@link EMAIL_FORMAT_REASONS}): control
 * characters anywhere (checked before trimming, so a tab is never silently dropped), quoted
 * local parts (`"john doe"@example.com`), comments (`john(work)@example.com`) and address
 * literals (`john@[192.0.2.1]`). All three are legal RFC 5321/5322 syntax, but no mainstream
 * provider hands out such addresses, most sign-up forms and mail libraries refuse them, and
 * they are a common way to smuggle odd strings through validators; a validation API serves
 * its callers best by flagging them.
 */
import { domainToASCII } from 'node:url';
import { passesBidiAndJoinerRules } from '../../lib/idna.js';
import type { EmailFormatReason } from './types.js';

/** A checked address: its normalized form and parts. */
export interface ValidEmail {
  valid: true;
  /** `local@domain`, the domain lower-cased ASCII. At most {@link MAX_ADDRESS_OCTETS} UTF-8 octets. */
  email: string;
  /** The local part as given (case kept). */
  local: string;
  /** The domain in lower-case ASCII (IDN as punycode). */
  domain: string;
}

/** An address that failed the format checks. */
export interface InvalidEmail {
  valid: false;
  /**
   * The trimmed input (control characters replaced by U+FFFD so they are never echoed); an
   * input over {@link MAX_INPUT_LENGTH} characters is cut to its first
   * {@link ECHO_LENGTH} and ends with `…`.
   */
  email: string;
  /**
   * The part after the last `@` of `email`: normalized when it is a valid domain, otherwise
   * lower-cased as given; empty when there is no `@`.
   */
  domain: string;
  reason: EmailFormatReason;
}

export type NormalizedEmail = ValidEmail | InvalidEmail;

/** RFC 5321 4.5.3.1.1. */
export const MAX_LOCAL_OCTETS = 64;
/** RFC 5321 4.5.3.1.3 (256-octet path minus the angle brackets). */
export const MAX_ADDRESS_OCTETS = 254;
/** RFC 1035 2.3.4 (255 on the wire, 253 as text without the trailing dot). */
export const MAX_DOMAIN_OCTETS = 253;
/**
 * Trimmed inputs longer than this (UTF-16 units) are refused unread. Generous: IDN mapping can
 * drop ignorable characters, so a valid address may be given in more than 254 characters.
 */
export const MAX_INPUT_LENGTH = 512;
/** How much of a refused over-long input is echoed (before the `…`). */
export const ECHO_LENGTH = 256;

/** C0 controls, DEL and C1 controls: exactly Unicode general category Cc, without the slower `u` flag. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this regex is for
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this regex is for
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;
/** RFC 5322 atext and the dot: most local parts, checked first because it is the cheaper test. */
const ASCII_LOCAL_CHARS = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.]+$/;
/** The same plus non-ASCII letters, marks and digits (RFC 6532 UTF8-non-ascii, narrowed). */
const LOCAL_CHARS = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.\p{L}\p{M}\p{N}]+$/u;
/**
 * Among those, what renders as nothing: variation selectors, the combining grapheme joiner,
 * Hangul fillers (letters that draw blank), ... (Default_Ignorable_Code_Point), so `jane\u{FE0F}`
 * is no second `jane`. (ZWNJ and ZWJ, which some scripts spell with, are format characters that
 * LOCAL_CHARS does not take: refused too, since no rule here tells a Persian ZWNJ from a hidden
 * one.) And a mark cannot come first: it would combine with the character before the address.
 */
const INVISIBLE_IN_LOCAL = /\p{Default_Ignorable_Code_Point}|^\p{M}/u;
/** ASCII characters that may not appear in a domain as given (domainToASCII would read `/`, `%`, `:` as URL syntax). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at NUL on purpose
const FORBIDDEN_ASCII_IN_DOMAIN = /[\x00-\x2c\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/;
/** Two or more LDH labels of 1 to 63 characters, no hyphen at either end of a label. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A domain domainToASCII would only lower-case: plain LDH and dots, no punycode label to verify. */
const PLAIN_ASCII_DOMAIN = /^[A-Za-z0-9.-]+$/;
const PUNYCODE_PREFIX = /(?:^|\.)xn--/i;
/**
 * A last label the WHATWG host parser reads as a number (decimal or 0x hex), making the whole
 * name an IPv4 address (`192.0.2.1`, `0x7f.1`): never a mail domain.
 */
const NUMERIC_LABEL = /^(?:[0-9]+|0x[0-9a-f]*)$/;

/**
 * Normalize and check an e-mail address. Never throws for a string input; the result is
 * idempotent: normalizing `result.email` again gives the same `email` and `domain` (and, for a
 * valid address, the same result).
 */
export function normalizeEmail(input: string): NormalizedEmail {
  const hasControl = CONTROL.test(input);
  const text = (hasControl ? input.replace(CONTROLS, '\uFFFD') : input).trim();
  if (hasControl) return invalid(text, 'control_characters');
  if (text.length > MAX_INPUT_LENGTH) return invalid(text, 'address_too_long');

  const at = text.lastIndexOf('@');
  if (at < 0) return invalid(text, 'missing_at_sign');
  const givenLocal = text.slice(0, at);
  const domainPart = text.slice(at + 1);
  if (givenLocal.startsWith('"')) return invalid(text, 'quoted_local_part');
  if (domainPart.startsWith('[')) return invalid(text, 'address_literal');
  if (text.includes('(')) return invalid(text, 'comment');
  if (givenLocal === '') return invalid(text, 'empty_local_part');
  if (domainPart === '') return invalid(text, 'empty_domain');

  const ascii = ASCII_LOCAL_CHARS.test(givenLocal);
  // A non-ASCII local part in NFC (RFC 6532 3.1): `jöe` typed precomposed or with a combining
  // diaeresis is one mailbox, one answer and one cache entry; its octets are counted in NFC.
  const local = ascii ? givenLocal : givenLocal.normalize('NFC');
  if (!ascii && (!LOCAL_CHARS.test(local) || INVISIBLE_IN_LOCAL.test(local))) return invalid(text, 'local_part_invalid_character');
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return invalid(text, 'local_part_dots');
  const localOctets = ascii ? local.length : Buffer.byteLength(local, 'utf8');
  if (localOctets > MAX_LOCAL_OCTETS) return invalid(text, 'local_part_too_long');

  const domain = normalizeDomain(domainPart);
  if (typeof domain !== 'string') return invalid(text, domain.reason);
  if (localOctets + 1 + domain.length > MAX_ADDRESS_OCTETS) return invalid(text, 'address_too_long');
  return { valid: true, email: `${local}@${domain}`, local, domain };
}

/**
 * A domain as lower-case ASCII (IDN labels as punycode, UTS #46 mapping as Node's
 * `url.domainToASCII` does it), or why it is not a mail domain: `invalid_domain` (not a host
 * name: bad characters, a label against IDNA's Bidi or joiner rules, empty or over-long labels, a leading or trailing hyphen or dot, a
 * numeric top-level label as in a bare IPv4 address, over 253 octets) or `single_label_domain`
 * (`localhost`, `com`: no dot).
 */
export function normalizeDomain(text: string): string | { reason: 'invalid_domain' | 'single_label_domain' } {
  if (text === '' || FORBIDDEN_ASCII_IN_DOMAIN.test(text)) return { reason: 'invalid_domain' };
  // Fast path (about 0.1 µs against 1 µs for domainToASCII): for plain LDH text without
  // punycode labels domainToASCII only lower-cases; the checks below catch the rest.
  const plain = PLAIN_ASCII_DOMAIN.test(text) && !PUNYCODE_PREFIX.test(text);
  const ascii = plain ? text.toLowerCase() : domainToASCII(text);
  // IDNA's Bidi and joiner rules, which domainToASCII does not apply (lib/idna.ts).
  if (!plain && ascii !== '' && !passesBidiAndJoinerRules(text)) return { reason: 'invalid_domain' };
  if (ascii.length > MAX_DOMAIN_OCTETS || NUMERIC_LABEL.test(ascii.slice(ascii.lastIndexOf('.') + 1))) return { reason: 'invalid_domain' };
  if (!HOST.test(ascii)) return { reason: LABEL.test(ascii) ? 'single_label_domain' : 'invalid_domain' };
  return ascii;
}

function invalid(text: string, reason: EmailFormatReason): InvalidEmail {
  const email = text.length > MAX_INPUT_LENGTH ? shorten(text) : text;
  return { valid: false, email, domain: domainOf(email), reason };
}

/**
 * The first ECHO_LENGTH characters and `…`. The `…` keeps the echo invalid (it cannot end a
 * local part or a domain), so normalizing the echo again gives the echo back.
 */
function shorten(text: string): string {
  const last = text.charCodeAt(ECHO_LENGTH - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? ECHO_LENGTH - 1 : ECHO_LENGTH;
  return `${text.slice(0, end).trimEnd()}…`;
}

/** The `domain` field of an invalid result: a pure function of the echoed text. */
function domainOf(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 0) return '';
  const part = email.slice(at + 1);
  const domain = normalizeDomain(part);
  return typeof domain === 'string' ? domain : part.toLowerCase();
}
