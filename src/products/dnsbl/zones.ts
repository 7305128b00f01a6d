/**
 * The zone set: read and checked from `<dataDir>/dnsbl/zones.json` or from options, then
 * compiled into lookup tables of return codes. Every mistake names the zone and the field.
 */
import { join } from 'node:path';
import { invalidOption, SeclookupError } from '../../errors.js';
import { readJsonDataset } from '../../lib/datasets.js';
import { parseIPv4Number } from '../../lib/ip.js';
import type { DnsblCode, DnsblEngineOptions, DnsblZone, DnsblZonesDataset } from './types.js';

/** A zone ready for lookups: return codes as numbers, for answers parsed the same way. */
export interface CompiledZone {
  zone: string;
  name: string;
  /** Listing code -> meaning. */
  listing: ReadonlyMap<number, string>;
  /** Documented error code -> meaning. */
  errors: ReadonlyMap<number, string>;
}

/** 127.0.0.0/8: the only block a DNSBL answers from (RFC 5782 2.1). */
export function isLoopbackCode(value: number): boolean {
  return value >>> 24 === 127;
}

/** 127.255.255.0/24: error codes (Spamhaus's typo, public-resolver and rate-limit answers), never listings. */
export function isErrorRangeCode(value: number): boolean {
  return value >>> 8 === 0x7fffff;
}

// --- loading ----------------------------------------------------------------------------------

export function dnsblZonesPath(dataDir: string): string {
  return join(dataDir, 'dnsbl', 'zones.json');
}

/** Read and check `<dataDir>/dnsbl/zones.json`; SeclookupError `dataset_missing` / `dataset_invalid` naming the file. */
export function loadDnsblZones(dataDir: string): DnsblZonesDataset {
  const path = dnsblZonesPath(dataDir);
  const fail = (what: string): never => {
    throw new SeclookupError('dataset_invalid', `seclookup: dnsbl zones ${path}: ${what}`);
  };
  const data = readJsonDataset<unknown>(path);
  if (!isObject(data)) return fail('expected a JSON object');
  if (typeof data.generated !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(data.generated)) fail('"generated" must be a YYYY-MM-DD date');
  return { generated: data.generated as string, zones: checkZoneList(data.zones, fail) };
}

/**
 * The zones an engine checks: `options.zones` (definitions, or names of zones in the data
 * file), else every zone of the data file. The file is read only when needed, so zones given
 * in full in code work without it. Option mistakes throw TypeError `invalid_option`.
 */
export function configuredZones(dataDir: string, options: DnsblEngineOptions | undefined): DnsblZone[] {
  if (options?.zones === undefined) return loadDnsblZones(dataDir).zones;
  const fail = (what: string): never => {
    throw invalidOption(`dnsbl zones option: ${what}`);
  };
  if (!Array.isArray(options.zones)) return fail('must be an array of zone names or definitions');
  let fromFile: DnsblZone[] | undefined;
  const entries = options.zones.map((entry: unknown, i: number) => {
    if (typeof entry !== 'string') return entry;
    fromFile ??= loadDnsblZones(dataDir).zones;
    const name = canonicalZoneName(entry);
    return fromFile.find((zone) => zone.zone === name) ?? fail(`zones[${i}] ${JSON.stringify(entry)} is not defined in ${dnsblZonesPath(dataDir)}; give its definition instead`);
  });
  return checkZoneList(entries, fail);
}

/** Lower case, trimmed, no trailing dot: how zone names are compared and queried. */
export function canonicalZoneName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

// --- checking ---------------------------------------------------------------------------------

function checkZoneList(zones: unknown, fail: (what: string) => never): DnsblZone[] {
  if (!Array.isArray(zones) || zones.length === 0) return fail('"zones" must be a non-empty array');
  const seen = new Set<string>();
  return zones.map((zone: unknown, i: number) => {
    const checked = checkZone(zone, `zones[${i}]`, fail);
    if (seen.has(checked.zone)) fail(`zones[${i}]: zone ${checked.zone} is listed twice`);
    seen.add(checked.zone);
    return checked;
  });
}

/** A checked copy of one zone definition, its name canonical. */
function checkZone(value: unknown, at: string, fail: (what: string) => never): DnsblZone {
  if (!isObject(value)) return fail(`${at} must be an object`);
  if (typeof value.zone !== 'string') return fail(`${at}: "zone" must be a string`);
  const zone = canonicalZoneName(value.zone);
  const where = `${at} (${JSON.stringify(zone)})`;
  const problem = zoneNameProblem(zone);
  if (problem) fail(`${where}: "zone" ${problem}`);
  if (typeof value.name !== 'string' || value.name.trim() === '') fail(`${where}: "name" must be a non-empty string`);
  for (const key of ['policy_url', 'codes_url', 'usage_note'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') fail(`${where}: "${key}" must be a string`);
  }
  const listing = checkCodes(value.listing_codes, `${where}: listing_codes`, fail);
  if (listing.length === 0) fail(`${where}: "listing_codes" must be a non-empty array`);
  for (const { code } of listing) {
    const number = parseIPv4Number(code);
    if (!isLoopbackCode(number) || isErrorRangeCode(number)) {
      fail(`${where}: listing code ${code} must be in 127.0.0.0/8 and outside 127.255.255.0/24 (answers elsewhere are failures, never listings)`);
    }
  }
  const errors = value.error_codes === undefined ? [] : checkCodes(value.error_codes, `${where}: error_codes`, fail);
  const listed = new Set(listing.map((c) => c.code));
  const both = errors.find((c) => listed.has(c.code));
  if (both) fail(`${where}: ${both.code} is both a listing code and an error code`);

  const checked: DnsblZone = { zone, name: value.name as string, listing_codes: listing };
  if (errors.length > 0) checked.error_codes = errors;
  for (const key of ['policy_url', 'codes_url', 'usage_note'] as const) if (value[key] !== undefined) checked[key] = value[key] as string;
  return checked;
}

function checkCodes(value: unknown, at: string, fail: (what: string) => never): DnsblCode[] {
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

/** Room left for the longest reversed IPv4 (`255.255.255.255.`) within a 253-character name. */
const MAX_ZONE_LENGTH = 253 - 16;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Why `zone` cannot be queried as a DNSBL zone, or null. */
function zoneNameProblem(zone: string): string | null {
  if (zone.length === 0) return 'is empty';
  if (zone.length > MAX_ZONE_LENGTH) return `is longer than ${MAX_ZONE_LENGTH} characters`;
  const labels = zone.split('.');
  if (labels.length < 2) return 'must have at least two labels (bl.example.net)';
  if (!labels.every((label) => LABEL.test(label))) return 'is not a valid DNS name (letters, digits, "-" and "_" in labels of 1 to 63)';
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// --- compiling --------------------------------------------------------------------------------

export function compileZone(zone: DnsblZone): CompiledZone {
  const table = (codes: DnsblCode[] | undefined) => new Map((codes ?? []).map((c) => [parseIPv4Number(c.code), c.meaning]));
  return { zone: zone.zone, name: zone.name, listing: table(zone.listing_codes), errors: table(zone.error_codes) };
}

/** A deep copy, so callers cannot change the engine's zones. */
export function copyZone(zone: DnsblZone): DnsblZone {
  const copy: DnsblZone = { ...zone, listing_codes: zone.listing_codes.map((c) => ({ ...c })) };
  if (zone.error_codes) copy.error_codes = zone.error_codes.map((c) => ({ ...c }));
  return copy;
}
