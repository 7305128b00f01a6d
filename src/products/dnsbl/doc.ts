import { bool, int, list, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

const ZONE = str('The zone queried.');
const NAME = str('Display name of the zone.');

export const DNSBL_DOC: ProductDoc = {
  summary: 'Checks a public IPv4 address against a configured set of DNS blocklist zones.',
  query: { ip: { description: 'Public IPv4 address (IPv6 is 422 ip_not_routable).', required: true } },
  result: obj({
    ip: str('Normalized IPv4 (an IPv4-mapped IPv6 input is its IPv4 address).'),
    listed: bool('True if any zone lists the IP.'),
    list_count: int('Number of zones listing the IP.'),
    lists: list(
      obj({
        zone: ZONE,
        name: NAME,
        responses: list(str(), 'Returned DNS answer addresses that are listing codes of the zone, sorted.'),
        meanings: list(str(), "What each response means, per the zone's operator; same order as responses (beyond SPEC)."),
      }),
      'One entry per zone listing the IP, in configuration order; empty when not listed.',
    ),
    checked: int('Number of zones queried, failed ones included; authoritative per response.'),
    failed_zones: list(
      obj(
        {
          zone: ZONE,
          name: NAME,
          reason: oneOf(['timeout', 'server_error', 'zone_error', 'invalid_answer', 'unknown_code'], 'Why the zone gave no usable answer.'),
          message: str('What went wrong, for people.'),
          responses: list(str(), 'The addresses the zone answered (zone_error, invalid_answer, unknown_code).'),
        },
        { optional: ['responses'] },
      ),
      'Zones that gave no usable answer (neither listed nor clean); empty when every zone answered (beyond SPEC).',
    ),
  }),
  batchInput: { description: 'A public IPv4 address, as is (an IPv6 one is the item error ip_not_routable).' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
  status: { database_records: int('Number of configured zones.') },
};
