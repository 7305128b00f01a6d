import { createCidrMatcher, parseIp, type IpAddress } from '../lib/ip.js';

export type ClientIpResolver = (remoteAddress: string | undefined, forwardedFor: string | string[] | undefined) => IpAddress | null;

/**
 * The caller's address: the socket peer, unless the peer is a trusted proxy, in which case
 * `X-Forwarded-For` is walked from the right and the first address that is not itself a
 * trusted proxy wins. Entries added by untrusted hops (left of that) are never believed.
 */
export function createClientIpResolver(trustProxy: readonly string[]): ClientIpResolver {
  const isTrusted = trustProxy.length > 0 ? createCidrMatcher(trustProxy) : () => false;
  return (remoteAddress, forwardedFor) => {
    const peer = remoteAddress ? parseIp(remoteAddress) : null;
    if (!peer || !isTrusted(peer) || forwardedFor === undefined) return peer;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseIp(hops[i].trim());
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client;
  };
}

