/**
 * DNS server addresses: `host:port` as users write them (`127.0.0.1:5353`, `[::1]:53`, or an
 * address alone for port 53), and the system's own resolvers as the default.
 */
import { getServers } from 'node:dns';
import net from 'node:net';
import { invalidOption } from '../../errors.js';

export interface DnsServer {
  host: string;
  port: number;
  family: 4 | 6;
  /** As written back in messages: `127.0.0.1:5353`, `[::1]:53`. */
  text: string;
}

/** Parse one server. A name is refused: the resolver must not need a resolver. */
export function parseDnsServer(value: string): DnsServer {
  const text = value.trim();
  let host = text;
  let port = 53;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (net.isIPv4(text.split(':')[0]) && text.includes(':')) {
    const at = text.lastIndexOf(':');
    host = text.slice(0, at);
    port = /^\d+$/.test(text.slice(at + 1)) ? Number(text.slice(at + 1)) : NaN;
  }
  const family = net.isIP(host);
  if (family === 0) throw invalidOption(`DNS server ${JSON.stringify(value)} is not an IP address, IP:port or [IPv6]:port`);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw invalidOption(`DNS server ${JSON.stringify(value)} has a bad port`);
  return { host, port, family: family as 4 | 6, text: family === 6 ? `[${host}]:${port}` : `${host}:${port}` };
}

/** The servers this machine resolves with (`/etc/resolv.conf`, as Node reads it). */
export function systemDnsServers(): DnsServer[] {
  return getServers().map(parseDnsServer);
}
