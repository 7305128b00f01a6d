import { bool, int, ipString, list, nullable, num, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

const LEVELS = ['low', 'medium', 'high', 'critical'];
const scored = (what: string) =>
  obj({ score: int(`${what} score, 0-100.`, { minimum: 0, maximum: 100 }), level: oneOf(LEVELS, 'low 0-24, medium 25-49, high 50-74, critical 75-100.') });
const flag = (description: string) => bool(description);

// Location and network fields are always present; what the provider does not give is null (ours).
export const RISKSCORE_DOC: ProductDoc = {
  summary: 'Risk and threat intelligence, location and network data for an IP.',
  query: { ip: { description: 'IPv4 or IPv6 address.', required: true } },
  result: obj({
    ip: ipString(),
    provider: oneOf(['local', 'ipinfo', 'ipqualityscore'], 'Name of the data provider used.'),
    location: obj({
      country: obj({ code: nullable(str('ISO 3166-1 alpha-2.')), name: nullable(str('English country name.')) }),
      city: nullable(str()),
      region: nullable(str()),
      latitude: nullable(num()),
      longitude: nullable(num()),
      timezone: nullable(str('IANA identifier.')),
    }),
    network: obj({
      isp: nullable(str()),
      asn: nullable(int()),
      connection_type: nullable(str('local: hosting, isp, education, government or unknown (null when the AS is unknown); upstreams: their own label.')),
    }),
    intelligence: obj({
      verdict: oneOf(['clean', 'hosting', 'relay', 'suspicious', 'anonymizer', 'malicious'], 'Overall assessment code.'),
      description: str('Human-readable verdict summary.'),
      risk: scored('Risk'),
      threat: scored('Threat'),
      flags: obj({
        is_anonymous: flag('Tor, VPN, relay or proxy.'),
        is_proxy: flag('An anonymising proxy.'),
        is_vpn: flag('A VPN range, ASN or server.'),
        is_tor: flag('A Tor exit relay.'),
        is_relay: flag('A privacy relay (iCloud Private Relay).'),
        is_malicious: flag('Blocklisted (IPsum at the threshold, Spamhaus DROP / ASN-DROP) or reported abuse.'),
        is_hosting: flag('A datacenter, cloud or hosting network.'),
        is_network_service: flag('A crawler, monitor or platform service address.'),
      }),
      anonymous_confidence: int('0-100.', { minimum: 0, maximum: 100 }),
      tags: list(str(), 'Provider tags.'),
      categories: list(str(), 'Provider categories.'),
    }),
    is_eu: nullable(bool('Country is in the European Union; null when the country is unknown.')),
  }),
  batchInput: { description: 'An IPv4 or IPv6 address, as is.' },
  errors: ['invalid_ip', 'ip_not_found', 'ip_not_routable', 'lookup_failed', 'upstream_unconfigured'],
  status: { database_records: int('Entries of the local datasets (0 when the local data is not loaded).') },
};
