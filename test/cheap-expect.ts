/**
 * Assertions for checks that run thousands of times (property tests, loops over a dataset).
 * Each `expect(...)` costs vitest several microseconds of bookkeeping, more than most checks it
 * makes: these build the expectation only when the plain check already says it fails, so a
 * failure reports through the same matcher with the same message, and a pass builds nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/** `expect(actual, where).toBe(expected)` */
export function same(actual: unknown, expected: unknown, where?: string): void {
  if (!Object.is(actual, expected)) expect(actual, where).toBe(expected);
}

/** `expect(actual, where).toEqual(expected)`: strict deep equality implies it; otherwise toEqual decides. */
export function equal(actual: unknown, expected: unknown, where?: string): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, where).toEqual(expected);
}

/** `expect(actual, where).toBeNull()` */
export function none(actual: unknown, where?: string): void {
  if (actual !== null) expect(actual, where).toBeNull();
}

/** `expect(actual, where).toBeLessThanOrEqual(limit)` */
export function atMost(actual: number, limit: number, where?: string): void {
  if (!(actual <= limit)) expect(actual, where).toBeLessThanOrEqual(limit);
}

/** `expect(actual, where).toBeGreaterThanOrEqual(floor)` */
export function atLeast(actual: number, floor: number, where?: string): void {
  if (!(actual >= floor)) expect(actual, where).toBeGreaterThanOrEqual(floor);
}

/** `expect(list, where).toContain(item)`, on an array or a string. */
export function contains(list: readonly string[] | string, item: string, where?: string): void {
  if (!list.includes(item)) expect(list, where).toContain(item);
}

/** `expect(fn, where).not.toThrow()`, calling fn once: the matcher is handed what it threw, if it threw. */
export function returns(fn: () => unknown, where?: string): void {
  try {
    fn();
  } catch (error) {
    expect(() => {
      throw error;
    }, where).not.toThrow();
  }
}

/** `expect(fn, where).toThrow(type)`, calling fn once: the matcher is handed what it did when that was not throwing a `type`. */
export function throwsA(fn: () => unknown, type: new (...args: never[]) => Error, where?: string): void {
  let threw = false;
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    threw = true;
    thrown = error;
  }
  if (!(threw && thrown instanceof type)) {
    expect(() => {
      if (threw) throw thrown;
    }, where).toThrow(type);
  }
}
