/**
 * Registry answers too large in the wrong way: a megabyte of nameservers or status values, in
 * RDAP JSON or WHOIS text, and WHOIS text with thousands of lines. Before, the lists grew without
 * bound and each value was checked against all the others (a megabyte of them blocked the
 * process for minutes); now each list keeps its first MAX_LIST_VALUES values and the WHOIS parser
 * reads the first MAX_ANSWER_LINES lines, so the work is linear in the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { MAX_ANSWER_LINES, parseWhoisText } from '../../src/products/whois/parse.js';
import { readRdapDomain } from '../../src/products/whois/rdap.js';
import { MAX_LIST_VALUES } from '../../src/products/whois/record.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { startWhoisServer, whoisAnswer, type WhoisTestServer } from '../servers/whois-server.js';

const MANY = 15_000; // about 700 KB of RDAP JSON, under the 1 MB cap
const nameservers = (count: number) => Array.from({ length: count }, (_, i) => `ns${i}.example.net`);

let rdap: RdapTestServer;
let whois: WhoisTestServer;
let lookup: Lookup;

beforeAll(async () => {
  rdap = await startRdapServer({
    'many.com': rdapAnswer.json({
      objectClassName: 'domain',
      ldhName: 'many.com',
      status: Array.from({ length: MANY }, (_, i) => `status ${i}`),
      nameservers: nameservers(MANY).map((ldhName) => ({ ldhName })),
      events: [{ eventAction: 'registration', eventDate: '2001-02-03T04:05:06Z' }],
    }),
  });
  const text = ['Domain Name: many.xyz', 'Creation Date: 2001-02-03T04:05:06Z', ...nameservers(MANY).map((ns) => `Name Server: ${ns}`)].join('\r\n');
  whois = await startWhoisServer({ answer: () => whoisAnswer.text(text) });
  lookup = createLookup({
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: {
      rdapServers: { com: rdap.base, xyz: null },
      whoisServers: { xyz: whois.address },
      timeouts: { connectMs: 2_000, totalMs: 5_000 },
      lookupTimeoutMs: 10_000,
    },
  });
});

afterAll(async () => {
  await Promise.all([rdap?.close(), whois?.close()]);
});

describe('answers with thousands of values', () => {
  it('keeps the first MAX_LIST_VALUES nameservers and status values of an RDAP answer', async () => {
    const result = await lookup.whois('many.com');
    expect(result.nameservers).toEqual(nameservers(MAX_LIST_VALUES));
    expect(result.status).toHaveLength(MAX_LIST_VALUES);
    expect(result.status[0]).toBe('status 0');
    expect(result.created_at).toMatch(/^2001-02-03/);
  });

  it('keeps the first MAX_LIST_VALUES nameservers of a WHOIS answer', async () => {
    const result = await lookup.whois('many.xyz');
    expect(result.nameservers).toEqual(nameservers(MAX_LIST_VALUES));
    expect(result.created_at).toMatch(/^2001-02-03/);
  });

  it('reads no further than MAX_ANSWER_LINES lines of WHOIS text', () => {
    const padding = Array.from({ length: MAX_ANSWER_LINES }, (_, i) => `Remark ${i}: nothing`);
    const parsed = parseWhoisText(['Domain Name: late.test', ...padding, 'Creation Date: 2001-02-03T04:05:06Z'].join('\n'));
    expect(parsed.record.createdAt).toBeNull();
    const early = parseWhoisText(['Domain Name: late.test', 'Creation Date: 2001-02-03T04:05:06Z', ...padding].join('\n'));
    expect(early.record.createdAt).toBe(Date.UTC(2001, 1, 3, 4, 5, 6));
  });

  it('cuts a heading block at 100 lines: a block that never ends is not read to its end', () => {
    // `Registrar:` with its name on the 101st line of its block (real blocks: a dozen lines).
    const block = [...Array.from({ length: 100 }, (_, i) => `   line ${i}`)];
    const parsed = parseWhoisText(['Domain Name: block.test', 'Registrar:', ...block, '   Organization: Far Away Registrar'].join('\n'));
    expect(parsed.record.registrar).toBe('line 0');
    const near = parseWhoisText(['Domain Name: block.test', 'Registrar:', '   Organization: Near Registrar', ...block].join('\n'));
    expect(near.record.registrar).toBe('Near Registrar');
  });

  it('takes the first registrar link that is a URL, skipping those that do not parse', () => {
    const link = (href: string) => ({ rel: 'related', type: 'application/rdap+json', href });
    const answer = readRdapDomain({
      objectClassName: 'domain',
      links: [link('http://[::1/domain/a.com'), link('https://127.0.0.1:99999/domain/a.com'), link('https://rdap.registrar.example/domain/a.com')],
    });
    expect(answer.registrarLink).toBe('https://rdap.registrar.example/domain/a.com');
    expect(readRdapDomain({ objectClassName: 'domain', links: [link('http://%zz/domain/a.com')] }).registrarLink).toBeNull();
  });

  it('reads an RDAP object with every field of the wrong type as no facts, never a crash', () => {
    const wrong = {
      objectClassName: 'domain',
      ldhName: 7,
      status: 'active',
      nameservers: { ldhName: 'ns.example.net' },
      events: 'yesterday',
      entities: [null, 1, 'x', { roles: 'registrar', vcardArray: 5 }],
      links: 'http://x',
    };
    expect(readRdapDomain(wrong)).toEqual({
      record: { registrar: null, createdAt: null, updatedAt: null, expiresAt: null, status: [], nameservers: [] },
      name: null,
      registrarLink: null,
    });
  });
});
