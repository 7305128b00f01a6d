import { bool, int, ipString, nullable, num, obj, oneOf, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

// Every field is always present; what the database does not give is null (ours: SPEC names no nulls).
export const GEOIP_DOC: ProductDoc = {
  summary: 'Geolocation and network metadata for an IP, from local MMDB files.',
  query: { ip: { description: 'IPv4 or IPv6 address.', required: true } },
  result: obj({
    ip: ipString('The IP looked up, canonical (an IPv4-mapped IPv6 input is its IPv4 address).'),
    provider: str('Data provider name: `DB-IP City Lite` by default, `MaxMind <databaseType>` for MaxMind files.'),
    continent: nullable(str('English continent name.')),
    country: obj({
      code: nullable(str('ISO 3166-1 alpha-2.')),
      name: nullable(str('English country name.')),
    }),
    region: nullable(str('State, province or region.')),
    city: nullable(str('City, when available.')),
    postal: nullable(str('Postal or ZIP code, when available.')),
    location: obj(
      {
        latitude: nullable(num('WGS84 latitude, 4 decimals.')),
        longitude: nullable(num('WGS84 longitude, 4 decimals.')),
      },
      { description: 'WGS84 coordinates.' },
    ),
    timezone: obj({ id: nullable(str("IANA identifier: the database's, else the one at the coordinates.")) }),
    connection: obj({
      isp: nullable(str()),
      org: nullable(str()),
      asn: nullable(int()),
      domain: nullable(str('Reverse DNS domain (registrable part) when known.')),
      type: oneOf(['IPv4', 'IPv6'], 'IPv4 or IPv6.'),
    }),
    is_eu: nullable(bool('Country is in the European Union; null when the country is unknown.')),
  }),
  batchInput: { description: 'An IPv4 or IPv6 address, as is.' },
  errors: ['invalid_ip', 'ip_not_found', 'ip_not_routable', 'lookup_failed'],
  status: { database_records: int('Search-tree nodes of the location database files.') },
};
