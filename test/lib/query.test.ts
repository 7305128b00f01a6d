import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/lib/query.js';

/** Query text built from pieces that exercise every decoding rule, valid and broken. */
const queryText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'a',
        'ua',
        'ip',
        '=',
        '&',
        '+',
        '?',
        '%',
        '%2',
        '%20',
        '%2B',
        '%26',
        '%3D',
        '%C3%A9',
        '%E2%82%AC',
        '%F0%9F%98%80',
        '%FF',
        '%C3',
        '%ED%A0%80',
        '%zz',
      ),
      fc.string({ maxLength: 3 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

const names = ['a', 'ua', 'ip', '', ' ', '+', 'a a', 'é', '€', '?a', 'x'];

describe('parseQuery', () => {
  it('reads every name exactly as URLSearchParams does, on valid and malformed encodings', () => {
    fc.assert(
      fc.property(queryText, (search) => {
        const ours = parseQuery(search);
        const reference = new URLSearchParams(search);
        for (const name of [...names, ...reference.keys()]) expect(ours.get(name)).toBe(reference.get(name));
      }),
      { numRuns: 3000 },
    );
  });

  it('decodes a percent-encoded User-Agent, + as space, and keeps the first of repeated names', () => {
    const ua = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0.0.0 Safari/537.36';
    const query = parseQuery(`ua=${encodeURIComponent(ua)}&ua=second&q=a+b%2Bc&flag&=empty`);
    expect(query.get('ua')).toBe(ua);
    expect(query.get('q')).toBe('a b+c');
    expect(query.get('flag')).toBe('');
    expect(query.get('')).toBe('empty');
    expect(query.get('missing')).toBeNull();
  });

  it('keeps malformed escapes as text and replaces invalid UTF-8, like URLSearchParams', () => {
    expect(parseQuery('v=100%').get('v')).toBe('100%');
    expect(parseQuery('v=%zz%41').get('v')).toBe('%zzA');
    expect(parseQuery('v=%FF').get('v')).toBe('\uFFFD');
  });
});
