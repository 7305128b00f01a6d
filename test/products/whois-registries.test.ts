/**
 * The registry answers issue 23 names, through the whole engine (createLookup) and a loopback
 * WHOIS server that sends the real answers of the accuracy corpus (test/fixtures/whois/corpus):
 * registro.br's `% No match for`, the `Status: free` / `Status: Not Registered` answers that
 * came back as records, .pt's creation date and nameservers, names under CentralNic's private
 * suffixes, and rate-limit and refused-query answers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLookupError, type LookupError } from '../../src/errors.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { startWhoisServer, whoisAnswer, type WhoisTestServer } from '../servers/whois-server.js';

const CORPUS = join(import.meta.dirname, '../fixtures/whois/corpus/weppos');
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

/** The query the loopback server hears -> the corpus answer it sends. */
const ANSWERS: Record<string, string> = {
  'nosuch.br': 'whois.registro.br/br/status_available.txt',
  'limited.br': 'whois.registro.br/br/status_available_limited.txt',
  'nosuch.lv': 'whois.nic.lv/lv/status_available.txt',
  'nosuch.pe': 'kero.yachay.pe/pe/status_available.txt',
  'nosuch.je': 'whois.je/je/status_available.txt',
  'nosuch.ke': 'whois.kenic.or.ke/ke/status_available.txt',
  'nosuch.cm': 'whois.netcom.cm/cm/status_available.txt',
  'nosuch.it': 'whois.nic.it/it/status_available.txt',
  'la.it': 'whois.nic.it/it/status_unavailable.txt',
  'google.pt': 'whois.dns.pt/pt/status_registered.txt',
  'billboard.br.com': 'whois.centralnic.com/br.com/status_registered.txt',
  'nosuch.uk.com': 'whois.centralnic.com/uk.com/status_available.txt',
  'busy.pe': 'kero.yachay.pe/pe/response_throttled.txt',
  'busy.fr': 'whois.nic.fr/fr/response_throttled.txt',
  'busy.nl': 'whois.domain-registry.nl/nl/response_throttled.txt',
  'refused.bo': 'whois.nic.bo/bo/status_available.txt',
  // KISA's answers in their current form (test/fixtures/whois/kisa, from pywhois2).
  'nosuch.kr': '../../kisa/kr_no_match.txt',
  'google.co.kr': '../../kisa/google_co_kr_whois.txt',
};

let whois: WhoisTestServer;
let lookup: Lookup;

beforeAll(async () => {
  whois = await startWhoisServer({
    answer: (query) => (ANSWERS[query] ? whoisAnswer.text(readFileSync(join(CORPUS, ANSWERS[query]))) : whoisAnswer.text('garbage\n')),
  });
  const server = whois.address;
  lookup = createLookup({
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    now: () => NOW,
    whois: {
      // RDAP anywhere would be refused by the guard (10/8): every lookup here must stay on port 43.
      rdapServers: {
        br: null,
        lv: null,
        pe: null,
        je: null,
        ke: null,
        cm: null,
        it: null,
        pt: null,
        fr: null,
        nl: null,
        bo: null,
        kr: null,
        com: 'http://10.0.0.1/rdap/',
      },
      whoisServers: {
        br: server,
        lv: server,
        pe: server,
        je: server,
        ke: server,
        cm: server,
        it: server,
        pt: server,
        fr: server,
        nl: server,
        bo: server,
        kr: server,
        'br.com': server,
        'uk.com': server,
      },
      timeouts: { connectMs: 2_000, totalMs: 5_000 },
      lookupTimeoutMs: 10_000,
      cacheSize: 0,
    },
  });
});

afterAll(async () => {
  await whois?.close();
});

async function failure(promise: Promise<unknown>): Promise<LookupError> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return error;
    throw error;
  }
  throw new Error('expected the lookup to fail');
}

describe('"not registered" answers are 404 domain_not_found', () => {
  it.each([
    ['registro.br, "% No match for"', 'nosuch.br'],
    ['registro.br rate-limited but answering, "% No match for domain"', 'limited.br'],
    ['.lv, "Status: free"', 'nosuch.lv'],
    ['.pe, "Status: Not Registered"', 'nosuch.pe'],
    ['.je, "Status: Not Registered"', 'nosuch.je'],
    ['.ke, "Status: Not Registered"', 'nosuch.ke'],
    ['.cm, "Status: Not Registered"', 'nosuch.cm'],
    ['.it, "Status: AVAILABLE"', 'nosuch.it'],
    ['.it, "Status: UNASSIGNABLE" (no one may register it)', 'la.it'],
    ['CentralNic uk.com, "DOMAIN NOT FOUND"', 'nosuch.uk.com'],
    // It was 502 "answered nothing we can read" (found by a reviewer): only KISA's old wording was known.
    ['.kr, KISA\'s "The requested domain was not found in the Registry or Registrar’s WHOIS Server."', 'nosuch.kr'],
  ])('%s', async (_what, domain) => {
    const error = await failure(lookup.whois(domain));
    expect([error.code, error.message]).toEqual(['domain_not_found', `${domain} is not registered (the registry's WHOIS service says so)`]);
  });
});

describe('rate limits and refused queries are 502 lookup_failed, saying so', () => {
  it.each([
    ['busy.pe', 'rate limit', 'Looup quota exceeded.'],
    ['busy.fr', 'rate limit', 'Too many requests...'],
    ['busy.nl', 'rate limit', 'whois.domain-registry.nl: only 1 request per second allowed, try again later'],
    ['refused.bo', 'query refused', 'whois.nic.bo solo acepta consultas con dominios .bo'],
  ])('%s: %s', async (domain, kind, line) => {
    const error = await failure(lookup.whois(domain));
    expect(error.code).toBe('lookup_failed');
    expect(error.message).toBe(`the WHOIS server ${whois.address} refused the query (${kind}): ${JSON.stringify(line)}`);
  });
});

describe('.pt', () => {
  it('reads the creation date and the nameservers (not the domain itself)', async () => {
    const result = await lookup.whois('google.pt');
    expect(result).toMatchObject({
      domain: 'google.pt',
      created_at: '2003-01-09T00:00:00Z',
      expires_at: '2015-02-28T00:00:00Z',
      status: ['ACTIVE'],
      nameservers: ['ns4.google.com', 'ns2.google.com', 'ns1.google.com', 'ns3.google.com'],
      source: 'whois',
    });
  });
});

describe('.kr', () => {
  it("reads KISA's record, the registrar without the link to its page that KISA writes after it", async () => {
    expect(await lookup.whois('google.co.kr')).toMatchObject({
      domain: 'google.co.kr',
      registrar: 'Whois Corp.',
      created_at: '1999-07-28T00:00:00Z',
      expires_at: '2026-07-28T00:00:00Z',
      nameservers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      source: 'whois',
    });
  });
});

describe('names under a private suffix a registry operates (CentralNic)', () => {
  it("looks up the name under br.com at br.com's WHOIS server, and reads CentralNic's registrar", async () => {
    const asked = whois.queries.length;
    const result = await lookup.whois('www.billboard.br.com');
    expect(whois.queries.slice(asked).map((q) => q.query)).toEqual(['billboard.br.com']);
    expect(result).toMatchObject({
      domain: 'billboard.br.com',
      registrar: 'Network Solutions LLC',
      created_at: '2009-04-17T12:22:49Z',
      expires_at: '2017-04-17T23:59:59Z',
      nameservers: ['ns1.locaweb.com.br', 'ns2.locaweb.com.br'],
      source: 'whois',
    });
  });

  it('normalizes to the name the registry holds, and leaves other private suffixes (github.io) alone', () => {
    const whoisEngine = lookup.engine('whois');
    expect(whoisEngine.prepare('WWW.Example.UK.COM').domain).toBe('example.uk.com');
    expect(whoisEngine.prepare('example.com.de').domain).toBe('example.com.de');
    expect(whoisEngine.prepare('br.com').domain).toBe('br.com');
    expect(whoisEngine.prepare('alice.github.io').domain).toBe('github.io');
    expect(whoisEngine.prepare('www.example.com').domain).toBe('example.com');
  });
});
