/**
 * domainrep's bundled data, read once per engine: the domain blocklist zones, the TLD risk table,
 * the brand list and the phishing lists (MetaMask eth-phishing-detect, polkadot{.js} phishing).
 * Every mistake names the file and the field; nothing here reads outside `dataDir`.
 */
import { join } from 'node:path';
import { parse } from 'tldts';
import { invalidOption, SeclookupError } from '../../errors.js';
import { canonicalZoneName, checkZoneDefinition, isObject } from '../../lib/blocklist-zone.js';
import { type DatasetDate, readJsonDataset, recordedDate } from '../../lib/datasets.js';
import { type HostListFile, isHostList, readHostListFile } from '../../lib/host-lists.js';
import { sharedFileData } from '../../lib/shared-file-data.js';
import type { DomainRepEngineOptions, DomainZone } from './types.js';

/** Room in a 253-character name for the domain queried in front of the zone (at least `a.b.`). */
const MAX_ZONE_LENGTH = 253 - 4;

function datasetError(path: string, what: string): never {
  throw new SeclookupError('dataset_invalid', `seclookup: domainrep ${path}: ${what}`);
}

// --- zones ------------------------------------------------------------------------------------

export function domainZonesPath(dataDir: string): string {
  return join(dataDir, 'domainrep', 'zones.json');
}

/**
 * Read and check `<dataDir>/domainrep/zones.json`.
 * @param dates receives the file's `generated` date (null when it records none)
 */
export function loadDomainZones(dataDir: string, dates?: DatasetDate[]): DomainZone[] {
  const path = domainZonesPath(dataDir);
  const fail = (what: string): never => datasetError(path, what);
  const data = readJsonDataset<unknown>(path);
  if (!isObject(data)) return fail('expected a JSON object');
  dates?.push({ dataset: 'zones.json', date: recordedDate(data) });
  return checkZoneList(data.zones, fail);
}

/** The zones an engine checks: `options.zones` (definitions or names from the file), else the file's. */
export function configuredDomainZones(dataDir: string, options: DomainRepEngineOptions | undefined, dates?: DatasetDate[]): DomainZone[] {
  if (options?.zones === undefined) return loadDomainZones(dataDir, dates);
  const fail = (what: string): never => {
    throw invalidOption(`domainrep zones option: ${what}`);
  };
  if (!Array.isArray(options.zones)) return fail('must be an array of zone names or definitions');
  let fromFile: DomainZone[] | undefined;
  const entries = options.zones.map((entry: unknown, i: number) => {
    if (typeof entry !== 'string') return entry;
    fromFile ??= loadDomainZones(dataDir, dates);
    const name = canonicalZoneName(entry);
    return fromFile.find((zone) => zone.zone === name) ?? fail(`zones[${i}] ${JSON.stringify(entry)} is not defined in ${domainZonesPath(dataDir)}`);
  });
  return checkZoneList(entries, fail, true);
}

/**
 * The `zones` option's shape, checked without reading the data file (createLookup runs it at
 * construction): an array of zone names and definitions, each definition checked in full. A
 * name is looked up in the file when the engine is built.
 */
export function checkDomainZonesOption(zones: unknown): void {
  if (zones === undefined) return;
  const fail = (what: string): never => {
    throw invalidOption(`domainrep zones option: ${what}`);
  };
  if (!Array.isArray(zones)) return fail('must be an array of zone names or definitions');
  zones.forEach((entry: unknown, i: number) => {
    if (typeof entry === 'string') {
      if (entry.trim() === '') fail(`zones[${i}] is an empty zone name`);
    } else {
      checkDomainZone(entry, `zones[${i}]`, fail);
    }
  });
}

function checkZoneList(zones: unknown, fail: (what: string) => never, mayBeEmpty = false): DomainZone[] {
  if (!Array.isArray(zones) || (!mayBeEmpty && zones.length === 0)) return fail('"zones" must be a non-empty array');
  const seen = new Set<string>();
  return zones.map((raw: unknown, i: number) => {
    const at = `zones[${i}]`;
    const checked = checkDomainZone(raw, at, fail);
    if (seen.has(checked.zone)) fail(`${at}: zone ${checked.zone} is listed twice`);
    seen.add(checked.zone);
    return checked;
  });
}

/** A checked copy of one zone definition, with the weight of each listing code. */
function checkDomainZone(raw: unknown, at: string, fail: (what: string) => never): DomainZone {
  const checked = checkZoneDefinition(raw, at, fail, MAX_ZONE_LENGTH);
  // The weight of each listing code: checkZoneDefinition keeps the order of listing_codes.
  const rawCodes = (raw as { listing_codes: unknown[] }).listing_codes;
  const listing_codes = checked.listing_codes.map((code, j) => {
    const weight = (rawCodes[j] as { weight?: unknown }).weight;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0 || weight > 100) {
      fail(`${at} (${JSON.stringify(checked.zone)}): listing_codes[${j}] (${code.code}) needs a "weight" from 0 to 100`);
    }
    return { ...code, weight: weight as number };
  });
  return { ...checked, listing_codes };
}

export function copyDomainZone(zone: DomainZone): DomainZone {
  const copy: DomainZone = { ...zone, listing_codes: zone.listing_codes.map((c) => ({ ...c })) };
  if (zone.error_codes) copy.error_codes = zone.error_codes.map((c) => ({ ...c }));
  return copy;
}

// --- TLD risk ---------------------------------------------------------------------------------

export interface TldRisk {
  tld: string;
  listed: number;
  baseline: number;
  share: number;
  lift: number;
  weight: number;
}

export interface TldRiskTable {
  byTld: ReadonlyMap<string, TldRisk>;
  minListed: number;
  listedDomains: number;
}

export function loadTldRisk(dataDir: string, dates?: DatasetDate[]): TldRiskTable {
  const path = join(dataDir, 'domainrep', 'tld-risk.json');
  const data = readJsonDataset<unknown>(path);
  if (!isObject(data) || !Array.isArray(data.tlds)) return datasetError(path, 'expected { "tlds": [...] }');
  dates?.push({ dataset: 'tld-risk.json', date: recordedDate(data) });
  if (typeof data.min_listed !== 'number' || typeof data.listed_domains !== 'number')
    return datasetError(path, '"min_listed" and "listed_domains" must be numbers');
  const byTld = new Map<string, TldRisk>();
  data.tlds.forEach((row: unknown, i: number) => {
    if (!isObject(row) || typeof row.tld !== 'string' || !/^[a-z0-9-]+$/.test(row.tld)) datasetError(path, `tlds[${i}]: "tld" must be a lower-case TLD`);
    const r = row as Record<string, unknown>;
    for (const key of ['listed', 'baseline', 'share', 'lift', 'weight']) {
      if (typeof r[key] !== 'number' || !Number.isFinite(r[key])) datasetError(path, `tlds[${i}] (${String(r.tld)}): "${key}" must be a number`);
    }
    if ((r.weight as number) < 0 || (r.weight as number) > 100) datasetError(path, `tlds[${i}] (${String(r.tld)}): "weight" must be 0-100`);
    byTld.set(r.tld as string, {
      tld: r.tld as string,
      listed: r.listed as number,
      baseline: r.baseline as number,
      share: r.share as number,
      lift: r.lift as number,
      weight: r.weight as number,
    });
  });
  return { byTld, minListed: data.min_listed, listedDomains: data.listed_domains };
}

// --- brands -----------------------------------------------------------------------------------

export interface Brand {
  brand: string;
  /**
   * The brand's own registrable domains: never flagged. The file's `domains`, then the brand's
   * name under each of its `country_suffixes` (`amazon.com.br` for `com.br`).
   */
  domains: readonly string[];
  /** `substring`: the brand inside a longer label counts; `token`: only as a whole hyphen- or digit-separated part. */
  match: 'substring' | 'token';
}

export function loadBrands(dataDir: string, dates?: DatasetDate[]): Brand[] {
  const path = join(dataDir, 'domainrep', 'brands.json');
  const data = readJsonDataset<unknown>(path);
  if (!isObject(data) || !Array.isArray(data.brands)) return datasetError(path, 'expected { "brands": [...] }');
  dates?.push({ dataset: 'brands.json', date: recordedDate(data) });
  return data.brands.map((entry: unknown, i: number) => {
    if (!isObject(entry) || typeof entry.brand !== 'string' || !/^[a-z0-9]{3,}$/.test(entry.brand))
      return datasetError(path, `brands[${i}]: "brand" must be 3 or more lower-case letters or digits`);
    if (!Array.isArray(entry.domains) || !entry.domains.every((d) => typeof d === 'string'))
      return datasetError(path, `brands[${i}]: "domains" must be an array of domain names`);
    if (entry.match !== 'substring' && entry.match !== 'token') return datasetError(path, `brands[${i}]: "match" must be "substring" or "token"`);
    const domains = [...(entry.domains as string[])];
    const suffixes = entry.country_suffixes ?? [];
    if (!Array.isArray(suffixes) || !suffixes.every((s) => typeof s === 'string'))
      return datasetError(path, `brands[${i}] (${entry.brand}): "country_suffixes" must be an array of public suffixes`);
    for (const suffix of suffixes as string[]) {
      // Only a real ICANN suffix under a country-code TLD: `<brand>.<suffix>` must be a registrable domain there.
      const domain = `${entry.brand}.${suffix}`;
      const parsed = parse(domain, { allowPrivateDomains: false, extractHostname: false });
      if (
        parsed.isIcann !== true ||
        parsed.publicSuffix !== suffix ||
        parsed.domain !== domain ||
        !/^[a-z]{2}$/.test(suffix.slice(suffix.lastIndexOf('.') + 1))
      )
        return datasetError(
          path,
          `brands[${i}] (${entry.brand}): country_suffixes entry ${JSON.stringify(suffix)} is not a public suffix under a country-code TLD`,
        );
      domains.push(domain);
    }
    return { brand: entry.brand, domains, match: entry.match };
  });
}

// --- phishing lists ---------------------------------------------------------------------------

export interface PhishingLists {
  /** Names blocked (equal or parent match), with the list that blocks them. */
  blocked: ReadonlyMap<string, string>;
  /** MetaMask's whitelist (equal or parent match). */
  allowed: ReadonlySet<string>;
  /** polkadot{.js} `allow`: exact names, and `*.parent` wildcards (names one label below). */
  allowedExact: ReadonlySet<string>;
  allowedWildcard: ReadonlySet<string>;
  /** Entries left out because they have no ASCII form (`url.domainToASCII` refuses them): they could never match a checked name. */
  skipped: number;
}

export const METAMASK_LIST = 'MetaMask eth-phishing-detect blacklist (2023-08-31 snapshot)';
export const POLKADOT_LIST = 'polkadot{.js} phishing deny list (2026-02-03 snapshot)';

export function loadPhishingLists(dataDir: string): PhishingLists {
  // Shared with scamrisk: data/phishing/ (see its README).
  const metamaskPath = join(dataDir, 'phishing', 'metamask', 'config.json');
  const polkadotPath = join(dataDir, 'phishing', 'polkadot', 'all.json');
  // A fifth of a second to read: shared by this process's engines while the files are unchanged.
  return sharedFileData('domainrep-phishing', [metamaskPath, polkadotPath], () => readPhishingLists(metamaskPath, polkadotPath));
}

function readPhishingLists(metamaskPath: string, polkadotPath: string): PhishingLists {
  const metamask = readHostListFile(metamaskPath);
  const polkadot = readHostListFile(polkadotPath);
  let skipped = 0;
  // Blocklists must list something; allowlists may be empty (the same rules as scamrisk's loader).
  const strings = (path: string, file: HostListFile, key: string, mayBeEmpty = true): string[] => {
    const list = file.list(key, mayBeEmpty);
    if (!isHostList(list)) return datasetError(path, 'problem' in list ? `"${key}" ${list.problem}` : `"${key}" must be an array of strings`);
    const names: string[] = [];
    for (const name of list.ascii) {
      if (name === null) skipped++;
      else names.push(name);
    }
    return names;
  };
  const blocked = new Map<string, string>();
  for (const name of strings(polkadotPath, polkadot, 'deny', false)) blocked.set(name, POLKADOT_LIST);
  for (const name of strings(metamaskPath, metamask, 'blacklist', false)) blocked.set(name, METAMASK_LIST);
  const allowedExact = new Set<string>();
  const allowedWildcard = new Set<string>();
  for (const name of strings(polkadotPath, polkadot, 'allow')) {
    if (name.startsWith('*.')) allowedWildcard.add(name.slice(2));
    else allowedExact.add(name);
  }
  const allowed = new Set(strings(metamaskPath, metamask, 'whitelist'));
  return { blocked, allowed, allowedExact, allowedWildcard, skipped };
}
