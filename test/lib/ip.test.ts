/**
 * lib/ip's fast paths against plain ipaddr.js, the reference for what is valid, canonical and
 * public. Every fast function must give the answer the library gives, at random inputs and at
 * the edges of ipaddr.js's own special-range list.
 */
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { IPV4_SPECIAL_BLOCKS, IPV6_SPECIAL_BLOCKS, type SpecialBlock } from '../../src/lib/ip-special.js';
import {
  formatIp,
  hasHostBits,
  isPublicIp,
  isPublicIPv4Number,
  networkOf,
  normalizeCidrs,
  parseIp,
  parseIPv4Number,
  type IpAddress,
} from '../../src/lib/ip.js';
import { equal, same } from '../cheap-expect.js';

// --- the reference: the pre-fast-path logic, plain ipaddr.js calls only ---------------------

function referenceParseIp(text: unknown): IpAddress | null {
  // ipaddr.js's checks throw and catch inside for invalid text: without stacks, the reference
  // gives the same answers at a tenth of the cost (its Error stacks were most of this file's time).
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return referenceParseIpOf(text);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

function referenceParseIpOf(text: unknown): IpAddress | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 45) return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  // A dotted tail must be a strict quad too (no leading zeros), as in IPv4 text.
  const strictTail = !text.includes('.') || ipaddr.IPv4.isValidFourPartDecimal(text.slice(text.lastIndexOf(':') + 1));
  if (text.includes(':') && !text.includes('%') && strictTail && ipaddr.IPv6.isValid(text)) {
    const addr = ipaddr.IPv6.parse(hexTail(text));
    return isMapped(addr) ? addr.toIPv4Address() : addr;
  }
  return null;
}

/** The dotted tail as two hex groups: ipaddr.js reads `::1.2.3.4` as `::ffff:1.2.3.4`. */
function hexTail(text: string): string {
  if (!text.includes('.')) return text;
  const colon = text.lastIndexOf(':');
  const [a, b, c, d] = ipaddr.IPv4.parse(text.slice(colon + 1)).octets;
  return `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** `::ffff:a.b.c.d` only: ipaddr.js's isIPv4MappedAddress also takes the IPv4-compatible `::a.b.c.d`. */
function isMapped(addr: ipaddr.IPv6): boolean {
  return addr.parts.slice(0, 5).every((part) => part === 0) && addr.parts[5] === 0xffff;
}

const referenceFormat = (addr: IpAddress) => (addr.kind() === 'ipv4' ? addr.toString() : (addr as ipaddr.IPv6).toRFC5952String());
/**
 * The routability rule of ip-special.ts, written the slow and obvious way: scan the blocks with
 * ipaddr.js `match`, the longest prefix decides, embedded IPv4 addresses are read from bytes.
 */
const parsedBlocks = (blocks: readonly SpecialBlock[]) => blocks.map((block) => ({ block, cidr: ipaddr.parseCIDR(block.cidr) }));
const REFERENCE_BLOCKS = { ipv4: parsedBlocks(IPV4_SPECIAL_BLOCKS), ipv6: parsedBlocks(IPV6_SPECIAL_BLOCKS) };

function referenceIsPublic(addr: IpAddress): boolean {
  if (addr.kind() === 'ipv6' && isMapped(addr as ipaddr.IPv6)) return referenceIsPublic((addr as ipaddr.IPv6).toIPv4Address());
  let best: SpecialBlock | undefined;
  let bestBits = -1;
  for (const {
    block,
    cidr: [net, bits],
  } of REFERENCE_BLOCKS[addr.kind()]) {
    if (addr.match(net, bits) && bits > bestBits) [best, bestBits] = [block, bits];
  }
  if (!best) return true;
  if (best.reachable !== 'embedded') return best.reachable;
  const b = addr.toByteArray();
  const v4 = (at: number, invert = false) => new ipaddr.IPv4(b.slice(at, at + 4).map((x) => (invert ? x ^ 0xff : x)));
  if (best.cidr === '2002::/16') return referenceIsPublic(v4(2));
  if (best.cidr === '2001::/32') return referenceIsPublic(v4(4)) && referenceIsPublic(v4(12, true));
  return referenceIsPublic(v4(12));
}

/** What a parse result is, in a form toEqual compares field by field. */
function identity(addr: IpAddress | null) {
  if (addr === null) return null;
  return {
    kind: addr.kind(),
    v4: addr instanceof ipaddr.IPv4,
    v6: addr instanceof ipaddr.IPv6,
    bytes: addr.toByteArray(),
    zoneId: (addr as ipaddr.IPv6).zoneId,
  };
}

/** parseIp agrees with the reference, and so do formatIp and isPublicIp on what it returns. */
function expectSameAsReference(text: unknown): void {
  const fast = parseIp(text as string);
  const slow = referenceParseIp(text);
  const where = JSON.stringify(text);
  equal(identity(fast), identity(slow), where);
  if (fast && slow) {
    same(formatIp(fast), referenceFormat(slow), where);
    same(isPublicIp(fast), referenceIsPublic(slow), where);
  }
}

// --- generators -----------------------------------------------------------------------------

const v4Int = fc.integer({ min: 0, max: 0xffffffff });
const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
/** Groups with plenty of zeros, so `::` runs of every length and position come up. */
const v6Groups = fc.array(fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 });

/** Dotted text that is sometimes wrong: leading zeros, big parts, too few or many parts. */
const dottedText = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.map(([value, zeros]) => '0'.repeat(zeros) + value).join('.'));

/** Any run of groups written as `::` (zeros or not, so some texts are wrong), in any case. */
const colonText = fc
  .record({ groups: v6Groups, from: fc.integer({ min: 0, max: 8 }), length: fc.integer({ min: -1, max: 8 }), pad: fc.boolean(), upper: fc.boolean() })
  .map(({ groups, from, length, pad, upper }) => {
    const hex = groups.map((g) => (pad ? g.toString(16).padStart(4, '0') : g.toString(16)));
    const text = length < 0 ? hex.join(':') : `${hex.slice(0, from).join(':')}::${hex.slice(Math.min(8, from + length)).join(':')}`;
    return upper ? text.toUpperCase() : text;
  });

/** IPv6 with a dotted IPv4 tail: mapped, NAT64, IPv4-compatible, or after any groups. */
const embeddedText = fc
  .record({
    prefix: fc.constantFrom('::ffff:', '::FFFF:', '::', '64:ff9b::', '64:ff9b:1::', '::ffff:0:', '1:2:3:4:5:6:', '1::2:'),
    v4: fc.oneof(v4Int.map(v4Text), dottedText),
  })
  .map(({ prefix, v4 }) => prefix + v4);

/** Mapped addresses in hex, which parseIp unwraps to IPv4. */
const mappedHexText = fc
  .tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom('::ffff:', '0:0:0:0:0:ffff:', '::FFFF:', '0::ffff:'))
  .map(([hi, lo, prefix]) => `${prefix}${hi.toString(16)}:${lo.toString(16)}`);

const zoneText = fc.tuple(colonText, fc.constantFrom('%eth0', '%1', '%', '%en0:1')).map(([text, zone]) => text + zone);

/** Strings over the characters of IP addresses and their common mistakes. */
const garbage = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.%/ xg-'.split(''), '::', '0x'), maxLength: 48 });

/** A valid-looking text with one character inserted, removed or replaced. */
const mutated = fc
  .tuple(
    fc.oneof(v4Int.map(v4Text), colonText, embeddedText),
    fc.nat(),
    fc.constantFrom(...'0159afAF:. %'.split(''), ''),
    fc.constantFrom('insert', 'delete', 'replace'),
  )
  .map(([text, at, char, how]) => {
    const i = at % (text.length + 1);
    if (how === 'insert') return text.slice(0, i) + char + text.slice(i);
    if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + char + text.slice(i + 1);
  });

// --- special ranges -------------------------------------------------------------------------

/** Every [network, bits] of ipaddr.js's SpecialRanges for one family, with its range name. */
function specialRanges(proto: object): { name: string; net: IpAddress; bits: number }[] {
  const ranges = (proto as { SpecialRanges: Record<string, [IpAddress, number] | [IpAddress, number][]> }).SpecialRanges;
  return Object.entries(ranges).flatMap(([name, list]) =>
    ((Array.isArray(list[0]) ? list : [list]) as [IpAddress, number][]).map(([net, bits]) => ({ name, net, bits })),
  );
}
/** Our IANA blocks, and ipaddr.js's list too (its edges are worth probing as well). */
const special = [
  ...[...IPV4_SPECIAL_BLOCKS, ...IPV6_SPECIAL_BLOCKS].map(({ cidr, name }) => {
    const [net, bits] = ipaddr.parseCIDR(cidr);
    return { name, net, bits };
  }),
  ...specialRanges(ipaddr.IPv4.prototype),
  ...specialRanges(ipaddr.IPv6.prototype),
];

function toBigInt(addr: IpAddress): bigint {
  return addr.toByteArray().reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function fromBigInt(value: bigint, bytes: number): IpAddress {
  const out: number[] = [];
  for (let i = bytes - 1; i >= 0; i--) out.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(out);
}

/** One before, first, last and one after a range (those inside the address space). */
function boundaries(net: IpAddress, bits: number): IpAddress[] {
  const bytes = net.kind() === 'ipv4' ? 4 : 16;
  const size = 1n << BigInt(bytes * 8 - bits);
  const first = (toBigInt(net) / size) * size;
  const limit = 1n << BigInt(bytes * 8);
  return [first - 1n, first, first + size - 1n, first + size].filter((v) => v >= 0n && v < limit).map((v) => fromBigInt(v, bytes));
}

/** A random address inside a special range (or next to it, when `offset` says so). */
const nearSpecial = fc
  .tuple(fc.nat(special.length - 1), fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), fc.integer({ min: -2, max: 2 }))
  .map(([k, noise, offset]) => {
    const { net, bits } = special[k];
    const bytes = net.kind() === 'ipv4' ? 4 : 16;
    const size = 1n << BigInt(bytes * 8 - bits);
    const first = (toBigInt(net) / size) * size;
    const limit = 1n << BigInt(bytes * 8);
    const value = (((first + (noise % size) + BigInt(offset) * size) % limit) + limit) % limit;
    return fromBigInt(value, bytes);
  });

// --- tests ----------------------------------------------------------------------------------

/** A configuration TypeError with the stable code invalid_option and this message. */
function configError(message: string) {
  return expect.objectContaining({ name: 'TypeError', code: 'invalid_option', message });
}

describe('parseIp agrees with plain ipaddr.js', () => {
  it('on every IPv4 address written as a dotted quad', () => {
    fc.assert(
      fc.property(v4Int, (n) => expectSameAsReference(v4Text(n))),
      { numRuns: 5000 },
    );
  });

  it('on dotted text with leading zeros, big parts, too few or too many parts', () => {
    fc.assert(fc.property(dottedText, expectSameAsReference), { numRuns: 5000 });
  });

  it('on colon-hex IPv6: full, padded, upper-case, `::` anywhere', () => {
    fc.assert(fc.property(colonText, expectSameAsReference), { numRuns: 5000 });
  });

  it('on embedded IPv4 (mapped, NAT64, IPv4-compatible) and mapped hex', () => {
    fc.assert(fc.property(fc.oneof(embeddedText, mappedHexText), expectSameAsReference), { numRuns: 5000 });
  });

  it('on zone ids (always rejected)', () => {
    fc.assert(
      fc.property(zoneText, (text) => {
        expectSameAsReference(text);
        const parsed = parseIp(text);
        if (parsed !== null) expect(parsed, text).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it('on random garbage and one-character mutations of valid text', () => {
    fc.assert(fc.property(fc.oneof(garbage, mutated), expectSameAsReference), { numRuns: 8000 });
  });

  it('on hand-picked cases', () => {
    const cases = [
      '1.2.3.4',
      '0.0.0.0',
      '255.255.255.255',
      '01.2.3.4',
      '1.2.3.04',
      '1.2.3',
      '1.2.3.4.5',
      '1.2.3.256',
      '0x1.2.3.4',
      ' 1.2.3.4',
      '1.2.3.4\n',
      '::',
      '::1',
      '1::',
      '1:2:3:4:5:6:7:8',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '1:2:3:4::5:6:7:8',
      '1:2:3:4:5:6:7:8:9',
      ':::',
      '1::2::3',
      ':1:2:3:4:5:6:7',
      '1:2:3:4:5:6:7:',
      '12345::',
      '2001:DB8::1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      'g::1',
      ' ::1',
      '::ffff:1.2.3.4',
      '::ffff:102:304',
      '::FFFF:8c52:7005',
      '64:ff9b::1.2.3.4',
      '::1.2.3.4',
      '::ffff:01.2.3.4',
      '::ffff:1.2.3',
      'fe80::1%eth0',
      '::1%1',
      '1.2.3.4/32',
      '::/0',
      '',
      'a'.repeat(46),
      `${'1:'.repeat(6)}255.255.255.255`.padStart(45, '0'),
    ];
    for (const text of cases) expectSameAsReference(text);
    for (const bad of [undefined, null, 42, {}, ['1.2.3.4']]) expect(parseIp(bad as unknown as string)).toBeNull();
  });

  it('unwraps IPv4-mapped addresses to IPv4', () => {
    expect(parseIp('::ffff:140.82.112.5')?.toString()).toBe('140.82.112.5');
    expect(parseIp('::ffff:8c52:7005')?.kind()).toBe('ipv4');
    expect(parseIp('64:ff9b::140.82.112.5')?.toString()).toBe('64:ff9b::8c52:7005');
  });

  it('keeps the deprecated IPv4-compatible ::a.b.c.d the IPv6 address it is, however it is written', () => {
    for (const text of ['::8.8.8.8', '::808:808', '0:0:0:0:0:0:8.8.8.8', '0:0:0:0:0:0:808:808']) {
      const addr = parseIp(text);
      expect([text, addr?.kind(), addr && formatIp(addr)]).toEqual([text, 'ipv6', '::808:808']);
      expect(isPublicIp(addr!)).toBe(false);
    }
  });
});

describe('parseIPv4Number', () => {
  it('reads every dotted quad as its 32-bit value, text that parseIp echoes unchanged', () => {
    fc.assert(
      fc.property(v4Int, (n) => {
        same(parseIPv4Number(v4Text(n)), n);
        same(formatIp(parseIp(v4Text(n))!), v4Text(n));
      }),
      { numRuns: 5000 },
    );
  });

  it('accepts exactly the IPv4 text parseIp accepts, nothing more', () => {
    const chars = fc.constantFrom(...'0123456789.'.split(''), 'x', ' ', '-', ':');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: chars, maxLength: 17 }), dottedText, mutated), (text) => {
        const fast = parseIPv4Number(text);
        const slow = ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
        same(fast >= 0 ? v4Text(fast) : null, slow && slow.toString(), text);
      }),
      { numRuns: 8000 },
    );
    for (const bad of ['1.2.3', '1.2.3.4.', '.1.2.3', '1..2.3', '00.1.2.3', '1.2.3.256', '1.2.3.04', '999.1.1.1', '::ffff:1.2.3.4'])
      expect(parseIPv4Number(bad)).toBe(-1);
  });
});

describe('formatIp agrees with ipaddr.js', () => {
  it('IPv6: toRFC5952String for any groups', () => {
    fc.assert(
      fc.property(v6Groups, (groups) => {
        const addr = new ipaddr.IPv6(groups);
        same(formatIp(addr), addr.toRFC5952String());
        same(formatIp(addr), addr.toString());
      }),
      { numRuns: 5000 },
    );
  });

  it('IPv4: the dotted quad', () => {
    fc.assert(
      fc.property(v4Int, (n) => {
        const addr = ipaddr.IPv4.parse(v4Text(n));
        same(formatIp(addr), addr.toString());
      }),
      { numRuns: 2000 },
    );
  });

  it('RFC 5952 details: leftmost longest run, never a single zero group, zone ids kept', () => {
    const format = (groups: number[]) => formatIp(new ipaddr.IPv6(groups));
    expect(format([0x2001, 0xdb8, 0, 1, 0, 0, 0, 1])).toBe('2001:db8:0:1::1');
    expect(format([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1])).toBe('2001:db8::1:0:0:1');
    expect(format([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1])).toBe('2001:db8:0:1:1:1:1:1');
    expect(format([0, 0, 0, 0, 0, 0, 0, 0])).toBe('::');
    expect(format([0, 0, 0, 0, 0, 0, 0, 1])).toBe('::1');
    expect(format([1, 0, 0, 0, 0, 0, 0, 0])).toBe('1::');
    expect(format([0xabcd, 0, 0, 0, 0, 0, 0, 0])).toBe('abcd::');
    const zoned = ipaddr.IPv6.parse('fe80::1%eth0');
    expect(formatIp(zoned)).toBe(zoned.toRFC5952String());
    expect(formatIp(zoned)).toBe('fe80::1%eth0');
  });
});

describe('isPublicIp follows the IANA special-purpose registries', () => {
  // The registries' own answers, written out by hand (iana.org/assignments/iana-ipv4-special-registry
  // and iana-ipv6-special-registry, "Globally Reachable"), plus multicast and the IPv6 space outside 2000::/3.
  const expected: [string, boolean][] = [
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['2606:4700:4700::1111', true],
    ['2001:4860:4860::8888', true],
    ['0.0.0.0', false],
    ['0.1.2.3', false],
    ['10.0.0.1', false],
    ['100.64.0.1', false],
    ['100.127.255.255', false],
    ['100.63.255.255', true],
    ['100.128.0.0', true],
    ['127.0.0.1', false],
    ['169.254.1.1', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.0', true],
    ['192.0.0.1', false],
    ['192.0.0.8', false],
    ['192.0.0.9', true],
    ['192.0.0.10', true],
    ['192.0.0.170', false],
    ['192.0.2.1', false],
    ['192.31.196.1', true],
    ['192.52.193.1', true],
    ['192.88.99.1', false],
    ['192.168.1.1', false],
    ['192.175.48.1', true],
    ['198.18.0.1', false],
    ['198.19.255.255', false],
    ['198.20.0.0', true],
    ['198.51.100.1', false],
    ['203.0.113.1', false],
    ['224.0.0.1', false],
    ['239.255.255.255', false],
    ['240.0.0.1', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['::2', false],
    ['1::', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['fe80::1', false],
    ['fec0::1', false],
    ['ff02::1', false],
    ['100::1', false],
    ['100:0:0:1::1', false],
    ['64:ff9b:1::1', false],
    ['2001:db8::1', false],
    ['3fff::1', false],
    ['3fff:1000::', true],
    ['5f00::1', false],
    ['2001:2::1', false],
    ['2001:10::1', false],
    ['2001:20::1', true],
    ['2001:30::1', true],
    ['2001:1::1', true],
    ['2001:1::3', true],
    ['2001:1::4', false],
    ['2001:3::1', true],
    ['2001:4:112::1', true],
    ['2620:4f:8000::1', true],
    ['2001:100::1', false],
    ['2001:200::1', true],
    ['4000::1', false],
    // Embedded IPv4: 6to4, NAT64, Teredo (server 65.54.227.120, client 192.0.2.45 stored inverted: RFC 4380's example).
    ['2002:808:808::1', true],
    ['2002:a00:1::1', false],
    ['2002:c0a8:101::', false],
    ['2002:7f00:1::', false],
    ['64:ff9b::808:808', true],
    ['64:ff9b::a00:1', false],
    ['64:ff9b::c0a8:101', false],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', false],
  ];
  it.each(expected)('%s is routable: %s', (text, routable) => {
    const addr = parseIp(text)!;
    expect(addr).not.toBeNull();
    expect(isPublicIp(addr)).toBe(routable);
    expect(referenceIsPublic(addr)).toBe(routable);
    if (addr.kind() === 'ipv4') expect(isPublicIPv4Number(Number(toBigInt(addr)))).toBe(routable);
  });

  it("covers the registries and ipaddr.js's special ranges", () => {
    expect(special.length).toBeGreaterThan(60);
  });

  it('at the first, last, one-before and one-after address of every special range', () => {
    for (const { name, net, bits } of special) {
      for (const addr of boundaries(net, bits)) {
        const where = `${name} ${net.toString()}/${bits}: ${addr.toString()}`;
        same(isPublicIp(addr), referenceIsPublic(addr), where);
        if (addr.kind() === 'ipv4') same(isPublicIPv4Number(Number(toBigInt(addr))), referenceIsPublic(addr), where);
        // The same address as text, through parseIp (which unwraps mapped IPv6 to IPv4).
        expectSameAsReference(addr.toString());
      }
    }
  });

  it('at random addresses in and around the special ranges', () => {
    fc.assert(
      fc.property(nearSpecial, (addr) => {
        same(isPublicIp(addr), referenceIsPublic(addr), addr.toString());
      }),
      { numRuns: 5000 },
    );
  });

  it('at random IPv4 addresses, as objects and as numbers', () => {
    fc.assert(
      fc.property(v4Int, (n) => {
        const addr = ipaddr.IPv4.parse(v4Text(n));
        same(isPublicIp(addr), referenceIsPublic(addr));
        same(isPublicIPv4Number(n), referenceIsPublic(addr));
      }),
      { numRuns: 5000 },
    );
  });

  it('at random IPv6 addresses, including mapped ones parseIp would have unwrapped', () => {
    const prefixed = fc.tuple(v6Groups, fc.constantFrom(null, [0, 0, 0, 0, 0, 0xffff], [0, 0, 0, 0, 0xffff, 0], [0x2001], [0x2002], [0x64, 0xff9b]));
    fc.assert(
      fc.property(prefixed, ([groups, prefix]) => {
        const addr = new ipaddr.IPv6(prefix ? [...prefix, ...groups.slice(prefix.length)] : groups);
        same(isPublicIp(addr), referenceIsPublic(addr), addr.toString());
      }),
      { numRuns: 5000 },
    );
  });
});

describe('host bits: hasHostBits and networkOf against ipaddr.js networkAddressFromCIDR', () => {
  function expectNetworkAsReference(addr: IpAddress, bits: number): void {
    const cidr = `${addr.toString()}/${bits}`;
    const reference = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
    const [network, networkBits] = networkOf([addr, bits]);
    expect(network.toByteArray(), cidr).toEqual(reference.toByteArray());
    expect(networkBits).toBe(bits);
    expect(hasHostBits([addr, bits]), cidr).toBe(reference.toString() !== addr.toString());
    expect(hasHostBits([network, bits]), cidr).toBe(false);
  }

  it('for IPv4 at every prefix length', () => {
    fc.assert(fc.property(v4Int, fc.integer({ min: 0, max: 32 }), (n, bits) => expectNetworkAsReference(ipaddr.IPv4.parse(v4Text(n)), bits)));
  });

  it('for IPv6 at every prefix length', () => {
    fc.assert(fc.property(v6Groups, fc.integer({ min: 0, max: 128 }), (groups, bits) => expectNetworkAsReference(new ipaddr.IPv6(groups), bits)));
  });
});

describe('normalizeCidrs', () => {
  it('writes networks and bare addresses in canonical form', () => {
    expect(normalizeCidrs(['10.0.0.0/8', ' 203.0.113.7 ', '2001:DB8::/32', '2001:db8::7', '::ffff:192.0.2.0/120', '0.0.0.0/0'])).toEqual([
      '10.0.0.0/8',
      '203.0.113.7/32',
      '2001:db8::/32',
      '2001:db8::7/128',
      '192.0.2.0/24',
      '0.0.0.0/0',
    ]);
  });

  it('keeps a network given twice once, however it was written (a reviewer stored 10.0.0.0/8 three times)', () => {
    expect(normalizeCidrs(['10.0.0.0/8', '10.0.0.0/8', ' 10.0.0.0/8', '2001:DB8::/32', '2001:db8::/32', '203.0.113.7', '203.0.113.7/32'])).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      '203.0.113.7/32',
    ]);
  });

  it('refuses a CIDR with host bits set, naming the network and the single address', () => {
    expect(() => normalizeCidrs(['10.0.0.1/8'])).toThrow(
      configError('"10.0.0.1/8" has host bits set after the /8 prefix; did you mean the network 10.0.0.0/8, or the single address 10.0.0.1?'),
    );
    expect(() => normalizeCidrs(['2001:db8::1/32'])).toThrow(/did you mean the network 2001:db8::\/32, or the single address 2001:db8::1\?/);
  });
});
