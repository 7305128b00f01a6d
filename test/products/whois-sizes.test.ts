/**
 * What the whois engine keeps from an upstream's answer is bounded, whatever the upstream sends:
 * each text field has a longest credible length (record.ts: status 128, registrar 256,
 * nameserver 253) and a longer value is read as absent; what is kept shares no memory with the
 * answer it was cut from; and the result cache is bounded in bytes as well as entries. A hostile
 * RDAP or WHOIS server (a registry, or a registrar one refers to) answering ~1 MB bodies with a
 * 500,000-character status and registrar name once took `serve` from 320 MB to 4.4 GB.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCache } from '../../src/lib/cache.js';
import { createLookup } from '../../src/lookup.js';
import { readWhoisAnswer } from '../../src/products/whois/answer.js';
import { readRdapDomain } from '../../src/products/whois/rdap.js';
import type { WhoisEngineOptions } from '../../src/products/whois/types.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { startWhoisServer, whoisAnswer, type WhoisTestServer } from '../servers/whois-server.js';

const HUGE = 500_000;
const lengths = (values: readonly string[]) => values.map((value) => value.length);

/** An RDAP domain object with the given status values and registrar jCard properties. */
function rdapDomain(name: string, status: string[], vcard: [string, string][], nameservers: string[] = ['ns1.example-dns.net']) {
  return {
    objectClassName: 'domain',
    ldhName: name,
    status,
    events: [
      { eventAction: 'registration', eventDate: '2020-01-01T00:00:00Z' },
      { eventAction: 'expiration', eventDate: '2030-01-01T00:00:00Z' },
    ],
    nameservers: nameservers.map((ldhName) => ({ objectClassName: 'nameserver', ldhName })),
    entities: [{ objectClassName: 'entity', roles: ['registrar'], vcardArray: ['vcard', vcard.map(([property, value]) => [property, {}, 'text', value])] }],
  };
}

describe('readRdapDomain: over-long text fields', () => {
  it('drops a 500 KB status, fn and nameserver, and falls back to the org', () => {
    const { record } = readRdapDomain(
      rdapDomain(
        'example.com',
        ['active', 'x'.repeat(HUGE)],
        [
          ['fn', 'R'.repeat(HUGE)],
          ['org', 'Example Registrar, Inc.'],
        ],
        [`${'a'.repeat(HUGE)}.example-dns.net`, 'ns1.example-dns.net'],
      ),
    );
    expect(lengths(record.status)).toEqual([2]);
    expect(record.registrar?.length).toBe(23);
    expect(record).toMatchObject({ status: ['ok'], registrar: 'Example Registrar, Inc.', nameservers: ['ns1.example-dns.net'] });
  });

  it('looks at a bounded number of nested entities: 200,000 of them under the registrant are no RangeError (a reviewer found a 500)', () => {
    const many = { ...rdapDomain('example.com', ['active'], []), entities: [{ roles: ['registrant'], entities: Array.from({ length: 200_000 }, () => ({})) }] };
    expect(readRdapDomain(many).record.registrar).toBeNull();
    // A registrar among the first thousand is still found; one past them is not looked for.
    const registrar = { roles: ['registrar'], vcardArray: ['vcard', [['fn', {}, 'text', 'Nested Registrar']]] };
    const early = { ...many, entities: [{ roles: ['registrant'], entities: [...Array.from({ length: 500 }, () => ({})), registrar] }] };
    expect(readRdapDomain(early).record.registrar).toBe('Nested Registrar');
    const late = { ...many, entities: [{ roles: ['registrant'], entities: [...Array.from({ length: 5_000 }, () => ({})), registrar] }] };
    expect(readRdapDomain(late).record.registrar).toBeNull();
  });

  it('keeps a status of 128 characters and a registrar of 256, not one more', () => {
    const at = (length: number) => 'S'.repeat(length);
    const kept = readRdapDomain(rdapDomain('example.com', [at(128)], [['fn', 'R'.repeat(256)]])).record;
    expect(lengths(kept.status)).toEqual([128]);
    expect(kept.registrar?.length).toBe(256);
    const dropped = readRdapDomain(rdapDomain('example.com', [at(129)], [['fn', 'R'.repeat(257)]])).record;
    expect(dropped.status).toEqual([]);
    expect(dropped.registrar).toBeNull();
  });
});

/** A port-43 answer with an over-long registrar and status line before the real ones. */
function hostileWhoisText(name: string): string {
  return [
    `Domain Name: ${name.toUpperCase()}`,
    `Registrar: ${'R'.repeat(HUGE)}`,
    'Sponsoring Registrar: Example Registrar, Inc.',
    `Domain Status: ${'x'.repeat(HUGE)}`,
    'Domain Status: clientTransferProhibited https://icann.org/epp#clientTransferProhibited',
    'Name Server: NS1.EXAMPLE-DNS.NET',
    'Creation Date: 2020-01-01T00:00:00Z',
    'Registry Expiry Date: 2030-01-01T00:00:00Z',
    '',
  ].join('\r\n');
}

describe('readWhoisAnswer: over-long text fields', () => {
  it('drops a 500 KB registrar and status line and reads the next ones', () => {
    const answer = readWhoisAnswer(hostileWhoisText('example.net'), 'whois.test');
    if (answer.kind !== 'record') throw new Error(`expected a record, got ${answer.kind}`);
    expect(answer.record.registrar?.length).toBe(23);
    expect(lengths(answer.record.status)).toEqual([24]);
    expect(answer.record).toMatchObject({ registrar: 'Example Registrar, Inc.', status: ['clientTransferProhibited'], nameservers: ['ns1.example-dns.net'] });
  });
});

/** V8's collector, callable without --expose-gc on the command line. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Heap bytes still used, after a full collection, by what `make` returns for 0..count-1. */
function retainedHeap(count: number, make: (index: number) => unknown): number {
  const gc = collector();
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: count }, (_, index) => make(index));
  gc();
  const after = process.memoryUsage().heapUsed;
  expect(kept).toHaveLength(count); // `kept` stays alive until after the second collection
  return after - before;
}

describe('kept values share no memory with the answer', () => {
  const ANSWERS = 30;
  /** A 1 MB answer per index: registrar, status and nameserver long enough that V8 would keep them as views of it. */
  const bigAnswer = (index: number) =>
    [
      'Domain Name: EXAMPLE.NET',
      'Registrar: ExampleRegistrarLLC',
      'Domain Status: clientTransferProhibited',
      'Name Server: ns1.example-dns.net',
      'Creation Date: 2020-01-01T00:00:00Z',
      `% ${'z'.repeat(1_000_000)}${index}`,
      '',
    ].join('\n');

  it('port 43: 30 records read from 1 MB answers keep far less than 30 MB', () => {
    const retained = retainedHeap(ANSWERS, (index) => {
      const answer = readWhoisAnswer(bigAnswer(index), 'whois.test');
      if (answer.kind !== 'record') throw new Error(`expected a record, got ${answer.kind}`);
      expect(answer.record).toMatchObject({ registrar: 'ExampleRegistrarLLC', status: ['clientTransferProhibited'], nameservers: ['ns1.example-dns.net'] });
      return answer.record;
    });
    expect(retained).toBeLessThan(8_000_000);
  });

  it('RDAP: a status trimmed from a 1 MB value does not keep that value', () => {
    const retained = retainedHeap(ANSWERS, (index) => {
      // JSON.parse makes the value its own string; trimming it leaves a view of it.
      const json = JSON.parse(JSON.stringify(rdapDomain('example.com', [`${' '.repeat(1_000_000 + index)}pendingDeleteRestorable`], [])));
      const { record } = readRdapDomain(json);
      expect(record.status).toEqual(['pendingDeleteRestorable']);
      return record;
    });
    expect(retained).toBeLessThan(8_000_000);
  });
});

describe('the engine against hostile upstreams', () => {
  let rdap: RdapTestServer;
  let whois: WhoisTestServer;
  beforeAll(async () => {
    rdap = await startRdapServer();
    whois = await startWhoisServer({
      answer: (query) => (query === 'example.net' ? whoisAnswer.text(hostileWhoisText(query)) : whoisAnswer.text('No match.\r\n')),
    });
  });
  afterAll(async () => {
    await Promise.all([rdap?.close(), whois?.close()]);
  });

  const options = (): WhoisEngineOptions => ({
    rdapServers: { com: rdap.base, net: null },
    whoisServers: { net: whois.address },
    ianaServer: whois.address,
    whoisPort: whois.port,
    timeouts: { connectMs: 2_000, totalMs: 5_000 },
  });
  const lookupWith = (store = createMemoryCache()) => createLookup({ outbound: { allowPrivateTargets: ['127.0.0.0/8'] }, cache: store, whois: options() });

  it('caps what a ~1 MB RDAP answer puts in the result and the cache (the review server)', async () => {
    // As the reviewer's server answered: a 500,000-character status and registrar name.
    rdap.set('hostile.com', rdapAnswer.json(rdapDomain('hostile.com', ['active', `${'x'.repeat(HUGE)}hostile.com`], [['fn', `R${'x'.repeat(HUGE)}`]])));
    const store = createMemoryCache();
    const result = await lookupWith(store).whois('hostile.com');
    expect(lengths(result.status)).toEqual([2]);
    expect(result).toMatchObject({ registrar: null, status: ['ok'], nameservers: ['ns1.example-dns.net'] });
    expect(store.entries).toBe(1);
    expect(store.bytes).toBeLessThan(2_000);
  });

  it('caps what a ~1 MB port-43 answer puts in the result', async () => {
    const result = await lookupWith().whois('example.net');
    expect(result.registrar?.length).toBe(23);
    expect(lengths(result.status)).toEqual([24]);
    expect(result).toMatchObject({ registrar: 'Example Registrar, Inc.', status: ['clientTransferProhibited'], source: 'whois' });
  });

  it('keeps the cache under its byte budget when every result is as large as the caps allow', async () => {
    // 64 distinct statuses of 128 characters, 64 nameservers of about 250: the largest result
    // (about 25 KB of JSON) a record can make.
    const status = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(2, '0')}${'s'.repeat(126)}`);
    const nameservers = Array.from(
      { length: 64 },
      (_, i) => `ns${String(i).padStart(2, '0')}.${'n'.repeat(60)}.${'n'.repeat(60)}.${'n'.repeat(60)}.${'n'.repeat(50)}.net`,
    );
    const domains = Array.from({ length: 12 }, (_, i) => `large${i}.com`);
    for (const name of domains) rdap.set(name, rdapAnswer.json(rdapDomain(name, status, [['fn', 'R'.repeat(256)]], nameservers)));
    const maxBytes = 200_000;
    const store = createMemoryCache({ maxEntries: 1_000, maxBytes });
    const lookup = lookupWith(store);
    const sizes: number[] = [];
    for (const name of domains) {
      const outcome = await lookup.detailed.whois(name);
      expect(outcome.result.nameservers).toHaveLength(64);
      sizes.push(JSON.stringify(outcome.result).length);
      expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    }
    // Each entry counts twice its JSON (the JSON and the result holding the same text).
    const entrySize = 2 * Math.max(...sizes);
    expect(Math.max(...sizes)).toBeLessThan(30_000);
    expect(store.entries).toBe(Math.floor(maxBytes / entrySize));
    // The newest is kept, the oldest went first.
    const hits = (name: string) => rdap.hits.get(`/rdap/domain/${name}`) ?? 0;
    expect((await lookup.detailed.whois(domains.at(-1)!)).cached).toBe(true);
    expect((await lookup.detailed.whois(domains[0])).cached).toBe(false);
    expect(hits(domains[0])).toBe(2);
  });
});
