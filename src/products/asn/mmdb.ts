/**
 * A MaxMind DB (GeoLite2-ASN, GeoIP2-ISP, or any database whose records carry
 * `autonomous_system_number`) as the asn product's data, read with the `maxmind` package.
 *
 * The file is read once, synchronously (engines are built synchronously), and verified before
 * it is used, because mmdb-lib trusts the file: a broken search tree or data pointer otherwise
 * surfaces as a wrong answer or a crash at lookup time. The whole search tree is walked (each
 * node once; IPv4 aliases inside an IPv6 tree lead to nodes already seen), every record must
 * point to a node, to "no data" or inside the data section, and every distinct data record is
 * decoded once through the public reader (looked up at an address of its network, which must
 * come back with the same prefix length) and must be a map whose `autonomous_system_number`,
 * when present, is an unsigned 32-bit integer. A database in which no record has an AS number
 * (a City or Country database given by mistake) is refused too. Any failure is SeclookupError
 * `dataset_invalid` naming the file.
 */
import { readFileSync } from 'node:fs';
import { Reader, type AsnResponse } from 'maxmind';
import { SeclookupError } from '../../errors.js';
import type { IpInput } from '../../lib/ip-input.js';
import { ipv4Network, ipv6Network, wordsToBigInt, partsToWords } from './network.js';
import type { AsnRecord } from './types.js';
import { isReservedAsn } from './reserved.js';

/** MaxMind DB metadata starts after this marker, near the end of the file. */
const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'); // \xAB\xCD\xEF MaxMind.com
const DATA_SECTION_SEPARATOR = 16;

export interface MmdbAsnData {
  /** Networks in the search tree that lead to a data record (IPv4 aliases counted once). */
  networks: number;
  /** The database's build time (metadata `build_epoch`), ms since the epoch. */
  builtAt: number;
  /** Metadata `database_type`, e.g. `GeoLite2-ASN`. */
  databaseType: string;
  /** The record for an address: synchronous, from the file in memory. */
  find(input: IpInput): AsnRecord | null;
  /** The first organization name a record gives an AS (in tree order), or null. */
  orgOf(asn: number): string | null;
}

/** Open and verify `path`. Throws `dataset_missing` (unreadable) or `dataset_invalid`. */
export function openAsnMmdb(path: string): MmdbAsnData {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: asn: cannot read the MaxMind database ${path}: ${(error as Error).message}`, { cause: error });
  }
  const fail = (what: string, cause?: unknown): never => {
    throw new SeclookupError('dataset_invalid', `seclookup: asn: ${path} is not a usable MaxMind ASN database: ${what}`, { cause });
  };
  let reader: Reader<AsnResponse>;
  try {
    reader = new Reader<AsnResponse>(bytes);
  } catch (error) {
    return fail((error as Error).message, error);
  }
  const walk = verify(bytes, reader, fail);
  const { ipVersion } = reader.metadata;

  function find(input: IpInput): AsnRecord | null {
    if (input.version === 6 && ipVersion === 4) return null; // an IPv4-only tree says nothing about IPv6
    const [data, prefix] = reader.getWithPrefixLength(input.ip);
    const asn = data?.autonomous_system_number;
    if (typeof asn !== 'number' || isReservedAsn(asn)) return null;
    const org =
      typeof data!.autonomous_system_organization === 'string' && data!.autonomous_system_organization !== '' ? data!.autonomous_system_organization : null;
    const network = input.version === 4 ? ipv4Network(input.value, prefix) : ipv6Network(wordsToBigInt(...partsToWords(input.address.parts)), prefix);
    return { asn, org, network };
  }

  return {
    networks: walk.networks,
    builtAt: reader.metadata.buildEpoch.getTime(),
    databaseType: reader.metadata.databaseType,
    find,
    orgOf: (asn) => walk.orgs.get(asn) ?? null,
  };
}

/** Walk the tree and decode every data record once; see the module comment. */
function verify(bytes: Buffer, reader: Reader<AsnResponse>, fail: (what: string, cause?: unknown) => never): { networks: number; orgs: Map<number, string> } {
  const { nodeCount, recordSize, ipVersion, searchTreeSize, nodeByteSize } = reader.metadata;
  if (ipVersion !== 4 && ipVersion !== 6) fail(`ip_version ${ipVersion}`);
  if (![24, 28, 32].includes(recordSize)) fail(`record_size ${recordSize}`);
  if (!Number.isSafeInteger(nodeCount) || nodeCount < 1) fail(`node_count ${nodeCount}`);
  const metadataStart = bytes.lastIndexOf(METADATA_MARKER);
  const dataStart = searchTreeSize + DATA_SECTION_SEPARATOR;
  if (dataStart > metadataStart) fail(`the search tree (${nodeCount} nodes of ${nodeByteSize} bytes) is larger than the file allows`);
  const dataSize = metadataStart - dataStart;

  const read = recordReader(bytes, recordSize);
  const bitLength = ipVersion === 6 ? 128 : 32;
  const path = new Uint8Array(bitLength / 8);
  /** 0: not seen; 1: on the current path; 2: done. Reaching a node on the path is a cycle. */
  const state = new Uint8Array(nodeCount);
  /** Levels below each done node, so a shared subtree (an IPv4 alias) still fits the address length. */
  const height = new Uint8Array(nodeCount);
  const decoded = new Set<number>();
  const orgs = new Map<number, string>();
  let networks = 0;
  let withAsn = 0;

  /** Visits `node` at `depth`; returns its height (levels of records below it, itself included). */
  const visit = (node: number, depth: number): number => {
    state[node] = 1;
    let levels = 1;
    for (let bit = 0; bit < 2; bit++) {
      const record = read(node * nodeByteSize, bit);
      setBit(path, depth, bit);
      if (record < nodeCount) {
        if (state[record] === 1) fail(`the search tree has a cycle (node ${node} points back to node ${record})`);
        const below = state[record] === 2 ? height[record] : visit(record, depth + 1);
        if (depth + 1 + below > bitLength) fail(`the search tree is deeper than ${bitLength} bits`);
        levels = Math.max(levels, below + 1);
      } else if (record > nodeCount) {
        const offset = record - nodeCount - DATA_SECTION_SEPARATOR;
        if (offset < 0 || offset >= dataSize) fail(`a search tree record points outside the data section (record ${record})`);
        networks++;
        if (!decoded.has(record)) {
          decoded.add(record);
          const found = checkData(reader, addressText(path, depth + 1, ipVersion), depth + 1, fail);
          if (found) {
            withAsn++;
            if (found.org && !orgs.has(found.asn)) orgs.set(found.asn, found.org);
          }
        }
      }
      setBit(path, depth, 0);
    }
    state[node] = 2;
    height[node] = levels;
    return levels;
  };
  visit(0, 0);
  if (withAsn === 0) fail(`no record has an autonomous_system_number (database_type ${JSON.stringify(reader.metadata.databaseType)}: not an ASN database?)`);
  return { networks, orgs };
}

/** Look the network's first address up through the reader; its AS number and name, or null when it has no AS number. */
function checkData(
  reader: Reader<AsnResponse>,
  address: string,
  prefix: number,
  fail: (what: string, cause?: unknown) => never,
): { asn: number; org: string | null } | null {
  let data: unknown;
  let found: number;
  try {
    [data, found] = reader.getWithPrefixLength(address);
  } catch (error) {
    return fail(`the record of ${address}/${prefix} cannot be decoded: ${(error as Error).message}`, error);
  }
  if (found !== prefix) fail(`the search tree is inconsistent at ${address}/${prefix}`);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return fail(`the record of ${address}/${prefix} is not a map`);
  const record = data as Record<string, unknown>;
  const asn = record.autonomous_system_number;
  if (asn !== undefined && !(Number.isSafeInteger(asn) && (asn as number) >= 0 && (asn as number) <= 0xffffffff)) {
    fail(`the record of ${address}/${prefix} has autonomous_system_number ${JSON.stringify(asn)}`);
  }
  const org = record.autonomous_system_organization;
  if (org !== undefined && typeof org !== 'string') fail(`the record of ${address}/${prefix} has a non-string autonomous_system_organization`);
  return asn === undefined ? null : { asn: asn as number, org: typeof org === 'string' && org !== '' ? org : null };
}

/**
 * The two records of a node: left (bit 0) and right (bit 1), in the MaxMind DB layouts. Callers
 * read nodes below node_count only, which lie inside the search tree, inside the file.
 */
function recordReader(bytes: Buffer, recordSize: number): (offset: number, bit: number) => number {
  switch (recordSize) {
    case 24:
      return (offset, bit) => bytes.readUIntBE(offset + 3 * bit, 3);
    case 28:
      return (offset, bit) =>
        bit === 0 ? ((bytes[offset + 3] & 0xf0) << 20) | bytes.readUIntBE(offset, 3) : ((bytes[offset + 3] & 0x0f) << 24) | bytes.readUIntBE(offset + 4, 3);
    default:
      return (offset, bit) => bytes.readUInt32BE(offset + 4 * bit);
  }
}

function setBit(path: Uint8Array, index: number, bit: number): void {
  const mask = 0x80 >> (index & 7);
  path[index >> 3] = bit ? path[index >> 3] | mask : path[index >> 3] & ~mask;
}

/** The address whose first `bits` bits are `path` (the rest zero), as text mmdb-lib parses. */
function addressText(path: Uint8Array, bits: number, ipVersion: number): string {
  const bytes = Array.from(path, (byte, i) => (i * 8 >= bits ? 0 : bits - i * 8 >= 8 ? byte : byte & (0xff << (8 - (bits - i * 8)))));
  if (ipVersion === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}
