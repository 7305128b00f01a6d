/**
 * Paths of the MaxMind test databases (test/fixtures/maxmind) and readers of the JSON they were
 * built from, so tests can say what each network should answer without restating it.
 */
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';

const DIR = new URL('../fixtures/maxmind/', import.meta.url).pathname;

export const MAXMIND = {
  city: `${DIR}GeoIP2-City-Test.mmdb`,
  country: `${DIR}GeoIP2-Country-Test.mmdb`,
  enterprise: `${DIR}GeoIP2-Enterprise-Test.mmdb`,
  isp: `${DIR}GeoIP2-ISP-Test.mmdb`,
  brokenPointers: `${DIR}MaxMind-DB-test-broken-pointers-24.mmdb`,
} as const;

/** One network of a source JSON file: its first address as seclookup would be given it, and its data. */
export interface SourceNetwork {
  /** As written in the JSON (`::81.2.69.142/127`, `2001:218::/32`). */
  cidr: string;
  /** The first address: dotted quad for networks under `::/96` (IPv4 in an IPv6 tree), else IPv6. */
  ip: string;
  prefix: number;
  data: Record<string, unknown>;
}

/**
 * The networks of `source-data/<name>.json`. For each, `data` is the record of the most specific
 * network holding its first address (the JSON lists nested networks separately).
 */
export function sourceNetworks(name: 'GeoIP2-City-Test' | 'GeoIP2-Country-Test' | 'GeoIP2-Enterprise-Test' | 'GeoIP2-ISP-Test'): SourceNetwork[] {
  const entries = JSON.parse(readFileSync(`${DIR}${name}.json`, 'utf8')) as Record<string, Record<string, unknown>>[];
  const parsed = entries.map((entry) => {
    const [cidr, data] = Object.entries(entry)[0];
    const [address, prefix] = ipaddr.parseCIDR(cidr);
    const bytes = (address.kind() === 'ipv4' ? (address as ipaddr.IPv4).toIPv4MappedAddress() : (address as ipaddr.IPv6)).toByteArray();
    const v6Prefix = address.kind() === 'ipv4' ? prefix + 96 : prefix;
    const start = toBigInt(bytes) & ~((1n << BigInt(128 - v6Prefix)) - 1n);
    return { cidr, data, start, v6Prefix };
  });
  return parsed.map(({ cidr, start, v6Prefix }) => {
    // The most specific network containing `start` (its own, unless a nested one starts there).
    let best = parsed[0];
    let bestPrefix = -1;
    for (const other of parsed) {
      const mask = ~((1n << BigInt(128 - other.v6Prefix)) - 1n) & ((1n << 128n) - 1n);
      if ((start & mask) === other.start && other.v6Prefix > bestPrefix) {
        best = other;
        bestPrefix = other.v6Prefix;
      }
    }
    const inV4 = start >> 32n === 0n || start >> 32n === 0xffffn;
    const ip = inV4 ? ipaddr.fromByteArray(fromBigInt(start, 16).slice(12)).toString() : ipaddr.fromByteArray(fromBigInt(start, 16)).toString();
    return { cidr, ip, prefix: inV4 ? v6Prefix - 96 : v6Prefix, data: best.data };
  });
}

function toBigInt(bytes: number[]): bigint {
  return bytes.reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function fromBigInt(value: bigint, length: number): number[] {
  const bytes: number[] = [];
  for (let i = length - 1; i >= 0; i--) bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return bytes;
}

/** `part.names.en`, or null. */
export function englishName(part: unknown): string | null {
  const names = (part as { names?: Record<string, string> } | undefined)?.names;
  return names?.en ?? null;
}

/** A coordinate as geoip reports it (4 decimals). */
export function round4(value: unknown): number | null {
  return typeof value === 'number' ? Math.round(value * 10_000) / 10_000 : null;
}
