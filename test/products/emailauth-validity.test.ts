/**
 * emailauth's record validity against a real loopback DNS server: DMARC records checked against
 * RFC 7489's syntax (6.3, 6.4, and 6.6.3 step 6 for a record without a usable policy) behind
 * `dmarc.valid` / `dmarc.error`, and DKIM key records that RFC 6376 makes invalid (a tag named
 * twice, 3.2; a `p=` that is not base64, 3.6.1) left out of `dkim.selectors`. Each record is served
 * at its own domain and read through createLookup, as a client would.
 */
import { createPublicKey } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import { dmarcSyntaxError } from '../../src/products/emailauth/dmarc-syntax.js';
import { dkimKey, trimBlanks } from '../../src/products/emailauth/records.js';
import { startDnsServer, type DnsRecord, type Zone } from '../servers/dns-server.js';
import { DKIM_KEYS } from '../servers/email-zone.js';

const TXT = (data: string | string[]): DnsRecord => ({ type: 'TXT', data });

/** DMARC records that follow RFC 7489: [what they show, the record]. */
const VALID_DMARC: [string, string][] = [
  ['p only', 'v=DMARC1; p=none'],
  [
    'every RFC 7489 tag',
    'v=DMARC1; p=reject; sp=quarantine; pct=50; adkim=s; aspf=r; rua=mailto:a@example.com,mailto:b@example.net!10m; ruf=mailto:f@example.com; fo=0:d:s; rf=afrf; ri=86400',
  ],
  ['keywords and tag names in any case, white space around = and ;', 'v=DMARC1 ; P = Reject ; ADKIM=S ;'],
  ['p= after other tags', 'v=DMARC1; rua=mailto:d@example.com; p=quarantine'],
  ['unknown tags ignored, whatever their value (DMARCbis np, psd, t; a made-up one)', 'v=DMARC1; p=none; np=bogus; psd=maybe; t=y; future=anything goes'],
  ['pct at the bounds', 'v=DMARC1; p=reject; pct=0'],
  ['a rua with white space around its comma, and a https URI', 'v=DMARC1; p=none; rua=mailto:a@example.com , https://report.example.com/dmarc'],
  ['size limits with and without a unit', 'v=DMARC1; p=none; rua=mailto:a@example.com!50,mailto:b@example.com!10m'],
  ['a ! percent-encoded inside an address', 'v=DMARC1; p=none; rua=mailto:a%21b@example.com'],
];

/** DMARC records that break RFC 7489: [what is wrong, the record, the error]. */
const INVALID_DMARC: [string, string, string][] = [
  ['no p=', 'v=DMARC1', 'no p= tag (RFC 7489 6.3: required); RFC 7489 6.6.3: receivers apply no DMARC policy, as there is no valid rua='],
  [
    'an unknown policy',
    'v=DMARC1; p=bogus',
    'p= must be none, quarantine or reject in "p=bogus"; RFC 7489 6.6.3: receivers apply no DMARC policy, as there is no valid rua=',
  ],
  [
    'an unknown policy with a valid rua: p=none (6.6.3 step 6)',
    'v=DMARC1; p=rejct; rua=mailto:dmarc@example.com',
    'p= must be none, quarantine or reject in "p=rejct"; RFC 7489 6.6.3: receivers apply it as p=none, as rua= is valid',
  ],
  [
    'no p= but a valid rua: p=none (6.6.3 step 6)',
    'v=DMARC1; rua=mailto:dmarc@example.com',
    'no p= tag (RFC 7489 6.3: required); RFC 7489 6.6.3: receivers apply it as p=none, as rua= is valid',
  ],
  [
    'no p= and a rua with one valid address among bad ones: p=none (6.6.3 step 6: "at least one")',
    'v=DMARC1; rua=mailto:d@example.com,notauri',
    'no p= tag (RFC 7489 6.3: required); RFC 7489 6.6.3: receivers apply it as p=none, as rua= is valid',
  ],
  [
    'a bare ! inside an address (6.4: percent-encoded; ! only starts the size)',
    'v=DMARC1; p=reject; rua=mailto:a!b@example.com',
    'rua= "mailto:a!b@example.com" is not a URI (such as mailto:dmarc@example.com) in "rua=mailto:a!b@example.com"',
  ],
  [
    'a size limit with an unknown unit',
    'v=DMARC1; p=reject; rua=mailto:a@example.com!10x',
    'rua= "mailto:a@example.com!10x" is not a URI (such as mailto:dmarc@example.com) in "rua=mailto:a@example.com!10x"',
  ],
  [
    'an invalid sp=, reported before an earlier other error',
    'v=DMARC1; p=reject; pct=101; sp=block',
    'sp= must be none, quarantine or reject in "sp=block"; RFC 7489 6.6.3: receivers apply no DMARC policy, as there is no valid rua=',
  ],
  ['pct over 100', 'v=DMARC1;p=reject;pct=500;rua=foo', 'pct= must be a whole number from 0 to 100 in "pct=500"'],
  ['pct not a number', 'v=DMARC1; p=reject; pct=50%', 'pct= must be a whole number from 0 to 100 in "pct=50%"'],
  ['adkim neither r nor s', 'v=DMARC1; p=reject; adkim=strict', 'adkim= must be r or s in "adkim=strict"'],
  ['aspf neither r nor s', 'v=DMARC1; p=reject; aspf=x', 'aspf= must be r or s in "aspf=x"'],
  [
    'a rua that is no URI',
    'v=DMARC1; p=reject; rua=dmarc@example.com',
    'rua= "dmarc@example.com" is not a URI (such as mailto:dmarc@example.com) in "rua=dmarc@example.com"',
  ],
  [
    'a ruf list with an empty item',
    'v=DMARC1; p=reject; ruf=mailto:a@example.com,',
    'ruf= "" is not a URI (such as mailto:dmarc@example.com) in "ruf=mailto:a@example.com,"',
  ],
  ['fo with an unknown option', 'v=DMARC1; p=reject; fo=1:x', 'fo= must be 0, 1, d or s, colon-separated in "fo=1:x"'],
  ['rf not a format name', 'v=DMARC1; p=reject; rf=a f r f', 'rf= must be report format names, colon-separated in "rf=a f r f"'],
  ['ri not a number', 'v=DMARC1; p=reject; ri=1d', 'ri= must be a whole number of seconds (32-bit) in "ri=1d"'],
  ['a tag twice', 'v=DMARC1; p=reject; p=none', 'p= appears more than once'],
  ['a part that is no tag=value', 'v=DMARC1; p=reject; reject', '"reject" is not a tag=value pair'],
];

const VALID_KEY = `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa1024}`;
/** The 1024-bit test key as a bare RSAPublicKey (PKCS#1 DER), not wrapped in a SubjectPublicKeyInfo. */
const PKCS1_KEY = createPublicKey({ key: Buffer.from(DKIM_KEYS.rsa1024, 'base64'), format: 'der', type: 'spki' })
  .export({ format: 'der', type: 'pkcs1' })
  .toString('base64');
const dkimDomain = (i: number) => `dkim${i}.example.net`;
/** DKIM key records: [what they show, the record, counts as a key (revoked?) or null]. */
const DKIM_CASES: [string, string, { revoked: boolean } | null][] = [
  ['a valid key', VALID_KEY, { revoked: false }],
  [
    'base64 folded with white space, padded',
    `v=DKIM1; k=ed25519; p=${DKIM_KEYS.ed25519.slice(0, 8)} ${DKIM_KEYS.ed25519.slice(8, 20)}\r\n ${DKIM_KEYS.ed25519.slice(20)}`,
    { revoked: false },
  ],
  ['an RSA key as a bare RSAPublicKey (PKCS#1), as some records publish it', `v=DKIM1; p=${PKCS1_KEY}`, { revoked: false }],
  // A key no verifier can use: a key syntax error (RFC 6376 6.1.2), or a type it ignores (3.6.1).
  ['an RSA key cut short', `v=DKIM1; p=${DKIM_KEYS.rsa1024.slice(0, 40)}`, null],
  ['base64 of no key ("ABC")', 'v=DKIM1; p=QUJD', null],
  ['a pad where none belongs', 'v=DKIM1; p=QUJD=', null],
  ['an unknown key type', `v=DKIM1; k=foo; p=${DKIM_KEYS.rsa1024}`, null],
  ['an RSA key named ed25519', `v=DKIM1; k=ed25519; p=${DKIM_KEYS.rsa1024}`, null],
  ['an Ed25519 key of 31 bytes', `v=DKIM1; k=ed25519; p=${Buffer.alloc(31, 7).toString('base64')}`, null],
  ['an Ed25519 key read as RSA (no k=)', `v=DKIM1; p=${DKIM_KEYS.ed25519}`, null],
  ['an empty p=: revoked', 'v=DKIM1; p=', { revoked: true }],
  ['a trailing ;', `v=DKIM1; p=${DKIM_KEYS.rsa1024};`, { revoked: false }],
  ['p= twice (RFC 6376 3.2: the tag-list is invalid)', `v=DKIM1; p=${DKIM_KEYS.rsa1024}; p=`, null],
  ['k= twice', `v=DKIM1; k=rsa; k=ed25519; p=${DKIM_KEYS.rsa1024}`, null],
  ['p= not base64', 'v=DKIM1; k=rsa; p=not base64!!', null],
  ['p= with a pad inside', 'v=DKIM1; p=MIGf=MA0G', null],
  ['a part without =', `v=DKIM1; p=${DKIM_KEYS.rsa1024}; junk`, null],
  ['text before the tag name', 'some text p=abc', null],
];

const ZONE: Zone = {
  ...Object.fromEntries(VALID_DMARC.map(([, record], i) => [`_dmarc.ok${i}.example.com`, [TXT(record)]])),
  ...Object.fromEntries(INVALID_DMARC.map(([, record], i) => [`_dmarc.bad${i}.example.com`, [TXT(record)]])),
  // An invalid record at the domain still applies: the walk does not go on to example.com's.
  '_dmarc.example.com': [TXT('v=DMARC1; p=reject')],
  ...Object.fromEntries(DKIM_CASES.map(([, record], i) => [`google._domainkey.${dkimDomain(i)}`, [TXT(record)]])),
  // An invalid key record beside a valid one at the same selector: the valid one counts.
  'default._domainkey.both.example.com': [TXT(`v=DKIM1; p=${DKIM_KEYS.rsa1024}; p=`), TXT(VALID_KEY)],
};

const server = await startDnsServer({ zone: ZONE });
afterAll(() => server.close());
const fresh = () => createLookup({ dns: { servers: [server.address] } });

describe('emailauth: dmarc.valid follows RFC 7489 syntax', () => {
  it.each(VALID_DMARC.map(([name, record], i) => [name, record, i] as const))('valid: %s', async (_name, record, i) => {
    const { dmarc, score } = await fresh().emailauth(`ok${i}.example.com`);
    expect(dmarc).toEqual({
      found: true,
      record,
      records: [record],
      valid: true,
      error: null,
      source: 'domain',
      policy_domain: `ok${i}.example.com`,
    });
    expect(score).toBe(40);
  });

  it.each(INVALID_DMARC.map(([name, record, error], i) => [name, record, error, i] as const))('invalid: %s', async (_name, record, error, i) => {
    const domain = `bad${i}.example.com`;
    const { dmarc, score } = await fresh().emailauth(domain);
    // Still the record that applies (found, its domain), and still present for the score (SPEC).
    expect(dmarc).toEqual({ found: true, record, records: [record], valid: false, error, source: 'domain', policy_domain: domain });
    expect(score).toBe(40);
    expect(server.queries.get('_dmarc.example.com TXT')).toBeUndefined();
  });
});

describe('emailauth: invalid DKIM key records are not keys', () => {
  it.each(DKIM_CASES.map(([name, record, key], i) => [name, record, key, i] as const))('%s', async (_name, record, key, i) => {
    const { dkim, score } = await fresh().emailauth(dkimDomain(i));
    expect(dkim).toEqual({
      found: key !== null,
      selectors: key === null ? [] : [{ selector: 'google', record, revoked: key.revoked }],
      failed_selectors: [],
    });
    expect(score).toBe(key === null ? 0 : 25);
  });

  it('an invalid key record beside a valid one at the same selector: the valid one counts', async () => {
    const { dkim } = await fresh().emailauth('both.example.com');
    expect(dkim.selectors).toEqual([{ selector: 'default', record: VALID_KEY, revoked: false }]);
  });
});

describe('emailauth: records of hostile size (a TXT record may be 64 KB, and anyone may publish one)', () => {
  const blanks = ' \t'.repeat(32_000);
  it('a DMARC record with long runs of blanks inside a tag is read, and the error quotes at most 80 characters of it', () => {
    const error = dmarcSyntaxError(`v=DMARC1; p=none; rua=mailto:a@example.com${blanks}x`);
    expect(error).toMatch(
      /^rua= "mailto:a@example\.com[ \\t]+\.\.\." is not a URI \(such as mailto:dmarc@example\.com\) in "rua=mailto:a@example\.com[ \\t]+\.\.\."$/,
    );
    expect(error!.length).toBeLessThan(300);
    expect(dmarcSyntaxError(`v=DMARC1;${blanks}p${blanks}=${blanks}reject${blanks}`)).toBeNull();
  });

  it('a DKIM key record with long runs of blanks around a tag name is read as a key', () => {
    expect(dkimKey(`v=DKIM1; k${blanks}=rsa;${blanks}p=${DKIM_KEYS.rsa2048}`)).toEqual({ revoked: false });
    expect(dkimKey(`v=DKIM1; x${blanks}y=1; p=AAAA`)).toBeNull(); // a tag name with blanks inside is no tag name
  });

  it('trimBlanks trims only the blanks it is given, from both ends', () => {
    expect(trimBlanks(' \t a b \t ', ' \t')).toBe('a b');
    expect(trimBlanks('\r\n a \r\n', ' \t')).toBe('\r\n a \r\n');
    expect(trimBlanks('\r\n a \r\n', ' \t\r\n')).toBe('a');
    expect(trimBlanks('   ', ' ')).toBe('');
  });
});
