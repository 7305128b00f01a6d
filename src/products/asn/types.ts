import type { IpInput } from '../../lib/ip-input.js';
import type { LookupOutcome, MaybePromise } from '../../lib/outcome.js';

export type { IpInput } from '../../lib/ip-input.js';

/**
 * The asn engine (`lookup.engine('asn')`). Other products use `prepare` and `record`: geoip
 * builds its `connection` fields with `ctx.engine('asn').record(input)`.
 */
export interface AsnEngine {
  /** Read the input: LookupError `invalid_ip` (400) or `ip_not_routable` (422); no I/O. */
  prepare(ip: string): IpInput;
  /** The lookup: synchronous from local data; a promise when the DNS source is on (and not cached). */
  lookup(query: IpInput): MaybePromise<LookupOutcome<AsnResult>>;
  /**
   * What the local data says about an address: `{ asn, org, network }`, or null when it has no
   * record. Synchronous, no DNS, no cache. Takes any parsed address (`parseIpInput`) and does
   * not check that it is public (`prepare` does). A 6to4, Teredo or NAT64 well-known-prefix
   * address is the IPv4 it carries (`lookupAddress`): the record, network included, is that IPv4's.
   */
  record(input: IpInput): AsnRecord | null;
  /** SPEC's database_records: ranges in the index (IPv4 + IPv6), or networks in a MaxMind DB. */
  readonly databaseRecords: number;
  /** Where the data came from (files, package, build time, the index file). */
  readonly source: AsnSourceInfo;
  /** The DNS source's zones, or null when it is off. */
  readonly cymru: { zone: string; zone6: string } | null;
}

/** Where the local answers come from. */
export interface AsnSourceInfo {
  /** `npm`: the package `@ip-location-db/asn`; `csv`: CSV files given by path; `mmdb`: a MaxMind DB. */
  kind: 'npm' | 'csv' | 'mmdb';
  /** The data files read. */
  files: string[];
  /** `name@version` of the npm package, for kind `npm`. */
  package: string | null;
  /** What `fetched_at` says for local answers. */
  builtAt: Date;
  /** The compiled index of CSV data: its file, and whether it was read from there or compiled now. */
  index: AsnIndexInfo | null;
  /** `database_type` of a MaxMind DB. */
  databaseType: string | null;
}

/** Where the compiled CSV index came from this time. */
export interface AsnIndexInfo {
  /** The index file in use, or null when none could be written (memory only, this process). */
  path: string | null;
  /** `cache`: read from `path`; `compiled`: built from the CSV now. */
  origin: 'cache' | 'compiled';
  /** Index files found but not used, each with the reason (stale, corrupt, ...). */
  rejected: string[];
}

/** The asn lookup result (SPEC: asn lookup result). */
export interface AsnResult {
  /** Normalized IP: dotted quad, or RFC 5952 IPv6. */
  ip: string;
  /** The origin AS; null when no source knows the address. */
  asn: number | null;
  /** The AS organization name; null when unknown. */
  as_org: string | null;
  /** The CIDR covering the IP (see README: derived from the source's range, or the DNS source's announced prefix). */
  network: string | null;
  /** ISO country code of the allocation: only the DNS source gives it, else null. */
  country_code: string | null;
  /** Regional registry label, lower case (`arin`, `ripencc`, ...): only the DNS source gives it, else null. */
  registry: string | null;
  /** Allocation date, YYYY-MM-DD: only the DNS source gives it, else null. */
  allocated: string | null;
  /** Coarse heuristic from the organization name (network-type.ts). */
  network_type: AsnNetworkType;
}

/** SPEC's network_type values. */
export type AsnNetworkType = 'hosting' | 'isp' | 'education' | 'government' | 'unknown';

/**
 * What the local data says about an address, from `AsnEngine.record`: synchronous, no DNS, no
 * cache. The geoip product builds its `connection` fields from it.
 */
export interface AsnRecord {
  asn: number;
  /** The organization name; null when the source gives none. */
  org: string | null;
  /** The CIDR covering the address (the largest one inside the source's range that holds it). */
  network: string;
}

/** The optional DNS source in the style of Team Cymru's IP-to-ASN TXT service. */
export interface AsnCymruOptions {
  /** Zone for IPv4 (`<d>.<c>.<b>.<a>.<zone>`). @default 'origin.asn.cymru.com' */
  zone?: string;
  /** Zone for IPv6 (32 nibble labels, reversed). @default 'origin6.asn.cymru.com' */
  zone6?: string;
  /** Deadline of one query in ms; left out, the shared resolver's own (attempts x per-attempt deadline). */
  timeoutMs?: number;
}

/** `createLookup({ asn: ... })`. */
export interface AsnEngineOptions {
  /**
   * A MaxMind DB with ASN records (GeoLite2-ASN, or GeoIP2-ISP, or a compatible one), used
   * instead of the CSV data. Read once at engine build and verified. CLI: `--asn-db FILE`.
   */
  database?: string;
  /**
   * CSV files in ip-location-db's asn format (`start,end,asn,org`, no header; IPv4 and IPv6
   * rows may share a file), used instead of the npm package `@ip-location-db/asn`. CLI:
   * `--asn-csv FILE[,FILE]`.
   */
  csv?: string | readonly string[];
  /**
   * Folder for the compiled index of the CSV data. @default beside the CSV files, else
   * `<os.tmpdir()>/seclookup-<uid>/` when that folder is not writable
   */
  indexDir?: string;
  /**
   * Ask a Team Cymru style DNS service too (for `country_code`, `registry`, `allocated` and the
   * announced prefix). Off by default. `true` uses Team Cymru's zones. CLI: `--asn-cymru on`.
   */
  cymru?: boolean | AsnCymruOptions;
  /** Result cache entries with `cymru`; without it, local answers whose JSON is kept (the result is built each time). @default 10000; 0 for none */
  cacheSize?: number;
}
