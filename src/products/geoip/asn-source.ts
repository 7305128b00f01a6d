/**
 * connection.isp / org / asn from a MaxMind GeoLite2-ASN or GeoIP2-ISP database, as an
 * {@link AsnSource}: what the geoip engine reads for `asnDatabase`, and a source anyone can
 * pass as the `asn` option.
 */
import ipaddr from 'ipaddr.js';
import type { Reader, Response } from 'maxmind';
import { formatIp } from '../../lib/ip.js';
import type { IpInput } from '../../lib/ip-input.js';
import { openDatabase } from './database.js';
import type { AsnSource } from './types.js';

/** What an AsnSource answers. */
export type AsnRecord = NonNullable<ReturnType<AsnSource['record']>>;

/** Look `input` up in a GeoLite2-ASN / GeoIP2-ISP reader. Throws what the reader throws. */
export function readAsnRecord(reader: Reader<Response>, input: IpInput): AsnRecord | null {
  if (input.version === 6 && reader.metadata.ipVersion !== 6) return null;
  const [found, prefix] = reader.getWithPrefixLength(input.ip);
  if (!found || typeof found !== 'object') return null;
  const rec = found as Record<string, unknown>;
  const asn = typeof rec.autonomous_system_number === 'number' ? rec.autonomous_system_number : null;
  const org = text(rec.autonomous_system_organization) ?? text(rec.organization);
  const isp = text(rec.isp);
  if (asn === null && org === null && isp === null) return null;
  return { asn, org, isp, network: networkOf(input, prefix) };
}

/**
 * An AsnSource over a GeoLite2-ASN or GeoIP2-ISP file, read once (no watching). Throws
 * SeclookupError `dataset_missing` / `dataset_invalid` naming the file.
 *
 * @example
 * createLookup({ geoip: { database: 'GeoLite2-City.mmdb', asn: mmdbAsnSource('GeoLite2-ASN.mmdb') } })
 */
export function mmdbAsnSource(path: string, options: { cacheSize?: number } = {}): AsnSource {
  const { reader } = openDatabase({ role: 'asn', path }, options.cacheSize ?? 10_000);
  return { record: (input) => readAsnRecord(reader, input) };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The CIDR of the record's network: the address with the bits past `prefix` cleared. */
function networkOf(input: IpInput, prefix: number): string {
  if (input.version === 4) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    const value = (input.value & mask) >>> 0;
    return `${value >>> 24}.${(value >>> 16) & 0xff}.${(value >>> 8) & 0xff}.${value & 0xff}/${prefix}`;
  }
  const bytes = input.address.toByteArray();
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    bytes[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return `${formatIp(ipaddr.fromByteArray(bytes))}/${prefix}`;
}
