/**
 * The risk of one captcha pass, 0-100 (lower is safer): browser telemetry plus what the local
 * riskscore data says of the visitor's address. Each signal adds a fixed weight; the sum is
 * capped at 100. Levels: low below 30, medium 30-59, high 60 and up.
 *
 * Managed mode passes a visitor without a puzzle only at low risk and with interaction counts in
 * its telemetry, and answers 422 `interactive_required` otherwise: no single signal ever blocks
 * anyone, the worst it does is ask for a puzzle.
 */
import type { ServiceLookup } from '../service.js';
import type { RiskScoreEngine } from '../riskscore/engine.js';
import { formatIp, isPublicIp, type IpAddress } from '../../lib/ip.js';

/** What the widget reports of the browser (PROTOCOL.md). Fields of the wrong type are dropped, never an error. */
export interface Telemetry {
  webdriver?: boolean;
  headless?: boolean;
  languages?: number;
  plugins?: number;
  touch?: boolean;
  screen?: [number, number];
  pointer_moves?: number;
  keys?: number;
  focus?: boolean;
  elapsed_ms?: number;
  timezone?: string;
}

export type RiskLevel = 'low' | 'medium' | 'high';

/** Weights of the signals (documented in the README). */
export const RISK_WEIGHTS = {
  webdriver: 40,
  headless: 30,
  noInteraction: 15,
  tooFast: 20,
  noLanguages: 10,
  noScreen: 10,
  tor: 25,
  malicious: 30,
  hosting: 20,
  vpn: 10,
} as const;

export function readTelemetry(value: unknown): Telemetry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const v = value as Record<string, unknown>;
  const out: Telemetry = {};
  for (const name of ['webdriver', 'headless', 'touch', 'focus'] as const) if (typeof v[name] === 'boolean') out[name] = v[name] as boolean;
  for (const name of ['languages', 'plugins', 'pointer_moves', 'keys', 'elapsed_ms'] as const) {
    const n = v[name];
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) out[name] = n;
  }
  if (Array.isArray(v.screen) && v.screen.length === 2 && v.screen.every((n) => typeof n === 'number' && Number.isFinite(n)))
    out.screen = [v.screen[0], v.screen[1]];
  if (typeof v.timezone === 'string' && v.timezone.length <= 64) out.timezone = v.timezone;
  return out;
}

/**
 * Telemetry sent as JSON text (the challenge's `telemetry` query parameter). Text that is too
 * long or not JSON counts as no telemetry, never an error.
 */
export function readTelemetryText(text: string | null): Telemetry {
  if (!text || text.length > 2048) return {};
  try {
    return readTelemetry(JSON.parse(text));
  } catch {
    return {};
  }
}

/** Headless Chrome names itself in its User-Agent header unless told otherwise. */
const HEADLESS_USER_AGENT = /HeadlessChrome\//;

/**
 * The telemetry signals found, with their weights. `headless` also counts when the request's
 * User-Agent header says HeadlessChrome: a bot that leaves the telemetry out still shows it.
 */
export function telemetrySignals(t: Telemetry, userAgent?: string): { name: keyof typeof RISK_WEIGHTS; weight: number }[] {
  const found: (keyof typeof RISK_WEIGHTS)[] = [];
  if (t.webdriver === true) found.push('webdriver');
  if (t.headless === true || (userAgent !== undefined && HEADLESS_USER_AGENT.test(userAgent))) found.push('headless');
  if ((t.pointer_moves ?? 0) === 0 && (t.keys ?? 0) === 0 && t.focus !== true) found.push('noInteraction');
  if (t.elapsed_ms !== undefined && t.elapsed_ms < 300) found.push('tooFast');
  if (t.languages === 0) found.push('noLanguages');
  if (t.screen && (t.screen[0] === 0 || t.screen[1] === 0)) found.push('noScreen');
  return found.map((name) => ({ name, weight: RISK_WEIGHTS[name] }));
}

/**
 * The address signals from the local riskscore data (never an upstream: a captcha pass must not
 * spend another product's paid calls). Nothing for private or unknown addresses, or when the
 * riskscore data is not loaded.
 */
export function addressSignals(lookup: ServiceLookup, ip: IpAddress | null): { name: keyof typeof RISK_WEIGHTS; weight: number }[] {
  if (!ip || !isPublicIp(ip)) return [];
  let engine: RiskScoreEngine;
  try {
    engine = lookup.engine('riskscore');
  } catch {
    return [];
  }
  if (engine.provider !== 'local') return [];
  try {
    const outcome = engine.lookup(engine.prepare(formatIp(ip)));
    if (outcome instanceof Promise) return []; // only the DNSBL variant is asynchronous: skipped
    const flags = outcome.result.intelligence.flags;
    const found: (keyof typeof RISK_WEIGHTS)[] = [];
    if (flags.is_tor) found.push('tor');
    if (flags.is_malicious) found.push('malicious');
    if (flags.is_hosting) found.push('hosting');
    if (flags.is_vpn || flags.is_relay) found.push('vpn');
    return found.map((name) => ({ name, weight: RISK_WEIGHTS[name] }));
  } catch {
    return [];
  }
}

export function riskScore(signals: readonly { weight: number }[]): number {
  return Math.min(
    100,
    signals.reduce((sum, s) => sum + s.weight, 0),
  );
}

export function riskLevel(score: number): RiskLevel {
  return score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low';
}

/** Managed mode lets a visitor through without a puzzle below this score. */
export const MANAGED_PASS_BELOW = 30;

/**
 * Telemetry with no interaction count: neither `pointer_moves` nor `keys` (the widget always
 * sends both, 0 included). A lone `focus` flag does not count: it is the one field a script sets
 * to silence the "no interaction" signal. Managed mode never passes such telemetry (a request
 * without any scores low only because no signal can be judged).
 */
export function lacksInteractionCounts(t: Telemetry): boolean {
  return t.pointer_moves === undefined && t.keys === undefined;
}
