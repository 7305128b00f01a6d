/**
 * Shared bench machinery: time a function for a fixed wall-clock budget and report ops/s.
 * Every bench file exports `run(): Promise<BenchRow[]>`; bench/run.ts prints and saves them.
 */

export interface BenchRow {
  /** Which hot path, e.g. `useragent engine`. */
  suite: string;
  /** The workload, e.g. `cold (unique UAs)`. */
  case: string;
  /** What the baseline is, e.g. `raw UAParser + isbot`. Empty when the row is absolute. */
  baseline: string;
  opsPerSec: number;
  baselineOpsPerSec: number | null;
  /** opsPerSec / baselineOpsPerSec. */
  ratio: number | null;
  /** The goal, e.g. `>= 0.83x` or `>= 2,000,000/s`. */
  target: string;
  met: boolean;
}

/** Markdown sections a suite adds below the table (the routes suite's CPU budget and memory). */
export const reportSections: string[] = [];

export interface MeasureOptions {
  /** Wall-clock budget per measurement. @default 1000 ms */
  durationMs?: number;
  /** Calls per timing batch; keeps clock reads off the measured path. @default 1000 */
  batch?: number;
  /** Untimed calls first, so the JIT settles. @default 1 batch x 20 */
  warmupBatches?: number;
}

/** Operations per second of `fn(i)`; `i` counts up so callers can walk a corpus. */
export function measure(fn: (i: number) => unknown, options: MeasureOptions = {}): number {
  const durationMs = options.durationMs ?? 1000;
  const batch = options.batch ?? 1000;
  const warmup = options.warmupBatches ?? 20;
  let i = 0;
  let sink: unknown;
  for (let b = 0; b < warmup; b++) for (let k = 0; k < batch; k++) sink = fn(i++);
  let ops = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(durationMs) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let k = 0; k < batch; k++) sink = fn(i++);
    ops += batch;
    now = process.hrtime.bigint();
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return ops / (Number(now - start) / 1e9);
}

/** Async variant for functions that return promises; awaits each call. */
export async function measureAsync(fn: (i: number) => Promise<unknown>, options: MeasureOptions = {}): Promise<number> {
  const durationMs = options.durationMs ?? 1000;
  const batch = options.batch ?? 1000;
  const warmup = options.warmupBatches ?? 20;
  let i = 0;
  for (let b = 0; b < warmup; b++) for (let k = 0; k < batch; k++) await fn(i++);
  let ops = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(durationMs) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let k = 0; k < batch; k++) await fn(i++);
    ops += batch;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - start) / 1e9);
}

/**
 * Measure a candidate and its baseline alternately, several rounds each, and keep each one's
 * best round: interleaving cancels most of the drift of a shared, noisy machine.
 */
export function compare(
  candidate: (i: number) => unknown,
  baseline: (i: number) => unknown,
  rounds = 3,
  options: MeasureOptions = {},
): { candidate: number; baseline: number } {
  let best = { candidate: 0, baseline: 0 };
  for (let r = 0; r < rounds; r++) {
    best = {
      baseline: Math.max(best.baseline, measure(baseline, options)),
      candidate: Math.max(best.candidate, measure(candidate, options)),
    };
  }
  return best;
}

/** Deterministic PRNG (mulberry32) returning [0, 1), so every run draws the same sequence. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function ratioRow(row: Omit<BenchRow, 'ratio' | 'met'>, minRatio: number): BenchRow {
  const ratio = row.baselineOpsPerSec ? row.opsPerSec / row.baselineOpsPerSec : null;
  return { ...row, ratio, met: ratio !== null && ratio >= minRatio };
}

export function absoluteRow(row: Omit<BenchRow, 'ratio' | 'met' | 'baseline' | 'baselineOpsPerSec'>, minOpsPerSec: number): BenchRow {
  return { ...row, baseline: '', baselineOpsPerSec: null, ratio: null, met: row.opsPerSec >= minOpsPerSec };
}
