import { ipString, nullable, obj, str } from '../../openapi/schema.js';
import type { ProductDoc } from '../../openapi/types.js';

// Every field is always present; what is not known is null (ours: SPEC says "when available").
export const TIMEZONE_DOC: ProductDoc = {
  summary: 'IANA timezone, UTC offset and abbreviation for a public IP, plus country and city when available.',
  query: { ip: { description: 'Public IPv4 or IPv6 address.', required: true } },
  result: obj({
    ip: ipString(),
    timezone: obj({
      id: nullable(str('IANA identifier when available.')),
      utc_offset: nullable(str('+HH:MM or -HH:MM at the time of the lookup; null when the id is null.', { pattern: '^[+-]\\d{2}:\\d{2}$' })),
      abbreviation: nullable(str('Short abbreviation as the tz database writes it (EST, CEST, JST; +0545 where tzdata uses a number).')),
    }),
    country: obj({ code: nullable(str('ISO country code when available.')) }),
    city: nullable(str('City name when available.')),
  }),
  batchInput: { description: 'A public IPv4 or IPv6 address, as is.' },
  errors: ['invalid_ip', 'ip_not_routable', 'lookup_failed'],
};
