/** The DNS layer: one resolver every DNS-using product shares. */
export { checkDnsResolverOptions, createDnsResolver, DNS_TIMEOUT_DEFAULTS, freshnessOf } from './resolver.js';
export type { DnsAnswer, DnsCacheOptions, DnsRecordType, DnsResolver, DnsResolverOptions, DnsValue, MxData } from './resolver.js';
export { parseDnsServer, systemDnsServers } from './servers.js';
export type { DnsServer } from './servers.js';
