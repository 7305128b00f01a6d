/**
 * tls input: every form SPEC allows (scheme and path optional, port defaulting to 443, our
 * `port` parameter and `host:port`), IDN to punycode, IP literals, and the forms refused.
 */
import { describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { parseTarget } from '../../src/products/tls/target.js';

function codeOf(run: () => unknown): string {
  try {
    run();
    return 'accepted';
  } catch (error) {
    if (isLookupError(error)) return error.code;
    throw error;
  }
}

describe('tls input: accepted forms', () => {
  it.each([
    ['example.com', 'example.com', 443],
    ['  Example.COM.  ', 'example.com', 443],
    ['example.com:8443', 'example.com', 8443],
    ['https://example.com', 'example.com', 443],
    ['https://example.com/', 'example.com', 443],
    ['HTTPS://Example.com:8443/path/to?q=1&r=2#frag', 'example.com', 8443],
    ['http://example.com', 'example.com', 443],
    ['http://example.com:80/', 'example.com', 80],
    ['//example.com/x', 'example.com', 443],
    ['example.com/path', 'example.com', 443],
    ['example.com?x=1', 'example.com', 443],
    ['example.com#top', 'example.com', 443],
    ['sub_domain.example.com', 'sub_domain.example.com', 443],
    ['Bücher.example', 'xn--bcher-kva.example', 443],
    ['https://bücher.example:8443/', 'xn--bcher-kva.example', 8443],
    ['例え．テスト', 'xn--r8jz45g.xn--zckzah', 443],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example', 443],
    ['93.184.215.14', '93.184.215.14', 443],
    ['93.184.215.14:8443', '93.184.215.14', 8443],
    ['[2001:db8::1]', '2001:db8::1', 443],
    ['[2001:DB8:0:0::1]:443', '2001:db8::1', 443],
    ['[2606:4700::1111]:8443', '2606:4700::1111', 8443],
    ['https://[2606:4700::1111]:8443/dns-query', '2606:4700::1111', 8443],
    ['2606:4700:0::1111', '2606:4700::1111', 443],
    ['[::ffff:93.184.215.14]', '93.184.215.14', 443],
    ['example.com:1', 'example.com', 1],
    ['example.com:65535', 'example.com', 65535],
  ])('%j is %s port %d', (input, host, port) => {
    expect(parseTarget(input)).toMatchObject({ host, port });
  });

  it('marks IP literals (no SNI) and makes the cache key host:port', () => {
    expect(parseTarget('Example.com')).toEqual({ host: 'example.com', literal: false, port: 443, key: 'example.com:443' });
    expect(parseTarget('93.184.215.14')).toEqual({ host: '93.184.215.14', literal: true, port: 443, key: '93.184.215.14:443' });
    expect(parseTarget('[2001:db8::1]:8443')).toEqual({ host: '2001:db8::1', literal: true, port: 8443, key: '[2001:db8::1]:8443' });
  });

  it('reads an IPv4 address with the trailing dot of an absolute form as that address, as URL parsers do; it was a 422 (found by a reviewer)', () => {
    expect(parseTarget('93.184.215.14.')).toEqual({ host: '93.184.215.14', literal: true, port: 443, key: '93.184.215.14:443' });
    expect(parseTarget('https://93.184.215.14.:8443/x')).toMatchObject({ host: '93.184.215.14', literal: true, port: 8443 });
    expect(new URL('https://93.184.215.14./').hostname).toBe('93.184.215.14');
    expect(codeOf(() => parseTarget('93.184.215.14..'))).not.toBe('accepted');
    expect(codeOf(() => parseTarget('127.1.'))).toBe('host_not_allowed');
  });

  it('takes the port from the port option, as a number or decimal text', () => {
    expect(parseTarget('example.com', 8443).port).toBe(8443);
    expect(parseTarget('example.com', '8443').port).toBe(8443);
    expect(parseTarget('example.com', '').port).toBe(443); // an empty parameter is no parameter
    expect(parseTarget('https://example.com/x', '993').port).toBe(993);
    expect(parseTarget('[2001:db8::1]', 853).key).toBe('[2001:db8::1]:853');
  });

  it('accepts the same port twice, but not two different ports', () => {
    expect(parseTarget('example.com:8443', 8443).port).toBe(8443);
    expect(parseTarget('example.com:8443', '8443').port).toBe(8443);
    expect(() => parseTarget('example.com:8443', 443)).toThrow('the host says port 8443 and the port parameter says 443; give one');
    expect(codeOf(() => parseTarget('https://example.com:8443/', '9443'))).toBe('invalid_host');
  });
});

describe('tls input: refused forms', () => {
  it.each([
    ['', 'invalid_host'],
    ['   ', 'invalid_host'],
    ['https://', 'invalid_host'],
    ['https:///path', 'invalid_host'],
    [':443', 'invalid_host'],
    ['example.com:', 'invalid_host'],
    ['example.com:0', 'invalid_host'],
    ['example.com:65536', 'invalid_host'],
    ['example.com:08443', 'invalid_host'],
    ['example.com:443x', 'invalid_host'],
    ['example.com:-1', 'invalid_host'],
    ['example.com:443:443', 'invalid_host'],
    ['ftp://example.com', 'invalid_host'],
    ['ldaps://example.com', 'invalid_host'],
    ['https://user:pass@example.com/', 'invalid_host'],
    ['user@example.com', 'invalid_host'],
    ['https://example.com@evil.example/', 'invalid_host'],
    ['exa mple.com', 'invalid_host'],
    ['example.com\n', 'accepted'], // surrounding whitespace is trimmed
    ['exa\tmple.com', 'invalid_host'],
    ['exa%41mple.com', 'invalid_host'],
    ['example.com\\@evil.example', 'invalid_host'],
    ['*.example.com', 'invalid_host'],
    ['-leading.example.com', 'invalid_host'],
    ['trailing-.example.com', 'invalid_host'],
    ['a..b.example', 'invalid_host'],
    ['.example.com', 'invalid_host'],
    [`${'a'.repeat(64)}.example.com`, 'invalid_host'],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}.com`, 'invalid_host'],
    ['xn--zz.example', 'invalid_host'],
    ['[example.com]', 'invalid_host'],
    ['[2001:db8::1', 'invalid_host'],
    ['[2001:db8::1]x', 'invalid_host'],
    ['[2001:db8::1]:', 'invalid_host'],
    ['[93.184.215.14]', 'invalid_host'],
    ['[fe80::1%25eth0]', 'invalid_host'],
    ['fe80::1%eth0', 'invalid_host'],
    ['2001:db8::1:443x', 'invalid_host'],
    ['01.2.3.4', 'host_not_allowed'],
    ['127.1', 'host_not_allowed'],
    ['0x7f.1', 'host_not_allowed'],
    ['2130706433', 'host_not_allowed'],
    ['１２７．０．０．１', 'host_not_allowed'],
    ['localhost', 'host_not_allowed'],
    ['LOCALHOST.', 'host_not_allowed'],
    ['https://localhost:8443/', 'host_not_allowed'],
    ['app.localhost', 'host_not_allowed'],
  ])('%j: %s', (input, code) => {
    expect(codeOf(() => parseTarget(input))).toBe(code);
  });

  it('refuses a missing or non-string host, an overlong input and a bad port option', () => {
    expect(codeOf(() => parseTarget(undefined))).toBe('invalid_host');
    expect(codeOf(() => parseTarget(42))).toBe('invalid_host');
    expect(codeOf(() => parseTarget(`https://example.com/${'x'.repeat(3000)}`))).toBe('invalid_host');
    for (const port of [0, 65536, 1.5, -443, Number.NaN, '0443', '44 3', 'https', '1e3']) {
      expect(
        codeOf(() => parseTarget('example.com', port)),
        String(port),
      ).toBe('invalid_host');
    }
  });

  it('says what is wrong, quoting the input safely', () => {
    expect(() => parseTarget('ftp://example.com')).toThrow('only https:// (or http://) URLs are accepted, not ftp://');
    expect(() => parseTarget('https://user:pass@example.com/')).toThrow('user information (user:password@) is not accepted in the host');
    expect(() => parseTarget('example.com:99999')).toThrow('the port in the host must be a whole number from 1 to 65535 (got "99999")');
    expect(() => parseTarget('localhost')).toThrow('localhost is a loopback name (RFC 6761)');
    expect(() => parseTarget('127.1')).toThrow('numeric form some resolvers read as an IP address');
  });
});
