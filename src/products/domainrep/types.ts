import type { BlocklistZoneDefinition, ZoneCode } from '../../lib/blocklist-zone.js';

/** SPEC: low (score below 30), medium (30-69), high (70-100). */
export type DomainRepLevel = 'low' | 'medium' | 'high';

/** Every signal code a result can carry (README: the domainrep section lists each with its weights). */
export type DomainRepSignalCode =
  | 'domain_age'
  | 'email_auth'
  | 'dns_resolution'
  | 'blocklist'
  | 'phishing_list'
  | 'tld_risk'
  | 'label_length'
  | 'label_digits'
  | 'label_hyphens'
  | 'label_entropy'
  | 'idn'
  | 'mixed_script'
  | 'confusable'
  | 'brand_lookalike';

/** SPEC: one signal. A signal that could not be computed has weight 0 and a detail starting `unavailable:` (ours). */
export interface DomainRepSignal {
  code: DomainRepSignalCode;
  detail: string;
  /** Points added to the score: positive for risk; negative only for the documented trust signal (an old registration). */
  weight: number;
}

/** SPEC: domainrep lookup result. */
export interface DomainRepResult {
  /** The normalized domain scored: lower-case ASCII (punycode for IDN), no trailing dot. */
  domain: string;
  /** 0-100, higher is riskier: the sum of the signals' weights, rounded and clamped to 0-100. */
  score: number;
  level: DomainRepLevel;
  signals: DomainRepSignal[];
}

/** A listing code of a domain zone, with the points it adds. */
export interface DomainZoneCode extends ZoneCode {
  /** Points a listing with this code adds (0-100); within one zone only the highest counts. */
  weight: number;
}

/** One domain blocklist zone: an entry of data/domainrep/zones.json, or one given in code. */
export interface DomainZone extends BlocklistZoneDefinition {
  listing_codes: DomainZoneCode[];
}

/** `createLookup({ domainrep: { ... } })`. */
export interface DomainRepEngineOptions {
  /**
   * The domain blocklist zones to check: definitions, or names of zones in
   * `<dataDir>/domainrep/zones.json`. @default every zone of that file
   */
  zones?: readonly (string | DomainZone)[];
  /**
   * Deadline of each network signal (whois, emailauth, the DNS resolution check, each zone), in
   * ms; a signal that misses it is unavailable. @default 10000
   */
  signalTimeoutMs?: number;
  /** Longest time a result is kept, in ms; DNS TTLs and the whois and emailauth results behind it cut it shorter. @default 3600000 */
  maxTtlMs?: number;
  /** Results kept in the LRU cache (about 1 KB each); 0 for none. @default 10000 */
  cacheSize?: number;
}
