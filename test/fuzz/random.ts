/**
 * A small seeded random source for the fuzz run: every hostile server and input generator draws
 * from one, so a run with the same seed asks and answers the same things (request order aside).
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, max). */
  int(max: number): number;
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
  bytes(length: number): Buffer;
}

/** mulberry32: tiny, fast and good enough to pick behaviours. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  return {
    next,
    int,
    pick: (items) => items[int(items.length)],
    chance: (p) => next() < p,
    bytes: (length) => {
      const out = Buffer.alloc(length);
      for (let i = 0; i < length; i++) out[i] = int(256);
      return out;
    },
  };
}
