/**
 * What RDAP and WHOIS answers are read into, before they become a result: the registration
 * facts, with instants as numbers. Also the rules both protocols share: redacted values are
 * absent, hostnames are lower-case without the root dot, values too long to be credible are
 * absent too, kept values share no memory with the answer they came from, and the registrar's
 * answer only fills what the registry's left empty.
 */
import { formatInstant } from './dates.js';
import type { WhoisResult, WhoisSource } from './types.js';

export interface RegistrationRecord {
  registrar: string | null;
  /** Instants in ms since the epoch. */
  createdAt: number | null;
  updatedAt: number | null;
  expiresAt: number | null;
  status: string[];
  nameservers: string[];
}

export function emptyRecord(): RegistrationRecord {
  return { registrar: null, createdAt: null, updatedAt: null, expiresAt: null, status: [], nameservers: [] };
}

/** True when nothing at all was read: no registrar, no date, no status, no nameserver. */
export function isEmptyRecord(record: RegistrationRecord): boolean {
  return (
    record.registrar === null &&
    record.createdAt === null &&
    record.updatedAt === null &&
    record.expiresAt === null &&
    record.status.length === 0 &&
    record.nameservers.length === 0
  );
}

/** Registration facts: what no "not found" or "limit exceeded" answer holds. */
export function hasFacts(record: RegistrationRecord): boolean {
  return record.registrar !== null || record.createdAt !== null || record.expiresAt !== null || record.nameservers.length > 0;
}

/**
 * A thin answer (ours): the registry did not say who the registrar is, when the domain was
 * created or when it expires. Only then is the registrar's own answer asked for.
 */
export function isThin(record: RegistrationRecord): boolean {
  return record.registrar === null || record.createdAt === null || record.expiresAt === null;
}

/**
 * The registry's facts, with the registrar's filling only what the registry left empty: a
 * registrar answer never replaces a registry value, and never replaces one with nothing.
 */
export function fillGaps(registry: RegistrationRecord, registrar: RegistrationRecord): RegistrationRecord {
  return {
    registrar: registry.registrar ?? registrar.registrar,
    createdAt: registry.createdAt ?? registrar.createdAt,
    updatedAt: registry.updatedAt ?? registrar.updatedAt,
    expiresAt: registry.expiresAt ?? registrar.expiresAt,
    status: registry.status.length > 0 ? registry.status : registrar.status,
    nameservers: registry.nameservers.length > 0 ? registry.nameservers : registrar.nameservers,
  };
}

/**
 * Values that stand for "not shown" rather than for data (GDPR redaction, privacy notices,
 * placeholders): read as absent, never passed on.
 */
const NOT_SHOWN = new RegExp(
  '^(?:' +
    [
      'redacted(?: for privacy)?(?:\\s*\\|.*)?',
      'data redacted',
      'data protected.*',
      'not disclosed.*',
      'non-public data',
      'hidden.*',
      'withheld(?: for privacy.*)?',
      'gdpr masked',
      'statutory masking enabled',
      'privacy',
      'private',
      'please query the rdds service.*',
      'please query the whois service.*',
      'no .* listed(?:\\..*)?',
      'not applicable',
      'not available',
      'n/?a',
      'none',
      'null',
      'unknown',
      '-+',
      '\\?+',
    ].join('|') +
    ')$',
  'i',
);

/**
 * Longest values a record keeps. Real ones are far shorter (the longest registrar in the WHOIS
 * corpus has 50 characters, the longest status 70); a longer value is an upstream's garbage or
 * an attack on memory, not data, so it is read as absent rather than cut to a made-up value.
 */
export const MAX_REGISTRAR_LENGTH = 256;
export const MAX_STATUS_LENGTH = 128;
/** A nameserver's: the DNS name limit (RFC 1035, without the root dot). */
export const MAX_HOSTNAME_LENGTH = 253;

/**
 * A copy of `text` that shares no memory with the string it was cut from. V8 keeps a substring
 * (slice, trim, a regex match) as a view of its parent: a 30-character registrar name would
 * otherwise hold a whole 1 MB answer in memory for as long as its result is cached.
 */
export function detached(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

/** A registrar name as a record keeps it: detached, or null when absent or longer than MAX_REGISTRAR_LENGTH. */
export function keptRegistrar(name: string | null): string | null {
  return name !== null && name.length <= MAX_REGISTRAR_LENGTH ? detached(name) : null;
}

/** The value with whitespace collapsed, or null when it is empty or a "not shown" placeholder. */
export function shownValue(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null;
  const value = text.replace(/\s+/g, ' ').trim();
  if (value === '' || NOT_SHOWN.test(value)) return null;
  return value;
}

const HOST_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * A nameserver name as results list it: lower case, no trailing dot, LDH labels and at least
 * one dot; null for anything else (an IP address, a placeholder).
 */
export function hostnameOf(text: string): string | null {
  let name = text.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name.length === 0 || name.length > MAX_HOSTNAME_LENGTH || !name.includes('.')) return null;
  const labels = name.split('.');
  if (!labels.every((label) => HOST_LABEL.test(label))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null; // an IPv4 address
  return name;
}

/**
 * Most values a list (status, nameservers) keeps. Registries list a handful; an answer listing
 * thousands is hostile, and checking each against the others would cost time squared.
 */
export const MAX_LIST_VALUES = 64;

/**
 * Append `value` to `list` unless it is longer than `maxLength` (not credible: absent), there
 * already, or the list is full. What is kept is a detached copy.
 */
export function addUnique(list: string[], value: string, maxLength: number): void {
  if (value.length <= maxLength && list.length < MAX_LIST_VALUES && !list.includes(value)) list.push(detached(value));
}

const DAY_MS = 86_400_000;

/** The SPEC result of a record: dates as `YYYY-MM-DDTHH:MM:SSZ`, the age in whole days at `now`. */
export function toResult(domain: string, record: RegistrationRecord, now: number, source: WhoisSource): WhoisResult {
  const created = record.createdAt;
  return {
    domain,
    registrar: record.registrar,
    created_at: created === null ? null : formatInstant(created),
    updated_at: record.updatedAt === null ? null : formatInstant(record.updatedAt),
    expires_at: record.expiresAt === null ? null : formatInstant(record.expiresAt),
    domain_age_days: created === null ? null : Math.max(0, Math.floor((now - created) / DAY_MS)),
    status: [...record.status],
    nameservers: [...record.nameservers],
    source,
  };
}

export function copyResult(result: WhoisResult): WhoisResult {
  return { ...result, status: [...result.status], nameservers: [...result.nameservers] };
}
