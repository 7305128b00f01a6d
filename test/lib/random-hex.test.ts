/** The pooled random hex of request ids, captcha nonces, proof ids and pow salts: right length, hex, never repeated, across pool refills. */
import { expect, it } from 'vitest';
import { randomHex } from '../../src/lib/random-hex.js';

it('hands out each pooled byte once: 10,000 ids of 16 bytes (40 texts of 4 KB, from three draws of 64 KB) all distinct, odd sizes across a refill too', () => {
  const ids = Array.from({ length: 10_000 }, () => randomHex(16));
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  expect(new Set(ids).size).toBe(10_000);
  const odd = Array.from({ length: 700 }, () => randomHex(7));
  for (const id of odd) expect(id).toMatch(/^[0-9a-f]{14}$/);
  expect(new Set(odd).size).toBe(700);
  // Not a counter or a constant: both bit values appear in the low bit of one-byte draws.
  const bits = new Set(Array.from({ length: 200 }, () => Number.parseInt(randomHex(1), 16) & 1));
  expect(bits).toEqual(new Set([0, 1]));
});
