/**
 * The zone set: read and checked from `<dataDir>/dnsbl/zones.json` or from options, then
 * compiled into lookup tables of return codes. Every mistake names the zone and the field.
 */
import { join } from 'node:path';
import { invalidOption, SeclookupError } from '../../errors.js';
import { type DatasetDate, readJsonDataset } from '../../lib/datasets.js';
import { canonicalZoneName, checkZoneDefinition, isObject } from '../../lib/blocklist-zone.js';
import type { DnsblEngineOptions, DnsblZone, DnsblZonesDataset } from './types.js';

export type { CompiledZone } from '../../lib/blocklist-zone.js';
export { canonicalZoneName, compileZone, isErrorRangeCode, isLoopbackCode } from '../../lib/blocklist-zone.js';

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
 * @param dates receives the data file's `generated` date when the file is read
 */
export function configuredZones(dataDir: string, options: DnsblEngineOptions | undefined, dates?: DatasetDate[]): DnsblZone[] {
  const fromData = () => {
    const dataset = loadDnsblZones(dataDir);
    dates?.push({ dataset: 'zones.json', date: dataset.generated });
    return dataset.zones;
  };
  if (options?.zones === undefined) return fromData();
  const fail = (what: string): never => {
    throw invalidOption(`dnsbl zones option: ${what}`);
  };
  if (!Array.isArray(options.zones)) return fail('must be an array of zone names or definitions');
  let fromFile: DnsblZone[] | undefined;
  const entries = options.zones.map((entry: unknown, i: number) => {
    if (typeof entry !== 'string') return entry;
    fromFile ??= fromData();
    const name = canonicalZoneName(entry);
    return (
      fromFile.find((zone) => zone.zone === name) ??
      fail(`zones[${i}] ${JSON.stringify(entry)} is not defined in ${dnsblZonesPath(dataDir)}; give its definition instead`)
    );
  });
  return checkZoneList(entries, fail);
}

/**
 * The `zones` option's shape, checked without reading the data file (createLookup runs it at
 * construction): an array of zone names and definitions, each definition checked in full. A
 * name is looked up in the file when the engine is built.
 */
export function checkZonesOption(zones: unknown): void {
  if (zones === undefined) return;
  const fail = (what: string): never => {
    throw invalidOption(`dnsbl zones option: ${what}`);
  };
  if (!Array.isArray(zones)) return fail('must be an array of zone names or definitions');
  if (zones.length === 0) fail('"zones" must be a non-empty array');
  zones.forEach((entry: unknown, i: number) => {
    if (typeof entry === 'string') {
      if (entry.trim() === '') fail(`zones[${i}] is an empty zone name`);
    } else {
      checkZone(entry, `zones[${i}]`, fail);
    }
  });
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

/** Room left for the longest reversed IPv4 (`255.255.255.255.`) within a 253-character name. */
const MAX_ZONE_LENGTH = 253 - 16;

/**
 * A checked copy of one zone definition (lib/blocklist-zone.ts), with each listing code's
 * `policy` mark; dnsbl zones are exact, never bitmask.
 */
function checkZone(value: unknown, at: string, fail: (what: string) => never): DnsblZone {
  if (isObject(value) && value.bitmask !== undefined) fail(`${at}: "bitmask" is for domain zones; dnsbl zones answer exact codes`);
  const checked = checkZoneDefinition(value, at, fail, MAX_ZONE_LENGTH);
  const where = `${at} (${JSON.stringify(checked.zone)})`;
  const raw = value as { listing_codes: Record<string, unknown>[]; error_codes?: Record<string, unknown>[] };
  // checkZoneDefinition keeps the order of the codes.
  const listing_codes = checked.listing_codes.map((code, j) => {
    const policy = raw.listing_codes[j]!.policy;
    if (policy === undefined) return code;
    if (typeof policy !== 'boolean') return fail(`${where}: listing_codes[${j}] (${code.code}): "policy" must be true or false`);
    return policy ? { ...code, policy } : code;
  });
  const marked = raw.error_codes?.findIndex((code) => code.policy !== undefined) ?? -1;
  if (marked >= 0) fail(`${where}: error_codes[${marked}]: "policy" marks listing codes only`);
  return { ...checked, listing_codes };
}

// --- copying ---------------------------------------------------------------------------------

/** A deep copy, so callers cannot change the engine's zones. */
export function copyZone(zone: DnsblZone): DnsblZone {
  const copy: DnsblZone = { ...zone, listing_codes: zone.listing_codes.map((c) => ({ ...c })) };
  if (zone.error_codes) copy.error_codes = zone.error_codes.map((c) => ({ ...c }));
  return copy;
}
