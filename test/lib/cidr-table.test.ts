import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCidrTable, type CidrTableEntry } from '../../src/lib/cidr-table.js';
import { parseCidr, parseIp, type IpAddress } from '../../src/lib/ip.js';

/** The obvious answer: scan every entry with ipaddr.js `match`. */
function naiveMatch<T>(entries: CidrTableEntry<T>[], addr: IpAddress): T[] {
  const out: T[] = [];
  for (const entry of entries) {
    const [net, bits] = parseCidr(entry.cidr);
    if (net.kind() === addr.kind() && addr.match(net, bits) && !out.includes(entry.value)) out.push(entry.value);
  }
  return out;
}

const ip = (text: string) => {
  const addr = parseIp(text);
  if (!addr) throw new Error(`bad test address ${text}`);
  return addr;
};

// --- generators -------------------------------------------------------------------------

const v4Int = fc.integer({ min: 0, max: 0xffffffff });
const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

const v6Parts = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
const v6Text = (parts: number[]) => parts.map((p) => p.toString(16)).join(':');

/** A v4 CIDR, host bits sometimes set, with a value from a small pool so duplicates happen. */
const v4Cidr = fc.record({ base: v4Int, bits: fc.integer({ min: 0, max: 32 }), value: fc.integer({ min: 0, max: 5 }) });
const v6Cidr = fc.record({ base: v6Parts, bits: fc.integer({ min: 0, max: 128 }), value: fc.integer({ min: 0, max: 5 }) });

/** An address inside the CIDR: its network bits with random host bits. */
function insideV4(base: number, bits: number, noise: number): number {
  const hostMask = bits === 0 ? 0xffffffff : 2 ** (32 - bits) - 1;
  return base - (base % (hostMask + 1)) + ((noise & hostMask) >>> 0);
}
function insideV6(base: number[], bits: number, noise: number[]): number[] {
  return base.map((part, i) => {
    const keep = Math.max(0, Math.min(16, bits - i * 16)); // network bits of this 16-bit group
    const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
    return (part & mask) | (noise[i] & ~mask & 0xffff);
  });
}

/** Sibling CIDRs nest and overlap far more often than random ones: shorten a prefix. */
function withNested<C extends { bits: number }>(cidrs: C[], extra: C[]): C[] {
  return [
    ...cidrs,
    ...extra.map((c, i) => ({
      ...cidrs[i % cidrs.length],
      bits: Math.max(0, cidrs[i % cidrs.length].bits - (c.bits % 9)),
      value: (c as unknown as { value: number }).value,
    })),
  ];
}

describe('createCidrTable agrees with a linear ipaddr.js scan', () => {
  it('IPv4: random CIDRs, addresses inside and outside them', () => {
    fc.assert(
      fc.property(
        fc.array(v4Cidr, { minLength: 1, maxLength: 30 }),
        fc.array(v4Cidr, { maxLength: 10 }),
        fc.array(fc.tuple(fc.nat(), v4Int, fc.boolean()), { minLength: 1, maxLength: 30 }),
        (cidrs, extra, probes) => {
          const all = withNested(cidrs, extra);
          const entries = all.map((c) => ({ cidr: `${v4Text(c.base)}/${c.bits}`, value: c.value }));
          const table = createCidrTable(entries);
          for (const [pick, noise, inside] of probes) {
            const c = all[pick % all.length];
            const n = inside ? insideV4(c.base, c.bits, noise) : noise;
            const addr = ip(v4Text(n));
            expect(table.match(addr)).toEqual(naiveMatch(entries, addr));
            expect(table.matchIPv4(n)).toEqual(naiveMatch(entries, addr));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('IPv6: random CIDRs, addresses inside and outside them', () => {
    fc.assert(
      fc.property(
        fc.array(v6Cidr, { minLength: 1, maxLength: 30 }),
        fc.array(v6Cidr, { maxLength: 10 }),
        fc.array(fc.tuple(fc.nat(), v6Parts, fc.boolean()), { minLength: 1, maxLength: 30 }),
        (cidrs, extra, probes) => {
          const all = withNested(cidrs, extra);
          const entries = all.map((c) => ({ cidr: `${v6Text(c.base)}/${c.bits}`, value: c.value }));
          const table = createCidrTable(entries);
          for (const [pick, noise, inside] of probes) {
            const c = all[pick % all.length];
            const addr = ip(v6Text(inside ? insideV6(c.base, c.bits, noise) : noise));
            expect(table.match(addr)).toEqual(naiveMatch(entries, addr));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('mixed v4 and v6 entries never cross families', () => {
    fc.assert(
      fc.property(fc.array(v4Cidr, { maxLength: 15 }), fc.array(v6Cidr, { maxLength: 15 }), v4Int, v6Parts, (c4, c6, n, parts) => {
        const entries = [
          ...c4.map((c) => ({ cidr: `${v4Text(c.base)}/${c.bits}`, value: `v4-${c.value}` })),
          ...c6.map((c) => ({ cidr: `${v6Text(c.base)}/${c.bits}`, value: `v6-${c.value}` })),
        ];
        const table = createCidrTable(entries);
        for (const addr of [ip(v4Text(n)), ip(v6Text(parts))]) expect(table.match(addr)).toEqual(naiveMatch(entries, addr));
      }),
      { numRuns: 200 },
    );
  });
});

describe('createCidrTable edge cases', () => {
  it('reports every overlapping value, in entry order, once', () => {
    const table = createCidrTable([
      { cidr: '10.0.0.0/8', value: 'wide' },
      { cidr: '10.1.0.0/16', value: 'narrow' },
      { cidr: '10.1.2.0/24', value: 'wide' }, // same value again: reported once
      { cidr: '10.1.2.3/32', value: 'host' },
    ]);
    expect(table.match(ip('10.1.2.3'))).toEqual(['wide', 'narrow', 'host']);
    expect(table.match(ip('10.1.2.4'))).toEqual(['wide', 'narrow']);
    expect(table.match(ip('10.2.0.0'))).toEqual(['wide']);
    expect(table.match(ip('11.0.0.0'))).toEqual([]);
    expect(table.size).toBe(4);
  });

  it('keeps entry order, not prefix order', () => {
    const table = createCidrTable([
      { cidr: '1.2.3.0/24', value: 'b' },
      { cidr: '1.0.0.0/8', value: 'a' },
    ]);
    expect(table.match(ip('1.2.3.4'))).toEqual(['b', 'a']);
  });

  it('matches the first and last address of a range and nothing either side', () => {
    const table = createCidrTable([
      { cidr: '140.82.112.0/20', value: 'gh' },
      { cidr: '2606:50c0::/32', value: 'gh6' },
    ]);
    expect(table.match(ip('140.82.111.255'))).toEqual([]);
    expect(table.match(ip('140.82.112.0'))).toEqual(['gh']);
    expect(table.match(ip('140.82.127.255'))).toEqual(['gh']);
    expect(table.match(ip('140.82.128.0'))).toEqual([]);
    expect(table.match(ip('2606:50bf:ffff:ffff:ffff:ffff:ffff:ffff'))).toEqual([]);
    expect(table.match(ip('2606:50c0::'))).toEqual(['gh6']);
    expect(table.match(ip('2606:50c0:ffff:ffff:ffff:ffff:ffff:ffff'))).toEqual(['gh6']);
    expect(table.match(ip('2606:50c1::'))).toEqual([]);
  });

  it('handles the ends of the address space', () => {
    const table = createCidrTable([
      { cidr: '0.0.0.0/0', value: 'all4' },
      { cidr: '255.255.255.255/32', value: 'top4' },
      { cidr: '::/0', value: 'all6' },
      { cidr: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128', value: 'top6' },
      { cidr: '0.0.0.0/32', value: 'zero4' },
    ]);
    expect(table.match(ip('0.0.0.0'))).toEqual(['all4', 'zero4']);
    expect(table.match(ip('0.0.0.1'))).toEqual(['all4']);
    expect(table.match(ip('255.255.255.255'))).toEqual(['all4', 'top4']);
    expect(table.match(ip('::'))).toEqual(['all6']);
    expect(table.match(ip('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'))).toEqual(['all6', 'top6']);
    expect(table.matchIPv4(0xffffffff)).toEqual(['all4', 'top4']);
  });

  it('treats IPv4-mapped IPv6 as IPv4, in CIDRs and in addresses', () => {
    const table = createCidrTable([{ cidr: '::ffff:140.82.112.0/116', value: 'gh' }]);
    expect(table.match(ip('140.82.112.9'))).toEqual(['gh']);
    // An IPv6 object that parseIp did not unwrap still matches as IPv4.
    const mapped = ip('2001:db8::1');
    (mapped as unknown as { parts: number[] }).parts = [0, 0, 0, 0, 0, 0xffff, 0x8c52, 0x7009];
    expect(table.match(mapped)).toEqual(['gh']);
  });

  it('is empty-safe and returns frozen arrays', () => {
    const empty = createCidrTable<string>([]);
    expect(empty.match(ip('8.8.8.8'))).toEqual([]);
    expect(empty.match(ip('2001:4860::8888'))).toEqual([]);
    const table = createCidrTable([{ cidr: '8.8.8.0/24', value: 'x' }]);
    expect(Object.isFrozen(table.match(ip('8.8.8.8')))).toBe(true);
    expect(Object.isFrozen(table.match(ip('9.9.9.9')))).toBe(true);
  });

  it('names the bad CIDR', () => {
    expect(() => createCidrTable([{ cidr: '1.2.3.0/33', value: 1 }])).toThrow(/1\.2\.3\.0\/33/);
    expect(() => createCidrTable([{ cidr: 'github', value: 1 }])).toThrow(/github/);
  });
});
