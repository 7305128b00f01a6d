import { describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../src/api/client-ip.js';
import { formatIp } from '../../src/lib/ip.js';

function clientIp(trust: string[], remote: string | undefined, xff?: string | string[]): string | null {
  const addr = createClientIpResolver(trust)(remote, xff);
  return addr ? formatIp(addr) : null;
}

describe('caller IP', () => {
  it('is the socket address by default, ignoring X-Forwarded-For', () => {
    expect(clientIp([], '127.0.0.1', '203.0.113.9')).toBe('127.0.0.1');
  });

  it('unwraps IPv4-mapped socket addresses', () => {
    expect(clientIp([], '::ffff:192.0.2.10')).toBe('192.0.2.10');
  });

  it('believes X-Forwarded-For only from a trusted proxy', () => {
    expect(clientIp(['10.0.0.0/8'], '10.1.2.3', '203.0.113.9')).toBe('203.0.113.9');
    expect(clientIp(['10.0.0.0/8'], '198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
  });

  it('takes the right-most untrusted hop, so a client cannot spoof by prepending', () => {
    // The client sent "6.6.6.6"; the trusted proxy appended the real peer 203.0.113.9.
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '6.6.6.6, 203.0.113.9')).toBe('203.0.113.9');
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', ['6.6.6.6', '203.0.113.9, 10.0.0.2'])).toBe('203.0.113.9');
  });

  it('stops at a malformed hop and keeps the last good address', () => {
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', 'garbage, 10.0.0.2')).toBe('10.0.0.2');
  });

  it('reads an entry written with a port (Azure Application Gateway) or in brackets, dropping the port', () => {
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '203.0.113.9:51234')).toBe('203.0.113.9');
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '[2001:db8::1]:51234')).toBe('2001:db8::1');
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '[2001:db8::1]')).toBe('2001:db8::1');
    // The walk is the same: a trusted hop with a port is passed over, the client's own entry ignored.
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '6.6.6.6, 203.0.113.9:443, 10.0.0.2:80')).toBe('203.0.113.9');
    // Not an address with a port: a bad port, an unbracketed IPv6 address with one, a name.
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '203.0.113.9:123456')).toBe('10.0.0.1');
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', '2001:db8::1:51234')).toBe('10.0.0.1');
    expect(clientIp(['10.0.0.0/8'], '10.0.0.1', 'client.example:80')).toBe('10.0.0.1');
  });

  it('handles IPv6 proxies and clients', () => {
    expect(clientIp(['::1/128'], '::1', '2001:db8::1')).toBe('2001:db8::1');
  });

  it('is null without a usable socket address', () => {
    expect(clientIp([], undefined)).toBeNull();
    expect(clientIp([], 'not-an-ip')).toBeNull();
  });
});
