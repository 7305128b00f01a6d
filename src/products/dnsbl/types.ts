/** The dnsbl lookup result (SPEC: dnsbl lookup result), plus `meanings` and `failed_zones` (ours). */
export interface DnsblResult {
  /** The IPv4 address checked, as a dotted quad (an IPv4-mapped IPv6 input is its IPv4 address). */
  ip: string;
  /** True when at least one zone lists the address. */
  listed: boolean;
  /** Number of zones listing the address (`lists.length`). */
  list_count: number;
  /** One entry per zone that lists the address, in configuration order; empty when not listed. */
  lists: DnsblListing[];
  /**
   * Zones queried for this answer, those that failed included: `checked - failed_zones.length`
   * zones actually answered.
   */
  checked: number;
  /** Zones that gave no usable answer (ours): unknown, neither listed nor clean. Empty when every zone answered. */
  failed_zones: DnsblFailedZone[];
}

export interface DnsblListing {
  zone: string;
  name: string;
  /** The answer addresses that are listing codes of this zone, sorted, no duplicates. */
  responses: string[];
  /** What each response means, per the zone's operator (ours); same order and length as `responses`. */
  meanings: string[];
}

/** Why a zone gave no usable answer. */
export type DnsblFailureReason =
  /** No answer within the per-zone deadline. */
  | 'timeout'
  /** The DNS server answered SERVFAIL or REFUSED, or something unreadable. */
  | 'server_error'
  /** The zone answered one of its error codes (127.255.255.0/24: Spamhaus's public-resolver refusal, rate limit, ...). */
  | 'zone_error'
  /** An answer outside 127.0.0.0/8: not a DNSBL answer at all (a hijacked or wildcarded zone). */
  | 'invalid_answer'
  /** Answers in 127.0.0.0/8 that the zone does not define as listing codes. */
  | 'unknown_code';

export interface DnsblFailedZone {
  zone: string;
  name: string;
  reason: DnsblFailureReason;
  /** One line for people: what went wrong, with the operator's meaning of an error code. */
  message: string;
  /** The addresses the zone answered, for `zone_error`, `invalid_answer` and `unknown_code`. */
  responses?: string[];
}

/** A return code of a zone and what it means. */
export interface DnsblCode {
  /** An IPv4 address, e.g. `127.0.0.2`. */
  code: string;
  meaning: string;
  /**
   * A listing code only: the listing is the address's network policy, not its behaviour
   * (Spamhaus PBL: an end-user address its ISP says should not send mail directly). dnsbl reports
   * it like any listing; riskscore does not count it as evidence of abuse. @default false
   */
  policy?: boolean;
}

/** One DNSBL zone: an entry of data/dnsbl/zones.json, or one given in code. */
export interface DnsblZone {
  /** The zone queried: `2.0.0.127.<zone>` asks about 127.0.0.2. Lower case, no trailing dot. */
  zone: string;
  /** Display name (SPEC: `lists[].name`). */
  name: string;
  /** The only answers that count as a listing: addresses in 127.0.0.0/8, outside 127.255.255.0/24. */
  listing_codes: DnsblCode[];
  /** Answers the operator documents as errors (Spamhaus: 127.255.255.252/254/255); never a listing. */
  error_codes?: DnsblCode[];
  /** The operator's usage policy. */
  policy_url?: string;
  /** Where the return codes are documented. */
  codes_url?: string;
  /** What an operator must know before using the zone (registration, volume limits, resolvers refused). */
  usage_note?: string;
}

/** The whole data/dnsbl/zones.json. */
export interface DnsblZonesDataset {
  /** YYYY-MM-DD. */
  generated: string;
  zones: DnsblZone[];
}

/** Options of one lookup (`lookup.dnsbl(ip, { zones })`, `seclookup lookup dnsbl IP --zones ...`). */
export interface DnsblOptions {
  /**
   * Query only these configured zones: names separated by commas, or an array of names
   * (case-insensitive). An unknown name throws LookupError `invalid_request` (400). Not
   * offered over HTTP, where every configured zone is checked.
   */
  zones?: string | readonly string[];
}

/** `createLookup({ dnsbl: { ... } })`. */
export interface DnsblEngineOptions {
  /**
   * The zones to check, in order: a zone definition, or the name of a zone defined in
   * `<dataDir>/dnsbl/zones.json` (`['zen.spamhaus.org', { zone: 'bl.example.net', ... }]`).
   * @default every zone of `<dataDir>/dnsbl/zones.json`
   */
  zones?: readonly (string | DnsblZone)[];
  /**
   * Deadline of each zone's query, in ms; a zone that misses it is `timeout`. Without it each
   * zone is bounded by the DNS resolver itself: its per-attempt deadline times its attempts
   * (2 x 2000 ms by default, `createLookup({ dns: { timeouts, attempts } })`).
   * @default none (the resolver's bound)
   */
  zoneTimeoutMs?: number;
  /** Results kept in the LRU cache (about 0.5 KB each); 0 for none. @default 10000 */
  cacheSize?: number;
}
