/**
 * What a port-43 answer means for the lookup: the domain's record, "not registered" (404
 * `domain_not_found`), or a failed lookup (502 `lookup_failed`, with the reason). The engine
 * and the accuracy corpus (test/fixtures/whois/corpus) both read answers through here.
 *
 * The order (ours): an answer that holds registration facts (a registrar, a creation or expiry
 * date, a nameserver) is a record, whatever its disclaimer says. One that holds none is, in
 * turn: a refusal (rate limit, block, busy service, rejected query: answer-forms.ts REFUSED),
 * "not registered" (NOT_FOUND), and else unreadable (`lookup_failed`).
 */
import { refusalIn, saysNotFound } from './answer-forms.js';
import { parseWhoisText } from './parse.js';
import { hasFacts, isEmptyRecord, type RegistrationRecord } from './record.js';

export type WhoisAnswer = { kind: 'record'; record: RegistrationRecord; referral: string | null } | { kind: 'not_found' } | { kind: 'failed'; message: string };

/** Read one answer of `server` (named in messages). */
export function readWhoisAnswer(text: string, server: string): WhoisAnswer {
  if (text.trim() === '') return { kind: 'failed', message: `the WHOIS server ${server} sent an empty answer` };
  const parsed = parseWhoisText(text);
  if (!hasFacts(parsed.record)) {
    const refusal = refusalIn(text);
    if (refusal) return { kind: 'failed', message: `the WHOIS server ${server} refused the query (${refusal.kind}): ${JSON.stringify(refusal.line)}` };
    if (saysNotFound(text)) return { kind: 'not_found' };
  }
  if (isEmptyRecord(parsed.record)) return { kind: 'failed', message: `the WHOIS server ${server} answered nothing we can read` };
  return { kind: 'record', record: parsed.record, referral: parsed.referral };
}
