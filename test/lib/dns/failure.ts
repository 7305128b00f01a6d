import { expect } from 'vitest';
import { isSeclookupError } from '../../../src/errors.js';

/** The SeclookupError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<Error & { code: string }> {
  const error = await promise.then(
    () => expect.unreachable('expected a failure'),
    (e: unknown) => e,
  );
  expect(isSeclookupError(error)).toBe(true);
  return error as Error & { code: string };
}
