/**
 * The score: the sum of the signals' weights, rounded and clamped to 0-100. Monotone in the
 * evidence: a signal added with a non-negative weight (a listing, a young age) never lowers it.
 * Levels are SPEC's: low below 30, medium 30-69, high 70-100.
 */
import type { DomainRepLevel, DomainRepSignal } from './types.js';

export function scoreOf(signals: readonly Pick<DomainRepSignal, 'weight'>[]): number {
  let sum = 0;
  for (const signal of signals) sum += signal.weight;
  return Math.min(100, Math.max(0, Math.round(sum)));
}

export function levelOf(score: number): DomainRepLevel {
  return score >= 70 ? 'high' : score >= 30 ? 'medium' : 'low';
}
