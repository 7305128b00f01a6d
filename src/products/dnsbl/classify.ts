/**
 * What one zone's answer means. Only a code the zone defines as a listing is a listing;
 * anything a careless client would read as "listed" (an error code, an address outside
 * 127.0.0.0/8, an undefined code) makes the zone's answer unusable, which is not "clean".
 */
import { isSeclookupError } from '../../errors.js';
import type { DnsAnswer } from '../../lib/dns/index.js';
import { parseIPv4Number } from '../../lib/ip.js';
import type { DnsblFailureReason } from './types.js';
import { isErrorRangeCode, isLoopbackCode, type CompiledZone } from './zones.js';

export type ZoneVerdict =
  | { kind: 'clean' }
  | { kind: 'listed'; responses: string[]; meanings: string[] }
  | { kind: 'failed'; reason: DnsblFailureReason; message: string; responses?: string[] };

/**
 * Classify an A answer for `<reversed ip>.<zone>`. NXDOMAIN and NODATA are "not listed".
 * Otherwise, in this order: any address outside 127.0.0.0/8 is `invalid_answer`; any error
 * code (the zone's own, or anything in 127.255.255.0/24) is `zone_error`; listing codes make
 * a listing (other 127/8 answers beside them are left out); only undefined codes is `unknown_code`.
 */
export function classifyAnswer(zone: CompiledZone, answer: Pick<DnsAnswer<'A'>, 'status' | 'records'>): ZoneVerdict {
  if (answer.status !== 'ok' || answer.records.length === 0) return { kind: 'clean' };
  const unreadable = answer.records.filter((record) => parseIPv4Number(record) < 0);
  const codes = [...new Set(answer.records.map(parseIPv4Number))].filter((code) => code >= 0).sort((a, b) => a - b);
  const responses = [...codes.map(formatCode), ...unreadable];

  const foreign = [...codes.filter((code) => !isLoopbackCode(code)).map(formatCode), ...unreadable];
  if (foreign.length > 0) {
    return { kind: 'failed', reason: 'invalid_answer', message: `answered ${foreign.join(', ')}, outside 127.0.0.0/8: not a DNSBL answer`, responses };
  }
  const errors = codes.filter((code) => zone.errors.has(code) || isErrorRangeCode(code));
  if (errors.length > 0) {
    const described = errors.map((code) => `${formatCode(code)} (${zone.errors.get(code) ?? 'an error code: 127.255.255.0/24 is never a listing'})`);
    return { kind: 'failed', reason: 'zone_error', message: `answered ${described.join(', ')}: not a listing`, responses };
  }
  const listing = codes.filter((code) => zone.listing.has(code));
  if (listing.length > 0) {
    return { kind: 'listed', responses: listing.map(formatCode), meanings: listing.map((code) => zone.listing.get(code)!) };
  }
  return { kind: 'failed', reason: 'unknown_code', message: `answered ${responses.join(', ')}, which the zone does not define as a listing`, responses };
}

/** A failed query (the resolver's rejection) as a verdict; null for an error that is not a DNS failure. */
export function classifyFailure(error: unknown): ZoneVerdict | null {
  if (isSeclookupError(error, 'timeout')) return { kind: 'failed', reason: 'timeout', message: 'no answer in time' };
  if (isSeclookupError(error, 'upstream_failed')) {
    return { kind: 'failed', reason: 'server_error', message: 'the DNS server answered with an error (SERVFAIL or REFUSED) or an unreadable message' };
  }
  return null;
}

function formatCode(code: number): string {
  return `${code >>> 24}.${(code >>> 16) & 0xff}.${(code >>> 8) & 0xff}.${code & 0xff}`;
}
