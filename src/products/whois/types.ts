import type { TimeoutOptions } from '../../lib/deadline.js';

/** Which protocol answered (ours). */
export type WhoisSource = 'rdap' | 'whois';

/** SPEC: whois lookup result. */
export interface WhoisResult {
  /** The registrable domain looked up: lower-case ASCII (punycode for IDN). */
  domain: string;
  /** The sponsoring registrar's name; null when the registry does not say or redacts it. */
  registrar: string | null;
  /** `YYYY-MM-DDTHH:MM:SSZ` (UTC); null when not published. */
  created_at: string | null;
  updated_at: string | null;
  expires_at: string | null;
  /** Whole days (floor) from created_at to the lookup; null when created_at is. */
  domain_age_days: number | null;
  /** Domain status strings: EPP codes (`clientTransferProhibited`) where RDAP's map to one, else as the registry writes them. */
  status: string[];
  /** Nameserver hostnames, lower case, no trailing dot, in the registry's order. */
  nameservers: string[];
  /** `rdap` or `whois` (port 43): the protocol that answered (ours). */
  source: WhoisSource;
}

/** The shape of IANA's RDAP bootstrap file (RFC 9224). */
export interface RdapBootstrap {
  description?: string;
  publication?: string;
  version?: string;
  services: [string[], string[]][];
}

/** `createLookup({ whois: ... })`. Every server and address option is for tests and deliberate operators. */
export interface WhoisEngineOptions {
  /** Use this bootstrap instead of `<dataDir>/whois/rdap-bootstrap.json`. */
  rdapBootstrap?: RdapBootstrap;
  /**
   * RDAP base URLs by TLD (`{ com: 'https://rdap.example/' }`), winning over the bootstrap and
   * `rdap-overrides.json`; null means "no RDAP for this TLD" (WHOIS is used).
   */
  rdapServers?: Readonly<Record<string, string | null>>;
  /**
   * Port-43 servers by TLD, `host` or `host:port` (`{ jp: 'whois.jprs.jp' }`), winning over
   * `servers.json`; null means "none known" (whois.iana.org is asked).
   */
  whoisServers?: Readonly<Record<string, string | null>>;
  /** The server asked for a TLD's WHOIS server (`refer:`), `host` or `host:port`. @default 'whois.iana.org' */
  ianaServer?: string;
  /**
   * The port of WHOIS servers that other servers name (IANA's `refer:`, a thin registry's
   * `Registrar WHOIS Server:`): 43 on the internet; tests use a loopback port. @default 43
   */
  whoisPort?: number;
  /** Per request (each RDAP hop, each WHOIS query). @default connect 3 s, total 8 s */
  timeouts?: TimeoutOptions;
  /** The whole lookup, every hop included. @default 15000 */
  lookupTimeoutMs?: number;
  /** Largest answer read from a server; a larger one fails the lookup. @default 1 MiB */
  maxBytes?: number;
  /** RDAP redirects followed per request. @default 3 */
  maxRedirects?: number;
  /** Result cache entries. @default 10000 (0 for none) */
  cacheSize?: number;
  /** How long a found domain is kept. @default 1 h */
  ttlMs?: number;
  /** How long "not found" (and a result whose registrar step failed) is kept. @default 10 min */
  shortTtlMs?: number;
}
