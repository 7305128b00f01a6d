/**
 * The geoip engine: geolocation and network metadata for a public IP, from local MMDB files.
 *
 * Routing by family: an IPv4 address (IPv4-mapped IPv6 included: parseIpInput makes it IPv4;
 * and the IPv4 a 6to4, Teredo or NAT64 well-known-prefix address carries: lookupAddress) is
 * asked of the IPv4 file, an IPv6 address of the IPv6 file; with one file for both, of that
 * file (an IPv6 address in an IPv4-only file is not found). Never an IPv6 address to an IPv4
 * file: maxmind's reader answers that with a wrong record rather than an error.
 *
 * Per lookup: one walk of the file's search tree for the parsed address (database.ts), what the
 * record at the offset found means (`readGeo`, made once per record and remembered by offset,
 * so maxmind decodes only records not seen yet), then the result object. No Intl objects or
 * tables are built per lookup.
 *
 * Errors: 400 `invalid_ip` and 422 `ip_not_routable` in prepare (before any quota); 404
 * `ip_not_found` when the file has no record for the address, or one that says nothing about
 * either its location or its network (a record with only `traits.is_anycast`); 502 `lookup_failed` when reading the file throws (a corrupt file),
 * the `asnDatabase` file included. A file read on first use (`lazy`) that cannot be opened throws
 * SeclookupError `dataset_missing` / `dataset_invalid` naming it, the `asnDatabase` file included.
 */
import { invalidOption, LookupError } from '../../errors.js';
import type { DnsResolver } from '../../lib/dns/index.js';
import { lookupAddress, readRoutableIp, type IpInput } from '../../lib/ip-input.js';
import { createJsonMemo } from '../../lib/json-memo.js';
import { checkCacheSizeLimit, checkOptionalBoolean, checkOptionalFunction, describeValue } from '../../lib/option-checks.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';
import { readAsnRecord, type AsnRecord } from './asn-source.js';
import {
  checkDatabaseOptions,
  configuredSlots,
  DBIP_PROVIDER,
  openDatabase,
  reopenChanged,
  watchFiles,
  type DatabaseSlot,
  type OpenedDatabase,
} from './database.js';
import { fileIdentity } from '../../lib/shared-file-data.js';
import { readGeo, type Geo } from './record.js';
import { bundledCountryZones, type CountryZones } from './country-zones.js';
import { reverseDnsBudget, reverseDomain } from './reverse-dns.js';
import type { AsnSource, GeoIpDatabaseInfo, GeoIpEngineOptions, GeoIpResult } from './types.js';

export interface GeoIpEngine {
  /** The input checks: LookupError `invalid_ip` (400), then `ip_not_routable` (422). No I/O. */
  prepare(ip: string): IpInput;
  /**
   * Look a prepared address up. Synchronous unless reverse DNS is on. Throws LookupError
   * `ip_not_found` (404) or `lookup_failed` (502); with `lazy`, SeclookupError `dataset_missing`
   * / `dataset_invalid` (naming the file) when a file read now, the `asnDatabase` one included,
   * cannot be opened.
   */
  lookup(input: IpInput): MaybePromise<LookupOutcome<GeoIpResult>>;
  /**
   * What the local database says about an address (no ASN source, no DNS; for a 6to4, Teredo
   * or NAT64 well-known-prefix address, about the IPv4 it carries), for products built on geoip
   * (timezone, riskscore): null when it has no record, or one that says nothing about the
   * location or the network. Throws
   * LookupError `lookup_failed` (502) when the file cannot be read.
   */
  locate(input: IpInput): Geo | null;
  /**
   * Re-read the files that changed on disk and swap them in at once. Returns true when
   * something changed. Throws SeclookupError (`dataset_missing` / `dataset_invalid`, naming the
   * file) when a changed file cannot be loaded; the database in use stays in use.
   */
  reload(): boolean;
  /** The files in use, the record count and the last reload failure. */
  info(): GeoIpDatabaseInfo;
  /** SPEC's database_records: search-tree nodes of the location files together. */
  readonly databaseRecords: number;
  /** Stop watching the files (the engine keeps answering from what it has). */
  close(): void;
}

export interface GeoIpEngineDeps {
  options: GeoIpEngineOptions | undefined;
  /** The shared DNS resolver, asked for only when reverse DNS is used. */
  dns: () => DnsResolver;
  /** Another product's engine (for `asn`); throws when that product is missing or broken. */
  engine: (id: 'asn') => AsnSource | null;
  /** tzdata's zone.tab of the data folder: which zones a record's country may answer. @default the bundled data's */
  countryZones?: CountryZones;
}

export const GEOIP_CACHE_SIZE = 10_000;
export const GEOIP_WATCH_INTERVAL_MS = 5_000;

/** A configured file: opened at once, or by the first lookup that needs it (`lazy`). */
class FileHandle {
  constructor(
    readonly slot: DatabaseSlot,
    private readonly cacheSize: number,
    private opened: OpenedDatabase | null,
  ) {}

  /** The file, read now if it was not (throws as openDatabase does). */
  get(): OpenedDatabase {
    return (this.opened ??= openDatabase(this.slot, this.cacheSize));
  }

  /** The file if it was read, without reading it. */
  peek(): OpenedDatabase | null {
    return this.opened;
  }
}

/** The files in use, swapped as a whole on reload. */
interface LoadedSet {
  handles: FileHandle[];
  /** The file for an address family (read now if it was not), or null when no file holds that family. */
  family(version: 4 | 6): OpenedDatabase | null;
  /** The asnDatabase file (read now if it was not), or null when none is configured. */
  asn(): OpenedDatabase | null;
  hasAsnFile: boolean;
  provider(): string;
  /** Search-tree nodes of the location files (reads them all). */
  records(): number;
  loadedAt: Date;
}

export function createGeoIpEngine(deps: GeoIpEngineDeps): GeoIpEngine {
  const options = deps.options ?? {};
  const { cacheSize, watchIntervalMs, reverseBudget } = checkGeoIpOptions(options);
  const countryZones = deps.countryZones ?? bundledCountryZones();
  const { slots, isDefault } = configuredSlots(options);

  // Lazy: a file is read by the first lookup that needs it, so a one-shot IPv4 lookup never
  // reads the IPv6 file. A file that is not there still fails at once, as an eager open does.
  const lazy = options.lazy === true;
  let current = assemble(
    slots.map((slot) => {
      if (lazy && fileIdentity(slot.path) === null) openDatabase(slot, cacheSize); // throws dataset_missing
      return new FileHandle(slot, cacheSize, lazy ? null : openDatabase(slot, cacheSize));
    }),
  );
  // The answers' JSON by address, kept while its record and file set are the ones in use.
  const answers = createJsonMemo<GeoIpResult>(cacheSize);
  let lastReloadError: Error | null = null;

  function assemble(handles: FileHandle[]): LoadedSet {
    const byRole = (role: string) => handles.find((h) => h.slot.role === role) ?? null;
    const both = byRole('both');
    const ipv4 = both ?? byRole('ipv4');
    const ipv6 = both ?? byRole('ipv6');
    const asn = byRole('asn');
    const location = handles.filter((h) => h.slot.role !== 'asn');
    let provider: string | undefined;
    return {
      handles,
      family(version) {
        const handle = version === 4 ? ipv4 : ipv6;
        if (!handle) return null;
        const opened = handle.get();
        // One file for both families answers IPv6 only if it holds IPv6.
        return handle === both && version === 6 && opened.info.ipVersion !== 6 ? null : opened;
      },
      asn: () => asn?.get() ?? null,
      hasAsnFile: asn !== null,
      // The default files' provider is known without reading them.
      provider: () => (provider ??= options.provider ?? (isDefault ? DBIP_PROVIDER : providerOf(location[0]?.get(), false))),
      records: () => location.reduce((sum, h) => sum + h.get().info.nodeCount, 0),
      loadedAt: new Date(),
    };
  }

  // --- ASN source: an option, the asn database, or the asn product's engine, found lazily --------

  type AsnLookup = (input: IpInput) => AsnRecord | null;
  let asnLookup: AsnLookup | null | undefined = options.asn === false ? null : options.asn ? (input) => (options.asn as AsnSource).record(input) : undefined;
  let asnKind: GeoIpDatabaseInfo['asnSource'] = options.asn === false ? 'none' : options.asn ? 'option' : current.hasAsnFile ? 'asn-database' : 'pending';

  /**
   * The asnDatabase file's record for an address. That file is the operator's choice, so its
   * failures are said, never answered as nulls: one that cannot be opened (lazy: read here
   * first) throws SeclookupError `dataset_missing` / `dataset_invalid` naming the file (the API
   * answers that as a 500 without it, the CLI as a load failure); one whose records cannot be
   * read is 502 `lookup_failed`, as the location file's are (without the path).
   */
  function configuredAsn(set: LoadedSet, input: IpInput): AsnRecord | null {
    const asnFile = set.asn()!;
    try {
      return readAsnRecord(asnFile.reader, input);
    } catch (error) {
      throw new LookupError('lookup_failed', `the ASN database could not be read for ${input.ip}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The other sources' record (the asn option, the asn product): best effort. */
  function otherAsn(input: IpInput): AsnRecord | null {
    if (asnLookup === undefined) asnLookup = findAsnProduct();
    return asnLookup ? asnLookup(input) : null;
  }

  /** The asn product's engine when it is registered and its data loads; else none, for good. */
  function findAsnProduct(): AsnLookup | null {
    try {
      const engine = deps.engine('asn');
      if (engine) {
        asnKind = 'asn-product';
        return (input) => engine.record(input);
      }
    } catch {
      // Not registered, or its data is missing: connection isp / org / asn stay null.
    }
    asnKind = 'none';
    return null;
  }

  // --- lookups --------------------------------------------------------------------------------

  function locate(given: IpInput): Geo | null {
    const input = lookupAddress(given); // 6to4, Teredo, NAT64: the IPv4 inside, whatever file is loaded
    const opened = current.family(input.version);
    if (!opened) return null;
    // The walk is only needed to key the memo; without one, maxmind's own walk is enough.
    const offset = opened.memo ? opened.find(input) : 0;
    if (offset < 0) return null;
    let geo = opened.memo?.get(offset);
    if (geo === undefined) {
      // A record not seen yet: maxmind decodes it (walking the tree again, which is cheap next to decoding).
      let record: unknown;
      try {
        record = opened.reader.get(input.ip);
      } catch (error) {
        throw new LookupError('lookup_failed', `the geolocation database could not be read for ${input.ip}: ${(error as Error).message}`, { cause: error });
      }
      if (record === null) return null;
      geo = readGeo(record, countryZones);
      opened.memo?.set(offset, geo);
    }
    return geo.known ? geo : null;
  }

  function lookup(input: IpInput): MaybePromise<LookupOutcome<GeoIpResult>> {
    const set = current;
    const geo = locate(input);
    if (!geo) throw new LookupError('ip_not_found', `no location is known for ${input.ip}`);
    const located = lookupAddress(input); // the address the records are for; `ip` and connection.type stay the input's
    let asn: AsnRecord | null = null;
    let asnFailed = false;
    if (geo.asn === null || geo.org === null) {
      if (set.hasAsnFile) asn = configuredAsn(set, located);
      else {
        try {
          asn = otherAsn(located);
        } catch {
          asn = null; // the asn product or an AsnSource failing never fails the geo answer
          asnFailed = true;
        }
      }
    }
    const org = geo.org ?? asn?.org ?? null;
    const result: GeoIpResult = {
      ip: input.ip,
      provider: set.provider(),
      continent: geo.continent,
      country: { code: geo.countryCode, name: geo.countryName },
      region: geo.region,
      city: geo.city,
      postal: geo.postal,
      location: { latitude: geo.latitude, longitude: geo.longitude },
      timezone: { id: geo.timezoneId },
      connection: {
        isp: geo.isp ?? asn?.isp ?? org,
        org,
        asn: geo.asn ?? asn?.asn ?? null,
        domain: geo.domain,
        type: input.version === 4 ? 'IPv4' : 'IPv6',
      },
      is_eu: geo.isEu,
    };
    const fetchedAt = set.family(located.version)!.info.builtAt;
    if (reverseBudget === null || geo.domain !== null) {
      // Ready JSON for the API from an address's second lookup on (the first is only noted: an
      // in-process caller looking up many addresses once pays no serialization). An answer
      // missing its ASN part by a failure is not remembered.
      return { result, cached: true, fetchedAt, json: asnFailed ? undefined : answers.repeated(input.ip, result, geo, set) };
    }
    return reverseDomain(deps.dns(), input, reverseBudget).then(({ domain, cached }) => {
      result.connection.domain = domain;
      return { result, cached, fetchedAt };
    });
  }

  // --- reloading ------------------------------------------------------------------------------

  function reload(): boolean {
    // Only the files read so far: one not read yet will be read as it is on disk when needed.
    const read = current.handles.filter((h) => h.peek() !== null);
    let next: { databases: OpenedDatabase[]; changed: boolean };
    try {
      next = reopenChanged(
        read.map((h) => h.peek()!),
        cacheSize,
      );
    } catch (error) {
      lastReloadError = error as Error;
      throw error;
    }
    lastReloadError = null;
    if (!next.changed) return false;
    current = assemble(
      current.handles.map((h) => {
        const at = read.indexOf(h);
        return at < 0 ? h : new FileHandle(h.slot, cacheSize, next.databases[at]);
      }),
    );
    options.onReload?.(info());
    return true;
  }

  let stopWatching: (() => void) | null = null;
  if (options.watch !== false) {
    stopWatching = watchFiles(
      current.handles.map((h) => h.slot.path),
      current.handles.map((h) => h.peek()?.identity ?? fileIdentity(h.slot.path) ?? 'missing'),
      watchIntervalMs,
      () => {
        try {
          reload();
        } catch (error) {
          try {
            options.onReloadError?.(error as Error);
          } catch {
            // The caller's callback failing must not crash the process from this timer;
            // the error stays readable as info().lastReloadError.
          }
        }
      },
    );
  }

  function info(): GeoIpDatabaseInfo {
    return {
      provider: current.provider(),
      files: current.handles.map((h) => ({ ...h.get().info })),
      loadedAt: current.loadedAt,
      records: current.records(),
      lastReloadError,
      asnSource: current.hasAsnFile ? 'asn-database' : asnKind,
    };
  }

  return {
    prepare: (ip) => readRoutableIp(ip),
    lookup,
    locate,
    reload,
    info,
    get databaseRecords() {
      return current.records();
    },
    close() {
      stopWatching?.();
      stopWatching = null;
    },
  };
}

/** `DB-IP City Lite` for the default files and other flat files, `MaxMind GeoIP2-City` for MaxMind's. */
function providerOf(opened: OpenedDatabase | undefined, isDefault: boolean): string {
  const type = opened?.info.databaseType ?? '';
  if (isDefault || /^city ipv[46]$/i.test(type)) return DBIP_PROVIDER;
  if (/^(GeoIP2|GeoLite2)-/i.test(type)) return `MaxMind ${type}`;
  if (/^DBIP-/i.test(type)) return `DB-IP ${type.slice(5).replace(/-/g, ' ')}`;
  return type || 'unknown';
}

function checkCount(value: unknown, name: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw invalidOption(`geoip ${name} must be a whole number >= ${min} (got ${describeValue(value)})`);
  return value;
}

/**
 * The options' types and ranges, checked without touching a file (createLookup runs it at
 * construction, the engine again when built): TypeError `invalid_option` naming the option.
 */
export function checkGeoIpOptions(options: GeoIpEngineOptions | Readonly<Record<string, unknown>>): {
  cacheSize: number;
  watchIntervalMs: number;
  reverseBudget: number | null;
} {
  const given = options as Readonly<Record<string, unknown>>;
  checkDatabaseOptions(given);
  if (given.provider !== undefined && (typeof given.provider !== 'string' || given.provider === ''))
    throw invalidOption(`geoip: provider must be a non-empty string (got ${describeValue(given.provider)})`);
  const asn = given.asn;
  if (asn !== undefined && asn !== false && (typeof asn !== 'object' || asn === null || typeof (asn as Partial<AsnSource>).record !== 'function'))
    throw invalidOption(`geoip: asn must be false or an AsnSource, an object with a record(ip) method such as mmdbAsnSource(file) (got ${describeValue(asn)})`);
  checkOptionalBoolean(given.lazy, 'geoip lazy');
  checkOptionalBoolean(given.watch, 'geoip watch');
  checkOptionalFunction(given.onReload, 'geoip onReload');
  checkOptionalFunction(given.onReloadError, 'geoip onReloadError');
  return {
    cacheSize: checkCacheSizeLimit(checkCount(given.cacheSize ?? GEOIP_CACHE_SIZE, 'cacheSize'), 'geoip cacheSize'),
    watchIntervalMs: checkCount(given.watchIntervalMs ?? GEOIP_WATCH_INTERVAL_MS, 'watchIntervalMs', 1),
    reverseBudget: reverseDnsBudget(given.reverseDns),
  };
}
