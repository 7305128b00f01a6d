/**
 * Types are the public API's documentation: every product's result type is exported from
 * `seclookup` by its own name, and is the very type its lookup resolves to. Checked by the type
 * checker (`npm test` runs `tsc --noEmit` first); the runtime part lists the products covered,
 * so a product added without a line here fails.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  AsnResult,
  DnsblResult,
  DomainRepResult,
  EmailAuthResult,
  EmailValResult,
  GeoIpResult,
  LookupResult,
  PwbreachResult,
  RiskScoreResult,
  ScamriskResult,
  TimezoneResult,
  TlsResult,
  UserAgentResult,
  WebhookIpResult,
  WhoisResult,
} from '../../src/index.js';
import { PRODUCT_MODULES } from '../../src/products/registry.js';

describe('the public result types', () => {
  it('name the result of every lookup product', () => {
    expectTypeOf<LookupResult<'useragent'>>().toEqualTypeOf<UserAgentResult>();
    expectTypeOf<LookupResult<'webhookip'>>().toEqualTypeOf<WebhookIpResult>();
    expectTypeOf<LookupResult<'emailval'>>().toEqualTypeOf<EmailValResult>();
    expectTypeOf<LookupResult<'emailauth'>>().toEqualTypeOf<EmailAuthResult>();
    expectTypeOf<LookupResult<'dnsbl'>>().toEqualTypeOf<DnsblResult>();
    expectTypeOf<LookupResult<'geoip'>>().toEqualTypeOf<GeoIpResult>();
    expectTypeOf<LookupResult<'timezone'>>().toEqualTypeOf<TimezoneResult>();
    expectTypeOf<LookupResult<'tls'>>().toEqualTypeOf<TlsResult>();
    expectTypeOf<LookupResult<'whois'>>().toEqualTypeOf<WhoisResult>();
    expectTypeOf<LookupResult<'asn'>>().toEqualTypeOf<AsnResult>();
    expectTypeOf<LookupResult<'pwbreach'>>().toEqualTypeOf<PwbreachResult>();
    expectTypeOf<LookupResult<'scamrisk'>>().toEqualTypeOf<ScamriskResult>();
    expectTypeOf<LookupResult<'domainrep'>>().toEqualTypeOf<DomainRepResult>();
    expectTypeOf<LookupResult<'riskscore'>>().toEqualTypeOf<RiskScoreResult>();
    const covered = [
      'useragent',
      'webhookip',
      'emailval',
      'emailauth',
      'dnsbl',
      'geoip',
      'timezone',
      'tls',
      'whois',
      'asn',
      'pwbreach',
      'scamrisk',
      'domainrep',
      'riskscore',
    ];
    expect(PRODUCT_MODULES.map((module) => module.id).sort()).toEqual(covered.sort());
  });
});
