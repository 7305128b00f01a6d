/**
 * A fixture zone for the email-security products (MX, SPF, DMARC, DKIM, DNSBL). Serve it with
 * `startDnsServer({ zone: EMAIL_ZONE })`. Names use RFC 2606 / 6761 names (.test, .example.*),
 * except reverse-DNS names (in-addr.arpa), which only work under their real suffix.
 *
 * Name                                                    Records                          Exercises
 * ---------------------------------------------------------------------------------------------------
 * example.test                                            A, NS x2, MX 20/10/30 (unsorted), MX lookup and sorting by priority; TXT
 *                                                         TXT: SPF + a site-verification    filtering to the one v=spf1 record
 * mx1.example.test                                        A 192.0.2.10, AAAA 2001:db8::10  MX host addresses (both families)
 * mx2.example.test, mx-backup.example.test                A                                MX host addresses
 * ns1.example.test, ns2.example.test                      A                                NS answers
 * 10.2.0.192.in-addr.arpa                                 PTR mx1.example.test             reverse DNS / FCrDNS of mx1
 * _dmarc.example.test                                     TXT v=DMARC1; p=reject ...       DMARC at the domain itself
 * default._domainkey.example.test                         TXT DKIM rsa-1024 (one string)   DKIM selector probe, plain key
 * google._domainkey.example.test                          TXT DKIM rsa-2048 (410 bytes,    a TXT over 255 bytes: two character-strings
 *                                                         two character-strings)           to join without a separator
 * selector1._domainkey.example.test                       TXT DKIM ed25519                 k=ed25519 keys
 * k1._domainkey.example.test                              TXT v=DKIM1; p=  (revoked)       an empty p= (RFC 6376 3.6.1)
 *   (google, default, selector1, k1 exist; selector2, s1, s2, mail, smtp are NXDOMAIN;
 *    _domainkey.example.test is an empty non-terminal: NODATA, not NXDOMAIN)
 * _spf.example.net                                        TXT v=spf1 ip4:... -all          the target of example.test's include:
 * nullmx.test                                             MX 0 "." , A, TXT v=spf1 -all    RFC 7505 null MX (exchange "" in Node), with an A
 *                                                                                          record that must NOT be used as an implicit MX
 * two-spf.test                                            MX, TXT: two v=spf1 records      SPF permerror (RFC 7208 4.5)
 * example.org                                             A, MX, TXT SPF                   organizational domain
 * _dmarc.example.org                                      TXT v=DMARC1; p=quarantine; sp=none
 * mail.sub.example.org                                    A, MX (no _dmarc)                DMARC fallback to the organizational domain
 *                                                                                          (RFC 7489 6.6.3): _dmarc.mail.sub.example.org
 *                                                                                          is NXDOMAIN, _dmarc.example.org has the policy
 * contoso.test                                            MX, TXT SPF                      a Microsoft 365 style domain
 * selector1._domainkey.contoso.test                       CNAME selector1-contoso-test.    DKIM through a CNAME: the answer holds the
 *                                                         _domainkey.contoso.onmicrosoft.test   CNAME then the TXT (rsa-2048, two strings)
 * selector1-contoso-test._domainkey.contoso.onmicrosoft.test   TXT DKIM rsa-2048
 * selector2._domainkey.contoso.test                       CNAME to an absent name          a dangling CNAME (DKIM not enabled yet):
 *                                                                                          NXDOMAIN with the CNAME in the answer
 * a-only.test                                             A 192.0.2.50 only                no MX: implicit MX from the A record
 *                                                                                          (RFC 5321 5.1); MX/TXT queries are NODATA
 * 2.0.0.127.zen.spamhaus.test                             A 127.0.0.2, TXT                 DNSBL test point: listed
 * 10.113.0.203.zen.spamhaus.test                          A 127.255.255.254                DNSBL "query refused" code (Spamhaus answers
 *                                                                                          it to queries through public resolvers): an
 *                                                                                          error, not a listing, for 203.0.113.10
 *   (1.0.0.127.zen.spamhaus.test and any other IP: NXDOMAIN, not listed)
 */
import type { Zone } from './dns-server.js';

/** Public keys (SubjectPublicKeyInfo, base64) generated for this fixture; no private key was kept. */
export const DKIM_KEYS = {
  rsa1024:
    'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC8izsxfpM8cLiQ++HVTnZqbN346l5UXwkYSFI53RHy+jhGQFgm5NJsEmoxYkpCVYzo+ga7osQzgQuwTj+INcl75FC8MKvxJKUfDU7r8H2lf78Lu1tdIJhiaPAy7O7Grkkdbf5HxfrXu9jTnythLGO7FQtDBmLlVOobrhKsfr2UhQIDAQAB',
  rsa2048:
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAySHXaAtV9kEABWHHsmCOklBVEnXCsXQ7C0TI63n4raV9vd8+9/R66YYFEL3bE48q9cFg8YJP1AcFaYs0eaU16ixSAxdVY5QP8kt/eMzFroCDB7xv1rtYa9Sw18ueeJvubFmH4s8jBP6zsPIPvtDdME5s84clpaOafxxGqVaGT3RLHWVLcGwOPCfrXMW5GmsnCXvtepmBztgoIWPJq7Bca8KauVKnIjzGvfCJbHOvT/+65ktKTp47A/j/Xy05i9LbEhVfebqPI4nncSGfJ9VTzjGPqdoRZksWVF6dBbE4Jqjeo5e/UvnKhjK5NasNXxqDACYnhsTzJw5bH4cBdu+WDQIDAQAB',
  /** The raw 32-byte key, as DKIM's k=ed25519 wants it (RFC 8463). */
  ed25519: 'WflzRuvJd3BQ3C5WZEVwfImZqEsSEUnfbxcPfTFrF+U=',
} as const;

const SPF_INCLUDE = 'v=spf1 include:_spf.example.net ~all';

export const EMAIL_ZONE: Zone = {
  // A domain with everything: MX in no particular order, SPF among other TXT, DMARC, DKIM
  'example.test': [
    { type: 'A', address: '192.0.2.1' },
    { type: 'NS', target: 'ns1.example.test' },
    { type: 'NS', target: 'ns2.example.test' },
    { type: 'MX', priority: 20, exchange: 'mx2.example.test' },
    { type: 'MX', priority: 10, exchange: 'mx1.example.test' },
    { type: 'MX', priority: 30, exchange: 'mx-backup.example.test' },
    { type: 'TXT', data: SPF_INCLUDE },
    { type: 'TXT', data: 'example-site-verification=3f9a1c7e5b' },
  ],
  'mx1.example.test': [
    { type: 'A', address: '192.0.2.10' },
    { type: 'AAAA', address: '2001:db8::10' },
  ],
  'mx2.example.test': [{ type: 'A', address: '192.0.2.11' }],
  'mx-backup.example.test': [{ type: 'A', address: '198.51.100.20' }],
  'ns1.example.test': [{ type: 'A', address: '192.0.2.53' }],
  'ns2.example.test': [{ type: 'A', address: '198.51.100.53' }],
  '10.2.0.192.in-addr.arpa': [{ type: 'PTR', target: 'mx1.example.test' }],
  '_dmarc.example.test': [{ type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.test; adkim=s; aspf=s' }],
  'default._domainkey.example.test': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa1024}` }],
  // 410 bytes: sent as a 255-byte and a 155-byte character-string
  'google._domainkey.example.test': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }],
  'selector1._domainkey.example.test': [{ type: 'TXT', data: `v=DKIM1; k=ed25519; p=${DKIM_KEYS.ed25519}` }],
  'k1._domainkey.example.test': [{ type: 'TXT', data: 'v=DKIM1; p=' }],
  '_spf.example.net': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all' }],

  // RFC 7505 null MX: this domain accepts no mail, although it has an A record
  'nullmx.test': [
    { type: 'MX', priority: 0, exchange: '.' },
    { type: 'A', address: '192.0.2.30' },
    { type: 'TXT', data: 'v=spf1 -all' },
  ],

  // Two SPF records: a permerror for an SPF evaluator
  'two-spf.test': [
    { type: 'MX', priority: 10, exchange: 'mx1.example.test' },
    { type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' },
    { type: 'TXT', data: SPF_INCLUDE },
  ],

  // DMARC organizational-domain fallback: mail.sub.example.org has no _dmarc, example.org does
  'example.org': [
    { type: 'A', address: '192.0.2.60' },
    { type: 'MX', priority: 10, exchange: 'mx.example.org' },
    { type: 'TXT', data: 'v=spf1 mx -all' },
  ],
  'mx.example.org': [{ type: 'A', address: '192.0.2.61' }],
  '_dmarc.example.org': [{ type: 'TXT', data: 'v=DMARC1; p=quarantine; sp=none; pct=100; rua=mailto:dmarc@example.org' }],
  'mail.sub.example.org': [
    { type: 'A', address: '192.0.2.62' },
    { type: 'MX', priority: 10, exchange: 'mail.sub.example.org' },
  ],

  // Microsoft 365 style DKIM: the selectors are CNAMEs into the tenant's onmicrosoft zone
  'contoso.test': [
    { type: 'MX', priority: 0, exchange: 'contoso-test.mail.protection.outlook.test' },
    { type: 'TXT', data: 'v=spf1 include:spf.protection.outlook.test -all' },
  ],
  'selector1._domainkey.contoso.test': [{ type: 'CNAME', target: 'selector1-contoso-test._domainkey.contoso.onmicrosoft.test' }],
  'selector1-contoso-test._domainkey.contoso.onmicrosoft.test': [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}` }],
  // DKIM not enabled yet in the tenant: the CNAME points at a name that does not exist
  'selector2._domainkey.contoso.test': [{ type: 'CNAME', target: 'selector2-contoso-test._domainkey.contoso.onmicrosoft.test' }],

  // No MX at all: mail goes to the A record (implicit MX)
  'a-only.test': [{ type: 'A', address: '192.0.2.50' }],

  // DNSBL (Spamhaus ZEN style): 127.0.0.2 is the permanent "listed" test point
  '2.0.0.127.zen.spamhaus.test': [
    { type: 'A', address: '127.0.0.2' },
    { type: 'TXT', data: 'Listed by SBL, see https://check.spamhaus.org/sbl/query/SBL2' },
  ],
  // 127.255.255.254: Spamhaus refusing a query that came through a public resolver; not a listing
  '10.113.0.203.zen.spamhaus.test': [{ type: 'A', address: '127.255.255.254' }],
};
