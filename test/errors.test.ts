/** The error classes: LookupError's fields, and `refusal`, the API's stack-free LookupError. */
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, isLookupError, LookupError, refusal } from '../src/errors.js';

describe('refusal', () => {
  it('is a LookupError with the code, status, message and fields, but no stack frames', () => {
    const error = refusal('rate_limit_exceeded', 'per-minute rate limit exceeded', { fields: { extra: 1 } });
    expect(error).toBeInstanceOf(LookupError);
    expect(isLookupError(error)).toBe(true);
    expect([error.code, error.status, error.message, error.fields]).toEqual(['rate_limit_exceeded', 429, 'per-minute rate limit exceeded', { extra: 1 }]);
    expect(error.stack).not.toMatch(/\n\s+at /);
    // A LookupError made the usual way still has its frames, and the limit is left as it was.
    const limit = Error.stackTraceLimit;
    expect(new LookupError('invalid_ip', 'x').stack).toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(ERROR_STATUS[refusal('not_found', 'no such route').code]).toBe(404);
  });
});
