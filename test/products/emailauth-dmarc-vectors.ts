/**
 * DMARC policy discovery vectors: a domain, the `_dmarc` TXT records around it, and the record
 * that applies. Built from the DMARCbis draft's own examples and rules ("DNS Tree Walk", "DMARC
 * Policy Discovery", "Identifier Alignment Evaluation" and the tree walk examples of
 * draft-ietf-dmarc-dmarcbis) and from RFC 7489's record syntax (6.4). Each says what RFC 7489's
 * public-suffix-list discovery gives, so the cases where the two agree and where they differ are
 * both covered. Shared by emailauth-dmarc.test.ts and the bench's accuracy row.
 */
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { createEmailAuthEngine } from '../../src/products/emailauth/engine.js';
import type { DmarcResult } from '../../src/products/emailauth/types.js';
import type { DnsTestServer, Zone } from '../servers/dns-server.js';

export interface DmarcVector {
  name: string;
  /** The domain looked up. */
  domain: string;
  /** TXT records by `_dmarc` owner name. */
  records: Record<string, string[]>;
  /** The DMARCbis answer: the domain whose record applies and how it was found; null for none. */
  expected: { policyDomain: string; source: 'domain' | 'organizational' | 'public_suffix'; valid?: boolean } | null;
  /** Where RFC 7489 (organizational domain from the public suffix list) finds its record; null for none. */
  rfc7489: string | null;
  /** Where this comes from. */
  basis: string;
}

/** A record naming its own domain, so each is told apart from the others. */
export const rec = (domain: string, tags = 'p=reject') => `v=DMARC1; ${tags}; rua=mailto:dmarc@${domain}`;

export const DMARC_VECTORS: DmarcVector[] = [
  // --- RFC 7489 and DMARCbis agree ---
  {
    name: 'a record at the domain itself',
    domain: 'example.com',
    records: { 'example.com': [rec('example.com')] },
    expected: { policyDomain: 'example.com', source: 'domain' },
    rfc7489: 'example.com',
    basis: 'DMARCbis policy discovery: the Author Domain first',
  },
  {
    name: 'a subdomain without a record, its registrable domain with one',
    domain: 'mail.example.com',
    records: { 'example.com': [rec('example.com')] },
    expected: { policyDomain: 'example.com', source: 'organizational' },
    rfc7489: 'example.com',
    basis: 'DMARCbis simple organizational example',
  },
  {
    name: 'a deep subdomain, a record only at the registrable domain',
    domain: 'a.b.c.example.com',
    records: { 'example.com': [rec('example.com')] },
    expected: { policyDomain: 'example.com', source: 'organizational' },
    rfc7489: 'example.com',
    basis: 'DMARCbis tree walk',
  },
  {
    name: 'a subdomain under a two-label public suffix (co.uk)',
    domain: 'shop.example.co.uk',
    records: { 'example.co.uk': [rec('example.co.uk')] },
    expected: { policyDomain: 'example.co.uk', source: 'organizational' },
    rfc7489: 'example.co.uk',
    basis: 'DMARCbis tree walk; RFC 7489 3.2 with the PSL',
  },
  {
    name: 'no record anywhere',
    domain: 'nothing.example.net',
    records: {},
    expected: null,
    rfc7489: null,
    basis: 'DMARCbis policy discovery: no record, no DMARC',
  },
  {
    name: "a subdomain's own record wins over its registrable domain's",
    domain: 'own.example.org',
    records: { 'own.example.org': [rec('own.example.org', 'p=none')], 'example.org': [rec('example.org')] },
    expected: { policyDomain: 'own.example.org', source: 'domain' },
    rfc7489: 'own.example.org',
    basis: 'DMARCbis policy discovery: the Author Domain first',
  },
  {
    name: 'the records with the fewest labels win when several parents have one',
    domain: 'x.mail.example.com',
    records: { 'mail.example.com': [rec('mail.example.com')], 'example.com': [rec('example.com', 'p=quarantine')] },
    expected: { policyDomain: 'example.com', source: 'organizational' },
    rfc7489: 'example.com',
    basis: 'DMARCbis organizational domain rule 3 and the deep tree walk example',
  },
  {
    name: 'a public suffix domain record with psd=y when the organizational domain has its own',
    domain: 'mail.giant.bank',
    records: { 'giant.bank': [rec('giant.bank')], bank: [rec('bank', 'p=reject; psd=y')] },
    expected: { policyDomain: 'giant.bank', source: 'organizational' },
    rfc7489: 'giant.bank',
    basis: 'DMARCbis example with a PSD DMARC policy record',
  },
  {
    name: 'several records at an intermediate name are discarded and the walk goes on',
    domain: 'a.multi.example.net',
    records: { 'multi.example.net': [rec('multi.example.net'), rec('multi.example.net', 'p=none')], 'example.net': [rec('example.net')] },
    expected: { policyDomain: 'example.net', source: 'organizational' },
    rfc7489: 'example.net',
    basis: 'DMARCbis tree walk step 6',
  },
  {
    name: 'several records at the domain and none above: found, not valid',
    domain: 'two.example.net',
    records: { 'two.example.net': [rec('two.example.net'), rec('two.example.net', 'p=none')] },
    expected: { policyDomain: 'two.example.net', source: 'domain', valid: false },
    rfc7489: 'two.example.net',
    basis: 'RFC 7489 6.6.3 and DMARCbis: several records mean no policy',
  },
  {
    name: 'a version tag that is not first, or not DMARC1, is no record',
    domain: 'other.example.net',
    records: { 'other.example.net': ['p=reject; v=DMARC1', 'v=DMARC2; p=reject', 'v=spf1 -all'] },
    expected: null,
    rfc7489: null,
    basis: 'RFC 7489 6.4 and DMARCbis record format: v first, DMARC1',
  },
  {
    name: 'a record without spaces and with an upper-case tag name',
    domain: 'tight.example.net',
    records: { 'tight.example.net': ['V=DMARC1;p=reject'] },
    expected: { policyDomain: 'tight.example.net', source: 'domain' },
    rfc7489: 'tight.example.net',
    basis: 'RFC 7489 6.4 ABNF: tag names case-insensitive, *WSP around "="',
  },
  // --- RFC 7489 and DMARCbis differ: DMARCbis is followed ---
  {
    name: 'a record only at an intermediate name (below the registrable domain)',
    domain: 'a.mail.example.net',
    records: { 'mail.example.net': [rec('mail.example.net')] },
    expected: { policyDomain: 'mail.example.net', source: 'organizational' },
    rfc7489: null,
    basis: 'DMARCbis tree walk: every label is asked; RFC 7489 asks the domain and the PSL organizational domain only',
  },
  {
    name: 'psd=n marks an intermediate name as the organizational domain',
    domain: 'a.dept.example.org',
    records: { 'dept.example.org': [rec('dept.example.org', 'p=quarantine; psd=n')], 'example.org': [rec('example.org')] },
    expected: { policyDomain: 'dept.example.org', source: 'organizational' },
    rfc7489: 'example.org',
    basis: 'DMARCbis organizational domain rule 1 (psd=n)',
  },
  {
    name: 'a public suffix domain record with psd=y applies when nothing below has one',
    domain: 'giant.bank',
    records: { bank: [rec('bank', 'p=reject; psd=y')] },
    expected: { policyDomain: 'bank', source: 'public_suffix' },
    rfc7489: null,
    basis: 'DMARCbis policy discovery: the Public Suffix Domain last (RFC 9091 made standard)',
  },
  {
    name: 'psd=y: a record between the domain and its organizational domain is not used',
    domain: 'a.b.mega.bank',
    records: { 'b.mega.bank': [rec('b.mega.bank')], bank: [rec('bank', 'p=reject; psd=y')] },
    expected: { policyDomain: 'bank', source: 'public_suffix' },
    rfc7489: null,
    basis: 'DMARCbis organizational domain rule 2: the name one label below the psd=y record',
  },
  {
    name: 'a private public suffix (github.io) with a record and no psd tag is the organizational domain',
    domain: 'alice.github.io',
    records: { 'github.io': [rec('github.io')] },
    expected: { policyDomain: 'github.io', source: 'organizational' },
    rfc7489: null,
    basis: "DMARCbis tree walk: no public suffix list; RFC 7489 with the PSL's private section makes alice.github.io its own",
  },
  {
    name: 'several records at the domain are discarded and the walk goes on',
    domain: 'dup.example.net',
    records: { 'dup.example.net': [rec('dup.example.net'), rec('dup.example.net', 'p=none')], 'example.net': [rec('example.net')] },
    expected: { policyDomain: 'example.net', source: 'organizational' },
    rfc7489: 'dup.example.net',
    basis: 'DMARCbis tree walk step 2; RFC 7489 6.6.3 stops (no policy)',
  },
  {
    name: 'a domain of ten labels: the walk skips to seven, eight queries in all',
    domain: 'a.b.c.d.e.f.g.h.example.com',
    records: { 'example.com': [rec('example.com')] },
    expected: { policyDomain: 'example.com', source: 'organizational' },
    rfc7489: 'example.com',
    basis: 'DMARCbis tree walk steps 3-4 and its a.b.c.d.e.f.g.h.i.j.mail.example.com illustration',
  },
];

/** The zone of one vector: its `_dmarc` records, and an SPF record at the domain so it exists. */
export function vectorZone(vector: DmarcVector): Zone {
  const zone: Zone = { [vector.domain]: [{ type: 'TXT', data: 'v=spf1 -all' }] };
  for (const [name, texts] of Object.entries(vector.records)) zone[`_dmarc.${name}`] = texts.map((data) => ({ type: 'TXT', data }));
  return zone;
}

/** The DMARC part of the result the vector calls for. */
export function expectedDmarc(vector: DmarcVector): DmarcResult {
  const { expected } = vector;
  if (!expected) return { found: false, record: null, records: [], valid: false, error: null, source: null, policy_domain: null };
  const records = vector.records[expected.policyDomain];
  const valid = expected.valid ?? true;
  // The only invalid vectors are several records at the domain with none above.
  const error = valid
    ? null
    : `${records.length} v=DMARC1 records at _dmarc.${vector.domain} and none above (several at a name are discarded: no policy applies)`;
  return {
    found: true,
    record: records[0],
    records: valid ? [records[0]] : records,
    valid,
    error,
    source: expected.source,
    policy_domain: expected.policyDomain,
  };
}

export interface VectorRun {
  vector: DmarcVector;
  dmarc: DmarcResult;
  /** `_dmarc` queries the lookup sent. */
  dmarcQueries: string[];
}

/** Look every vector up through the engine, each on its own zone and a fresh resolver. */
export async function runDmarcVectors(server: DnsTestServer): Promise<VectorRun[]> {
  const runs: VectorRun[] = [];
  for (const vector of DMARC_VECTORS) {
    server.setZone(vectorZone(vector));
    server.resetCounts();
    const engine = createEmailAuthEngine({ dns: createDnsResolver({ servers: [server.address] }), cache: null });
    const { result } = await engine.lookup(engine.prepare(vector.domain));
    const dmarcQueries = [...server.queries.keys()].filter((key) => key.startsWith('_dmarc.'));
    runs.push({ vector, dmarc: result.dmarc, dmarcQueries });
  }
  return runs;
}
