/**
 * DMARC policy discovery (DMARCbis DNS tree walk) against the loopback DNS server: the vectors of
 * emailauth-dmarc-vectors.ts, where RFC 7489 and DMARCbis agree and where they differ, plus the
 * walk's query bound and its handling of DNS failures.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { psdTag, treeWalkTargets } from '../../src/products/emailauth/dmarc-discovery.js';
import { createEmailAuthEngine } from '../../src/products/emailauth/engine.js';
import { startDnsServer } from '../servers/dns-server.js';
import { DMARC_VECTORS, expectedDmarc, rec, runDmarcVectors, type VectorRun } from './emailauth-dmarc-vectors.js';

const server = await startDnsServer();
afterAll(() => server.close());
const runs: VectorRun[] = await runDmarcVectors(server);

describe('DMARC discovery vectors', () => {
  const agree = DMARC_VECTORS.filter((v) => v.rfc7489 === (v.expected?.policyDomain ?? null));
  const differ = DMARC_VECTORS.filter((v) => !agree.includes(v));

  it('cover both kinds: where RFC 7489 and DMARCbis agree, and where they differ', () => {
    expect(agree.length).toBeGreaterThanOrEqual(10);
    expect(differ.length).toBeGreaterThanOrEqual(5);
  });

  it.each(agree.map((v) => [v.name, v] as const))('agrees with RFC 7489: %s', (_name, vector) => {
    expect(runs.find((r) => r.vector === vector)?.dmarc).toEqual(expectedDmarc(vector));
  });

  it.each(differ.map((v) => [v.name, v] as const))('follows DMARCbis where RFC 7489 differs: %s', (_name, vector) => {
    expect(runs.find((r) => r.vector === vector)?.dmarc).toEqual(expectedDmarc(vector));
  });

  it('never sends more than eight _dmarc queries; ten labels take exactly eight, skipping to seven labels', () => {
    for (const run of runs) expect(run.dmarcQueries.length, run.vector.domain).toBeLessThanOrEqual(8);
    const deep = runs.find((r) => r.vector.domain === 'a.b.c.d.e.f.g.h.example.com');
    // The walk's queries go out together, so they are compared in order of names, not arrival.
    expect([...(deep?.dmarcQueries ?? [])].sort()).toEqual(
      [
        'a.b.c.d.e.f.g.h.example.com',
        'd.e.f.g.h.example.com',
        'e.f.g.h.example.com',
        'f.g.h.example.com',
        'g.h.example.com',
        'h.example.com',
        'example.com',
        'com',
      ]
        .map((name) => `_dmarc.${name} TXT`)
        .sort(),
    );
  });

  it('asks no parent when the domain has its own record', () => {
    const own = runs.find((r) => r.vector.domain === 'own.example.org');
    expect(own?.dmarcQueries).toEqual(['_dmarc.own.example.org TXT']);
  });
});

describe('treeWalkTargets', () => {
  it.each([
    ['example.com', ['com']],
    ['a.mail.example.com', ['mail.example.com', 'example.com', 'com']],
    [
      'a.b.c.d.e.f.example.com',
      ['b.c.d.e.f.example.com', 'c.d.e.f.example.com', 'd.e.f.example.com', 'e.f.example.com', 'f.example.com', 'example.com', 'com'],
    ],
    [
      'a.b.c.d.e.f.g.example.com',
      ['c.d.e.f.g.example.com', 'd.e.f.g.example.com', 'e.f.g.example.com', 'f.g.example.com', 'g.example.com', 'example.com', 'com'],
    ],
    [
      'a.b.c.d.e.f.g.h.i.j.mail.example.com',
      ['g.h.i.j.mail.example.com', 'h.i.j.mail.example.com', 'i.j.mail.example.com', 'j.mail.example.com', 'mail.example.com', 'example.com', 'com'],
    ],
  ])('walks %s through %j (the draft: 8 labels or fewer start at the parent, more skip to 7)', (domain, targets) => {
    expect(treeWalkTargets(domain)).toEqual(targets);
  });
});

describe('psdTag', () => {
  it.each([
    ['v=DMARC1; p=reject; psd=y', 'y'],
    ['v=DMARC1;p=none;PSD = N', 'n'],
    ['v=DMARC1; p=none; psd=u', 'u'],
    ['v=DMARC1; p=none', null],
  ])('reads %j as %j', (record, psd) => {
    expect(psdTag(record)).toBe(psd);
  });
});

describe('DNS failures during the walk', () => {
  const loop = {
    'loop-a.example.net': [{ type: 'CNAME' as const, target: 'loop-b.example.net' }],
    'loop-b.example.net': [{ type: 'CNAME' as const, target: 'loop-a.example.net' }],
  };
  const failingName = [{ type: 'CNAME' as const, target: 'loop-a.example.net' }];
  const engine = () => createEmailAuthEngine({ dns: createDnsResolver({ servers: [server.address] }), cache: null });

  it('fails the lookup (lookup_failed) when a name the walk reaches answers SERVFAIL', async () => {
    server.setZone({ ...loop, 'a.mail.example.org': [{ type: 'TXT', data: 'v=spf1 -all' }], '_dmarc.mail.example.org': failingName });
    const e = engine();
    const error = await Promise.resolve(e.lookup(e.prepare('a.mail.example.org'))).catch((err: unknown) => err);
    expect(isLookupError(error) && error.code).toBe('lookup_failed');
  });

  it('ignores a failure past the name where a psd tag stops the walk', async () => {
    server.setZone({
      ...loop,
      'a.dept.example.org': [{ type: 'TXT', data: 'v=spf1 -all' }],
      '_dmarc.dept.example.org': [{ type: 'TXT', data: rec('dept.example.org', 'p=none; psd=n') }],
      '_dmarc.example.org': failingName,
    });
    const e = engine();
    const { result } = await e.lookup(e.prepare('a.dept.example.org'));
    expect(result.dmarc).toMatchObject({ found: true, source: 'organizational', policy_domain: 'dept.example.org' });
  });
});
