import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/api/auth.js';

/** The rule bearerToken implements, as the regex it replaced. */
const reference = (header: string) => /^\s*bearer\s+(\S+)\s*$/i.exec(header)?.[1];

describe('bearerToken', () => {
  it('reads `Bearer <key>` exactly as the reference regex does', () => {
    const piece = fc.oneof(
      fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'ua_sec_abc', ' ', '  ', '\t', '\u00a0', '\u2003', '\n', 'x', 'b', 'bearerx'),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (parts) => {
        const header = parts.join('');
        expect(bearerToken({ authorization: header })).toBe(reference(header));
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the key, ignores the scheme case and surrounding whitespace, and rejects other shapes', () => {
    expect(bearerToken({ authorization: 'Bearer ua_sec_abc' })).toBe('ua_sec_abc');
    expect(bearerToken({ authorization: '  bEaReR \t ua_sec_abc  ' })).toBe('ua_sec_abc');
    expect(bearerToken({ authorization: 'Bearer' })).toBeUndefined();
    expect(bearerToken({ authorization: 'Bearerua_sec_abc' })).toBeUndefined();
    expect(bearerToken({ authorization: 'Bearer a b' })).toBeUndefined();
    expect(bearerToken({ authorization: 'Basic dXNlcjpwYXNz' })).toBeUndefined();
    expect(bearerToken({})).toBeUndefined();
    expect(bearerToken({ authorization: ['Bearer first', 'Bearer second'] })).toBe('first');
  });
});
