/**
 * Which TXT records are SPF, DMARC and DKIM key records. Only the version markers, and a DKIM
 * key record's tag-list and key, are read here: emailauth reports presence, never policy. (The
 * SPF and DMARC grammar checks behind `valid` are in spf-syntax.ts and dmarc-syntax.ts.)
 */

import { createPublicKey } from 'node:crypto';

/** RFC 7208 4.5: exactly `v=spf1`, ended by a space or the end of the record (case-insensitive, as ABNF strings are). */
const SPF_VERSION = /^v=spf1(?: |$)/i;

/**
 * RFC 7489 6.4 ABNF: `"v" *WSP "=" *WSP %x44 %x4d %x41 %x52 %x43 %x31` then a `;` separator
 * or the end. The tag name is case-insensitive; `DMARC1` is spelled in hex, so it is exact.
 */
const DMARC_VERSION = /^[vV][ \t]*=[ \t]*DMARC1[ \t]*(?:;|$)/;

export function isSpfRecord(text: string): boolean {
  return SPF_VERSION.test(text);
}

export function isDmarcRecord(text: string): boolean {
  return DMARC_VERSION.test(text);
}

export interface DkimKey {
  /** An empty `p=`: the key was revoked (RFC 6376 3.6.1). */
  revoked: boolean;
}

/** Folding white space inside a tag-list (RFC 6376 3.2). */
const FWS = /[ \t\r\n]+/g;
/**
 * `text` without the given white space at either end. A loop, not `/^[ \t]+|[ \t]+$/`: that
 * pattern rescans a run of blanks from each of its positions when the run does not end the text,
 * quadratic in a 64 KB TXT record anyone may publish (8 s for one DMARC record).
 */
export function trimBlanks(text: string, blanks: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && blanks.includes(text[start]!)) start++;
  while (end > start && blanks.includes(text[end - 1]!)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** Folding white space (RFC 6376 3.2). */
const FWS_CHARS = ' \t\r\n';
/** RFC 6376 3.2: `tag-name = ALPHA *ALNUMPUNC` (ALNUMPUNC: letters, digits, `_`). */
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
/**
 * RFC 6376 3.6.1 and 2.4: `p=` is a base64string once its folding white space is removed:
 * base64 characters, then at most two `=` pads; empty for a revoked key.
 */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether `p=` (base64, not empty) holds a key of type `k=` a verifier can use: one it cannot
 * is a key syntax error (RFC 6376 6.1.2: PERMFAIL), and a type it does not know is ignored
 * (3.6.1). RSA: a DER public key; RFC 6376 names the SubjectPublicKeyInfo that records carry,
 * and a bare RSAPublicKey (PKCS#1, as 3.6.1's text once read) is taken too, as verifiers
 * take it. Ed25519 (RFC 8463 4.2): the raw 32-byte key.
 */
function usableKey(type: string, base64: string): boolean {
  const der = Buffer.from(base64, 'base64');
  // Node's decoder skips what is not base64: only text that encodes back to itself was whole.
  if (der.toString('base64') !== base64) return false;
  if (type === 'ed25519') return der.length === 32;
  if (type !== 'rsa') return false;
  for (const form of ['spki', 'pkcs1'] as const) {
    try {
      if (createPublicKey({ key: der, format: 'der', type: form }).asymmetricKeyType === 'rsa') return true;
    } catch {
      // not this form
    }
  }
  return false;
}

/**
 * The key of a DKIM key record (RFC 6376 3.6.1), or null when `text` is not a valid one: a
 * tag-list (RFC 6376 3.2: `name=value` pairs split by `;`, names case-sensitive, no tag twice,
 * which would make the whole list invalid) carrying the REQUIRED `p=` tag with a base64 value
 * that decodes to a usable key of its `k=` type (see usableKey; empty: a revoked key), and a
 * `v=` tag, if any, first and saying `DKIM1`. This rejects what
 * else lives at such names (a wildcard SPF or verification TXT record) and the key records a
 * verifier must ignore as a key syntax error (RFC 6376 6.1.2: PERMFAIL).
 */
export function dkimKey(text: string): DkimKey | null {
  const tags = new Map<string, string>();
  const specs = text.split(';');
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    // An empty spec: the optional trailing `;` (and, leniently, a doubled one).
    if (spec.replace(FWS, '') === '') continue;
    const equals = spec.indexOf('=');
    if (equals < 0) return null;
    const name = trimBlanks(spec.slice(0, equals), FWS_CHARS);
    if (!TAG_NAME.test(name) || tags.has(name)) return null;
    const value = spec.slice(equals + 1).replace(FWS, '');
    if (name === 'v' && (i !== 0 || value !== 'DKIM1')) return null;
    tags.set(name, value);
  }
  const key = tags.get('p');
  if (key === undefined || !BASE64.test(key)) return null;
  if (key !== '' && !usableKey((tags.get('k') ?? 'rsa').toLowerCase(), key)) return null;
  return { revoked: key === '' };
}
