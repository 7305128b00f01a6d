import { createCidrMatcher, parseIp, type IpAddress } from '../lib/ip.js';

export type ClientIpResolver = (remoteAddress: string | undefined, forwardedFor: string | string[] | undefined) => IpAddress | null;

/**
 * The caller's address: the socket peer, unless the peer is a trusted proxy, in which case
 * `X-Forwarded-For` is walked from the right and the first address that is not itself a
 * trusted proxy wins. Entries added by untrusted hops (left of that) are never believed.
 */
export function createClientIpResolver(trustProxy: readonly string[]): ClientIpResolver {
  const isTrusted = trustProxy.length > 0 ? createCidrMatcher(trustProxy) : () => false;
  // Socket peers repeat (keep-alive, proxies): parsed once each. Bounded, emptied when full.
  const peers = new Map<string, IpAddress | null>();
  const peerOf = (remoteAddress: string): IpAddress | null => {
    let peer = peers.get(remoteAddress);
    if (peer === undefined) {
      if (peers.size >= 10_000) peers.clear();
      peers.set(remoteAddress, (peer = parseIp(remoteAddress)));
    }
    return peer;
  };
  return (remoteAddress, forwardedFor) => {
    const peer = remoteAddress ? peerOf(remoteAddress) : null;
    if (!peer || !isTrusted(peer) || forwardedFor === undefined) return peer;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseHop(hops[i].trim());
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client;
  };
}

/**
 * The host the caller addressed: `X-Forwarded-Host` (its first value) when the socket peer is a
 * trusted proxy that sent one, else `Host`. The same `trustProxy` list decides as for the
 * caller IP, so one setting governs every forwarded header; from anyone else they are ignored.
 */
export function createOwnHostResolver(
  trustProxy: readonly string[],
): (remoteAddress: string | undefined, headers: Readonly<Record<string, string | string[] | undefined>>) => string | undefined {
  const isTrusted = trustProxy.length > 0 ? createCidrMatcher(trustProxy) : null;
  return (remoteAddress, headers) => {
    // HTTP/2 clients name the host in :authority and may send no Host (RFC 9113, 8.3.1); Node's
    // compatibility API does not copy one into the other.
    const host = first(headers[':authority']) ?? first(headers.host);
    if (!isTrusted || !remoteAddress) return host;
    const peer = parseIp(remoteAddress);
    if (!peer || !isTrusted(peer)) return host;
    const forwarded = first(headers['x-forwarded-host'])?.split(',')[0].trim();
    return forwarded || host;
  };
}

/** `ip:port` with an IPv4 address; `[ip]` or `[ip]:port` with any (RFC 7239's node forms, as some proxies write them). */
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * One X-Forwarded-For entry: an address, or one written with a port (Azure Application Gateway
 * sends `203.0.113.9:51234`) or in brackets (`[2001:db8::1]:51234`), the port dropped. A bare
 * IPv6 address with a port cannot be told from an address and is refused, as anything else.
 */
function parseHop(text: string): IpAddress | null {
  const plain = parseIp(text);
  if (plain) return plain;
  const address = IPV4_WITH_PORT.exec(text)?.[1] ?? BRACKETED.exec(text)?.[1];
  return address === undefined ? null : parseIp(address);
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
