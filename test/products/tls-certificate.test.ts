/**
 * tls result fields from certificates minted by the fixtures and read by Node's
 * X509Certificate: names, validity and its rounding, DNS SANs (Node's escaped forms included),
 * fingerprints, and how long a result may be cached.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  certificateFacts,
  DAY_MS,
  distinguishedName,
  dnsAltNames,
  isoSeconds,
  msUntilChange,
  parseCertificateTime,
  toResult,
} from '../../src/products/tls/certificate.js';
import { generateKey, mintCertificate } from '../servers/tls-server.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('the fixtures mint real certificates', () => {
  it.each(['rsa', 'ec'] as const)('%s: signed by its issuer, readable by Node', (keyType) => {
    const ca = mintCertificate({ subject: 'Fixture CA', ca: true, keyType });
    const leaf = mintCertificate({ subject: 'leaf.test', dnsNames: ['leaf.test'], issuer: ca, keyType: keyType === 'rsa' ? 'ec' : 'rsa' });
    expect(leaf.x509.verify(ca.x509.publicKey)).toBe(true);
    expect(leaf.x509.checkIssued(ca.x509)).toBe(true);
    expect(ca.x509.verify(ca.x509.publicKey)).toBe(true);
    expect(ca.x509.ca).toBe(true);
    expect(leaf.x509.publicKey.asymmetricKeyType).toBe(keyType === 'rsa' ? 'ec' : 'rsa');
    expect(leaf.fingerprint256).toBe(leaf.x509.fingerprint256.replace(/:/g, '').toLowerCase());
  });

  it('writes dates as given, in whole seconds, before 1950 and after 2049 too', () => {
    const cert = mintCertificate({ notBefore: new Date('1949-12-31T23:59:59.900Z'), notAfter: new Date('2050-01-01T00:00:00Z'), key: generateKey('ec') });
    expect(cert.x509.validFrom).toBe('Dec 31 23:59:59 1949 GMT');
    expect(cert.x509.validTo).toBe('Jan  1 00:00:00 2050 GMT');
  });
});

describe('certificate facts', () => {
  it('reads names in RFC 4514 order, validity, DNS SANs and the fingerprint', () => {
    const ca = mintCertificate({
      subject: [
        { shortName: 'C', value: 'US' },
        { shortName: 'O', value: 'Seclookup Tests' },
        { shortName: 'CN', value: 'Seclookup Test CA' },
      ],
      ca: true,
    });
    const leaf = mintCertificate({
      subject: [
        { shortName: 'O', value: 'Example Org' },
        { shortName: 'CN', value: 'www.example.test' },
      ],
      issuer: ca,
      dnsNames: ['www.example.test', 'example.test', '*.cdn.example.test'],
      otherNames: [
        { type: 'ip', ip: '192.0.2.1' },
        { type: 'email', value: 'ops@example.test' },
        { type: 'uri', value: 'https://example.test/' },
      ],
      notBefore: new Date('2026-01-01T00:00:00Z'),
      notAfter: new Date('2027-01-01T00:00:00Z'),
    });
    expect(certificateFacts(leaf.x509)).toEqual({
      issuer: 'CN=Seclookup Test CA, O=Seclookup Tests, C=US',
      subject: 'CN=www.example.test, O=Example Org',
      notBefore: Date.UTC(2026, 0, 1),
      notAfter: Date.UTC(2027, 0, 1),
      san: ['www.example.test', 'example.test', '*.cdn.example.test'],
      fingerprint: leaf.fingerprint256,
    });
  });

  it('keeps RFC 4514 escapes in names; an empty subject is the empty string', () => {
    const odd = mintCertificate({
      subject: [
        { shortName: 'O', value: 'Acme, "Inc" <x>' },
        { shortName: 'CN', value: 'two\nlines' },
      ],
    });
    expect(certificateFacts(odd.x509).subject).toBe('CN=two\\0Alines, O=Acme\\, \\"Inc\\" \\<x\\>');
    const unicode = mintCertificate({ subject: [{ shortName: 'CN', value: 'bücher.example' }] });
    expect(certificateFacts(unicode.x509).subject).toBe('CN=bücher.example');
    const anonymous = mintCertificate({ dnsNames: ['only-san.example'] });
    expect(certificateFacts(anonymous.x509)).toMatchObject({ subject: '', issuer: '', san: ['only-san.example'] });
    expect(distinguishedName(undefined)).toBe('');
    expect(distinguishedName("C=US\nO=Let's Encrypt\nCN=R11")).toBe("CN=R11, O=Let's Encrypt, C=US");
  });

  it('decodes the SAN values Node quotes, and never mistakes other kinds for DNS names', () => {
    const cert = mintCertificate({
      dnsNames: ['plain.example', 'weird, DNS:evil.example', 'quote"d.example', 'back\\slash.example', 'b\u00fc.example', ' spaced ', 'xn--bcher-kva.example'],
      otherNames: [
        { type: 'uri', value: 'https://x.example/, DNS:uri-smuggled.example' },
        { type: 'email', value: 'a@b.example' },
        { type: 'ip', ip: '2001:db8::1' },
      ],
    });
    expect(certificateFacts(cert.x509).san).toEqual([
      'plain.example',
      'weird, DNS:evil.example',
      'quote"d.example',
      'back\\slash.example',
      'bü.example',
      ' spaced ',
      'xn--bcher-kva.example',
    ]);
  });

  it('reads hundreds of SANs in order', () => {
    const names = Array.from({ length: 500 }, (_, i) => `host-${i}.many.example`);
    expect(certificateFacts(mintCertificate({ dnsNames: names }).x509).san).toEqual(names);
  });
});

describe('dnsAltNames (Node subjectAltName text)', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['DNS:a.example', ['a.example']],
    ['DNS:a.example, DNS:b.example', ['a.example', 'b.example']],
    ['IP Address:192.0.2.1, DNS:a.example, email:x@y.example, URI:https://u.example/', ['a.example']],
    ['DNS:"a\\u002c b", DNS:c', ['a, b', 'c']],
    ['DNS:"x\\"y", DNS:"\\u00fc"', ['x"y', 'ü']],
    ['URI:"https://x/\\u002c DNS:evil", DNS:ok', ['ok']],
    ['DirName:"CN=a\\u002c DNS:evil", DNS:ok', ['ok']],
    ['DNS:"unterminated, DNS:evil', []],
    ['DNS:ok, garbage without a colon', ['ok']],
    ['DNS:ok,DNS:not-node-format', ['ok,DNS:not-node-format']],
  ])('%j -> %j', (text, names) => {
    expect(dnsAltNames(text)).toEqual(names);
  });
});

describe('times', () => {
  it('parses OpenSSL time text and prints ISO 8601 without milliseconds', () => {
    expect(parseCertificateTime('Nov  2 17:03:45 2026 GMT')).toBe(Date.UTC(2026, 10, 2, 17, 3, 45));
    expect(parseCertificateTime('Dec 31 23:59:59 9999 GMT')).toBe(Date.UTC(9999, 11, 31, 23, 59, 59));
    expect(parseCertificateTime('Jan  1 00:00:00.5 0050 GMT')).toBe(new Date('0050-01-01T00:00:00Z').getTime());
    expect(() => parseCertificateTime('2026-11-02T17:03:45Z')).toThrow('unreadable certificate time');
    expect(isoSeconds(Date.UTC(2026, 10, 2, 17, 3, 45, 999))).toBe('2026-11-02T17:03:45Z');
    expect(isoSeconds(new Date('0050-01-01T00:00:00Z').getTime())).toBe('0050-01-01T00:00:00Z');
  });
});

describe('valid and days_remaining', () => {
  const facts = (notBefore: number, notAfter: number) => ({ issuer: 'CN=i', subject: 'CN=s', notBefore, notAfter, san: [], fingerprint: 'f' });
  const at = (notBefore: number, notAfter: number, now = NOW) => toResult('h.example', 443, facts(notBefore, notAfter), 'TLSv1.3', now);

  it('is valid inside the window, both ends included', () => {
    expect(at(NOW - DAY_MS, NOW + DAY_MS).valid).toBe(true);
    expect(at(NOW, NOW + DAY_MS).valid).toBe(true);
    expect(at(NOW - DAY_MS, NOW).valid).toBe(true);
    expect(at(NOW + 1000, NOW + DAY_MS).valid).toBe(false);
    expect(at(NOW - DAY_MS, NOW - 1000).valid).toBe(false);
  });

  it('counts whole days rounded down, negative once expired', () => {
    expect(at(NOW - DAY_MS, NOW + 90 * DAY_MS).days_remaining).toBe(90);
    expect(at(NOW - DAY_MS, NOW + 90 * DAY_MS - 1000).days_remaining).toBe(89);
    expect(at(NOW - DAY_MS, NOW + 23 * 3_600_000).days_remaining).toBe(0);
    expect(at(NOW - DAY_MS, NOW).days_remaining).toBe(0);
    expect(at(NOW - 9 * DAY_MS, NOW - 3_600_000).days_remaining).toBe(-1);
    expect(at(NOW - 9 * DAY_MS, NOW - 1.5 * DAY_MS).days_remaining).toBe(-2);
    // Not yet valid: days still count to the end.
    expect(at(NOW + 2 * DAY_MS, NOW + 30 * DAY_MS)).toMatchObject({ valid: false, days_remaining: 30 });
  });

  it('lists the fields in SPEC order; protocol is left out when Node cannot tell', () => {
    expect(Object.keys(at(NOW - DAY_MS, NOW + DAY_MS))).toEqual([
      'host',
      'port',
      'valid',
      'issuer',
      'subject',
      'not_before',
      'not_after',
      'days_remaining',
      'san',
      'protocol',
      'fingerprint_sha256',
    ]);
    expect('protocol' in toResult('h', 443, facts(NOW - DAY_MS, NOW + DAY_MS), null, NOW)).toBe(false);
  });

  it('says how long until valid or days_remaining change, for the cache', () => {
    expect(msUntilChange(facts(NOW - DAY_MS, NOW + 10 * DAY_MS + 5_000), NOW)).toBe(5_001);
    expect(msUntilChange(facts(NOW - DAY_MS, NOW + 10 * DAY_MS), NOW)).toBe(1); // exactly 10 days: 9 a millisecond later
    expect(msUntilChange(facts(NOW + 60_000, NOW + 10 * DAY_MS + 3_600_000), NOW)).toBe(60_000); // becomes valid first
    expect(msUntilChange(facts(NOW - DAY_MS, NOW + 30_000), NOW)).toBe(30_001); // expires
    expect(msUntilChange(facts(NOW - 9 * DAY_MS, NOW - 3_600_000), NOW)).toBe(DAY_MS - 3_600_000 + 1); // expired: -1 becomes -2
    for (let i = 0; i < 200; i++) {
      // Spread over -120..279 days, at every time of day (deterministic).
      const notAfter = NOW + (((i * 7919) % 400) - 120) * DAY_MS + ((i * 104_729_017) % DAY_MS);
      const f = facts(NOW - 400 * DAY_MS, notAfter);
      const wait = msUntilChange(f, NOW);
      expect(toResult('h', 1, f, null, NOW + wait - 1)).toEqual(toResult('h', 1, f, null, NOW));
      expect(toResult('h', 1, f, null, NOW + wait)).not.toEqual(toResult('h', 1, f, null, NOW));
    }
  });
});

describe('certificates made with openssl (test/fixtures/tls)', () => {
  const fixture = (name: string) => new X509Certificate(readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url)));

  it('reads a year below 1000, which OpenSSL prints unpadded (Go writes an unset NotBefore as year 1); it was a 502', () => {
    const facts = certificateFacts(fixture('not-before-year-1.pem'));
    expect(facts.notBefore).toBe(new Date('0001-01-01T00:00:00Z').getTime());
    expect(toResult('d.test', 443, facts, null, NOW)).toMatchObject({ valid: true, not_before: '0001-01-01T00:00:00Z', not_after: '2099-12-31T23:59:59Z' });
  });

  it('writes a multi-valued RDN as RFC 4514 does, its attributes joined by a bare +', () => {
    const facts = certificateFacts(fixture('multi-valued-rdn.pem'));
    expect(facts.subject).toBe('street=\\ lead, emailAddress=a@b.c, serialNumber=42+O=A=B+OU=Sales, C=US');
    expect(facts.issuer).toBe(facts.subject);
  });
});

describe('Node reads what the fixtures write', () => {
  it('parses the validFrom of a real certificate the same as the date minted', () => {
    const notBefore = new Date('2031-07-04T05:06:07Z');
    const cert = mintCertificate({ notBefore, notAfter: new Date('2032-07-04T05:06:07Z') });
    expect(parseCertificateTime(new X509Certificate(cert.pem).validFrom)).toBe(notBefore.getTime());
  });
});
