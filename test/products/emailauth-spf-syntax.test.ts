/**
 * SPF records against RFC 7208's grammar (src/products/emailauth/spf-syntax.ts), one row per rule:
 * well-formed records that must pass, and records that break one rule each, with the reason given.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spfSyntaxError } from '../../src/products/emailauth/spf-syntax.js';

describe('spfSyntaxError', () => {
  it.each([
    ['the bare version', 'v=spf1'],
    ['upper-case names (ABNF strings are case-insensitive)', 'V=SPF1 A MX -ALL'],
    ['every qualifier', 'v=spf1 +a -mx ?ptr ~all'],
    ['several spaces between terms and trailing spaces', 'v=spf1  a   -all  '],
    ['include, exists, ptr with domain-specs', 'v=spf1 include:_spf.example.net exists:%{i}.bl.example.org ptr:example.com -all'],
    ['a and mx with ip4 and ip6 cidr lengths', 'v=spf1 a/24 a:mail.example.com/32//64 mx//128 mx:example.com/0 -all'],
    ['ip4 and ip6 networks, IPv4-mapped and embedded forms', 'v=spf1 ip4:192.0.2.0/24 ip4:10.0.0.1 ip6:2001:db8::/32 ip6:::ffff:1.2.3.4 ip6:::1.1.1.1/0 -all'],
    ['a domain-spec ending in a dot, or a hyphenated top label', 'v=spf1 a:example.com. a:foo.example.xn--p1ai -all'],
    ['macros, a domain-spec ending in one, and the %% %_ %- escapes', 'v=spf1 exists:%{ir}.%{l1r+-}._spf.%{d} a:%{d2} exists:%%%_%-.example.com -all'],
    ['redirect and exp once each, unknown modifiers any number of times', 'v=spf1 redirect=_spf.example.com exp=explain.%{d} foo=bar foo=%{s} x.y-z_=1'],
  ])('accepts %s', (_name, record) => {
    expect(spfSyntaxError(record)).toBeNull();
  });

  it.each([
    ['non-ASCII text (RFC 7208 3.1)', 'v=spf1 a:ïcaramba.example.com -all', 'non-ASCII character in the record'],
    ['a control character', 'v=spf1 a\t-all', 'control character U+0009 in the record'],
    ['an unknown mechanism', 'v=spf1 a foo -all', 'unknown mechanism "foo" in "foo"'],
    ['two qualifiers', 'v=spf1 +-all', 'not a mechanism or modifier in "+-all"'],
    ['all with an argument', 'v=spf1 -all:foo', 'all takes no argument in "-all:foo"'],
    ['include without a domain-spec', 'v=spf1 include: -all', 'empty include domain-spec in "include:"'],
    ['a domain-spec without a top label', 'v=spf1 a:localhost -all', 'a domain-spec "localhost" does not end in a top label or a macro in "a:localhost"'],
    ['an all-numeric top label', 'v=spf1 mx:example.123 -all', 'mx domain-spec "example.123" ends in "123", not a valid top label in "mx:example.123"'],
    ['an ip4 cidr length over 32', 'v=spf1 a/33 -all', 'cidr length /33 over 32 in "a/33"'],
    ['an ip6 cidr length over 128', 'v=spf1 ip6:2001:db8::/129 -all', 'cidr length /129 over 128 in "ip6:2001:db8::/129"'],
    ['a cidr length with a leading zero', 'v=spf1 ip4:192.0.2.0/024 -all', 'ip4 cidr length "/024" is not a number in "ip4:192.0.2.0/024"'],
    ['a bad IPv4 network', 'v=spf1 ip4:192.0.2.256 -all', 'ip4 address "192.0.2.256" is not valid in "ip4:192.0.2.256"'],
    ['a bad IPv6 network', 'v=spf1 ip6:2001:db8:::1 -all', 'ip6 address "2001:db8:::1" is not valid in "ip6:2001:db8:::1"'],
    ['an IPv6 zone id', 'v=spf1 ip6:fe80::1%eth0 -all', 'ip6 address "fe80::1%eth0" is not valid in "ip6:fe80::1%eth0"'],
    ['redirect twice (RFC 7208 6)', 'v=spf1 redirect=a.example.com redirect=b.example.com', 'redirect= appears more than once in "redirect=b.example.com"'],
    ['exp twice (RFC 7208 6)', 'v=spf1 -all exp=a.example.com exp=b.example.com', 'exp= appears more than once in "exp=b.example.com"'],
    ['an empty redirect', 'v=spf1 redirect=', 'empty redirect= domain-spec in "redirect="'],
    ['a modifier name starting with a digit', 'v=spf1 1x=y -all', 'unknown mechanism "1x" in "1x=y"'],
    ['a bare percent sign', 'v=spf1 exists:%i.example.com -all', '"%" not followed by "{", "%", "_" or "-" in "exists:%i.example.com"'],
    ['an unclosed macro', 'v=spf1 exists:%{i.example.com -all', 'malformed macro "%{i.example.com" in "exists:%{i.example.com"'],
    ['an unknown macro letter', 'v=spf1 exists:%{x}.example.com -all', 'macro letter "x" not allowed here in "exists:%{x}.example.com"'],
    [
      'an exp-only macro letter outside exp text (RFC 7208 7.2)',
      'v=spf1 exists:%{c}.example.com -all',
      'macro letter "c" not allowed here in "exists:%{c}.example.com"',
    ],
    ['a bad macro in an unknown modifier', 'v=spf1 -all foo=%{q}', 'macro letter "q" not allowed here in "foo=%{q}"'],
  ])('refuses %s', (_name, record, reason) => {
    expect(spfSyntaxError(record)).toBe(reason);
  });

  it('answers any text with null or a reason, never throwing (hostile DNS data)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (tail) => {
        const answer = spfSyntaxError(`v=spf1 ${tail}`);
        expect(answer === null || (typeof answer === 'string' && answer.length > 0)).toBe(true);
      }),
      { numRuns: 2_000, seed: 20_261_127 },
    );
  });

  it('accepts any record built from well-formed terms joined by runs of spaces', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
    const domain = fc.tuple(label, label).map(([a, b]) => `${a}.${b}.com`);
    const octet = fc.integer({ min: 0, max: 255 });
    const term = fc.oneof(
      fc.constantFrom('all', '-all', '~all', '?all', '+a', 'mx', 'ptr', 'a/24', 'mx//64', 'a/0//0'),
      domain.map((d) => `include:${d}`),
      domain.map((d) => `a:${d}/32//128`),
      domain.map((d) => `exists:%{ir}.%{l1r-}.${d}`),
      fc.tuple(octet, octet, octet, octet, fc.integer({ min: 0, max: 32 })).map(([a, b, c, d, n]) => `ip4:${a}.${b}.${c}.${d}/${n}`),
      fc.integer({ min: 0, max: 128 }).map((n) => `ip6:2001:db8::/${n}`),
      domain.map((d) => `x-note=${d}`),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(term, fc.integer({ min: 1, max: 3 })), { maxLength: 12 }), (terms) => {
        const record = 'v=spf1' + terms.map(([t, spaces]) => ' '.repeat(spaces) + t).join('');
        expect(spfSyntaxError(record)).toBeNull();
      }),
      { numRuns: 500, seed: 20_261_127 },
    );
  });
});
