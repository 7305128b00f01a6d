/**
 * connection.domain from reverse DNS: one PTR query through the shared resolver, bounded by a
 * small budget. The answer never waits longer than the budget and never fails because of it:
 * a timeout, SERVFAIL, NXDOMAIN or an unusable name all give null. A query that misses the
 * budget still completes in the background and lands in the resolver's cache, so the next
 * lookup of the address can use it.
 *
 * The domain is the registrable domain of the first PTR name (`dns.google` for 8.8.8.8,
 * `amazonaws.com` for `ec2-3-5-7-9.compute-1.amazonaws.com`), the form MaxMind's `domain`
 * field has. It is not forward-confirmed: a PTR record is whatever the address's owner wrote.
 */
import { getDomain } from 'tldts';
import { invalidOption } from '../../errors.js';
import { checkMs } from '../../lib/deadline.js';
import type { DnsAnswer, DnsResolver } from '../../lib/dns/index.js';
import type { IpInput } from '../../lib/ip-input.js';
import { checkKnownNames, describeValue } from '../../lib/option-checks.js';

export const REVERSE_DNS_TIMEOUT_MS = 150;

/** What a reverse lookup gave: the domain (or null) and whether the PTR came from the resolver's cache. */
export interface ReverseDomain {
  domain: string | null;
  cached: boolean;
}

/** The reverseDns option as a budget in ms, or null when off. */
export function reverseDnsBudget(option: unknown): number | null {
  if (option === undefined || option === false) return null;
  if (option === true) return REVERSE_DNS_TIMEOUT_MS;
  if (typeof option !== 'object' || option === null || Array.isArray(option))
    throw invalidOption(`geoip reverseDns must be true, false or { timeoutMs } (got ${describeValue(option)})`);
  const settings = option as Record<string, unknown>;
  checkKnownNames(settings, ['timeoutMs'], 'geoip reverseDns');
  return checkMs((settings.timeoutMs ?? REVERSE_DNS_TIMEOUT_MS) as number, 'geoip reverseDns.timeoutMs');
}

/** `4.3.2.1.in-addr.arpa` for 1.2.3.4; nibbles under `ip6.arpa` for IPv6. */
export function ptrName(input: IpInput): string {
  if (input.version === 4) {
    const v = input.value;
    return `${v & 0xff}.${(v >>> 8) & 0xff}.${(v >>> 16) & 0xff}.${v >>> 24}.in-addr.arpa`;
  }
  const nibbles: string[] = [];
  const parts = input.address.parts;
  for (let i = 7; i >= 0; i--) {
    const group = parts[i];
    nibbles.push((group & 0xf).toString(16), ((group >> 4) & 0xf).toString(16), ((group >> 8) & 0xf).toString(16), ((group >> 12) & 0xf).toString(16));
  }
  return `${nibbles.join('.')}.ip6.arpa`;
}

/** The registrable domain of a PTR target, lower case, or null (a bare name, an IP, a public suffix). */
export function domainOfHost(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  return getDomain(name, { allowPrivateDomains: false, validateHostname: true }) || null;
}

/** Ask for the PTR of `input`, giving up after `budgetMs`. Never rejects. */
export function reverseDomain(dns: DnsResolver, input: IpInput, budgetMs: number): Promise<ReverseDomain> {
  return new Promise((resolve) => {
    let done = false;
    const timer = setTimeout(() => finish({ domain: null, cached: false }), budgetMs);
    function finish(answer: ReverseDomain): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer);
    }
    let question: Promise<DnsAnswer<'PTR'>>;
    try {
      question = dns.resolve(ptrName(input), 'PTR');
    } catch {
      return finish({ domain: null, cached: false });
    }
    question.then(
      (answer) => {
        const first = answer.records.find((record) => record !== '');
        finish({ domain: first ? domainOfHost(first) : null, cached: answer.cached });
      },
      () => finish({ domain: null, cached: false }),
    );
  });
}
