/**
 * lib/ip-input: the one reading of IP input every IP product shares. Ambiguous forms are
 * refused with invalid_ip, never guessed; non-routable addresses get ip_not_routable with the
 * block named.
 */
import { describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { lookupAddress, parseIpInput, readRoutableIp, requireRoutable } from '../../src/lib/ip-input.js';

function codeOf(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (isLookupError(error)) return error.code;
    throw error;
  }
}

describe('parseIpInput', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8', 4],
    ['  8.8.8.8\t', '8.8.8.8', 4],
    ['::ffff:8.8.8.8', '8.8.8.8', 4],
    ['::FFFF:808:808', '8.8.8.8', 4],
    ['0:0:0:0:0:ffff:8.8.8.8', '8.8.8.8', 4],
    ['2001:4860:4860:0:0:0:0:8888', '2001:4860:4860::8888', 6],
    ['2001:4860:4860::8888', '2001:4860:4860::8888', 6],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 6],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1', 6],
    ['64:ff9b::8.8.8.8', '64:ff9b::808:808', 6],
  ])('%j is %s (IPv%d)', (text, ip, version) => {
    const input = parseIpInput(text);
    expect(input.ip).toBe(ip);
    expect(input.version).toBe(version);
    if (input.version === 4) expect(input.value).toBe(0x08080808);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['010.1.1.1', 'leading zero (octal to some parsers)'],
    ['1.2.3.04', 'leading zero'],
    ['::ffff:010.1.1.1', 'leading zero in a dotted IPv6 tail'],
    ['3232235777', 'a decimal integer'],
    ['0xC0A80001', 'a hex integer'],
    ['0x7f.0.0.1', 'hex parts'],
    ['10.1', 'shortened IPv4'],
    ['1.2.3', 'shortened IPv4'],
    ['1.2.3.4.5', 'five parts'],
    ['256.1.1.1', 'a part over 255'],
    ['fe80::1%eth0', 'a zone id'],
    ['fe80::1%25eth0', 'an encoded zone id'],
    ['[::1]', 'brackets'],
    ['[2001:db8::1]:443', 'brackets and a port'],
    ['8.8.8.8:53', 'a port'],
    ['8.8.8.8/32', 'a CIDR'],
    ['1:2:3:4:5:6:7:8:9', 'nine groups'],
    ['1::2::3', 'two gaps'],
    ['12345::', 'a five-digit group'],
    ['example.com', 'a name'],
  ])('%j is refused (%s)', (text) => {
    expect(codeOf(() => parseIpInput(text))).toBe('invalid_ip');
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 42, ['8.8.8.8'], { ip: '8.8.8.8' }]) expect(codeOf(() => parseIpInput(value))).toBe('invalid_ip');
  });
});

describe('requireRoutable', () => {
  it('names the block an address is refused for', () => {
    expect(() => readRoutableIp('10.1.2.3')).toThrow(/10\.1\.2\.3 is not publicly routable: private-use 10\.0\.0\.0\/8/);
    expect(() => readRoutableIp('100.64.0.1')).toThrow(/CGNAT/);
    expect(() => readRoutableIp('fd00::1')).toThrow(/unique local fc00::\/7/);
    expect(() => readRoutableIp('2002:c0a8:101::')).toThrow(/6to4 2002::\/16 carrying an IPv4 address in private-use 192\.168\.0\.0\/16/);
  });

  it('passes routable addresses through unchanged', () => {
    const input = parseIpInput('2002:808:808::1');
    expect(requireRoutable(input)).toBe(input);
    expect(readRoutableIp('1.1.1.1')).toEqual({ ip: '1.1.1.1', version: 4, value: 0x01010101 });
  });

  it('reads an IPv4-mapped address as its IPv4 for routability', () => {
    expect(codeOf(() => readRoutableIp('::ffff:127.0.0.1'))).toBe('ip_not_routable');
    expect(codeOf(() => readRoutableIp('::ffff:10.0.0.1'))).toBe('ip_not_routable');
  });
});

describe('lookupAddress: the address whose location, network and reputation answer', () => {
  it.each([
    // 6to4 (RFC 3056): bits 16-47.
    ['2002:808:808::1', '8.8.8.8'],
    ['2002:0808:0808:1234:5678:9abc:def0:1', '8.8.8.8'],
    ['2002:5db8:d822::', '93.184.216.34'],
    ['2002:101:100::1', '1.1.1.0'],
    // Teredo (RFC 4380): the client's address, the last 32 bits inverted; RFC 4380's example client is 192.0.2.45.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '192.0.2.45'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '8.8.8.8'],
    ['2001::fefe:fefe', '1.1.1.1'],
    // NAT64 well-known prefix (RFC 6052): the last 32 bits.
    ['64:ff9b::808:808', '8.8.8.8'],
    ['64:ff9b::1.1.1.1', '1.1.1.1'],
  ])('%s is %s', (text, ipv4) => {
    const input = lookupAddress(parseIpInput(text));
    expect(input.ip).toBe(ipv4);
    expect(input).toEqual(parseIpInput(ipv4));
  });

  it.each([
    '2001:4860:4860::8888', // 2001:4860::/32, not Teredo 2001:0::/32
    '2001:1::1', // PCP anycast, inside 2001::/23 but not Teredo
    '2003::1',
    '64:ff9b:1::808:808', // local-use translation prefix: no fixed place for the IPv4
    '64:ff9b:0:0:1::808:808', // outside 64:ff9b::/96
    '::808:808', // IPv4-compatible (deprecated): not a lookup of 8.8.8.8
    '2606:4700:4700::1111',
  ])('%s is itself', (text) => {
    const input = parseIpInput(text);
    expect(lookupAddress(input)).toBe(input);
  });

  it('an IPv4 address (IPv4-mapped included) is itself', () => {
    const input = parseIpInput('::ffff:8.8.8.8');
    expect(lookupAddress(input)).toBe(input);
    expect(input).toEqual({ ip: '8.8.8.8', version: 4, value: 0x08080808 });
  });
});
