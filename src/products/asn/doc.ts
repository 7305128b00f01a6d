import { int, ipString, nullable, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

export const ASN_DOC: ProductDoc = {
  summary: 'Autonomous system number and network classification for a public IP.',
  query: { ip: { description: 'Public IPv4 or IPv6 address.', required: true } },
  result: obj({
    ip: ipString(),
    asn: nullable(int('The origin AS; null when no source knows the address.')),
    as_org: nullable(str('AS organization name.')),
    network: nullable(
      str('Announced prefix (CIDR) covering the IP; for a 6to4, Teredo or NAT64 (64:ff9b::/96) address, the IPv4 prefix covering the IPv4 address it carries.'),
    ),
    country_code: nullable(str('ISO country code of the allocation (only from the DNS source).')),
    registry: nullable(str('Regional registry label, lowercase (only from the DNS source).')),
    allocated: nullable(str('Allocation date, YYYY-MM-DD (only from the DNS source).')),
    network_type: oneOf(['hosting', 'isp', 'education', 'government', 'unknown'], 'Coarse heuristic from organization-name keywords.'),
  }),
  batchInput: { description: 'A public IPv4 or IPv6 address, as is.' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
  status: { database_records: int('Ranges in the index (IPv4 and IPv6), or networks in a MaxMind database.') },
};
