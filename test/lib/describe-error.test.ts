import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/lib/describe-error.js';

describe('describeError (the log line of an unexpected error)', () => {
  it('gives the message, the stack and each cause in turn', () => {
    const text = describeError(new Error('meter failed', { cause: new Error('ECONNRESET', { cause: 'socket closed' }) }));
    expect(text).toMatch(/^Error: meter failed\n\s+at /);
    expect(text.split('\ncaused by: ').map((part) => part.split('\n')[0])).toEqual(['Error: meter failed', 'Error: ECONNRESET', 'socket closed']);
  });

  it('stops at a cause that loops back, and after 8 causes, where it overflowed the stack', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(
      describeError(a)
        .split('\ncaused by: ')
        .map((part) => part.split('\n')[0]),
    ).toEqual(['Error: a', 'Error: b', '(the chain of causes loops back here)']);
    let deep: unknown = 'root';
    // Without stacks: 100,000 of them took 1.6 s, and the chain's depth is what is tested.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      for (let i = 0; i < 100_000; i++) deep = new Error(`level ${i}`, { cause: deep });
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    const parts = describeError(deep).split('\ncaused by: ');
    expect(parts).toHaveLength(10);
    expect(parts[9]).toBe('(further causes not shown: over 8)');
  });

  it('never throws on a thrown value that has no text', () => {
    expect(describeError(Object.create(null))).toBe('(a thrown object that cannot be shown as text)');
    expect(
      describeError({
        toString: () => {
          throw new Error('no');
        },
      }),
    ).toBe('(a thrown object that cannot be shown as text)');
    expect(describeError(Symbol('s'))).toBe('Symbol(s)');
    expect(describeError(undefined)).toBe('undefined');
  });
});
