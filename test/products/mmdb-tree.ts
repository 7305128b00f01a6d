/**
 * Test helper: the prefixes an MMDB file's search tree holds no record for, read straight from
 * the file's bytes (MaxMind DB format 2.0, record sizes 24, 28 and 32 bits), independently of
 * the engine and of maxmind's reader.
 */
import { readFileSync } from 'node:fs';

/** One empty prefix: its first address as a bigint (IPv6 width for an IPv6 tree), and its length. */
export interface EmptyPrefix {
  first: bigint;
  length: number;
}

const METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');

/** Reads `node_count`, `record_size` and `ip_version` from the metadata map (unsigned ints only). */
function metadataOf(bytes: Buffer): { nodeCount: number; recordSize: number; ipVersion: number } {
  const at = bytes.lastIndexOf(METADATA_MARKER) + METADATA_MARKER.length;
  const field = (name: string) => {
    const key = bytes.indexOf(Buffer.from(name, 'latin1'), at);
    let p = key + name.length;
    const control = bytes[p++];
    const size = control & 0x1f; // uint16 (5) / uint32 (6) fit in the control byte's size bits
    let value = 0;
    for (let i = 0; i < size; i++) value = value * 256 + bytes[p + i];
    return value;
  };
  return { nodeCount: field('node_count'), recordSize: field('record_size'), ipVersion: field('ip_version') };
}

/** Every prefix of the file's tree that leads to "no data", shortest first per branch. */
export function emptyPrefixes(path: string): { ipVersion: number; prefixes: EmptyPrefix[] } {
  const bytes = readFileSync(path);
  const { nodeCount, recordSize, ipVersion } = metadataOf(bytes);
  const nodeBytes = recordSize / 4;
  const record = (node: number, right: number): number => {
    const o = node * nodeBytes;
    if (recordSize === 24) return right ? bytes.readUIntBE(o + 3, 3) : bytes.readUIntBE(o, 3);
    if (recordSize === 28) {
      const middle = bytes[o + 3];
      return right ? (middle & 0x0f) * 2 ** 24 + bytes.readUIntBE(o + 4, 3) : (middle >>> 4) * 2 ** 24 + bytes.readUIntBE(o, 3);
    }
    return right ? bytes.readUInt32BE(o + 4) : bytes.readUInt32BE(o);
  };
  const width = ipVersion === 6 ? 128 : 32;
  const prefixes: EmptyPrefix[] = [];
  // Depth-first; the bits walked so far are kept in `bits`, turned into an address only for an empty prefix.
  const bits = new Uint8Array(width);
  const walk = (node: number, depth: number): void => {
    for (let right = 0; right < 2; right++) {
      bits[depth] = right;
      const next = record(node, right);
      if (next === nodeCount) {
        let first = 0n;
        for (let i = 0; i < width; i++) first = (first << 1n) | BigInt(i <= depth ? bits[i] : 0);
        prefixes.push({ first, length: depth + 1 });
      } else if (next < nodeCount) walk(next, depth + 1);
    }
  };
  walk(0, 0);
  return { ipVersion, prefixes: prefixes.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0)) };
}

/** `2001:db8::` / `192.0.2.0` for an empty prefix's first address. */
export function addressText(first: bigint, ipVersion: number): string {
  if (ipVersion === 4) {
    const n = Number(first & 0xffffffffn);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }
  const hex = first.toString(16).padStart(32, '0');
  const groups = hex.match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, ''));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}
