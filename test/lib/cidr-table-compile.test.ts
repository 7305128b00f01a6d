/**
 * compileCidrTable reads the common CIDR forms itself (IPv4 as plain numbers, strict colon-hex
 * IPv6) and every other form through parseCidr. Both roads must build the same table: the same
 * CIDR written so that it takes the other road (IPv4-mapped, padded with spaces) compiles to the
 * same arrays, and the table answers what a linear scan over the entries answers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileCidrTable, createCidrTable, type CidrTableEntry } from '../../src/lib/cidr-table.js';
import { parseIp } from '../../src/lib/ip.js';

const SEED = 20260101;

const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const mappedDotted = (n: number, bits: number) => `::ffff:${v4Text(n)}/${96 + bits}`;
const mappedHex = (n: number, bits: number) => `::ffff:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}/${96 + bits}`;

/** The same CIDR in forms that take parseCidr's road, not the IPv4 number one. */
const V4_FORMS: ((n: number, bits: number) => string)[] = [mappedDotted, mappedHex, (n, bits) => ` ${v4Text(n)}/${bits} `];

/** The network containing `n` under a prefix of `bits`, by plain arithmetic (the reference). */
const networkOf = (n: number, bits: number) => n - (n % 2 ** (32 - bits));

const v4Cidr = fc.record({
  base: fc.integer({ min: 0, max: 0xffffffff }), // host bits often set
  bits: fc.oneof(fc.constantFrom(0, 1, 31, 32), fc.integer({ min: 0, max: 32 })),
  value: fc.integer({ min: 0, max: 4 }), // a small pool, so values repeat
  form: fc.integer({ min: 0, max: V4_FORMS.length }), // V4_FORMS.length: the plain form
});
type V4Cidr = { base: number; bits: number; value: number; form: number };

const plain = (c: V4Cidr) => `${v4Text(c.base)}/${c.bits}`;
const written = (c: V4Cidr) => (c.form < V4_FORMS.length ? V4_FORMS[c.form](c.base, c.bits) : plain(c));

describe('compileCidrTable: the IPv4 number road and parseCidr agree', () => {
  it('a CIDR compiles the same written plainly, IPv4-mapped (dotted or hex) or padded', () => {
    fc.assert(
      fc.property(fc.array(v4Cidr, { minLength: 1, maxLength: 20 }), (cidrs) => {
        const expected = compileCidrTable(cidrs.map((c) => ({ cidr: plain(c), value: c.value })));
        for (const form of V4_FORMS) {
          expect(compileCidrTable(cidrs.map((c) => ({ cidr: form(c.base, c.bits), value: c.value })))).toEqual(expected);
        }
        expect(compileCidrTable(cidrs.map((c) => ({ cidr: written(c), value: c.value })))).toEqual(expected);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('answers like a linear scan, whatever the forms', () => {
    fc.assert(
      fc.property(
        fc.array(v4Cidr, { minLength: 1, maxLength: 20 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), fc.boolean()), { minLength: 1, maxLength: 20 }),
        (cidrs, probes) => {
          const table = createCidrTable(cidrs.map((c) => ({ cidr: written(c), value: c.value })));
          for (const [pick, noise, inside] of probes) {
            const c = cidrs[pick % cidrs.length];
            // An address inside a CIDR (its network plus random host bits), or anywhere.
            const n = inside ? networkOf(c.base, c.bits) + (noise % 2 ** (32 - c.bits)) : noise;
            const expected: number[] = [];
            for (const e of cidrs) if (networkOf(n, e.bits) === networkOf(e.base, e.bits) && !expected.includes(e.value)) expected.push(e.value);
            expect(table.matchIPv4(n)).toEqual(expected);
            expect(table.match(parseIp(v4Text(n))!)).toEqual(expected);
          }
        },
      ),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('an IPv6 CIDR compiles the same through the quick colon-hex reader and through parseCidr', () => {
    const group = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    const v6Cidr = fc.record({
      parts: fc.array(group, { minLength: 8, maxLength: 8 }),
      bits: fc.oneof(fc.constantFrom(0, 1, 127, 128), fc.integer({ min: 0, max: 128 })),
      value: fc.integer({ min: 0, max: 4 }),
    });
    fc.assert(
      fc.property(fc.array(v6Cidr, { minLength: 1, maxLength: 20 }), (cidrs) => {
        const text = (parts: number[]) => parts.map((p) => p.toString(16)).join(':');
        const quick = cidrs.map((c) => ({ cidr: `${text(c.parts)}/${c.bits}`, value: c.value }));
        const padded = quick.map((e) => ({ ...e, cidr: ` ${e.cidr}` })); // only parseCidr trims
        expect(compileCidrTable(padded)).toEqual(compileCidrTable(quick));
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});

describe('compileCidrTable: edges of the IPv4 number road', () => {
  const compiled = (cidrs: string[]) => compileCidrTable(cidrs.map((cidr, i): CidrTableEntry<number> => ({ cidr, value: i })));

  it('reads host bits, /0, /32 and the top address like their networks', () => {
    expect(compiled(['10.1.2.3/8'])).toEqual(compiled(['10.0.0.0/8']));
    expect(compiled(['203.0.113.77/0'])).toEqual(compiled(['0.0.0.0/0']));
    expect(compiled(['255.255.255.255'])).toEqual(compiled(['255.255.255.255/32']));
    const table = compiled(['0.0.0.0/0', '255.255.255.255/32', '0.0.0.0/32']);
    expect([...table.starts4]).toEqual([0, 1, 0xffffffff]);
    expect(table.answers).toEqual([[], [0, 2], [0], [0, 1]]);
    expect([...table.answers4]).toEqual([1, 2, 3]);
  });

  it('keeps what parseCidr does with IPv4-mapped CIDRs: the IPv4 CIDR, and a /90 as 0.0.0.0/0', () => {
    expect(compiled(['::ffff:1.2.3.0/120'])).toEqual(compiled(['1.2.3.0/24']));
    expect(compiled(['::ffff:102:300/120'])).toEqual(compiled(['1.2.3.0/24']));
    expect(compiled(['::ffff:0:0/90'])).toEqual(compiled(['0.0.0.0/0']));
    // `::1.2.3.4` is the IPv4-compatible form, which ipaddr.js (and so parseCidr) reads as mapped.
    expect(compiled(['::1.2.3.4/128'])).toEqual(compiled(['1.2.3.4/32']));
  });

  it('leaves the odd forms to parseCidr, which reads them its own way', () => {
    expect(compiled(['010.1.2.3/8'])).toEqual(compiled(['8.0.0.0/8'])); // a leading zero is octal to ipaddr.js
    expect(compiled(['1.2.3.0/024'])).toEqual(compiled(['1.2.3.0/24']));
    expect(compiled(['1.2.3/24'])).toEqual(compiled(['1.2.0.3/24'])); // ipaddr.js's three-part form
    expect(compiled(['1:2:3:4:5:6:7::/112'])).toEqual(compiled(['1:2:3:4:5:6:7:0/112']));
  });

  it('still names a bad CIDR, with the TypeError parseCidr throws', () => {
    for (const bad of ['1.2.3.0/33', '1::/129', '1.2.3.4/', '256.0.0.0/8', '1.2.3.4/24/8', 'fe80::1%eth0']) {
      expect(() => compiled([bad]), bad).toThrow(TypeError);
      expect(() => compiled([bad]), bad).toThrow(JSON.stringify(bad));
    }
  });
});
