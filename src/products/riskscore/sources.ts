/**
 * The local provider's datasets: where each file lives under `data/riskscore/`, its official
 * refresh URL, how to read it, and the list id its entries carry in the one compiled
 * CidrTable. Reading filters out entries in special-purpose space (private, bogon, loopback,
 * ...): a list that contains them never flags them (such input is 422 anyway).
 */
import { ipv4NotRoutable, ipv6NotRoutable } from '../../lib/ip-special.js';
import { parseCidr, parseIp, type IpAddress } from '../../lib/ip.js';
import type ipaddr from 'ipaddr.js';

/** How a file is read. */
export type SourceFormat =
  /** One CIDR (or bare address) per line; `#` comments and blank lines skipped. */
  | 'cidr-lines'
  /** `fingerprint, ipaddr, port` CSV with a header (the Onionoo-derived mirror format; port empty for an exit address). */
  | 'tor-csv'
  /** IPsum: `IP<TAB>count`, `#` comments. */
  | 'ipsum'
  /** `AS<number> # comment` per line. */
  | 'asn-lines'
  /** Spamhaus DROP JSON: NDJSON objects with `cidr` (or `asn`), a last `"type":"metadata"` line. */
  | 'drop-ndjson';

/** What a list's entries mean; the list id in the table is `<kind>` or `<kind>:<name>`. */
export type ListKind =
  | 'tor'
  | 'vpn'
  | 'vpnserver'
  | 'relay'
  | 'datacenter'
  | 'cloud'
  | 'crawler'
  | 'monitor'
  | 'platform'
  | 'ipsum'
  | 'drop'
  | 'asn-datacenter'
  | 'asn-vpn'
  | 'asn-drop';

export interface LocalSource {
  /** `tor`, `datacenter-ipv4`, `cloud-amazon-ipv4`, ... */
  id: string;
  /** The group `seclookup data update riskscore --source GROUP` names. */
  group: SourceGroup;
  /** Path under `<dataDir>/riskscore/`. */
  file: string;
  format: SourceFormat;
  kind: ListKind;
  /** For cloud/crawler/monitor/platform/vpnserver lists: the provider's name in tags. */
  name?: string;
  /** Where `data update` fetches it (`${mirror}/host/path` with --mirror). */
  url: string;
  /** Not bundled (Spamhaus): read only when the operator installed it. */
  optional?: boolean;
}

export type SourceGroup = 'tor' | 'hosting-vpn' | 'cloud' | 'apple-private-relay' | 'ipsum' | 'spamhaus-drop';
export const SOURCE_GROUPS: readonly SourceGroup[] = ['tor', 'hosting-vpn', 'cloud', 'apple-private-relay', 'ipsum', 'spamhaus-drop'];

const X4B = 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main';
const IPRANGES = 'https://raw.githubusercontent.com/lord-alfred/ipranges/main';
/**
 * Onionoo's running relays with the Exit flag: their `or_addresses` (where they accept Tor
 * connections) and `exit_addresses` (where their exit traffic was seen coming from in the past
 * 24 hours, which can differ: Tor's own bulk exit list is made of those), with `flags` so the
 * converter can check the Exit flag itself.
 */
export const TOR_URL = 'https://onionoo.torproject.org/details?type=relay&running=true&flag=Exit&fields=fingerprint,flags,or_addresses,exit_addresses';
export const APPLE_RELAY_URL = 'https://mask-api.icloud.com/egress-ip-ranges.csv';

/** Cloud-folder providers, by what their ranges mean (data/riskscore/SOURCES.md). */
export const CLOUD_PROVIDERS: Readonly<Record<string, { kind: 'cloud' | 'platform' | 'crawler' | 'monitor' | 'vpnserver'; v6: boolean }>> = {
  amazon: { kind: 'cloud', v6: true },
  google: { kind: 'cloud', v6: true },
  microsoft: { kind: 'cloud', v6: true },
  oracle: { kind: 'cloud', v6: false },
  digitalocean: { kind: 'cloud', v6: true },
  linode: { kind: 'cloud', v6: true },
  vultr: { kind: 'cloud', v6: true },
  cloudflare: { kind: 'cloud', v6: true },
  github: { kind: 'platform', v6: true },
  facebook: { kind: 'platform', v6: true },
  twitter: { kind: 'platform', v6: true },
  telegram: { kind: 'platform', v6: true },
  googlebot: { kind: 'crawler', v6: true },
  bing: { kind: 'crawler', v6: false },
  openai: { kind: 'crawler', v6: false },
  perplexity: { kind: 'crawler', v6: false },
  duckduckbot: { kind: 'crawler', v6: false },
  duckassistbot: { kind: 'crawler', v6: false },
  pingdom: { kind: 'monitor', v6: true },
  statuscake: { kind: 'monitor', v6: false },
  protonvpn: { kind: 'vpnserver', v6: false },
};

export const LOCAL_SOURCES: readonly LocalSource[] = [
  { id: 'tor', group: 'tor', file: 'tor/tor-exits.csv', format: 'tor-csv', kind: 'tor', url: TOR_URL },
  ...(['ipv4', 'ipv6'] as const).flatMap((v) => [
    {
      id: `datacenter-${v}`,
      group: 'hosting-vpn' as const,
      file: `hosting-vpn/datacenter-${v}.txt`,
      format: 'cidr-lines' as const,
      kind: 'datacenter' as const,
      url: `${X4B}/output/datacenter/${v}.txt`,
    },
    {
      id: `vpn-${v}`,
      group: 'hosting-vpn' as const,
      file: `hosting-vpn/vpn-${v}.txt`,
      format: 'cidr-lines' as const,
      kind: 'vpn' as const,
      url: `${X4B}/output/vpn/${v}.txt`,
    },
  ]),
  {
    id: 'datacenter-asn',
    group: 'hosting-vpn',
    file: 'hosting-vpn/datacenter-asn.txt',
    format: 'asn-lines',
    kind: 'asn-datacenter',
    url: `${X4B}/input/datacenter/ASN.txt`,
  },
  { id: 'vpn-asn', group: 'hosting-vpn', file: 'hosting-vpn/vpn-asn.txt', format: 'asn-lines', kind: 'asn-vpn', url: `${X4B}/input/vpn/ASN.txt` },
  ...Object.entries(CLOUD_PROVIDERS).flatMap(([name, { kind, v6 }]) =>
    (v6 ? (['ipv4', 'ipv6'] as const) : (['ipv4'] as const)).map((v) => ({
      id: `cloud-${name}-${v}`,
      group: 'cloud' as const,
      file: `cloud/${name}/${v}.txt`,
      format: 'cidr-lines' as const,
      kind,
      name,
      url: `${IPRANGES}/${name}/${v}_merged.txt`,
    })),
  ),
  { id: 'apple-relay-ipv4', group: 'apple-private-relay', file: 'apple-private-relay/ipv4.txt', format: 'cidr-lines', kind: 'relay', url: APPLE_RELAY_URL },
  { id: 'apple-relay-ipv6', group: 'apple-private-relay', file: 'apple-private-relay/ipv6.txt', format: 'cidr-lines', kind: 'relay', url: APPLE_RELAY_URL },
  {
    id: 'ipsum',
    group: 'ipsum',
    file: 'abuse/ipsum.txt',
    format: 'ipsum',
    kind: 'ipsum',
    url: 'https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt',
  },
  {
    id: 'spamhaus-drop-v4',
    group: 'spamhaus-drop',
    file: 'spamhaus/drop_v4.json',
    format: 'drop-ndjson',
    kind: 'drop',
    url: 'https://www.spamhaus.org/drop/drop_v4.json',
    optional: true,
  },
  {
    id: 'spamhaus-drop-v6',
    group: 'spamhaus-drop',
    file: 'spamhaus/drop_v6.json',
    format: 'drop-ndjson',
    kind: 'drop',
    url: 'https://www.spamhaus.org/drop/drop_v6.json',
    optional: true,
  },
  {
    id: 'spamhaus-asndrop',
    group: 'spamhaus-drop',
    file: 'spamhaus/asndrop.json',
    format: 'drop-ndjson',
    kind: 'asn-drop',
    url: 'https://www.spamhaus.org/drop/asndrop.json',
    optional: true,
  },
];

/** What a file holds, read. */
export interface ParsedSource {
  /** CIDR entries with their value (`tor`, `cloud:amazon`, `ipsum:5`). */
  ranges: { cidr: string; value: string }[];
  asns: number[];
  /** Entries left out because they are in special-purpose space or too broad. */
  filtered: number;
}

/** A line that does not read. The updater refuses a download holding one. */
export class SourceFormatError extends Error {}

/** Read a file's text. Throws SourceFormatError naming the first bad line. */
export function parseSource(source: LocalSource, text: string): ParsedSource {
  const out: ParsedSource = { ranges: [], asns: [], filtered: 0 };
  const listValue = source.name ? `${source.kind}:${source.name}` : source.kind;
  const lines = text.split('\n');
  const bad = (n: number, why: string) => new SourceFormatError(`${source.file} line ${n + 1}: ${why}: ${JSON.stringify(lines[n].slice(0, 80))}`);
  const addRange = (text: string, value: string, n: number) => {
    const cidr = readCidr(text);
    if (!cidr) throw bad(n, 'not an IP address or CIDR');
    if (!publicCidr(cidr[0], cidr[1])) out.filtered++;
    else out.ranges.push({ cidr: text.includes('/') ? text : `${text}/${cidr[0].kind() === 'ipv4' ? 32 : 128}`, value });
  };
  const ipsumValues = new Map<number, string>();

  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === '' || line.startsWith('#')) continue;
    switch (source.format) {
      case 'cidr-lines':
        addRange(line, listValue, n);
        break;
      case 'tor-csv': {
        if (n === 0 && line.startsWith('fingerprint')) continue;
        const fields = line.split(',').map((f) => f.trim());
        if (fields.length < 2) throw bad(n, 'expected fingerprint, ipaddr, port');
        addRange(fields[1], listValue, n);
        break;
      }
      case 'ipsum': {
        const [ip, countText] = line.split(/\s+/);
        const count = Number(countText);
        if (!Number.isSafeInteger(count) || count < 1) throw bad(n, 'expected IP<TAB>count');
        let value = ipsumValues.get(count);
        if (!value) ipsumValues.set(count, (value = `ipsum:${count}`));
        addRange(ip, value, n);
        break;
      }
      case 'asn-lines': {
        const match = /^AS(\d+)\s*(?:#.*)?$/i.exec(line);
        if (!match) throw bad(n, 'expected AS<number> # comment');
        out.asns.push(Number(match[1]));
        break;
      }
      case 'drop-ndjson': {
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line);
        } catch {
          throw bad(n, 'not JSON');
        }
        if (typeof record !== 'object' || record === null) throw bad(n, 'not a JSON object');
        if (record.type === 'metadata') continue;
        if (typeof record.cidr === 'string') addRange(record.cidr, 'drop', n);
        else if (typeof record.asn === 'number' && Number.isSafeInteger(record.asn) && record.asn > 0) out.asns.push(record.asn);
        else throw bad(n, 'expected a "cidr" or "asn" field');
        break;
      }
    }
  }
  return out;
}

function readCidr(text: string): [IpAddress, number] | null {
  try {
    if (text.includes('/')) return parseCidr(text);
    const addr = parseIp(text);
    return addr ? [addr, addr.kind() === 'ipv4' ? 32 : 128] : null;
  } catch {
    return null;
  }
}

/**
 * A CIDR whose first and last addresses are globally routable and that is no broader than /8
 * (IPv4) or /16 (IPv6): lists never get to flag private, bogon or special space, nor half the
 * Internet by mistake.
 */
function publicCidr(addr: IpAddress, bits: number): boolean {
  if (addr.kind() === 'ipv4') {
    if (bits < 8) return false;
    const o = (addr as ipaddr.IPv4).octets;
    const start = ((o[0] * 0x1000000 + o[1] * 0x10000 + o[2] * 0x100 + o[3]) >>> 0) & (bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0);
    const first = start >>> 0;
    const last = (first + 2 ** (32 - bits) - 1) >>> 0;
    return ipv4NotRoutable(first) === null && ipv4NotRoutable(last) === null;
  }
  if (bits < 16) return false;
  const v6 = addr as ipaddr.IPv6;
  const parts = [...v6.parts];
  const firstParts = parts.map((p, i) => p & maskPart(bits, i));
  const lastParts = parts.map((p, i) => (p & maskPart(bits, i)) | (~maskPart(bits, i) & 0xffff));
  const make = (ps: number[]) => parseIp(ps.map((p) => p.toString(16)).join(':')) as ipaddr.IPv6;
  return ipv6NotRoutable(make(firstParts)) === null && ipv6NotRoutable(make(lastParts)) === null;
}

function maskPart(bits: number, index: number): number {
  const keep = Math.max(0, Math.min(16, bits - index * 16));
  return keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
}
