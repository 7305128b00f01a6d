/**
 * seclookup: security lookups as in-process engines (`createLookup`), a transport-agnostic
 * HTTP API (`createApi`), and meter stores. Adapters live at `seclookup/node`,
 * `seclookup/express` and `seclookup/fastify`; the SQLite store at `seclookup/sqlite`.
 */
export { createLookup } from './lookup.js';
export type {
  Lookup,
  LookupOptions,
  LookupOutcome,
  LookupCalls,
  DetailedLookupCalls,
  LookupArgs,
  LookupResult,
  ProductEngine,
  ProductEngineOptions,
  ProductOptionsMap,
} from './lookup.js';
export { LookupError, isLookupError, ERROR_STATUS, SeclookupError, isSeclookupError } from './errors.js';
export type { ErrorCode, SeclookupErrorCode } from './errors.js';
export type { MaybePromise } from './lib/outcome.js';
export { createMemoryCache, createProductCache } from './lib/cache.js';
export type { CacheStore, MemoryCache, MemoryCacheOptions, ProductCache, ProductCacheOptions } from './lib/cache.js';
export { DEFAULT_TIMEOUTS } from './lib/deadline.js';
export { createDnsResolver, DNS_TIMEOUT_DEFAULTS, parseDnsServer } from './lib/dns/index.js';
export { createOutboundGuard } from './lib/outbound.js';
export type { OutboundGuard, OutboundGuardOptions, CheckedTarget } from './lib/outbound.js';
export type { DnsAnswer, DnsCacheOptions, DnsRecordType, DnsResolver, DnsResolverOptions, DnsValue, MxData } from './lib/dns/index.js';
export type { TimeoutOptions } from './lib/deadline.js';
export type { LookupObserver, UpstreamKind } from './lib/observe.js';

export { createApi } from './api/create-api.js';
export { trackInFlight } from './api/in-flight.js';
export type { InFlightApi } from './api/in-flight.js';
export { DEFAULT_METER_TIMEOUT_MS } from './api/meter-gate.js';
export { DEFAULT_BODY_LIMIT } from './api/body.js';
export type { Api, ApiLogger, ApiOptions, ApiRequest, ApiResponse, RequestBody, RequestLogEvent } from './api/types.js';

export { createMemoryMeter } from './metering/memory/meter.js';
export type { MemoryMeterOptions } from './metering/memory/meter.js';
export { DEFAULT_PLANS } from './metering/plans.js';
export { issueKeys, hashKey } from './metering/keys.js';
export type { IssueKeysOptions, IssuedKeys } from './metering/keys.js';
export type * from './metering/types.js';

export { PRODUCTS, PRODUCT_IDS, SCAMRISK_TYPES, isProductId } from './products/catalog.js';
export type { ProductId, ProductInfo } from './products/catalog.js';
export { PRODUCT_MODULES, BUILT_PRODUCT_IDS, isBuiltProduct } from './products/registry.js';
export type { BuiltProductId } from './products/registry.js';
export type {
  ProductModule,
  EngineContext,
  ProductCli,
  ProductSetting,
  ProductDataset,
  DatasetUpdateOptions,
  DatasetUpdateReport,
  DatasetImportOptions,
  ImportProgress,
} from './products/module.js';
export type { LookupRoute, ExtraRoute, RouteInput } from './products/route.js';
export type { UserAgentResult, UserAgentEngineOptions } from './products/useragent/types.js';
export type { UserAgentEngine } from './products/useragent/engine.js';
export type { WebhookIpEngine, WebhookIpQuery } from './products/webhookip/engine.js';
export type { WebhookIpEngineOptions } from './products/webhookip/index.js';
export type { EmailAuthResult, EmailAuthEngineOptions, SpfResult, DkimResult, DkimSelector, DmarcResult } from './products/emailauth/types.js';
export type { EmailAuthEngine } from './products/emailauth/engine.js';
export type {
  DnsblResult,
  DnsblListing,
  DnsblFailedZone,
  DnsblFailureReason,
  DnsblEngineOptions,
  DnsblOptions,
  DnsblZone,
  DnsblCode,
  DnsblZonesDataset,
} from './products/dnsbl/types.js';
export type { DnsblEngine, DnsblQuery } from './products/dnsbl/engine.js';
export type { TlsResult, TlsOptions, TlsEngineOptions } from './products/tls/types.js';
export type { TlsEngine } from './products/tls/engine.js';
export type { TlsTarget } from './products/tls/target.js';
export type { AsnEngine, AsnResult, AsnRecord, AsnNetworkType, AsnEngineOptions, AsnCymruOptions, AsnSourceInfo, AsnIndexInfo } from './products/asn/types.js';
export type {
  EmailValResult,
  EmailValEngineOptions,
  EmailRisk,
  EmailRiskLevel,
  EmailRiskReason,
  EmailFormatReason,
  EmailMxReason,
} from './products/emailval/types.js';
export type { EmailValEngine } from './products/emailval/engine.js';
export type { WhoisResult, WhoisSource, WhoisEngineOptions, RdapBootstrap } from './products/whois/types.js';
export type { WhoisEngine, WhoisQuery } from './products/whois/engine.js';
export type {
  DomainRepResult,
  DomainRepSignal,
  DomainRepSignalCode,
  DomainRepLevel,
  DomainRepEngineOptions,
  DomainZone,
  DomainZoneCode,
} from './products/domainrep/types.js';
export type { DomainRepEngine, DomainRepQuery } from './products/domainrep/engine.js';
export { EMAIL_LIMITS_NOTE } from './products/emailval/types.js';
export type { PwbreachResult, PwbreachInput, PwbreachEngineOptions } from './products/pwbreach/types.js';
export { MAX_PASSWORD_BYTES } from './products/pwbreach/types.js';
export type { PwbreachEngine } from './products/pwbreach/engine.js';
export type { BreachRange } from './products/pwbreach/range.js';
export type { UpstreamOptions as PwbreachUpstreamOptions } from './products/pwbreach/upstream.js';
export { USER_AGENT_MAX_LENGTH } from './products/useragent/types.js';
export type { WebhookIpResult, WebhookIpOptions, WebhookProvider, WebhookRangesDataset, WebhookRangeSource } from './products/webhookip/types.js';
export { mmdbAsnSource } from './products/geoip/asn-source.js';
export type { GeoIpResult, GeoIpEngineOptions, GeoIpDatabases, GeoIpDatabaseInfo, GeoIpFileInfo, AsnSource } from './products/geoip/types.js';
export type { GeoIpEngine } from './products/geoip/engine.js';
export type { TimezoneResult } from './products/timezone/types.js';
export type { RiskScoreResult, RiskScoreEngineOptions, RiskScoreLocation, RiskScoreNetwork } from './products/riskscore/types.js';
export type {
  ScamriskResult,
  ScamriskEngineOptions,
  ScamriskRequest,
  ScamriskShorthandRequest,
  ScamriskTypedRequest,
  Signal as ScamriskSignal,
  SignalCode as ScamriskSignalCode,
  RiskLevel as ScamriskRiskLevel,
  Recommendation as ScamriskRecommendation,
  IdentifierType as ScamriskIdentifierType,
} from './products/scamrisk/types.js';
export type { TimezoneEngine } from './products/timezone/engine.js';
