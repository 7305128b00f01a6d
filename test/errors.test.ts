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

  it('holds what a stackless new LookupError holds: its keys, JSON, equality and text', () => {
    const made = refusal('invalid_token', 'the response is not a valid captcha token', { fields: { 'error-codes': ['invalid-input-response'] } });
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const constructed = new LookupError('invalid_token', 'the response is not a valid captcha token', {
      fields: { 'error-codes': ['invalid-input-response'] },
    });
    Error.stackTraceLimit = limit;
    expect(Object.keys(made)).toEqual(Object.keys(constructed));
    expect(JSON.stringify(made)).toBe(JSON.stringify(constructed));
    expect(made).toEqual(constructed);
    expect(made).toBeInstanceOf(Error);
    expect(Object.prototype.toString.call(made)).toBe('[object Error]');
    expect(String(made)).toBe('LookupError: the response is not a valid captcha token');
    expect(made.stack).toBe('LookupError: the response is not a valid captcha token');
    expect(Object.getOwnPropertyDescriptor(made, 'message')).toBeUndefined();
    expect('cause' in made).toBe(false);
    // A cause, when given, is own and not enumerated, as on an Error.
    const cause = new Error('reset');
    const cut = refusal('client_closed_request', 'the client closed the connection', { cause });
    expect(cut.cause).toBe(cause);
    expect(Object.keys(cut)).not.toContain('cause');
    expect(() => {
      throw cut;
    }).toThrow(LookupError);
  });
});
