/** The remembered ISO formatter writes exactly what `Date#toISOString` writes, whatever the order of the times it is given. */
import { expect, it } from 'vitest';
import { createIsoFormatter } from '../../src/lib/iso-time.js';

const iso = (ms: number) => new Date(ms).toISOString();

it('matches toISOString millisecond by millisecond across seconds, minutes, days and years', () => {
  const format = createIsoFormatter();
  const edges = [Date.UTC(2026, 11, 31, 23, 59, 58, 990), Date.UTC(2028, 1, 28, 23, 59, 59, 0), 0, 1_000];
  for (const start of edges) for (let ms = start; ms < start + 2_100; ms++) expect(format(ms)).toBe(iso(ms));
});

it('matches toISOString for times out of order, repeated, before 1970, past year 9999 and not whole', () => {
  const format = createIsoFormatter();
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const times = [-1, -999, -1_000, -1_001, -86_400_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15, 1_700_000_000_000.5];
  for (let i = 0; i < 3_000; i++) times.push(Math.floor((random() - 0.2) * 4.2e12), times[Math.floor(random() * times.length)]);
  for (const ms of times) expect(format(ms)).toBe(iso(ms));
});

it('throws as toISOString does on a time out of range', () => {
  const format = createIsoFormatter();
  expect(() => format(Number.NaN)).toThrow(RangeError);
  expect(() => format(8.64e15 + 1)).toThrow(RangeError);
  expect(() => format(-8.64e15 - 1)).toThrow(RangeError);
  expect(format(8.64e15)).toBe(iso(8.64e15));
  expect(format(5)).toBe(iso(5));
});

it('writes another zone in place of Z, the same way', () => {
  const format = createIsoFormatter('+00:00');
  for (const ms of [0, 999, 1_000, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), 1_700_000_000_000.5, -1])
    expect(format(ms)).toBe(iso(ms).replace(/Z$/, '+00:00'));
});
