/**
 * The MX check of a domain through the shared resolver: MX records found (`has_mx`), RFC 7505
 * null MX, NODATA with or without the A/AAAA records of RFC 5321 5.1's implicit MX, NXDOMAIN.
 * A resolver failure (timeout, SERVFAIL, REFUSED, malformed answers) is a LookupError
 * `lookup_failed` (502) whose message names the domain and nothing about the servers.
 */
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
    const hosts = mx.records.filter((record) => record.exchange !== '');
    return hosts.length === 0 ? finish('null_mx') : finish(null, formatMx(hosts));
  }
  for (const type of ['A', 'AAAA'] as const) {
    const address = await ask(resolver, domain, type);
    used.push(address);
    if (address.status === 'ok') return finish('no_mx_implicit_a');
  }
  return finish('no_mx');
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
