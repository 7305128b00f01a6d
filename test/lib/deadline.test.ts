import { describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { checkMs, createDeadlineGroup, MAX_TIMER_MS, resolveTimeouts, withDeadline } from '../../src/lib/deadline.js';

const never = () => new Promise<never>(() => {});
const later = <T>(value: T, ms: number) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('withDeadline', () => {
  it('passes a prompt answer through and fails a late one with code timeout', async () => {
    expect(await withDeadline(Promise.resolve(7), 50, 'x')).toBe(7);
    const error = await withDeadline(never(), 20, 'the DNS server').catch((e: unknown) => e);
    expect(isSeclookupError(error, 'timeout')).toBe(true);
    expect((error as Error).message).toContain('the DNS server');
  });

  it('hands a result that arrives after the deadline to onLate', async () => {
    const late: number[] = [];
    await withDeadline(later(5, 60), 10, 'x', (value) => late.push(value)).catch(() => {});
    await later(null, 100);
    expect(late).toEqual([5]);
  });
});

describe('createDeadlineGroup', () => {
  it('bounds every call with one sweep, passing errors and values through', async () => {
    const bounded = createDeadlineGroup(40, 'the meter store');
    const late: string[] = [];
    const results = await Promise.allSettled([
      bounded(Promise.resolve('a')),
      bounded(Promise.reject(new Error('boom'))),
      bounded(never()),
      bounded(later('slow', 150), (v) => late.push(v)),
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'a' });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'boom' } });
    expect(isSeclookupError((results[2] as PromiseRejectedResult).reason, 'timeout')).toBe(true);
    expect(isSeclookupError((results[3] as PromiseRejectedResult).reason, 'timeout')).toBe(true);
    await later(null, 200);
    expect(late).toEqual(['slow']);
  });
});

describe('resolveTimeouts', () => {
  it('fills defaults, keeps connect within total, and refuses nonsense with invalid_option', () => {
    expect(resolveTimeouts(undefined)).toEqual({ connectMs: 3_000, totalMs: 10_000 });
    expect(resolveTimeouts({ totalMs: 1_000 })).toEqual({ connectMs: 1_000, totalMs: 1_000 });
    expect(resolveTimeouts({ connectMs: 500, totalMs: 2_000 })).toEqual({ connectMs: 500, totalMs: 2_000 });
    for (const bad of [{ totalMs: 0 }, { connectMs: -1 }, { totalMs: 1.5 }, { totalMs: Number.NaN }]) {
      let thrown: unknown;
      try {
        resolveTimeouts(bad, undefined, 'dns');
      } catch (error) {
        thrown = error;
      }
      expect(isSeclookupError(thrown, 'invalid_option')).toBe(true);
      expect((thrown as Error).message).toMatch(/^dns\./);
    }
  });
});

describe('checkMs', () => {
  it("refuses 2^31 ms or more, which Node's timers would fire at once (every request timing out)", () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(checkMs(MAX_TIMER_MS, 'x')).toBe(MAX_TIMER_MS);
    for (const value of [2 ** 31, 2 ** 40]) {
      expect(() => checkMs(value, 'timeouts.totalMs')).toThrow(`timeouts.totalMs must be at most 2147483647 milliseconds, about 24.8 days (got ${value})`);
      expect(() => resolveTimeouts({ totalMs: value })).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    }
  });
});
