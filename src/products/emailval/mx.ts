/**
 * The MX check of a domain through the shared resolver: MX records found (`has_mx`), RFC 7505
 * null MX, MX records whose exchanges are IP addresses rather than host names, NODATA with or
 * without the A/AAAA records of RFC 5321 5.1's implicit MX, NXDOMAIN.
 * A resolver failure (timeout, SERVFAIL, REFUSED, malformed answers) is a LookupError
 * `lookup_failed` (502) whose message names the domain and nothing about the servers.
 */
import { isIP } from 'node:net';
import { isSeclookupError, LookupError } from '../../errors.js';
import type { DnsAnswer, DnsRecordType, DnsResolver, MxData } from '../../lib/dns/index.js';
import type { EmailMxReason } from './types.js';

export interface MxCheck {
  hasMx: boolean;
  /** `"priority host"`, sorted by priority then host, duplicates removed; empty unless hasMx. */
  mx: string[];
  /** Why hasMx is false; null when it is true. */
  reason: EmailMxReason | null;
  /** The DNS answers the check used: the result's freshness (`fetched_at`, lifetime) comes from them. */
  answers: DnsAnswer<DnsRecordType>[];
}

/**
 * Check `domain` (lower-case ASCII). The A and AAAA questions are asked only when the domain
 * has no MX records (NODATA), one after the other, and only as far as needed.
 */
export async function checkMx(resolver: DnsResolver, domain: string): Promise<MxCheck> {
  const used: DnsAnswer<DnsRecordType>[] = [];
  const finish = (reason: EmailMxReason | null, mx: string[] = []): MxCheck => ({ hasMx: reason === null, mx, reason, answers: used });

  const mx = await ask(resolver, domain, 'MX');
  used.push(mx);
  if (mx.status === 'nxdomain') return finish('domain_not_found');
  if (mx.status === 'ok') {
    // RFC 7505: a null MX is the exchange "." (the resolver gives ''). Beside real hosts it is
    // a misconfiguration; the real hosts still receive mail, so only a null MX alone counts.
    // An exchange that is an IP address, localhost or a single label is no mail host (RFC 5321
    // 5.1; see isHostName), so no mail goes there; it is left out too, and with no host name left the domain has no usable MX. Either way the
    // MX records exist, so the A/AAAA implicit MX does not apply (RFC 5321 5.1).
    const hosts = mx.records.filter((record) => record.exchange !== '' && isHostName(record.exchange));
    if (hosts.length > 0) return finish(null, formatMx(hosts));
    return finish(mx.records.some((record) => record.exchange === '') ? 'null_mx' : 'no_mx_hostname');
  }
  for (const type of ['A', 'AAAA'] as const) {
    const address = await ask(resolver, domain, type);
    used.push(address);
    if (address.status === 'ok') return finish('no_mx_implicit_a');
  }
  return finish('no_mx');
}

/**
 * Whether an MX exchange can name a mail host elsewhere: not an IP address written as a name
 * (`192.0.2.1`, `2001:db8::1`) nor any name whose last label is all digits, which no top-level
 * domain is (RFC 5321 2.3.5 and 5.1, RFC 3696 2); not a single label (`mailhost`: a name only the
 * sender's own resolver completes, if anything); not `localhost` or a name under it, the old way
 * to say "no mail here" before null MX (mail sent there loops back to the sender); not a name
 * under `.invalid`, which never resolves (RFC 6761 6.3 and 6.4). A trailing dot is ignored.
 */
export function isHostName(exchange: string): boolean {
  const name = (exchange.endsWith('.') ? exchange.slice(0, -1) : exchange).toLowerCase();
  if (name === '' || isIP(name) !== 0) return false;
  const dot = name.lastIndexOf('.');
  if (dot < 0 || name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.invalid')) return false;
  return !/^[0-9]+$/.test(name.slice(dot + 1));
}

/** `"10 mx1.example.com"`, by priority then host, each once. */
export function formatMx(records: readonly MxData[]): string[] {
  // Lower-cased before sorting: a zone may write its names in any case (`MX.example.com`).
  const named = records.map((record) => ({ priority: record.priority, host: record.exchange.toLowerCase() }));
  const sorted = named.sort((a, b) => a.priority - b.priority || (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  return [...new Set(sorted.map((record) => `${record.priority} ${record.host}`))];
}

async function ask<T extends DnsRecordType>(resolver: DnsResolver, domain: string, type: T): Promise<DnsAnswer<T>> {
  try {
    return await resolver.resolve(domain, type);
  } catch (error) {
    if (isSeclookupError(error, 'timeout')) {
      throw new LookupError('lookup_failed', `the DNS ${type} lookup for ${domain} timed out; retry with backoff`, { cause: error });
    }
    if (isSeclookupError(error, 'upstream_failed')) {
      throw new LookupError('lookup_failed', `the DNS ${type} lookup for ${domain} failed; retry with backoff`, { cause: error });
    }
    throw error;
  }
}
