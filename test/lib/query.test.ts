import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../src/lib/query.js';
import { same } from '../cheap-expect.js';

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

/** URLSearchParams' values of the names, in query order, read by the rule: the first non-empty one, else '' if given, else null. */
function firstNonEmpty(reference: URLSearchParams, ...wanted: string[]): string | null {
  const values = [...reference].filter(([name]) => wanted.includes(name)).map(([, value]) => value);
  return values.find((value) => value !== '') ?? (values.length > 0 ? '' : null);
}

describe('parseQuery', () => {
  it('reads every name as URLSearchParams decodes it, on valid and malformed encodings: the first non-empty value of a repeated name', () => {
    fc.assert(
      fc.property(queryText, (search) => {
        const ours = parseQuery(search);
        const reference = new URLSearchParams(search);
        for (const name of [...names, ...reference.keys()]) {
          same(ours.get(name), firstNonEmpty(reference, name));
          same(ours.getEither(name, 'ua'), firstNonEmpty(reference, name, 'ua'));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('lets no empty copy of a parameter hide a value given after it, under either of its names', () => {
    expect(parseQuery('provider=&provider=stripe').get('provider')).toBe('stripe');
    expect(parseQuery('ip=&ip=1.1.1.1&ip=8.8.8.8').get('ip')).toBe('1.1.1.1');
    expect(parseQuery('provider=&provider=').get('provider')).toBe('');
    // In query order, whichever name comes first.
    expect(parseQuery('user_agent=curl/5&ua=curl/6').getEither('ua', 'user_agent')).toBe('curl/5');
    expect(parseQuery('ua=&user_agent=curl/5&ua=curl/6').getEither('ua', 'user_agent')).toBe('curl/5');
    expect(parseQuery('ua=').getEither('ua', 'user_agent')).toBe('');
    expect(parseQuery('x=1').getEither('ua', 'user_agent')).toBeNull();
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
