/**
 * The result fields read from a certificate, through Node's X509Certificate (which parses RSA,
 * ECDSA and EdDSA certificates alike): names, validity, DNS SANs, fingerprint.
 */
import type { X509Certificate } from 'node:crypto';
import { SeclookupError } from '../../errors.js';
import type { TlsResult } from './types.js';

export const DAY_MS = 86_400_000;

/** What a certificate says, before it is compared with a clock. */
export interface CertificateFacts {
  issuer: string;
  subject: string;
  notBefore: number;
  notAfter: number;
  san: string[];
  fingerprint: string;
}

export function certificateFacts(cert: X509Certificate): CertificateFacts {
  return {
    issuer: distinguishedName(cert.issuer),
    subject: distinguishedName(cert.subject),
    notBefore: parseCertificateTime(cert.validFrom),
    notAfter: parseCertificateTime(cert.validTo),
    san: dnsAltNames(cert.subjectAltName),
    fingerprint: cert.fingerprint256.replace(/:/g, '').toLowerCase(),
  };
}

/** The result for `host:port` at time `now` (ms). */
export function toResult(host: string, port: number, facts: CertificateFacts, protocol: string | null, now: number): TlsResult {
  // Field order as SPEC lists it.
  const result = {
    host,
    port,
    valid: now >= facts.notBefore && now <= facts.notAfter,
    issuer: facts.issuer,
    subject: facts.subject,
    not_before: isoSeconds(facts.notBefore),
    not_after: isoSeconds(facts.notAfter),
    days_remaining: Math.floor((facts.notAfter - now) / DAY_MS),
    san: facts.san,
  } as TlsResult;
  if (protocol && protocol !== 'unknown') result.protocol = protocol;
  result.fingerprint_sha256 = facts.fingerprint;
  return result;
}

/**
 * How long from `now` until `valid` or `days_remaining` would read differently (ms): a cached
 * result must not outlive that.
 */
export function msUntilChange(facts: CertificateFacts, now: number): number {
  const changes: number[] = [];
  if (now < facts.notBefore) changes.push(facts.notBefore - now);
  if (now <= facts.notAfter) changes.push(facts.notAfter + 1 - now);
  const untilExpiry = facts.notAfter - now;
  // days_remaining = floor(untilExpiry / DAY_MS) drops by one each time untilExpiry passes a multiple of a day.
  changes.push((((untilExpiry % DAY_MS) + DAY_MS) % DAY_MS) + 1);
  return Math.min(...changes);
}

/** `2026-11-22T17:03:45Z`. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const MONTHS: Readonly<Record<string, number>> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
const OPENSSL_TIME = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)? (\d{1,4}) GMT$/;

/**
 * OpenSSL's printed ASN.1 time (`Nov  2 17:03:45 2026 GMT`, as X509Certificate's validFrom and
 * validTo give it) in ms since the epoch; a fraction of a second is dropped. The year is not
 * padded (`Jan  1 00:00:00 1 GMT`: Go writes an unset NotBefore as year 1). Anything else
 * (OpenSSL prints `Bad time value` for a malformed one) is the server's certificate at fault:
 * SeclookupError `upstream_failed`.
 */
export function parseCertificateTime(text: string): number {
  const match = OPENSSL_TIME.exec(text);
  const month = match ? MONTHS[match[1]] : undefined;
  if (!match || month === undefined) throw new SeclookupError('upstream_failed', `unreadable certificate time ${JSON.stringify(text)}`);
  const [, , day, hours, minutes, secs, year] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), month, Number(day));
  date.setUTCHours(Number(hours), Number(minutes), Number(secs), 0);
  return date.getTime();
}

/**
 * A distinguished name in RFC 4514 order and form: Node prints one RDN per line, most general
 * first, values already escaped as RFC 2253 wants (`\,`, `\"`, `\+`, control characters as
 * `\0A`), so the lines are reversed and joined with `, `. A multi-valued RDN's attributes are
 * joined with ` + ` on their line, and RFC 4514 joins them with a bare `+` (a `+` inside a value
 * is escaped, so only the joins match).
 */
export function distinguishedName(printed: string | undefined): string {
  if (!printed) return '';
  return printed
    .split('\n')
    .filter(Boolean)
    .reverse()
    .map((rdn) => rdn.replaceAll(' + ', '+'))
    .join(', ');
}

/**
 * The dNSName entries of Node's `subjectAltName` text (`DNS:a.example, DNS:"b\u002c c",
 * IP Address:192.0.2.1, email:x@y, URI:...`). Node writes a value containing a comma, a quote,
 * a backslash or a character outside printable ASCII as a JSON string, so splitting on `, ` is
 * safe outside quotes; those values are decoded. Other kinds (IP, e-mail, URI, directory
 * names, ...) are skipped.
 */
export function dnsAltNames(text: string | undefined): string[] {
  const names: string[] = [];
  if (!text) return names;
  let at = 0;
  while (at < text.length) {
    const colon = text.indexOf(':', at);
    if (colon === -1) break;
    const kind = text.slice(at, colon);
    let value: string | null;
    let next: number;
    if (text[colon + 1] === '"') {
      const close = closingQuote(text, colon + 2);
      if (close === -1) break; // unterminated: nothing after it can be read safely
      try {
        value = JSON.parse(text.slice(colon + 1, close + 1)) as string;
      } catch {
        value = null;
      }
      next = close + 1;
    } else {
      const comma = text.indexOf(', ', colon + 1);
      next = comma === -1 ? text.length : comma;
      value = text.slice(colon + 1, next);
    }
    if (kind === 'DNS' && value !== null) names.push(value);
    if (next < text.length && !text.startsWith(', ', next)) break; // not Node's format: stop rather than guess
    at = next + 2;
  }
  return names;
}

/** The index of the `"` that ends a JSON string whose contents start at `from`, or -1. */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}
