/**
 * The widget's proof-of-work solver (src/products/captcha/widget/worker.js, plain browser JS)
 * run in Node through node:vm with a fake worker `self`: its SHA-256 must equal node:crypto's,
 * and its counters must pass a check written independently with node:crypto, the server's
 * rule in PROTOCOL.md: SHA-256(16 salt bytes || u32be(i) || u32be(c)) has `difficulty`
 * leading zero bits, for each i in 0..count-1.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';

const SOURCE = readFileSync(new URL('../../src/products/captcha/widget/worker.js', import.meta.url), 'utf8');

interface Pow {
  sha256(bytes: Uint8Array | number[]): Uint8Array;
  createSolver(params: unknown): { counters: number[]; hashes: number };
  step(state: unknown, budget: number): boolean;
  progress(state: unknown): number;
  meets(hash: Int32Array, difficulty: number): boolean;
}
interface FakeSelf {
  seclookupPow: Pow;
  onmessage?: (event: { data: unknown }) => void;
  postMessage(message: unknown): void;
}

/** worker.js in a fresh context that looks like a worker (a `self`, no `document`). */
function loadWorker(): { self: FakeSelf; messages: Array<Record<string, unknown>> } {
  const messages: Array<Record<string, unknown>> = [];
  const self = { postMessage: (m: Record<string, unknown>) => messages.push(m) } as unknown as FakeSelf;
  vm.runInContext(SOURCE, vm.createContext({ self }), { filename: 'worker.js' });
  return { self, messages };
}

function leadingZeroBits(digest: Buffer): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** The server's check, from the protocol text alone. */
function referenceCheck(saltHex: string, difficulty: number, counters: number[]): boolean {
  const salt = Buffer.from(saltHex, 'hex');
  return counters.every((c, i) => {
    const message = Buffer.alloc(24);
    salt.copy(message, 0);
    message.writeUInt32BE(i, 16);
    message.writeUInt32BE(c, 20);
    return leadingZeroBits(createHash('sha256').update(message).digest()) >= difficulty;
  });
}

describe('captcha widget pow solver (worker.js)', () => {
  it('computes SHA-256 like node:crypto, every length across block boundaries and random sizes', () => {
    const { self } = loadWorker();
    const lengths = [...Array.from({ length: 200 }, (_, n) => n), 447, 448, 511, 512, 1000, 4096, 65_537];
    for (let k = 0; k < 300; k++) lengths.push(Math.floor(Math.random() * 3000));
    for (const n of lengths) {
      const input = randomBytes(n);
      const ours = Buffer.from(self.seclookupPow.sha256(input)).toString('hex');
      expect(ours, `length ${n}`).toBe(createHash('sha256').update(input).digest('hex'));
    }
    // Plain arrays too (the widget never needs them, but the function says it takes them).
    expect(Buffer.from(self.seclookupPow.sha256([0x61, 0x62, 0x63])).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('solves through the worker message path; the counters pass the reference check', () => {
    const { self, messages } = loadWorker();
    expect(typeof self.onmessage).toBe('function');
    for (const difficulty of [0, 1, 8, 12, 14]) {
      const salt = randomBytes(16).toString('hex');
      messages.length = 0;
      self.onmessage!({ data: { algorithm: 'sha256', salt, difficulty, count: 8 } });
      const done = messages.at(-1)!;
      expect(done.type).toBe('done');
      const counters = done.counters as number[];
      expect(counters).toHaveLength(8);
      expect(counters.every((c) => Number.isInteger(c) && c >= 0 && c < 2 ** 32)).toBe(true);
      expect(referenceCheck(salt, difficulty, counters), `difficulty ${difficulty}`).toBe(true);
      // Each counter is the first that works: one less would also pass the reference otherwise.
      for (const [i, c] of counters.entries()) {
        if (c > 0) expect(referenceCheck(salt, difficulty, [...counters.slice(0, i), c - 1, ...counters.slice(i + 1)])).toBe(false);
      }
      const progress = messages.filter((m) => m.type === 'progress').map((m) => m.p as number);
      expect(progress.every((p, k) => p >= 0 && p <= 1 && (k === 0 || p >= progress[k - 1]))).toBe(true);
    }
  });

  it('counts leading zero bits across words (difficulty above 32)', () => {
    const { meets } = loadWorker().self.seclookupPow;
    const h = (...words: number[]) => Int32Array.from([...words, 0, 0, 0, 0, 0, 0].slice(0, 8));
    expect(meets(h(0x0000ffff), 16)).toBe(true);
    expect(meets(h(0x0000ffff), 17)).toBe(false);
    expect(meets(h(0, 0x00ffffff), 40)).toBe(true);
    expect(meets(h(0, 0x01ffffff), 40)).toBe(false);
    expect(meets(h(0, 0), 64)).toBe(true);
    expect(meets(h(0xffffffff | 0), 0)).toBe(true);
    expect(meets(h(0x80000000 | 0), 1)).toBe(false);
    expect(meets(h(0x7fffffff), 1)).toBe(true);
  });

  it('handles upper-case salts and many puzzles', () => {
    const { self } = loadWorker();
    const pow = self.seclookupPow;
    const salt = randomBytes(16).toString('hex').toUpperCase();
    const state = pow.createSolver({ salt, difficulty: 6, count: 200 });
    while (!pow.step(state, 10_000));
    expect(referenceCheck(salt, 6, state.counters)).toBe(true);
    expect(pow.progress(state)).toBe(1);
  });

  it('refuses params it cannot solve, as an error message (the widget then reports solver_error)', () => {
    const { self, messages } = loadWorker();
    for (const bad of [
      null,
      { salt: 'zz'.repeat(16), difficulty: 14, count: 8 },
      { salt: 'ab'.repeat(15), difficulty: 14, count: 8 },
      { salt: 'ab'.repeat(16), difficulty: 65, count: 8 },
      { salt: 'ab'.repeat(16), difficulty: 14, count: 0 },
      { salt: 'ab'.repeat(16), difficulty: 1.5, count: 8 },
    ]) {
      messages.length = 0;
      self.onmessage!({ data: bad });
      expect(messages).toEqual([expect.objectContaining({ type: 'error' })]);
    }
  });

  it('defines only seclookupPow (no onmessage) when loaded as a page script', () => {
    const self = {} as FakeSelf;
    vm.runInContext(SOURCE, vm.createContext({ self, document: {} }));
    expect(typeof self.seclookupPow.sha256).toBe('function');
    expect(self.onmessage).toBeUndefined();
  });
});
