/**
 * The DNS resolver against real DNS servers on loopback (test/servers/dns-server.ts), hostile
 * ones included: silent, SERVFAIL, REFUSED, truncating, wrong ids, garbage, slow.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { failure } from './failure.js';
import { isSeclookupError } from '../../../src/errors.js';
import { createDnsResolver, parseDnsServer, type DnsResolverOptions } from '../../../src/lib/dns/index.js';
import { DKIM_KEYS, EMAIL_ZONE, startDnsServer, type DnsTestServer } from '../../servers/dns-server.js';

let server: DnsTestServer;
let second: DnsTestServer;
beforeAll(async () => {
  server = await startDnsServer({ zone: EMAIL_ZONE });
  second = await startDnsServer({ zone: EMAIL_ZONE });
});
afterAll(async () => {
  await server.close();
  await second.close();
});
beforeEach(() => {
  server.setBehaviour('normal');
  second.setBehaviour('normal');
  server.resetCounts();
  second.resetCounts();
});

const resolverFor = (options: DnsResolverOptions = {}) => createDnsResolver({ servers: [server.address], timeouts: { totalMs: 300 }, ...options });

describe('answers', () => {
  it('reads A, AAAA, MX, NS and PTR records', async () => {
    const dns = resolverFor();
    expect(await dns.resolve('mx1.example.test', 'A')).toMatchObject({ status: 'ok', records: ['192.0.2.10'], cached: false, ttl: 300 });
    expect((await dns.resolve('mx1.example.test', 'AAAA')).records).toEqual(['2001:db8::10']);
    expect((await dns.resolve('example.test', 'MX')).records).toEqual(
      expect.arrayContaining([
        { priority: 10, exchange: 'mx1.example.test' },
        { priority: 20, exchange: 'mx2.example.test' },
        { priority: 30, exchange: 'mx-backup.example.test' },
      ]),
    );
    expect((await dns.resolve('example.test', 'NS')).records.sort()).toEqual(['ns1.example.test', 'ns2.example.test']);
    expect((await dns.resolve('10.2.0.192.in-addr.arpa', 'PTR')).records).toEqual(['mx1.example.test']);
  });

  it('reads a null MX as an empty exchange', async () => {
    expect((await resolverFor().resolve('nullmx.test', 'MX')).records).toEqual([{ priority: 0, exchange: '' }]);
  });

  it('joins the character-strings of one TXT record, and keeps records apart', async () => {
    const dns = resolverFor();
    expect((await dns.resolve('google._domainkey.example.test', 'TXT')).records).toEqual([`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`]);
    expect((await dns.resolve('two-spf.test', 'TXT')).records).toHaveLength(2);
  });

  it('follows a CNAME chain to the records, taking the smallest TTL on the way', async () => {
    const dns = resolverFor();
    const answer = await dns.resolve('selector1._domainkey.contoso.test', 'TXT');
    expect(answer).toMatchObject({ status: 'ok', records: [`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`] });
  });

  it('tells NXDOMAIN from NODATA, and a CNAME to a missing name is NXDOMAIN', async () => {
    const dns = resolverFor();
    expect(await dns.resolve('nope.example.test', 'A')).toMatchObject({ status: 'nxdomain', records: [] });
    expect(await dns.resolve('a-only.test', 'MX')).toMatchObject({ status: 'nodata', records: [] });
    expect(await dns.resolve('selector2._domainkey.contoso.test', 'TXT')).toMatchObject({ status: 'nxdomain' });
  });

  it('ignores case and a trailing dot in the name', async () => {
    expect((await resolverFor().resolve('MX1.Example.TEST.', 'A')).records).toEqual(['192.0.2.10']);
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    server.setBehaviour('truncate');
    const answer = await resolverFor().resolve('example.test', 'MX');
    expect(answer.records).toHaveLength(3);
    expect(server.tcpQueries.get('example.test MX')).toBe(1);
  });
});

describe('failures are bounded and classified', () => {
  it('gives up on a server that never answers after attempts x totalMs, with code timeout', async () => {
    server.setBehaviour('silent');
    const started = Date.now();
    const error = await failure(resolverFor({ attempts: 2, timeouts: { totalMs: 150 } }).resolve('example.test', 'MX'));
    expect(error.code).toBe('timeout');
    expect(server.total()).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000); // bounded, not a timing assertion: a hang would be 20 s
  });

  it.each([
    ['servfail', 'SERVFAIL'],
    ['refused', 'REFUSED'],
  ] as const)('reports %s as upstream_failed after trying every attempt', async (behaviour, word) => {
    server.setBehaviour(behaviour);
    const error = await failure(resolverFor({ attempts: 3 }).resolve('example.test', 'MX'));
    expect(error.code).toBe('upstream_failed');
    expect(error.message).toContain(word);
    expect(server.total()).toBe(3);
  });

  it('a CNAME loop inside one answer is upstream_failed, not a name without records (and not cached)', async () => {
    const zone = { 'a.loop.test': [{ type: 'CNAME' as const, target: 'b.loop.test' }], 'b.loop.test': [{ type: 'CNAME' as const, target: 'a.loop.test' }] };
    const broken = await startDnsServer({ zone, behaviour: 'loop-answer' });
    try {
      const dns = createDnsResolver({ servers: [broken.address], timeouts: { totalMs: 300 }, attempts: 1 });
      for (let ask = 1; ask <= 2; ask++) {
        const error = await failure(dns.resolve('a.loop.test', 'MX'));
        expect([error.code, error.message]).toEqual(['upstream_failed', 'CNAME loop in the answer for a.loop.test (at a.loop.test)']);
        expect(broken.total()).toBe(ask);
      }
    } finally {
      await broken.close();
    }
  });

  it('moves on to the next server when one fails', async () => {
    server.setBehaviour('servfail');
    const dns = createDnsResolver({ servers: [server.address, second.address], timeouts: { totalMs: 300 } });
    expect((await dns.resolve('mx1.example.test', 'A')).records).toEqual(['192.0.2.10']);
    expect([server.total(), second.total()]).toEqual([1, 1]);
  });

  it('ignores answers with the wrong id, so a spoofed answer never counts', async () => {
    server.setBehaviour('wrong-id');
    expect((await failure(resolverFor({ attempts: 1, timeouts: { totalMs: 150 } }).resolve('example.test', 'MX'))).code).toBe('timeout');
  });

  it('fails fast on a garbage answer from the server', async () => {
    server.setBehaviour('garbage');
    const error = await failure(resolverFor({ attempts: 2, timeouts: { totalMs: 5_000 } }).resolve('example.test', 'MX'));
    expect(error.code).toBe('upstream_failed');
    expect(error.message).toContain('malformed');
  });

  it('waits for a slow server within its deadline, and not beyond', async () => {
    server.setBehaviour('slow', 100);
    expect((await resolverFor({ timeouts: { totalMs: 1_000 } }).resolve('mx1.example.test', 'A')).records).toEqual(['192.0.2.10']);
    server.setBehaviour('slow', 400);
    expect((await failure(resolverFor({ attempts: 1, timeouts: { totalMs: 100 } }).resolve('mx1.example.test', 'A'))).code).toBe('timeout');
  });

  it('refuses a name that cannot be asked, before any query', async () => {
    const error = await failure(resolverFor().resolve(`${'a'.repeat(64)}.test`, 'A'));
    expect(error.code).toBe('invalid_option');
    expect(server.total()).toBe(0);
  });
});

describe('cache and single-flight', () => {
  it('answers a repeated question from the cache until its TTL runs out', async () => {
    let clock = 1_000_000;
    const dns = resolverFor({ now: () => clock });
    await dns.resolve('example.test', 'MX');
    const again = await dns.resolve('example.test', 'MX');
    expect(again.cached).toBe(true);
    expect(server.total()).toBe(1);
    clock += 299_000;
    expect((await dns.resolve('example.test', 'MX')).cached).toBe(true);
    clock += 2_000;
    expect((await dns.resolve('example.test', 'MX')).cached).toBe(false);
    expect(server.total()).toBe(2);
  });

  it('keeps TTLs within the floor and the ceiling, and caches negative answers for the SOA TTL', async () => {
    const dns = resolverFor({ cache: { minTtl: 400, maxTtl: 500 } });
    expect((await dns.resolve('mx1.example.test', 'A')).ttl).toBe(400);
    const capped = resolverFor({ cache: { minTtl: 1, maxTtl: 100 } });
    expect((await capped.resolve('mx1.example.test', 'A')).ttl).toBe(100);
    const negative = await resolverFor({ cache: { minTtl: 1 } }).resolve('nope.example.test', 'A');
    expect(negative).toMatchObject({ status: 'nxdomain', ttl: 60 });
    expect((await dns.resolve('nope.example.test', 'A')).status).toBe('nxdomain');
    server.resetCounts();
    expect((await dns.resolve('nope.example.test', 'A')).cached).toBe(true);
    expect(server.total()).toBe(0);
  });

  it('makes one upstream query for 1,000 concurrent identical questions', async () => {
    const dns = resolverFor();
    const answers = await Promise.all(Array.from({ length: 1_000 }, () => dns.resolve('example.test', 'MX')));
    expect(answers.every((a) => a.records.length === 3)).toBe(true);
    expect(server.queries.get('example.test MX')).toBe(1);
    expect(dns.queriesSent).toBe(1);
  });

  it('hands every caller its own copy of a cached answer', async () => {
    const dns = resolverFor();
    const first = await dns.resolve('example.test', 'MX');
    (first.records[0] as { exchange: string }).exchange = 'changed';
    expect((await dns.resolve('example.test', 'MX')).records.map((r) => r.exchange)).not.toContain('changed');
  });
});

describe('parseDnsServer', () => {
  it.each([
    ['127.0.0.1:5353', '127.0.0.1:5353', 5353],
    ['127.0.0.1', '127.0.0.1:53', 53],
    ['[::1]:5353', '[::1]:5353', 5353],
    ['::1', '[::1]:53', 53],
    [' 10.0.0.2:53 ', '10.0.0.2:53', 53],
  ])('reads %s', (input, text, port) => {
    expect(parseDnsServer(input)).toMatchObject({ text, port });
  });

  it.each(['dns.example.com', '127.0.0.1:0', '127.0.0.1:99999', '[::1]:x', '', '1.2.3'])('refuses %j with invalid_option', (input) => {
    let thrown: unknown;
    try {
      parseDnsServer(input);
    } catch (error) {
      thrown = error;
    }
    expect(isSeclookupError(thrown, 'invalid_option')).toBe(true);
  });
});

describe('in-flight limit', () => {
  it('sends at most maxInFlight exchanges at once; the others wait their turn and still get answers', async () => {
    server.setBehaviour('slow', 150);
    const dns = resolverFor({ maxInFlight: 2, timeouts: { totalMs: 2_000 } });
    const names = ['mx1.example.test', 'mx2.example.test', 'mx-backup.example.test', 'ns1.example.test', 'ns2.example.test'];
    const pending = Promise.all(names.map((name) => dns.resolve(name, 'A')));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(dns.queriesInFlight).toBe(2);
    expect(server.total()).toBe(2);
    const answers = await pending;
    expect(answers.map((a) => a.records.length)).toEqual([1, 1, 1, 1, 1]);
    expect(server.total()).toBe(5);
    expect(dns.queriesInFlight).toBe(0);
  });
});
