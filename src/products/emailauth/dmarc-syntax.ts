/**
 * DMARC record syntax, to RFC 7489's tag definitions and ABNF (6.3, 6.4), without evaluating
 * anything: no DNS, no reporting-address verification. `dmarc.valid` is false when this finds
 * an error; what a receiver then does is RFC 7489 6.6.3 step 6: a record without a valid `p=`
 * (or with an invalid `sp=`) is applied as `p=none` when its `rua=` holds a valid URI, and is
 * not applied at all otherwise. The error text says which.
 *
 * Choices where the RFC leaves room: tags may come in any order after `v=DMARC1` (6.4's ABNF puts
 * `p=` second, but its prose and receivers accept any order; DMARCbis drops the rule); tag names
 * and the keyword values (`none`, `r`, ...) are case-insensitive, as ABNF strings are; a tag named
 * twice is an error (the DKIM tag-list rule DMARC records follow, RFC 7489 6.4 and RFC 6376 3.2);
 * unknown tags (DMARCbis's `np`, `psd`, `t` among them) are ignored, whatever their value, as 6.3
 * requires, but must still be `name=value`; an empty part (a trailing or doubled `;`) is allowed.
 */

import { trimBlanks } from './records.js';

/** RFC 7489 6.3 `p` and `sp` values. */
const POLICIES = new Set(['none', 'quarantine', 'reject']);
/** RFC 6376 3.2 tag-name: a letter, then letters, digits and `_`. */
const TAG_NAME = /^[a-z][a-z0-9_]*$/i;
/** `*WSP` around a tag name and value (RFC 7489 6.4), trimmed by trimBlanks (linear). */
const WSP = ' \t';
/** A part of a record as quoted in a message: at most 80 characters (a record may be 64 KB). */
const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
/** RFC 7489 6.4 `dmarc-uri`: an RFC 3986 URI (scheme ":" then URI characters; `,` and `!` percent-encoded, as `;`), then an optional `!` size limit. */
const DMARC_URI = /^[a-z][a-z0-9+.-]*:[a-z0-9\-._~:/?#[\]@$&'()*+=%]+$/i;
const SIZE_LIMIT = /![0-9]+[kmgt]?$/i;
/** RFC 7489 6.4 `dmarc-fo`: `0`, `1`, `d` or `s`, colon-separated. */
const FAILURE_OPTIONS = /^[01ds](?:[ \t]*:[ \t]*[01ds])*$/i;
/** RFC 7489 6.4 `dmarc-rfmt`: RFC 5321 Keywords (Ldh-str), colon-separated. */
const REPORT_FORMATS = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:[ \t]*:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/i;
const DIGITS = /^[0-9]+$/;
/** RFC 7489 6.3 `ri`: a 32-bit unsigned integer. */
const MAX_UINT32 = 0xffff_ffff;

/**
 * Why a DMARC record does not follow RFC 7489's syntax, or null when it does. `record` starts
 * with `v=DMARC1` (isDmarcRecord).
 */
export function dmarcSyntaxError(record: string): string | null {
  const seen = new Set<string>();
  /** The first error about `p=` or `sp=` (reported first: it decides what a receiver applies). */
  let policyError: string | null = null;
  /** The first other error. */
  let otherError: string | null = null;
  let validRua = false;
  const parts = record.split(';');
  // parts[0] is the `v=DMARC1` isDmarcRecord checked.
  for (let i = 1; i < parts.length; i++) {
    const part = trimBlanks(parts[i]!, WSP);
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = equals < 0 ? '' : trimBlanks(part.slice(0, equals), WSP).toLowerCase();
    if (!TAG_NAME.test(name)) {
      otherError ??= `${quoted(part)} is not a tag=value pair`;
      continue;
    }
    if (seen.has(name)) {
      otherError ??= `${name}= appears more than once`;
      continue;
    }
    seen.add(name);
    const value = trimBlanks(part.slice(equals + 1), WSP);
    // RFC 7489 6.6.3 step 6: one valid address in rua= is enough for receivers to apply p=none.
    if (name === 'rua') validRua = value.split(',').some((item) => DMARC_URI.test(ruaUri(item)));
    const tagError = valueError(name, value);
    if (tagError === null) continue;
    if (name === 'p' || name === 'sp') policyError ??= `${tagError} in ${quoted(part)}`;
    else otherError ??= `${tagError} in ${quoted(part)}`;
  }
  if (!seen.has('p')) policyError ??= 'no p= tag (RFC 7489 6.3: required)';
  if (policyError === null) return otherError;
  // RFC 7489 6.6.3 step 6: what a receiver makes of a record without a usable policy.
  return `${policyError}; RFC 7489 6.6.3: ${validRua ? 'receivers apply it as p=none, as rua= is valid' : 'receivers apply no DMARC policy, as there is no valid rua='}`;
}

/** The problem with a known tag's value (RFC 7489 6.3), or null; unknown tags are ignored. */
function valueError(name: string, value: string): string | null {
  switch (name) {
    case 'p':
    case 'sp':
      return POLICIES.has(value.toLowerCase()) ? null : `${name}= must be none, quarantine or reject`;
    case 'adkim':
    case 'aspf':
      return /^[rs]$/i.test(value) ? null : `${name}= must be r or s`;
    case 'pct':
      return DIGITS.test(value) && value.length <= 3 && Number(value) <= 100 ? null : 'pct= must be a whole number from 0 to 100';
    case 'ri':
      return DIGITS.test(value) && Number(value) <= MAX_UINT32 ? null : 'ri= must be a whole number of seconds (32-bit)';
    case 'fo':
      return FAILURE_OPTIONS.test(value) ? null : 'fo= must be 0, 1, d or s, colon-separated';
    case 'rf':
      return REPORT_FORMATS.test(value) ? null : 'rf= must be report format names, colon-separated';
    case 'rua':
    case 'ruf':
      return uriListError(value, name);
    default:
      return null;
  }
}

/** A `rua`/`ruf` value: one or more URIs, comma-separated (RFC 7489 6.4 `dmarc-uri`). */
/** An item of a `rua=`/`ruf=` list without its blanks and its `!size` suffix. */
function ruaUri(item: string): string {
  return trimBlanks(item, WSP).replace(SIZE_LIMIT, '');
}

function uriListError(value: string, name = 'rua'): string | null {
  for (const item of value.split(',')) {
    const uri = ruaUri(item);
    if (!DMARC_URI.test(uri)) return `${name}= ${quoted(trimBlanks(item, WSP))} is not a URI (such as mailto:dmarc@example.com)`;
  }
  return null;
}
