/**
 * scamrisk: the assessment result (SPEC: scamrisk assessment result), the signal codes and
 * severities (ours: the spec leaves them open), and the engine options.
 */
import type { ReportStore } from './reports.js';

import { SCAMRISK_TYPES } from './descriptor.js';

/** SPEC's eight types (catalog.ts, which the status route lists). */
export const IDENTIFIER_TYPES = SCAMRISK_TYPES;
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

/** Ours: how strongly a signal speaks for risk. info carries no points. */
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Points a signal of each severity is worth before confidence, decay and caps (README: scoring). */
export const SEVERITY_POINTS: Record<Severity, number> = { info: 0, low: 12, medium: 30, high: 70, critical: 95 };

/** Every signal code, with its severity (README lists them). */
export const SIGNAL_SEVERITY = {
  // Bundled lists.
  sanctioned_address: 'critical',
  scam_address: 'high',
  phishing_domain: 'high',
  // The report database.
  reported_verified: 'high',
  reported: 'medium',
  reports_disputed: 'info',
  // Structure of the identifier.
  lookalike_domain: 'high',
  brand_in_subdomain: 'medium',
  mixed_script_domain: 'medium',
  idn_domain: 'info',
  credentials_in_url: 'medium',
  ip_host_url: 'medium',
  invalid_phone_number: 'medium',
  premium_rate_number: 'high',
  voip_number: 'low',
  toll_free_number: 'info',
  // Other engines.
  disposable_email: 'medium',
  no_mx: 'medium',
  role_account: 'info',
  young_domain: 'medium',
  recent_domain: 'low',
  missing_email_auth: 'low',
  dnsbl_listed: 'medium',
  hosting_network: 'low',
  ip_threat_intel: 'high',
  tor_exit: 'medium',
  vpn_or_proxy: 'low',
} as const satisfies Record<string, Severity>;

export type SignalCode = keyof typeof SIGNAL_SEVERITY;

/** A signal as the result carries it (SPEC). */
export interface Signal {
  code: SignalCode;
  severity: Severity;
  /** 0 to 1: how sure the source is of this signal. */
  confidence: number;
  /** ISO 8601 with offset: when the evidence was last seen (a list's snapshot date, a report's time, now for a live check). */
  last_seen: string;
  /** Ours: the source that produced it (`ofac`, `metamask`, `reports`, `emailval`, ...). */
  source: string;
  /** Ours: short evidence (`asset: ETH`, `campaign: ...`, `category: phishing`). */
  detail?: string;
}

export type RiskLevel = 'minimal' | 'low' | 'medium' | 'high' | 'critical';
export type Recommendation = 'allow' | 'allow_with_monitoring' | 'elevated_monitoring' | 'manual_review';

export interface ScamriskResult {
  identifier: { type: IdentifierType; masked: string };
  assessment: {
    risk_score: number;
    risk_level: RiskLevel;
    confidence: number;
    coverage: { sources_queried: number; sources_responded: number; independent_matches: number };
    recommendation: Recommendation;
  };
  signals: Signal[];
  report_summary: { total_reports: number; verified_reports: number; disputed_reports: number; categories: string[] };
  limitations: string[];
  generated_at: string;
}

/** SPEC: fixed caveats, on every assessment. */
export const LIMITATIONS: readonly string[] = [
  'No match is not proof of safety: an identifier absent from every source may still be used for fraud.',
  'The assessment concerns the risk of the identifier only; it does not establish the identity or conduct of any person.',
  'Bundled lists are snapshots (see data/scamrisk/SOURCES.md) and reports are submitted by operators and clients; both can be incomplete or wrong.',
];

/** The sources an assessment may consult: `disable` turns them off (tests, offline servers). */
export const SOFT_SOURCES = ['emailval', 'emailauth', 'whois', 'geoip', 'asn', 'dnsbl', 'riskscore'] as const;
export type SoftSource = (typeof SOFT_SOURCES)[number];

export interface ScamriskEngineOptions {
  /** The report database: a store, or the path of an SQLite file. @default an empty in-memory store */
  reports?: ReportStore | string;
  /** Region for phone numbers given without `+` (ISO 3166 alpha-2). @default none: such numbers are refused */
  defaultRegion?: string;
  /** Engine-backed sources not to consult. @default none */
  disable?: readonly SoftSource[];
  /** Time each engine-backed source gets before it counts as not responded. @default 3000 */
  sourceTimeoutMs?: number;
  /** Assessments kept for `cacheTtlMs` (a repeat answers `cached: true`). @default 10000 (each about 2 KB); 0 for none */
  cacheSize?: number;
  /** How long an assessment is reused; a report filed through the engine drops its identifier's at once. @default 60000; 0 for no cache */
  cacheTtlMs?: number;
}

/**
 * An identifier as `{ type, value }`; `region` (ISO 3166 alpha-2) for phone numbers only. A type
 * literal, not an interface: it is sent as a JSON body, which takes any string-keyed object.
 */
export type ScamriskTypedRequest = {
  type: IdentifierType;
  value: string;
  region?: string;
};

/** The typed shorthand, the identifier's type as its one key: `{ email: '...' }`, `{ phone: '...', region: 'GB' }`. */
export type ScamriskShorthandRequest = { [Type in IdentifierType]: { [Key in Type]: string } & { region?: string } }[IdentifierType];

/**
 * What in-process calls and the typed client pass. The HTTP route hands over whatever JSON
 * object it was sent; the engine checks every field of it (`invalid_request` naming the field).
 */
export type ScamriskRequest = ScamriskTypedRequest | ScamriskShorthandRequest;
