/**
 * A site key's risk policy: what the risk of a visitor costs them. Two settings:
 * - `scaleDifficulty`: the proof of work grows with the risk seen when the challenge is issued
 *   (as ALTCHA and Cap do), 4x the expected work per level, at most 16x (`POW_DIFFICULTY`);
 * - `blockAt`: siteverify refuses a proof whose risk score is at least this (403
 *   `risk_too_high`), so server code that checks only `success` does not let a bot through.
 * Both on by default (`DEFAULT_RISK_POLICY`), also for site keys stored before the setting
 * existed.
 */
import { invalidOption } from '../../errors.js';
import { POW_DEFAULTS } from './puzzles/pow.js';
import type { RiskLevel } from './risk.js';

/** A site key's risk policy (`SiteKeyConfig.risk`). */
export interface RiskPolicy {
  /** Siteverify answers 403 `risk_too_high` for a risk score at or above this (1-100); null: never. @default 60 (level high) */
  blockAt: number | null;
  /** Harder proof of work for riskier visitors (4x per risk level). @default true */
  scaleDifficulty: boolean;
}

export const DEFAULT_RISK_POLICY: Readonly<RiskPolicy> = Object.freeze({ blockAt: 60, scaleDifficulty: true });

/**
 * Leading zero bits of each of the 8 pow puzzles, by the risk level seen at challenge time.
 * Expected SHA-256 in all: low 131,072 (about a second in JavaScript on a low-end phone),
 * medium 524,288, high 2,097,152 (about 16 s there: slow, but a person still gets through).
 */
export const POW_DIFFICULTY: Readonly<Record<RiskLevel, number>> = Object.freeze({
  low: POW_DEFAULTS.difficulty,
  medium: POW_DEFAULTS.difficulty + 2,
  high: POW_DEFAULTS.difficulty + 4,
});

/** The policy in force for a stored setting (absent or partial: the defaults fill in). */
export function riskPolicyOf(stored: Partial<RiskPolicy> | undefined): RiskPolicy {
  return {
    blockAt: stored?.blockAt === undefined ? DEFAULT_RISK_POLICY.blockAt : stored.blockAt,
    scaleDifficulty: stored?.scaleDifficulty ?? DEFAULT_RISK_POLICY.scaleDifficulty,
  };
}

/** Check an operator's change to a policy and merge it over `base`; throws invalid_option naming the bad value. */
export function mergeRiskPolicy(base: RiskPolicy, change: Partial<RiskPolicy> | undefined): RiskPolicy {
  if (change === undefined) return base;
  const next = { ...base };
  if (change.blockAt !== undefined) {
    const value = change.blockAt;
    if (value !== null && !(Number.isInteger(value) && value >= 1 && value <= 100))
      throw invalidOption(`risk.blockAt must be a whole number from 1 to 100, or null to never refuse (got ${JSON.stringify(value)})`);
    next.blockAt = value;
  }
  if (change.scaleDifficulty !== undefined) {
    if (typeof change.scaleDifficulty !== 'boolean')
      throw invalidOption(`risk.scaleDifficulty must be true or false (got ${JSON.stringify(change.scaleDifficulty)})`);
    next.scaleDifficulty = change.scaleDifficulty;
  }
  return next;
}

/** The pow difficulty for a challenge issued at `level` under `policy`. */
export function powDifficulty(policy: RiskPolicy, level: RiskLevel): number {
  return policy.scaleDifficulty ? POW_DIFFICULTY[level] : POW_DIFFICULTY.low;
}

/** Does the policy refuse a proof of this score at siteverify? */
export function riskBlocked(policy: RiskPolicy, score: number): boolean {
  return policy.blockAt !== null && score >= policy.blockAt;
}
