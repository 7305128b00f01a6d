/**
 * Proof of work: `count` small puzzles, each "find c such that SHA-256(salt || i || c) starts
 * with `difficulty` zero bits". Several small puzzles instead of one big one keep the solve
 * time steady (the total of 8 geometric draws varies far less than one). Defaults: 8 x 2^14,
 * about 131,000 hashes: a second or so in JavaScript on a low-end phone, a fraction of that on a
 * laptop, and 8 hashes to check.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { randomHex } from '../../../lib/random-hex.js';
import { widgetDir } from '../widget.js';
import type { Puzzle } from './types.js';

export interface PowParams {
  algorithm: 'sha256';
  /** 16 random bytes, hex. */
  salt: string;
  /** Leading zero bits each hash needs. */
  difficulty: number;
  /** Puzzles to solve. */
  count: number;
}

export const POW_DEFAULTS = { difficulty: 14, count: 8 } as const;

/** The 24 bytes hashed for puzzle `index` and counter `counter`. */
export function powInput(salt: Buffer, index: number, counter: number): Buffer {
  const input = Buffer.alloc(24);
  salt.copy(input, 0, 0, 16);
  input.writeUInt32BE(index, 16);
  input.writeUInt32BE(counter, 20);
  return input;
}

/** Does the digest start with `bits` zero bits? */
export function leadingZeroBits(digest: Buffer, bits: number): boolean {
  const whole = bits >>> 3;
  for (let i = 0; i < whole; i++) if (digest[i] !== 0) return false;
  const rest = bits & 7;
  return rest === 0 || digest[whole] >>> (8 - rest) === 0;
}

/** The widget's solver, as worker.js defines it on `self` (a page without Workers calls the same). */
interface WidgetSolver {
  createSolver(params: PowParams): { counters: number[] };
  step(state: { counters: number[] }, budget: number): boolean;
}
let widgetSolver: WidgetSolver | undefined;

/**
 * Solve by brute force (tests and the bench; pages solve in the widget's Web Worker), with the
 * widget's own solver: worker.js, run in a VM context. Its one-block SHA-256 is about four times
 * faster here than a node:crypto hash object per try, and the service's `check` (node:crypto)
 * then verifies what the widget computes. Throws what the widget throws (work beyond its bound).
 */
export function solvePow(params: PowParams): string {
  if (!widgetSolver) {
    const sandbox = { self: {} as { seclookupPow?: WidgetSolver }, document: {} };
    runInNewContext(readFileSync(join(widgetDir(), 'worker.js'), 'utf8'), sandbox, { filename: 'worker.js' });
    widgetSolver = sandbox.self.seclookupPow!;
  }
  const state = widgetSolver.createSolver(params);
  while (!widgetSolver.step(state, 1 << 30));
  return state.counters.join(',');
}

export function createPowPuzzle(settings: { difficulty?: number; count?: number } = {}): Puzzle<PowParams> {
  const difficulty = settings.difficulty ?? POW_DEFAULTS.difficulty;
  const count = settings.count ?? POW_DEFAULTS.count;
  return {
    type: 'pow',
    create: () => ({ algorithm: 'sha256', salt: randomHex(16), difficulty, count }),
    // The salt is hex: nothing in it to escape.
    json: (p) => `{"algorithm":"${p.algorithm}","salt":"${p.salt}","difficulty":${p.difficulty},"count":${p.count}}`,
    readParams(value) {
      const p = value as Partial<PowParams> | null;
      if (!p || p.algorithm !== 'sha256' || typeof p.salt !== 'string' || !/^[0-9a-f]{32}$/.test(p.salt)) return null;
      if (!Number.isSafeInteger(p.difficulty) || !Number.isSafeInteger(p.count)) return null;
      return p as PowParams;
    },
    check(params, solution) {
      const parts = solution.split(',');
      if (parts.length !== params.count) return `expected ${params.count} counters`;
      const salt = Buffer.from(params.salt, 'hex');
      for (let index = 0; index < parts.length; index++) {
        if (!/^(0|[1-9]\d{0,9})$/.test(parts[index])) return 'a counter is not a whole number';
        const counter = Number(parts[index]);
        if (counter > 0xffffffff) return 'a counter is out of range';
        if (
          !leadingZeroBits(
            createHash('sha256')
              .update(powInput(salt, index, counter))
              .digest(),
            params.difficulty,
          )
        )
          return `counter ${index + 1} does not solve its puzzle`;
      }
      return null;
    },
  };
}
