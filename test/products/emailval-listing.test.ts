/**
 * emailval against a real loopback DNS server: the disposable list's two kinds of entry (upstream
 * index.json: exact domains; wildcard.json: `*.` lines, subdomains too) over the bundled list and
 * over a list file written with them, and MX records whose exchange is an IP address, which
 * RFC 5321 5.1 does not allow (an exchange is a host name).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { startDnsServer, type Zone } from '../servers/dns-server.js';

const mx = (exchange: string, priority = 10) => ({ type: 'MX' as const, priority, exchange });

const ZONE: Zone = {
  // A business under za.com, a CentralNic second-level domain listed in upstream index.json only.
  'acme.za.com': [mx('mx.acme.za.com')],
  'inbox.33mail.com': [mx('mx.33mail.com')],
  // Exchanges that are no host names.
  'ipmx.example.com': [mx('192.0.2.1'), { type: 'A', address: '192.0.2.1' }],
  'ip6mx.example.com': [mx('2001:db8::25')],
  'numeric.example.com': [mx('mx.123')],
  'localhost-mx.example.com': [mx('localhost')],
  'localhost-sub.example.com': [mx('mail.LOCALHOST.')],
  'single-label-mx.example.com': [mx('mailhost')],
  'invalid-mx.example.com': [mx('nothere.invalid')],
  'mixed-ip.example.com': [mx('192.0.2.1', 5), mx('mx.mixed-ip.example.com', 20)],
  'null-and-ip.example.com': [mx('.', 0), mx('192.0.2.1')],
  // A numeric label that is not the last is fine.
  'digits.example.com': [mx('10.mx.example.com')],
};

const server = await startDnsServer({ zone: ZONE });
afterAll(() => server.close());

let lookup: Lookup;
beforeEach(() => {
  lookup = createLookup({ dns: { servers: [server.address] } });
  server.resetCounts();
});

describe('emailval: the bundled list keeps index.json entries exact and wildcard.json ones with their subdomains', () => {
  it('a business domain under za.com (listed in index.json only) is not disposable', async () => {
    const result = await lookup.emailval('jane@acme.za.com');
    expect(result).toMatchObject({ domain: 'acme.za.com', disposable: false, has_mx: true, risk: { level: 'low', reasons: [] } });
  });

  it('a subdomain of a wildcard.json domain is disposable', async () => {
    const result = await lookup.emailval('jane@inbox.33mail.com');
    expect(result).toMatchObject({ disposable: true, has_mx: true, risk: { level: 'high', reasons: ['disposable_domain'] } });
  });

  it.each([
    ['za.com', true, 'an index.json entry, exactly'],
    ['acme.za.com', false, 'under an index.json entry'],
    ['0.pbot.tk', true, 'an index.json entry below its registrable domain'],
    ['x.0.pbot.tk', false, 'under that entry'],
    ['33mail.com', true, 'a wildcard.json entry itself'],
    ['a.b.33mail.com', true, 'under a wildcard.json entry'],
    ['anonaddy.com', true, 'a wildcard.json entry missing from index.json'],
    ['jane.anonaddy.com', true, 'under it'],
    ['foo.ddns.net', true, 'under a wildcard dynamic-DNS provider (ICANN rules: ddns.net is registrable)'],
    ['my.id', true, 'a wildcard.json entry that is a public suffix, exactly'],
    ['foo.my.id', false, 'under it: a public suffix is never matched as a parent'],
  ])('%s -> %s (%s)', (domain, listed) => {
    expect(lookup.engine('emailval').isDisposable(domain)).toBe(listed);
  });

  it('the bundled file marks wildcard.json entries with "*." lines, and counts each domain once', () => {
    const lines = readFileSync(join(bundledDataDir(), 'emailval', 'disposable-domains.txt'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    const wildcards = lines.filter((line) => line.startsWith('*.'));
    expect(wildcards).toContain('*.33mail.com');
    expect(wildcards).not.toContain('*.za.com');
    expect(lines).toContain('za.com');
    // Every wildcard entry is listed as a domain too.
    const plain = new Set(lines.filter((line) => !line.startsWith('*.')));
    expect(wildcards.filter((line) => !plain.has(line.slice(2)))).toEqual([]);
    expect(lookup.engine('emailval').disposableCount).toBe(plain.size);
  });
});

describe('emailval: a list file with "*." lines', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'seclookup-emailval-listing-'));
  mkdirSync(join(dataDir, 'emailval'));
  beforeEach(() => {
    writeFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), '# test list\nexact.example\n*.wild.example\nboth.example\n*.both.example\n');
    writeFileSync(join(dataDir, 'emailval', 'role-based-local-parts.tsv'), '# category\tlocal_part\nother\tadmin\n');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    ['exact.example', true],
    ['sub.exact.example', false],
    ['wild.example', false],
    ['sub.wild.example', true],
    ['a.b.wild.example', true],
    ['both.example', true],
    ['sub.both.example', true],
  ])('%s -> %s', (domain, listed) => {
    const engine = createLookup({ dataDir }).engine('emailval');
    expect(engine.isDisposable(domain)).toBe(listed);
    expect(engine.disposableCount).toBe(3);
  });

  it('reads a list written before "*." lines (a folder data init filled) as it was meant: every domain with its subdomains', () => {
    writeFileSync(
      join(dataDir, 'emailval', 'disposable-domains.txt'),
      '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).\n' +
        '# A subdomain of a listed domain counts as listed, down to the registrable domain.\n' +
        '# Date: 2026-11-23\n# Entries: 2\nexact.example\nza.com\n',
    );
    const engine = createLookup({ dataDir }).engine('emailval');
    expect([engine.isDisposable('exact.example'), engine.isDisposable('sub.exact.example'), engine.isDisposable('acme.za.com')]).toEqual([true, true, true]);
    expect(engine.disposableCount).toBe(2);
  });

  it.each([
    ['CRLF line ends (a checkout that converts them)', '\r\n', ''],
    ['a byte-order mark', '\n', '\uFEFF'],
  ])('reads such a list with %s the same way (found by a reviewer)', (_what, eol, bom) => {
    const lines = [
      '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).',
      '# A subdomain of a listed domain counts as listed, down to the registrable domain.',
      '# Entries: 1',
      'za.com',
    ];
    writeFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), bom + lines.join(eol) + eol);
    expect(createLookup({ dataDir }).engine('emailval').isDisposable('acme.za.com')).toBe(true);
  });

  it('refuses a "*." line that is not followed by a domain, naming the line', () => {
    writeFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), '# test list\nexact.example\n*.\n');
    expect(() => createLookup({ dataDir }).engine('emailval')).toThrow(
      expect.objectContaining({ code: 'dataset_invalid', message: expect.stringContaining('line 3') }),
    );
  });
});

describe('emailval: an MX exchange must be a host name (RFC 5321 5.1)', () => {
  it('an MX whose exchange is an IPv4 address is no usable MX: no_mx_hostname, and the A record is not an implicit MX', async () => {
    const result = await lookup.emailval('jane@ipmx.example.com');
    expect(result).toMatchObject({ has_mx: false, mx: [], risk: { level: 'high', reasons: ['no_mx_hostname'] } });
    expect([...server.queries.keys()]).toEqual(['ipmx.example.com MX']);
  });

  it.each([
    ['ip6mx.example.com', 'an IPv6 address'],
    ['numeric.example.com', 'a name whose last label is all digits'],
    // Found by a reviewer: these counted as mail servers (has_mx true, risk low).
    ['localhost-mx.example.com', 'localhost, the old way to say "no mail here" (mail sent there loops back)'],
    ['localhost-sub.example.com', 'a name under localhost, in any case'],
    ['single-label-mx.example.com', "a single label, which only the sender's own resolver might complete"],
    ['invalid-mx.example.com', 'a name under .invalid, which never resolves (RFC 6761)'],
  ])('%s: %s is no host name either', async (domain) => {
    expect(await lookup.emailval(`jane@${domain}`)).toMatchObject({ has_mx: false, mx: [], risk: { reasons: ['no_mx_hostname'] } });
  });

  it('beside a host-name exchange, an IP exchange is left out of mx', async () => {
    expect(await lookup.emailval('jane@mixed-ip.example.com')).toMatchObject({
      has_mx: true,
      mx: ['20 mx.mixed-ip.example.com'],
      risk: { level: 'low', reasons: [] },
    });
  });

  it('a null MX beside an IP exchange: null_mx', async () => {
    expect(await lookup.emailval('jane@null-and-ip.example.com')).toMatchObject({ has_mx: false, mx: [], risk: { reasons: ['null_mx'] } });
  });

  it('a numeric label that is not the last one is a host name', async () => {
    expect(await lookup.emailval('jane@digits.example.com')).toMatchObject({ has_mx: true, mx: ['10 10.mx.example.com'] });
  });
});
