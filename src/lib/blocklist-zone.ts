/**
 * DNS blocklist zones, shared by the products that query them (dnsbl: IP zones; domainrep:
 * domain zones): checking a zone definition, compiling its return codes, and classifying an
 * answer. Only a code the zone's operator documents as a listing is a listing; anything a
 * careless client would read as "listed" (an error code, an address outside 127.0.0.0/8, an
 * undefined code) makes the zone's answer unusable, which is not "clean".
 *
 * Two kinds of zone: exact (each answer address is one documented code: Spamhaus ZEN, DBL) and
 * bitmask (the last octet of a 127.0.0.x answer is a sum of documented bits: SURBL, URIBL).
 */
import { isSeclookupError } from '../errors.js';
import type { DnsAnswer } from './dns/index.js';
import { parseIPv4Number } from './ip.js';

/** A return code of a zone and what it means. */
export interface ZoneCode {
  /** An IPv4 address, e.g. `127.0.0.2`; in a bitmask zone, one bit: `127.0.0.8`. */
  code: string;
  meaning: string;
}

/** The fields every blocklist zone definition has. */
export interface BlocklistZoneDefinition {
  /** The zone queried. Lower case, no trailing dot. */
  zone: string;
  /** Display name. */
  name: string;
  /** The only answers that count as a listing: addresses in 127.0.0.0/8, outside 127.255.255.0/24. */
  listing_codes: ZoneCode[];
  /** Answers the operator documents as errors; never a listing. */
  error_codes?: ZoneCode[];
  /**
   * The last octet of a 127.0.0.x answer is a sum of the listing codes' bits (each listing code
   * is 127.0.0.<power of two>). Error codes are matched exactly first.
   */
  bitmask?: boolean;
  /** The operator's usage policy. */
  policy_url?: string;
  /** Where the return codes are documented. */
  codes_url?: string;
  /** What an operator must know before using the zone (registration, volume limits, resolvers refused). */
  usage_note?: string;
}

/** Why a zone gave no usable answer. */
export type ZoneFailureReason =
  /** No answer within the deadline. */
  | 'timeout'
  /** The DNS server answered SERVFAIL or REFUSED, or something unreadable. */
  | 'server_error'
  /** The zone answered one of its error codes (or anything in 127.255.255.0/24). */
  | 'zone_error'
  /** An answer outside 127.0.0.0/8: not a blocklist answer at all (a hijacked or wildcarded zone). */
  | 'invalid_answer'
  /** Answers in 127.0.0.0/8 that the zone does not define as listing codes. */
  | 'unknown_code';

/** A zone ready for lookups: return codes as numbers, for answers parsed the same way. */
export interface CompiledZone {
  zone: string;
  name: string;
  /** Listing code (in a bitmask zone: 127.0.0.<bit>) -> meaning. */
  listing: ReadonlyMap<number, string>;
  /** Documented error code -> meaning. */
  errors: ReadonlyMap<number, string>;
  bitmask: boolean;
  /**
   * In a bitmask zone, the bits of its one-bit error codes (URIBL's and SURBL's 127.0.0.1): an
   * answer with any of them set is a refusal whatever other bits it carries (URIBL answers
   * 127.0.0.255 to a blocked resolver). 0 in an exact zone.
   */
  errorBits: number;
}

export type ZoneVerdict =
  | { kind: 'clean' }
  /**
   * `codes` are the listing codes found (in a bitmask zone, one per bit set), sorted, with
   * their `meanings`; `responses` are the answer addresses that carried them (in an exact
   * zone the same as `codes`).
   */
  | { kind: 'listed'; responses: string[]; codes: string[]; meanings: string[] }
  | { kind: 'failed'; reason: ZoneFailureReason; message: string; responses?: string[] };

/** 127.0.0.0/8: the only block a DNSBL answers from (RFC 5782 2.1). */
export function isLoopbackCode(value: number): boolean {
  return value >>> 24 === 127;
}

/** 127.255.255.0/24: error codes (Spamhaus's typo, public-resolver and rate-limit answers), never listings. */
export function isErrorRangeCode(value: number): boolean {
  return value >>> 8 === 0x7fffff;
}

function lowestBit(bits: number): number {
  return bits & -bits;
}

/** 127.0.0.0/24 with one bit set: a listing code of a bitmask zone. */
function isBitCode(value: number): boolean {
  const low = value & 0xff;
  return value >>> 8 === 0x7f0000 && low !== 0 && (low & (low - 1)) === 0;
}

/**
 * Classify an A answer for `<query>.<zone>`. NXDOMAIN and NODATA are "not listed". Otherwise,
 * in this order: any address outside 127.0.0.0/8 is `invalid_answer`; any error code (the
 * zone's own, or anything in 127.255.255.0/24) is `zone_error`; listing codes make a listing
 * (other 127/8 answers beside them are left out); only undefined codes is `unknown_code`.
 * In a bitmask zone the listing codes are the documented bits of 127.0.0.x answers, and a
 * one-bit error code is a refusal bit: set in an answer, the answer is an error.
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
  const refusalBits = (code: number) => (code >>> 8 === 0x7f0000 ? code & zone.errorBits : 0);
  const errors = codes.filter((code) => zone.errors.has(code) || isErrorRangeCode(code) || refusalBits(code) !== 0);
  if (errors.length > 0) {
    const meaning = (code: number) =>
      zone.errors.get(code) ??
      (refusalBits(code) !== 0
        ? `${zone.errors.get(0x7f000000 | lowestBit(refusalBits(code)))}; other bits set beside it are no listing`
        : 'an error code: 127.255.255.0/24 is never a listing');
    const described = errors.map((code) => `${formatCode(code)} (${meaning(code)})`);
    return { kind: 'failed', reason: 'zone_error', message: `answered ${described.join(', ')}: not a listing`, responses };
  }
  if (zone.bitmask) {
    const carrying: number[] = [];
    const bits = new Set<number>();
    for (const code of codes) {
      if (code >>> 8 !== 0x7f0000) continue; // bitmask answers are 127.0.0.x; other octets are not defined
      let found = false;
      for (let bit = 1; bit <= 0x80; bit <<= 1) {
        if ((code & bit) !== 0 && zone.listing.has(0x7f000000 | bit)) {
          bits.add(0x7f000000 | bit);
          found = true;
        }
      }
      if (found) carrying.push(code);
    }
    if (bits.size > 0) {
      const listed = [...bits].sort((a, b) => a - b);
      return { kind: 'listed', responses: carrying.map(formatCode), codes: listed.map(formatCode), meanings: listed.map((code) => zone.listing.get(code)!) };
    }
  } else {
    const listing = codes.filter((code) => zone.listing.has(code));
    if (listing.length > 0) {
      const text = listing.map(formatCode);
      return { kind: 'listed', responses: text, codes: text, meanings: listing.map((code) => zone.listing.get(code)!) };
    }
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

export function formatCode(code: number): string {
  return `${code >>> 24}.${(code >>> 16) & 0xff}.${(code >>> 8) & 0xff}.${code & 0xff}`;
}

// --- checking ---------------------------------------------------------------------------------

/** Lower case, trimmed, no trailing dot: how zone names are compared and queried. */
export function canonicalZoneName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * A checked copy of one zone definition, its name canonical; `fail` is called with what is
 * wrong (it throws). `maxZoneLength` leaves room in a 253-character name for what is queried
 * in front of the zone.
 */
export function checkZoneDefinition(value: unknown, at: string, fail: (what: string) => never, maxZoneLength: number): BlocklistZoneDefinition {
  if (!isObject(value)) return fail(`${at} must be an object`);
  if (typeof value.zone !== 'string') return fail(`${at}: "zone" must be a string`);
  const zone = canonicalZoneName(value.zone);
  const where = `${at} (${JSON.stringify(zone)})`;
  const problem = zoneNameProblem(zone, maxZoneLength);
  if (problem) fail(`${where}: "zone" ${problem}`);
  if (typeof value.name !== 'string' || value.name.trim() === '') fail(`${where}: "name" must be a non-empty string`);
  for (const key of ['policy_url', 'codes_url', 'usage_note'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') fail(`${where}: "${key}" must be a string`);
  }
  if (value.bitmask !== undefined && typeof value.bitmask !== 'boolean') fail(`${where}: "bitmask" must be true or false`);
  const bitmask = value.bitmask === true;
  const listing = checkCodes(value.listing_codes, `${where}: listing_codes`, fail);
  if (listing.length === 0) fail(`${where}: "listing_codes" must be a non-empty array`);
  for (const { code } of listing) {
    const number = parseIPv4Number(code);
    if (!isLoopbackCode(number) || isErrorRangeCode(number)) {
      fail(`${where}: listing code ${code} must be in 127.0.0.0/8 and outside 127.255.255.0/24 (answers elsewhere are failures, never listings)`);
    }
    if (bitmask && !isBitCode(number)) fail(`${where}: listing code ${code} of a bitmask zone must be 127.0.0.x with one bit set (1, 2, 4, ... 128)`);
  }
  const errors = value.error_codes === undefined ? [] : checkCodes(value.error_codes, `${where}: error_codes`, fail);
  const listed = new Set(listing.map((c) => c.code));
  const both = errors.find((c) => listed.has(c.code));
  if (both) fail(`${where}: ${both.code} is both a listing code and an error code`);

  const checked: BlocklistZoneDefinition = { zone, name: value.name as string, listing_codes: listing };
  if (errors.length > 0) checked.error_codes = errors;
  if (bitmask) checked.bitmask = true;
  for (const key of ['policy_url', 'codes_url', 'usage_note'] as const) if (value[key] !== undefined) checked[key] = value[key] as string;
  return checked;
}

function checkCodes(value: unknown, at: string, fail: (what: string) => never): ZoneCode[] {
  if (!Array.isArray(value)) return fail(`${at} must be an array of { code, meaning }`);
  const seen = new Set<string>();
  return value.map((entry: unknown, i: number) => {
    if (!isObject(entry) || typeof entry.code !== 'string' || typeof entry.meaning !== 'string' || entry.meaning.trim() === '') {
      return fail(`${at}[${i}] must be { code: "127.0.0.x", meaning: "..." }`);
    }
    if (parseIPv4Number(entry.code) < 0) fail(`${at}[${i}]: ${JSON.stringify(entry.code)} is not an IPv4 address`);
    if (seen.has(entry.code)) fail(`${at}[${i}]: ${entry.code} appears twice`);
    seen.add(entry.code);
    return { code: entry.code, meaning: entry.meaning };
  });
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Why `zone` cannot be queried as a blocklist zone, or null. */
function zoneNameProblem(zone: string, maxLength: number): string | null {
  if (zone.length === 0) return 'is empty';
  if (zone.length > maxLength) return `is longer than ${maxLength} characters`;
  const labels = zone.split('.');
  if (labels.length < 2) return 'must have at least two labels (bl.example.net)';
  if (!labels.every((label) => LABEL.test(label))) return 'is not a valid DNS name (letters, digits, "-" and "_" in labels of 1 to 63)';
  return null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// --- compiling --------------------------------------------------------------------------------

export function compileZone(zone: BlocklistZoneDefinition): CompiledZone {
  const table = (codes: ZoneCode[] | undefined) => new Map((codes ?? []).map((c) => [parseIPv4Number(c.code), c.meaning]));
  const errors = table(zone.error_codes);
  const bitmask = zone.bitmask === true;
  const errorBits = bitmask ? [...errors.keys()].filter(isBitCode).reduce((bits, code) => bits | (code & 0xff), 0) : 0;
  return { zone: zone.zone, name: zone.name, listing: table(zone.listing_codes), errors, bitmask, errorBits };
}
