/**
 * emailval end to end against a real loopback DNS server: every risk reason code, MX
 * formatting, caching (TTL, fetched_at, copies), the disposable-list semantics over the
 * bundled list, DNS failures as 502, and the HTTP forms through api.handle.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import type { EmailValEngine } from '../../src/products/emailval/engine.js';
import { formatMx } from '../../src/products/emailval/mx.js';
import { EMAIL_LIMITS_NOTE, type EmailValResult } from '../../src/products/emailval/types.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import { EMAIL_ZONE } from '../servers/email-zone.js';

/**
 * EMAIL_ZONE plus names under real public suffixes (RFC 2606 example names, and one real
 * disposable domain from the bundled list) for the public-suffix-aware disposable check.
 */
const ZONE: Zone = {
  ...EMAIL_ZONE,
  'example.com': [
    { type: 'MX', priority: 20, exchange: 'mx2.example.com' },
    { type: 'MX', priority: 10, exchange: 'mx-b.example.com' },
    { type: 'MX', priority: 10, exchange: 'mx-a.example.com' },
    { type: 'A', address: '192.0.2.80' },
  ],
  'mailinator.com': [{ type: 'MX', priority: 10, exchange: 'mail.mailinator.com' }],
  'xn--bcher-kva.example': [{ type: 'MX', priority: 5, exchange: 'mx.xn--bcher-kva.example' }],
  'aaaa-only.example.net': [{ type: 'AAAA', address: '2001:db8::25' }],
  'txt-only.example.net': [{ type: 'TXT', data: 'v=spf1 -all' }],
  'mixed-null.example.org': [
    { type: 'MX', priority: 0, exchange: '.' },
    { type: 'MX', priority: 10, exchange: 'mx.example.org' },
  ],
  'short-ttl.example.com': [{ type: 'MX', priority: 10, exchange: 'mx.example.com', ttl: 1 }],
};

const EXAMPLE_MX = ['10 mx-a.example.com', '10 mx-b.example.com', '20 mx2.example.com'];
const FETCHED_AT_SHAPE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
/** Domains in the bundled list: the non-comment lines of the file but the `*.` ones (each of those has its domain's line too). */
const LISTED = readFileSync(join(bundledDataDir(), 'emailval', 'disposable-domains.txt'), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('*.')).length;

let server: DnsTestServer;
let lookup: Lookup;
let engine: EmailValEngine;

function wellFormed(email: string, domain: string, fields: Partial<EmailValResult>): EmailValResult {
  return {
    email,
    domain,
    valid_format: true,
    disposable: false,
    has_mx: true,
    mx: [],
    risk: { level: 'low', reasons: [] },
    limits_note: EMAIL_LIMITS_NOTE,
    ...fields,
  };
}

/** A fresh lookup: an empty result cache and an empty DNS cache (each loads the lists, about 0.1 s). */
function freshLookup(): void {
  lookup = createLookup({ dns: { servers: [server.address] } });
  engine = lookup.engine('emailval');
  server.setBehaviour('normal');
  server.resetCounts();
}

beforeAll(async () => {
  server = await startDnsServer({ zone: ZONE });
  freshLookup();
});
afterAll(() => server.close());

describe('emailval: well-formed addresses, one reason code at a time', () => {
  beforeEach(freshLookup);

  it('low risk: MX found, sorted by priority then host; the local part keeps its case, the domain is lower-cased', async () => {
    const { result, cached, fetchedAt, json } = await lookup.detailed.emailval('  Jane.Doe@Example.COM ');
    expect(result).toEqual(wellFormed('Jane.Doe@example.com', 'example.com', { mx: EXAMPLE_MX }));
    expect(cached).toBe(false);
    expect(json).toBe(JSON.stringify(result));
    expect(Date.now() - fetchedAt!.getTime()).toBeLessThan(5_000);
    expect(server.queries.get('example.com MX')).toBe(1);
    expect(server.total()).toBe(1); // MX found: no A/AAAA question
  });

  it('formatMx sorts by the host as it shows it, lower case, whatever case a resolver hands over', () => {
    const records = [
      { priority: 10, exchange: 'b.example.com' },
      { priority: 10, exchange: 'MX.example.com' },
      { priority: 5, exchange: 'Z.example.com' },
      { priority: 10, exchange: 'a.example.com' },
      { priority: 10, exchange: 'mx.EXAMPLE.com' },
    ];
    expect(formatMx(records)).toEqual(['5 z.example.com', '10 a.example.com', '10 b.example.com', '10 mx.example.com']);
  });

  it('role_account (medium): compared case-insensitively, a +tag ignored', async () => {
    for (const email of ['Admin@example.com', 'noreply+billing@example.com', 'INFO@example.com']) {
      expect((await lookup.emailval(email)).risk, email).toEqual({ level: 'medium', reasons: ['role_account'] });
    }
    expect((await lookup.emailval('jane+admin@example.com')).risk).toEqual({ level: 'low', reasons: [] });
  });

  it("people's names the upstream role list held are people again; bounce mailboxes are roles", async () => {
    for (const email of ['per@example.com', 'Sydney@example.com', 'paris@example.com', 'alexa@example.com']) {
      expect((await lookup.emailval(email)).risk, email).toEqual({ level: 'low', reasons: [] });
    }
    for (const email of ['bounce@example.com', 'bounces+list@example.com', 'postmaster@example.com']) {
      expect((await lookup.emailval(email)).risk, email).toEqual({ level: 'medium', reasons: ['role_account'] });
    }
  });

  it('disposable_domain (high) even with MX', async () => {
    expect(await lookup.emailval('someone@mailinator.com')).toEqual(
      wellFormed('someone@mailinator.com', 'mailinator.com', {
        disposable: true,
        mx: ['10 mail.mailinator.com'],
        risk: { level: 'high', reasons: ['disposable_domain'] },
      }),
    );
  });

  it('domain_not_found (high) for NXDOMAIN; reasons combine in documented order', async () => {
    expect(await lookup.emailval('jane@no-such-domain.example.org')).toMatchObject({
      has_mx: false,
      mx: [],
      risk: { level: 'high', reasons: ['domain_not_found'] },
    });
    // A subdomain of a listed domain, that does not exist, with a role local part.
    expect(await lookup.emailval('info@inbox.mailinator.com')).toEqual({
      ...wellFormed('info@inbox.mailinator.com', 'inbox.mailinator.com', { disposable: true, has_mx: false }),
      risk: { level: 'high', reasons: ['disposable_domain', 'domain_not_found', 'role_account'] },
    });
  });

  it('null_mx (high): RFC 7505 MX 0 ".", and the A record is not used as an implicit MX', async () => {
    expect(await lookup.emailval('jane@nullmx.test')).toEqual(
      wellFormed('jane@nullmx.test', 'nullmx.test', { has_mx: false, risk: { level: 'high', reasons: ['null_mx'] } }),
    );
    expect([...server.queries.keys()]).toEqual(['nullmx.test MX']);
  });

  it('a null MX beside real MX records is ignored: the real hosts count', async () => {
    expect(await lookup.emailval('jane@mixed-null.example.org')).toEqual(
      wellFormed('jane@mixed-null.example.org', 'mixed-null.example.org', { mx: ['10 mx.example.org'] }),
    );
  });

  it('no_mx_implicit_a (high): no MX but an A record (AAAA not asked), or an AAAA record only', async () => {
    expect(await lookup.emailval('jane@a-only.test')).toMatchObject({ has_mx: false, mx: [], risk: { level: 'high', reasons: ['no_mx_implicit_a'] } });
    expect([...server.queries.keys()]).toEqual(['a-only.test MX', 'a-only.test A']);
    expect((await lookup.emailval('jane@aaaa-only.example.net')).risk.reasons).toEqual(['no_mx_implicit_a']);
  });

  it('no_mx (high): no MX, no A, no AAAA', async () => {
    expect(await lookup.emailval('jane@txt-only.example.net')).toMatchObject({ has_mx: false, risk: { level: 'high', reasons: ['no_mx'] } });
    expect([...server.queries.keys()].sort()).toEqual(['txt-only.example.net A', 'txt-only.example.net AAAA', 'txt-only.example.net MX']);
  });

  it('IDN domains are looked up and answered in punycode; a Unicode local part is kept', async () => {
    expect(await lookup.emailval('Jürgen@Bücher.example')).toEqual(
      wellFormed('Jürgen@xn--bcher-kva.example', 'xn--bcher-kva.example', { mx: ['5 mx.xn--bcher-kva.example'] }),
    );
    expect(server.queries.get('xn--bcher-kva.example MX')).toBe(1);
  });
});

describe('emailval: malformed addresses answer a result, with no DNS query', () => {
  beforeEach(() => server.resetCounts());

  const longDomain = ['b', 'c', 'd', 'e'].map((c) => c.repeat(60)).join('.') + '.com'; // 247 octets
  it.each([
    ['control_characters', 'jane@example.com\n', 'jane@example.com\uFFFD', 'example.com\uFFFD'],
    ['control_characters', '\tjane@example.com', '\uFFFDjane@example.com', 'example.com'],
    ['address_too_long', `${'a'.repeat(64)}@${longDomain.toUpperCase()}`, null, longDomain], // 312 octets
    ['missing_at_sign', 'jane.example.com', 'jane.example.com', ''],
    ['quoted_local_part', '"jane doe"@Example.com', '"jane doe"@Example.com', 'example.com'],
    ['address_literal', 'jane@[192.0.2.1]', 'jane@[192.0.2.1]', '[192.0.2.1]'],
    ['address_literal', 'jane@[IPv6:2001:db8::1]', 'jane@[IPv6:2001:db8::1]', '[ipv6:2001:db8::1]'],
    ['comment', 'jane(work)@example.com', 'jane(work)@example.com', 'example.com'],
    ['comment', 'jane@(work)example.com', 'jane@(work)example.com', '(work)example.com'],
    ['empty_local_part', '@example.com', '@example.com', 'example.com'],
    ['empty_domain', 'jane@', 'jane@', ''],
    ['local_part_invalid_character', 'jane doe@example.com', 'jane doe@example.com', 'example.com'],
    ['local_part_invalid_character', 'jane@doe@example.com', 'jane@doe@example.com', 'example.com'],
    ['local_part_invalid_character', 'Jane <jane@example.com>', 'Jane <jane@example.com>', 'example.com>'],
    // What renders as nothing: a variation selector, a Hangul filler (alone: a blank local part), a leading mark.
    ['local_part_invalid_character', 'jane\uFE0F@example.com', 'jane\uFE0F@example.com', 'example.com'],
    ['local_part_invalid_character', '\u3164@example.com', '\u3164@example.com', 'example.com'],
    // Zero-width joiners, even where a script spells with them (no rule here tells those apart).
    ['local_part_invalid_character', 'क्\u200dष@example.com', 'क्\u200dष@example.com', 'example.com'],
    ['local_part_invalid_character', 'jane\u200c@example.com', 'jane\u200c@example.com', 'example.com'],
    ['local_part_invalid_character', 'jo\u034Fhn@example.com', 'jo\u034Fhn@example.com', 'example.com'],
    ['local_part_invalid_character', '\u0301jane@example.com', '\u0301jane@example.com', 'example.com'],
    ['local_part_dots', '.jane@example.com', '.jane@example.com', 'example.com'],
    ['local_part_dots', 'jane.@example.com', 'jane.@example.com', 'example.com'],
    ['local_part_dots', 'ja..ne@example.com', 'ja..ne@example.com', 'example.com'],
    ['local_part_too_long', `${'a'.repeat(65)}@example.com`, `${'a'.repeat(65)}@example.com`, 'example.com'],
    ['local_part_too_long', `${'é'.repeat(33)}@example.com`, `${'é'.repeat(33)}@example.com`, 'example.com'], // 66 octets
    ['invalid_domain', 'jane@exa_mple.com', 'jane@exa_mple.com', 'exa_mple.com'],
    ['invalid_domain', 'jane@-example.com', 'jane@-example.com', '-example.com'],
    ['invalid_domain', 'jane@example..com', 'jane@example..com', 'example..com'],
    ['invalid_domain', 'jane@example.com.', 'jane@example.com.', 'example.com.'],
    ['invalid_domain', 'jane@192.0.2.1', 'jane@192.0.2.1', '192.0.2.1'],
    ['invalid_domain', 'jane@example.com/evil', 'jane@example.com/evil', 'example.com/evil'],
    ['invalid_domain', 'jane@%65xample.com', 'jane@%65xample.com', '%65xample.com'],
    ['invalid_domain', `jane@${'x'.repeat(64)}.com`, `jane@${'x'.repeat(64)}.com`, `${'x'.repeat(64)}.com`],
    ['single_label_domain', 'jane@LocalHost', 'jane@LocalHost', 'localhost'],
  ])('%s: %j', async (reason, input, email, domain) => {
    const { result, cached, fetchedAt } = await lookup.detailed.emailval(input);
    expect(result).toEqual({
      email: email ?? input,
      domain,
      valid_format: false,
      disposable: false,
      has_mx: false,
      mx: [],
      risk: { level: 'high', reasons: ['invalid_format', reason] },
      limits_note: EMAIL_LIMITS_NOTE,
    });
    expect(cached).toBe(false);
    expect(Math.abs(Date.now() - fetchedAt!.getTime())).toBeLessThan(5_000);
    expect(server.total()).toBe(0);
  });

  it('an input over 512 characters is refused unread and echoed cut to 256 characters and "…"', async () => {
    const input = `${'a'.repeat(600)}@example.com`;
    const result = await lookup.emailval(input);
    expect(result.risk.reasons).toEqual(['invalid_format', 'address_too_long']);
    expect(result.email).toBe(`${'a'.repeat(256)}…`);
    expect(result.domain).toBe('');
  });

  it('a whitespace-only input is not empty: a malformed address, not a 400', async () => {
    expect((await lookup.emailval('   ')).risk.reasons).toEqual(['invalid_format', 'missing_at_sign']);
  });
});

describe('emailval: input errors', () => {
  beforeEach(() => server.resetCounts());

  it.each([
    ['an empty string', ''],
    ['undefined', undefined],
    ['a number', 42],
  ])('rejects %s with 400 invalid_email before any DNS', async (_name, input) => {
    const error = await lookup.emailval(input as string).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LookupError);
    expect([(error as LookupError).code, (error as LookupError).status]).toEqual(['invalid_email', 400]);
    expect(server.total()).toBe(0);
  });
});

describe('emailval: the disposable list', () => {
  it('loads the bundled list at engine creation: database_records is its size', () => {
    expect(engine.disposableCount).toBe(LISTED);
    expect(LISTED).toBeGreaterThan(100_000);
    expect(engine.roleCount).toBe(1012);
  });

  it.each([
    ['mailinator.com', true, 'listed'],
    ['a.b.mailinator.com', true, 'a subdomain of a domain listed with its subdomains (wildcard.json)'],
    ['0.pbot.tk', true, 'listed below its registrable domain'],
    ['x.0.pbot.tk', false, 'under an exact (index.json) entry below the registrable domain'],
    ['pbot.tk', false, 'the parent of a listed subdomain is not listed'],
    ['foo.ddns.net', true, 'under a private-suffix provider that is listed (ICANN rules: ddns.net is registrable)'],
    ['edu.pl', true, 'a listed public suffix, exactly'],
    ['school.edu.pl', false, 'under a listed public suffix: never matched through it'],
    ['xn--gmal-nza.net', true, 'an IDN entry, in punycode'],
    ['example.com', false, 'not listed'],
    ['mailinator.com.example.com', false, 'a listed name as a prefix is not a parent'],
  ])('%s -> %s (%s)', (domain, listed) => {
    expect(engine.isDisposable(domain)).toBe(listed);
  });

  it('matches an IDN address written in Unicode through its punycode entry', async () => {
    const result = await lookup.emailval('jane@GMAıL.net');
    expect([result.domain, result.disposable]).toEqual(['xn--gmal-nza.net', true]);
  });
});

describe('emailval: caching', () => {
  beforeEach(freshLookup);

  it('serves a repeat from the cache with the first fetched_at, and no DNS query', async () => {
    const first = await lookup.detailed.emailval('jane@example.com');
    const again = await lookup.detailed.emailval('  jane@EXAMPLE.com');
    expect(again).toEqual({ ...first, cached: true });
    expect(server.total()).toBe(1);
  });

  it("a new address on a known domain is computed (cached false) from the DNS cache: fetched_at is the answer's, not now", async () => {
    const first = await lookup.detailed.emailval('jane@example.com');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = await lookup.detailed.emailval('john@example.com');
    expect(other.cached).toBe(false);
    expect(other.fetchedAt).toEqual(first.fetchedAt);
    expect(server.total()).toBe(1);
  });

  it('keeps a result no longer than its DNS answers live', async () => {
    // createLookup's clock drives the DNS cache and the result cache: moved on, not waited for.
    const clock = { now: Date.now() };
    const shortLived = createLookup({ dns: { servers: [server.address], cache: { minTtl: 1 } }, now: () => clock.now });
    expect((await shortLived.detailed.emailval('jane@short-ttl.example.com')).cached).toBe(false);
    expect((await shortLived.detailed.emailval('jane@short-ttl.example.com')).cached).toBe(true);
    clock.now += 1_100;
    const later = await shortLived.detailed.emailval('jane@short-ttl.example.com');
    expect(later.cached).toBe(false);
    expect(server.queries.get('short-ttl.example.com MX')).toBe(2);
  });

  it('hands out copies: changing a result changes nothing cached', async () => {
    const first = await lookup.emailval('jane@example.com');
    first.mx.push('0 evil.example');
    first.risk.reasons.push('role_account');
    first.email = 'evil';
    expect(await lookup.emailval('jane@example.com')).toEqual(wellFormed('jane@example.com', 'example.com', { mx: EXAMPLE_MX }));
  });

  it('caches nothing with cacheSize 0, and refuses a bad cacheSize', async () => {
    const uncached = createLookup({ dns: { servers: [server.address] }, emailval: { cacheSize: 0 } });
    await uncached.emailval('jane@example.com');
    expect((await uncached.detailed.emailval('jane@example.com')).cached).toBe(false);
    expect(() => createLookup({ emailval: { cacheSize: -1 } }).engine('emailval')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('never caches malformed addresses', async () => {
    await lookup.emailval('not-an-address');
    expect((await lookup.detailed.emailval('not-an-address')).cached).toBe(false);
  });
});

describe('emailval: DNS failures are 502 lookup_failed', () => {
  beforeEach(freshLookup);

  it('a DNS server that never answers: bounded by the resolver deadline, and the servers are not named', async () => {
    const silent = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
    try {
      const timed = createLookup({ dns: { servers: [silent.address], timeouts: { totalMs: 300 }, attempts: 2 } });
      const started = Date.now();
      const error = (await timed.emailval('jane@example.com').catch((e: unknown) => e)) as LookupError;
      expect(Date.now() - started).toBeLessThan(2_000);
      expect([error.code, error.status]).toEqual(['lookup_failed', 502]);
      expect(error.message).toBe('the DNS MX lookup for example.com timed out; retry with backoff');
      expect(silent.total()).toBe(2);
    } finally {
      await silent.close();
    }
  });

  it('a DNS server answering SERVFAIL; the failure is not cached', async () => {
    server.setBehaviour('servfail');
    const error = (await lookup.emailval('jane@example.com').catch((e: unknown) => e)) as LookupError;
    expect([error.code, error.status, error.message]).toEqual(['lookup_failed', 502, 'the DNS MX lookup for example.com failed; retry with backoff']);
    expect(error.message).not.toContain('127.0.0.1');
    server.setBehaviour('normal');
    expect((await lookup.detailed.emailval('jane@example.com')).cached).toBe(false);
  });
});

describe('emailval: data errors', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'seclookup-emailval-'));
    mkdirSync(join(dataDir, 'emailval'));
    for (const name of ['disposable-domains.txt', 'role-based-local-parts.tsv'])
      copyFileSync(join(bundledDataDir(), 'emailval', name), join(dataDir, 'emailval', name));
  });
  // A folder per test: each one made in beforeEach is removed.
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a missing list is dataset_missing, naming the file', () => {
    rmSync(join(dataDir, 'emailval', 'role-based-local-parts.tsv'));
    expect(() => createLookup({ dataDir }).engine('emailval')).toThrow(
      expect.objectContaining({ code: 'dataset_missing', message: expect.stringContaining('role-based-local-parts.tsv') }),
    );
  });

  it('a bad line is dataset_invalid, naming the line', () => {
    writeFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), '# header\nmailinator.com\nNot A Domain\n');
    expect(() => createLookup({ dataDir }).engine('emailval')).toThrow(
      expect.objectContaining({ code: 'dataset_invalid', message: expect.stringContaining('line 3') }),
    );
  });
});

describe('emailval over HTTP (api.handle)', () => {
  let stack: ApiStack;
  let secretKey: string;
  let publicKey: string;
  let subscriptionId: string;

  beforeAll(async () => {
    stack = await createApiStack({ lookup: createLookup({ dns: { servers: [server.address] } }) });
    ({ secretKey, publicKey, subscriptionId } = await stack.keys('emailval'));
  });
  const quota = () => stack.meter.quota(subscriptionId, 10_000, Date.now());

  it.each([
    ['GET ?email=', `/v1/emailval/lookup?email=${encodeURIComponent('Jane+news@Example.com')}`],
    ['GET /lookup/{url-encoded email}', `/v1/emailval/lookup/${encodeURIComponent('Jane+news@Example.com')}`],
    ['GET /lookup/{email} with a bare @ and +', '/v1/emailval/lookup/Jane+news@Example.com'],
  ])('%s answers the result with cached and fetched_at', async (_form, path) => {
    const reply = await stack.call(path, { key: secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      success: true,
      request_id: reply.body.request_id,
      cached: reply.body.cached,
      fetched_at: reply.body.fetched_at,
      ...wellFormed('Jane+news@example.com', 'example.com', { mx: EXAMPLE_MX }),
    });
    expect(reply.body.fetched_at).toMatch(FETCHED_AT_SHAPE);
    expect(typeof reply.body.cached).toBe('boolean');
  });

  it('a + left unencoded in the query string is a space (form encoding): a malformed address', async () => {
    const reply = await stack.call('/v1/emailval/lookup?email=jane+news@example.com', { key: secretKey });
    expect(reply.body).toMatchObject({
      email: 'jane news@example.com',
      valid_format: false,
      risk: { reasons: ['invalid_format', 'local_part_invalid_character'] },
    });
  });

  it('a malformed address is 200 with valid_format false, and billed', async () => {
    const before = await quota();
    const reply = await stack.call(`/v1/emailval/lookup?email=${encodeURIComponent('jane@[192.0.2.1]')}`, { key: secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      success: true,
      cached: false,
      valid_format: false,
      risk: { level: 'high', reasons: ['invalid_format', 'address_literal'] },
    });
    expect(reply.body.fetched_at).toMatch(FETCHED_AT_SHAPE);
    expect((await quota()).remaining).toBe(before.remaining! - 1);
  });

  it.each([
    ['no parameter', '/v1/emailval/lookup'],
    ['an empty parameter', '/v1/emailval/lookup?email='],
    ['an empty path value', '/v1/emailval/lookup/'],
    ['broken percent-encoding in the path', '/v1/emailval/lookup/jane%E0%A4%A@example.com'],
  ])('answers %s with 400 invalid_email, unbilled', async (_name, path) => {
    const before = await quota();
    const reply = await stack.call(path, { key: secretKey });
    expect([reply.status, reply.body.error_code, reply.body.success]).toEqual([400, 'invalid_email', false]);
    expect(await quota()).toEqual(before);
  });

  it('answers 502 lookup_failed when DNS fails (SERVFAIL), and gives the quota unit back', async () => {
    const before = await quota();
    server.setBehaviour('servfail');
    try {
      const reply = await stack.call(`/v1/emailval/lookup?email=${encodeURIComponent('jane@failing.example.com')}`, { key: secretKey });
      expect([reply.status, reply.body.error_code]).toEqual([502, 'lookup_failed']);
      expect(reply.body.error).toBe('the DNS MX lookup for failing.example.com failed; retry with backoff');
    } finally {
      server.setBehaviour('normal');
    }
    expect(await quota()).toEqual(before);
  });

  it('answers 502 lookup_failed when the DNS server never answers', async () => {
    const silent = await startDnsServer({ behaviour: 'silent' });
    try {
      const timed = await createApiStack({ lookup: createLookup({ dns: { servers: [silent.address], timeouts: { totalMs: 200 }, attempts: 1 } }) });
      const keys = await timed.keys('emailval');
      const reply = await timed.call(`/v1/emailval/lookup/${encodeURIComponent('jane@example.com')}`, { key: keys.secretKey });
      expect([reply.status, reply.body.error_code, reply.body.error]).toEqual([
        502,
        'lookup_failed',
        'the DNS MX lookup for example.com timed out; retry with backoff',
      ]);
    } finally {
      await silent.close();
    }
  });

  it('reports database_records (the disposable list size) on the status route', async () => {
    const reply = await stack.call('/v1/emailval/status', { key: publicKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, product: 'emailval', database_records: LISTED });
  });
});
