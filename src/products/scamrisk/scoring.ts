/**
 * Scoring (README: scamrisk, scoring): each finding is worth points (its severity's, times its
 * confidence; reports decay with age), capped per source; sources combine as independent
 * evidence: score = 100 * (1 - prod(1 - source_i / 100)).
 */
import type { Identifier } from './identifiers.js';
import { reporterOf, type StoredReport } from './reports.js';
import {
  LIMITATIONS,
  SEVERITIES,
  SEVERITY_POINTS,
  SIGNAL_SEVERITY,
  type Recommendation,
  type RiskLevel,
  type ScamriskResult,
  type Severity,
  type Signal,
} from './types.js';
import { createIsoFormatter } from '../../lib/iso-time.js';

export interface Finding {
  signal: Signal;
  /** Points before the source cap; default: severity points x confidence. */
  points?: number;
}

/** A report's weight halves every 180 days. */
export const REPORT_HALF_LIFE_DAYS = 180;
/** Points of one reporter's strongest report: verified and unverified. */
export const REPORT_POINTS = { verified: 65, unverified: 30 } as const;
/** All reports together never exceed this: reports alone reach high at most, never critical. */
export const REPORTS_CAP = 75;
/** Any other single source is capped here (a sanctions match alone is critical). */
export const SOURCE_CAP = 95;

const DAY_MS = 86_400_000;

/**
 * ISO 8601 with an explicit offset: `2025-06-20T15:36:47.000+00:00`. The last one is
 * remembered: a busy engine asks for the same millisecond many times.
 */
export const isoWithOffset = createIsoFormatter('+00:00');

export function riskLevel(score: number): RiskLevel {
  if (score >= 80) return 'critical';
  if (score >= 60) return 'high';
  if (score >= 35) return 'medium';
  if (score >= 15) return 'low';
  return 'minimal';
}

/**
 * The reports' finding: undisputed reports grouped by reporter (`source`); each reporter
 * counts once, with its strongest report (verified 65, else 30 points, halved every 180 days);
 * reporters combine as independent evidence, capped at {@link REPORTS_CAP}. Disputed reports
 * add nothing and show as `reports_disputed`.
 */
export function reportFinding(reports: readonly StoredReport[], now: number): Finding[] {
  if (reports.length === 0) return [];
  const findings: Finding[] = [];
  const live = reports.filter((r) => !r.disputed);
  const byReporter = new Map<string, number>();
  let newest = 0;
  let anyVerified = false;
  for (const report of live) {
    const ageDays = Math.max(0, (now - report.reportedAt) / DAY_MS);
    const weight = (report.verified ? REPORT_POINTS.verified : REPORT_POINTS.unverified) * 0.5 ** (ageDays / REPORT_HALF_LIFE_DAYS);
    const reporter = reporterOf(report.source);
    byReporter.set(reporter, Math.max(byReporter.get(reporter) ?? 0, weight));
    newest = Math.max(newest, report.reportedAt);
    anyVerified ||= report.verified;
  }
  if (byReporter.size > 0) {
    const points = Math.min(REPORTS_CAP, combine([...byReporter.values()]));
    const categories = [...new Set(live.map((r) => r.category))].sort();
    const code = anyVerified ? 'reported_verified' : 'reported';
    const confidence = round2(Math.min(0.95, 0.5 + 0.15 * (byReporter.size - 1) + (anyVerified ? 0.2 : 0)));
    findings.push({
      signal: {
        code,
        // Fresh reports are their code's severity; decayed ones say what they still weigh.
        severity: minSeverity(SIGNAL_SEVERITY[code], severityNearest(points)),
        confidence,
        last_seen: isoWithOffset(newest),
        source: 'reports',
        detail: `${byReporter.size} reporter(s); ${categories.join(', ')}`,
      },
      points,
    });
  }
  const disputed = reports.filter((r) => r.disputed);
  if (disputed.length > 0) {
    const last = Math.max(...disputed.map((r) => r.disputedAt ?? r.reportedAt));
    findings.push({
      signal: {
        code: 'reports_disputed',
        severity: 'info',
        confidence: 1,
        last_seen: isoWithOffset(last),
        source: 'reports',
        detail: `${disputed.length} disputed`,
      },
    });
  }
  return findings;
}

/** The severity whose points are nearest `points` (a tie goes to the lower). */
export function severityNearest(points: number): Severity {
  let nearest: Severity = 'info';
  for (const severity of SEVERITIES) if (Math.abs(SEVERITY_POINTS[severity] - points) < Math.abs(SEVERITY_POINTS[nearest] - points)) nearest = severity;
  return nearest;
}

const minSeverity = (a: Severity, b: Severity): Severity => (SEVERITY_POINTS[a] <= SEVERITY_POINTS[b] ? a : b);

function combine(points: readonly number[]): number {
  return 100 * (1 - points.reduce((rest, p) => rest * (1 - Math.min(100, Math.max(0, p)) / 100), 1));
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface AssessInput {
  identifier: Identifier;
  findings: readonly Finding[];
  reports: readonly StoredReport[];
  queried: number;
  responded: number;
  now: number;
}

export function assess({ identifier, findings, reports, queried, responded, now }: AssessInput): ScamriskResult {
  // Per source: its findings combined, then capped.
  const bySource = new Map<string, number[]>();
  for (const { signal, points } of findings) {
    const value = points ?? SEVERITY_POINTS[signal.severity] * signal.confidence;
    if (value <= 0) continue;
    bySource.set(signal.source, [...(bySource.get(signal.source) ?? []), value]);
  }
  const perSource = [...bySource.entries()].map(([source, values]) => Math.min(source === 'reports' ? REPORTS_CAP : SOURCE_CAP, combine(values)));
  const score = Math.min(100, Math.round(combine(perSource)));
  const level = riskLevel(score);

  const matching = findings.filter((f) => f.signal.severity !== 'info');
  const matches = new Set(matching.map((f) => f.signal.source)).size;
  const coverage = queried === 0 ? 0 : responded / queried;
  let confidence: number;
  if (matches === 0) {
    confidence = 0.25 + 0.35 * coverage;
  } else {
    const newest = Math.max(...matching.map((f) => Date.parse(f.signal.last_seen)));
    const recency = now - newest <= 365 * DAY_MS ? 1 : 0.8;
    confidence = Math.min(1, 0.5 + 0.15 * Math.min(matches, 3) + 0.1 * coverage) * recency;
  }

  const live = reports.filter((r) => !r.disputed);
  return {
    identifier: { type: identifier.type, masked: identifier.masked },
    assessment: {
      risk_score: score,
      risk_level: level,
      confidence: round2(confidence),
      coverage: { sources_queried: queried, sources_responded: responded, independent_matches: matches },
      recommendation: recommend(level, matching.length > 0),
    },
    signals: findings.map((f) => ({ ...f.signal, confidence: round2(f.signal.confidence) })),
    report_summary: {
      total_reports: reports.length,
      verified_reports: reports.filter((r) => r.verified).length,
      disputed_reports: reports.filter((r) => r.disputed).length,
      categories: [...new Set(live.map((r) => r.category))].sort(),
    },
    limitations: [...LIMITATIONS],
    generated_at: isoWithOffset(now),
  };
}

/** SPEC's rule: high or critical -> manual_review; medium -> elevated_monitoring; any non-info signal -> allow_with_monitoring; else allow. */
export function recommend(level: RiskLevel, mildSignals: boolean): Recommendation {
  if (level === 'high' || level === 'critical') return 'manual_review';
  if (level === 'medium') return 'elevated_monitoring';
  return mildSignals ? 'allow_with_monitoring' : 'allow';
}

/** The fixed caveats as JSON, made once: three long sentences are most of a small answer's bytes. */
const LIMITATIONS_JSON = JSON.stringify(LIMITATIONS);

/**
 * `JSON.stringify(result)` for a result made by {@link assess}, byte for byte, written out field
 * by field: JSON.stringify of the whole object cost more than the rest of an uncached
 * assessment. The fixed caveats are spliced in as JSON made once; strings that come from input
 * (the masked identifier, signal details) still go through JSON.stringify.
 * test/products/scamrisk-speed.test.ts compares both on every kind of result. Falls back to
 * JSON.stringify when the caveats are not the fixed ones.
 */
export function assessmentJson(result: ScamriskResult): string {
  const { identifier, assessment, report_summary: summary, limitations } = result;
  if (limitations.length !== LIMITATIONS.length || limitations.some((text, i) => text !== LIMITATIONS[i])) return JSON.stringify(result);
  const { coverage } = assessment;
  return (
    `{"identifier":{"type":${JSON.stringify(identifier.type)},"masked":${JSON.stringify(identifier.masked)}},` +
    `"assessment":{"risk_score":${num(assessment.risk_score)},"risk_level":${JSON.stringify(assessment.risk_level)},"confidence":${num(assessment.confidence)},` +
    `"coverage":{"sources_queried":${num(coverage.sources_queried)},"sources_responded":${num(coverage.sources_responded)},"independent_matches":${num(coverage.independent_matches)}},` +
    `"recommendation":${JSON.stringify(assessment.recommendation)}},` +
    `"signals":${result.signals.length === 0 ? '[]' : JSON.stringify(result.signals)},` +
    `"report_summary":{"total_reports":${num(summary.total_reports)},"verified_reports":${num(summary.verified_reports)},"disputed_reports":${num(summary.disputed_reports)},` +
    `"categories":${JSON.stringify(summary.categories)}},` +
    `"limitations":${LIMITATIONS_JSON},"generated_at":${JSON.stringify(result.generated_at)}}`
  );
}

/** A number as JSON writes it (`null` when not finite). */
const num = (n: number) => (Number.isFinite(n) ? String(n) : 'null');
