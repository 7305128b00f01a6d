import type { TimeoutOptions } from '../../lib/deadline.js';
import type { Intelligence } from './score.js';

export type { Intelligence, Evidence, Verdict, Level, Flags } from './score.js';

/** Upstream adapters: the shape of the API each speaks. */
export type UpstreamKind = 'ipinfo' | 'ipqualityscore';
/** `provider` option values: the local data, or an upstream. */
export type ProviderName = 'local' | UpstreamKind;

/** `createLookup({ riskscore: { ... } })`. Flat, so `serve` / `lookup` settings can set one field each. */
export interface RiskScoreEngineOptions {
  /** Which provider answers. @default 'local' */
  provider?: ProviderName;
  /** The upstream's base URL. @default https://ipinfo.io, or https://ipqualityscore.com/api/json/ip */
  url?: string;
  /** The upstream's API key (ipinfo token of a plan with privacy detection, IPQualityScore key). Sent only to `url`; never logged. */
  key?: string;
  /** Per upstream request. @default { connectMs: 2000, totalMs: 5000 } */
  timeouts?: TimeoutOptions;
  /** Answers kept in the result cache (upstream answers; local ones when `dnsbl` is off). 0 turns it off. @default 10000 */
  cacheSize?: number;
  /** How long a cached answer is kept. @default 3600000 (1 hour) upstream, 600000 (10 minutes) local */
  cacheTtlMs?: number;
  /** False: the local data is not loaded (with no upstream, lookups are 503). @default true */
  local?: boolean;
  /** Ask the dnsbl engine too (local provider, IPv4). @default false */
  dnsbl?: boolean;
  /** IPsum list count from which an address is malicious (1-10). @default 3 */
  ipsumThreshold?: number;
}

export interface RiskScoreLocation {
  country: { code: string | null; name: string | null };
  city: string | null;
  region: string | null;
  latitude: number | null;
  longitude: number | null;
  timezone: string | null;
}

export interface RiskScoreNetwork {
  isp: string | null;
  asn: number | null;
  connection_type: string | null;
}

/** SPEC: riskscore lookup result. */
export interface RiskScoreResult {
  ip: string;
  provider: ProviderName;
  location: RiskScoreLocation;
  network: RiskScoreNetwork;
  intelligence: Intelligence;
  /** Null when the country is unknown. */
  is_eu: boolean | null;
}
