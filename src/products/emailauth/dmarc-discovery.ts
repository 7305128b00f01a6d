/**
 * DMARC policy discovery by the DNS tree walk of DMARCbis (draft-ietf-dmarc-dmarcbis, "DNS Tree
 * Walk" and "DMARC Policy Discovery"), which replaces RFC 7489's public-suffix-list
 * organizational domain: `_dmarc.<domain>` first; without exactly one record there, the parents'
 * `_dmarc` names up to the top-level domain, at most eight queries in all, stopping at a record
 * with a `psd=y` or `psd=n` tag. Where the two disagree (docs/emailauth-standards.md) this follows
 * DMARCbis.
 */
import { dmarcSyntaxError } from './dmarc-syntax.js';
import { isDmarcRecord } from './records.js';
import type { DmarcResult } from './types.js';

/** The TXT records at a name; a DNS failure rejects (LookupError `lookup_failed`). */
export type TxtQuery = (name: string) => Promise<string[]>;

/** DMARCbis: the walk never makes more than eight queries, the domain's own included. */
export const MAX_DMARC_QUERIES = 8;

/**
 * The names the walk asks after the domain itself, longest first: its parents down to the
 * top-level domain; a domain of more than eight labels skips to its last seven (DMARCbis step 4),
 * so there are at most seven.
 */
export function treeWalkTargets(domain: string): string[] {
  const labels = domain.split('.');
  const first = Math.min(labels.length - 1, MAX_DMARC_QUERIES - 1);
  const targets: string[] = [];
  for (let count = first; count >= 1; count--) targets.push(labels.slice(-count).join('.'));
  return targets;
}

/** The `psd` tag of a DMARC record (DMARCbis: `y`, `n` or `u`), lower-cased; null when absent. */
export function psdTag(record: string): string | null {
  for (const tag of record.split(';')) {
    const equals = tag.indexOf('=');
    if (equals >= 0 && tag.slice(0, equals).trim().toLowerCase() === 'psd')
      return tag
        .slice(equals + 1)
        .trim()
        .toLowerCase();
  }
  return null;
}

interface Found {
  name: string;
  record: string;
}

/**
 * The DMARC record that applies to `domain`: its own, else the organizational domain's, else the
 * public suffix domain's (DMARCbis policy discovery). The walk's queries are sent together once
 * the domain's own answer says a walk is needed; their answers are read in walk order, so a
 * failure past the point where the walk stops changes nothing.
 */
export async function discoverDmarc(txt: TxtQuery, domain: string): Promise<DmarcResult> {
  const own = (await txt(`_dmarc.${domain}`)).filter(isDmarcRecord);
  if (own.length === 1) return applied(own[0], 'domain', domain);

  const targets = treeWalkTargets(domain);
  const answers = await Promise.allSettled(targets.map((name) => txt(`_dmarc.${name}`)));
  const found: Found[] = [];
  for (let i = 0; i < targets.length; i++) {
    const answer = answers[i];
    if (answer.status === 'rejected') throw answer.reason;
    // Several records at one name are all discarded, and the walk goes on.
    const records = answer.value.filter(isDmarcRecord);
    if (records.length !== 1) continue;
    found.push({ name: targets[i], record: records[0] });
    const psd = psdTag(records[0]);
    if (psd === 'y' || psd === 'n') break;
  }

  if (found.length === 0) {
    // Several records at the domain and nothing above: report them, as no policy applies.
    if (own.length > 1) {
      const error = `${own.length} v=DMARC1 records at _dmarc.${domain} and none above (several at a name are discarded: no policy applies)`;
      return { found: true, record: own[0], records: own, valid: false, error, source: 'domain', policy_domain: domain };
    }
    return { found: false, record: null, records: [], valid: false, error: null, source: null, policy_domain: null };
  }
  const last = found[found.length - 1];
  if (psdTag(last.record) !== 'y') return applied(last.record, 'organizational', last.name);
  // psd=y: the organizational domain is the name one label below the public suffix domain; its
  // record applies if it has one, else the public suffix domain's does.
  const organizational = domain
    .split('.')
    .slice(-(last.name.split('.').length + 1))
    .join('.');
  const org = found.find((f) => f.name === organizational);
  return org ? applied(org.record, 'organizational', org.name) : applied(last.record, 'public_suffix', last.name);
}

/** The one record at a name, which applies: valid unless it breaks RFC 7489's syntax (dmarc-syntax.ts). */
function applied(record: string, source: 'domain' | 'organizational' | 'public_suffix', policyDomain: string): DmarcResult {
  const error = dmarcSyntaxError(record);
  return { found: true, record, records: [record], valid: error === null, error, source, policy_domain: policyDomain };
}
