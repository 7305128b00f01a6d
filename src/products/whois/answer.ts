/**
 * What a port-43 answer means for the lookup: the domain's record, "not registered" (404
 * `domain_not_found`), or a failed lookup (502 `lookup_failed`, with the reason). The engine
 * and the accuracy corpus (test/fixtures/whois/corpus) both read answers through here.
 */
import { parseWhoisText } from './parse.js';
import { isEmptyRecord, type RegistrationRecord } from './record.js';

export type WhoisAnswer =
  | { kind: 'record'; record: RegistrationRecord; referral: string | null }
  | { kind: 'not_found' }
  | { kind: 'failed'; message: string };

/** Read one answer of `server` (named in messages). */
export function readWhoisAnswer(text: string, server: string): WhoisAnswer {
  const parsed = parseWhoisText(text);
  if (parsed.notFound) return { kind: 'not_found' };
  if (isEmptyRecord(parsed.record)) return { kind: 'failed', message: `the WHOIS server ${server} answered nothing we can read` };
  return { kind: 'record', record: parsed.record, referral: parsed.referral };
}
