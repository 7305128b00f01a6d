/**
 * The optional DNS source in the style of Team Cymru's IP-to-ASN service
 * (https://www.team-cymru.com/ip-asn-mapping): a TXT query for the reversed address under
 * `origin.asn.cymru.com` (IPv6: its 32 nibbles, reversed, under `origin6.asn.cymru.com`)
 * answers with the announced prefix's origin AS, the prefix, the allocation's country code,
 * the registry and the allocation date:
 *
 *   1.1.1.1     -> 1.1.1.1.origin.asn.cymru.com TXT "13335 | 1.1.1.0/24 | AU | apnic | 2011-08-11"
 *   2001:db8::1 -> 1.0.0.0.(...).8.b.d.0.1.0.0.2.origin6.asn.cymru.com TXT "..."
 *
 * A prefix announced by several origins may list several ASNs in the first field ("701 1239");
 * the first is taken. Several TXT records may come back (nested prefixes): the most specific
 * prefix that contains the address wins. A record that does not parse, or whose prefix does not
 * contain the address, is ignored; an answer with records but none usable is a garbage answer,
 * treated like a failed query.
 */
import type ipaddr from 'ipaddr.js';
import type { IpInput } from '../../lib/ip-input.js';
import { formatCidr, networkOf, parseCidr } from '../../lib/ip.js';
import { isReservedAsn } from './reserved.js';

export const CYMRU_ZONE = 'origin.asn.cymru.com';
export const CYMRU_ZONE6 = 'origin6.asn.cymru.com';

/** One usable TXT record of the DNS source. */
export interface CymruOrigin {
  asn: number;
  /** The announced prefix, as a network (`1.1.1.0/24`). */
  network: string;
  /** Prefix length, to pick the most specific. */
  prefix: number;
  /** Upper-case ISO country code, or null when the field is empty. */
  country_code: string | null;
  /** Lower-case registry label (`arin`, `ripencc`, ...), or null when empty. */
  registry: string | null;
  /** YYYY-MM-DD, or null when empty. */
  allocated: string | null;
}

/** The query name for an address. */
export function cymruName(input: IpInput, zone: string, zone6: string): string {
  if (input.version === 4) {
    const v = input.value;
    return `${v & 0xff}.${(v >>> 8) & 0xff}.${(v >>> 16) & 0xff}.${v >>> 24}.${zone}`;
  }
  const nibbles: string[] = [];
  for (const group of input.address.parts) for (let shift = 12; shift >= 0; shift -= 4) nibbles.push(((group >> shift) & 0xf).toString(16));
  return `${nibbles.reverse().join('.')}.${zone6}`;
}

/**
 * The best usable origin among an answer's TXT records (see the module comment), or null when
 * none is usable.
 */
export function parseCymruAnswer(records: readonly string[], input: IpInput): CymruOrigin | null {
  let best: CymruOrigin | null = null;
  for (const record of records) {
    const origin = parseCymruRecord(record, input);
    if (origin && (!best || origin.prefix > best.prefix)) best = origin;
  }
  return best;
}

/** One TXT record, or null when it is not `ASN | prefix | CC | registry | date` for this address. */
export function parseCymruRecord(record: string, input: IpInput): CymruOrigin | null {
  const fields = record.split('|').map((field) => field.trim());
  if (fields.length !== 5) return null;
  const [asnField, prefixField, country, registry, allocated] = fields;
  const firstAsn = asnField.split(/\s+/)[0];
  if (!/^\d{1,10}$/.test(firstAsn)) return null;
  const asn = Number(firstAsn);
  if (asn > 0xffffffff || isReservedAsn(asn)) return null;
  let cidr;
  try {
    cidr = networkOf(parseCidr(prefixField));
  } catch {
    return null;
  }
  if (!prefixField.includes('/') || !contains(cidr[0], cidr[1], input)) return null;
  if (country !== '' && !/^[A-Za-z]{2}$/.test(country)) return null;
  if (registry !== '' && !/^[A-Za-z][A-Za-z0-9-]{0,31}$/.test(registry)) return null;
  if (allocated !== '' && !isDate(allocated)) return null;
  return {
    asn,
    network: formatCidr(cidr),
    prefix: cidr[1],
    country_code: country === '' ? null : country.toUpperCase(),
    registry: registry === '' ? null : registry.toLowerCase(),
    allocated: allocated === '' ? null : allocated,
  };
}

function contains(network: ipaddr.IPv4 | ipaddr.IPv6, bits: number, input: IpInput): boolean {
  if (network.kind() === 'ipv4') {
    if (input.version !== 4) return false;
    const o = (network as ipaddr.IPv4).octets;
    const start = o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3];
    const size = 2 ** (32 - bits);
    return input.value - (input.value % size) === start;
  }
  return input.version === 6 && input.address.match(network as ipaddr.IPv6, bits);
}

function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
