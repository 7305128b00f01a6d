/**
 * Which TXT records are SPF, DMARC and DKIM key records. Only the version/key markers are
 * read: emailauth reports presence, never policy, so nothing else of a record is parsed.
 */

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
 * The key of a DKIM key record (RFC 6376 3.6.1), or null when `text` is not one: it must carry
 * the REQUIRED `p=` tag, and a `v=` tag, if any, must be the first and say `DKIM1`. This
 * rejects what else lives at such names, such as a wildcard SPF or verification TXT record.
 */
export function dkimKey(text: string): DkimKey | null {
  let key: string | undefined;
  const tags = text.split(';');
  for (let i = 0; i < tags.length; i++) {
    const equals = tags[i].indexOf('=');
    if (equals < 0) continue;
    const name = tags[i].slice(0, equals).trim();
    const value = tags[i].slice(equals + 1).replace(FWS, '');
    if (name === 'v' && (i !== 0 || value !== 'DKIM1')) return null;
    if (name === 'p' && key === undefined) key = value;
  }
  return key === undefined ? null : { revoked: key === '' };
}
