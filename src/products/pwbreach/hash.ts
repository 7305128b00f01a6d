/**
 * SHA-1 hashes as pwbreach handles them: 20 bytes, addressed by their first 20 bits (the
 * 5-hex-digit prefix of the public range API) and the remaining 140 bits (the 35-hex-digit
 * suffix). Hex is read in either case and written in upper case, as the range API does.
 */
import crypto, { createHash } from 'node:crypto';

export const HASH_BYTES = 20;
/** Hex digits of a prefix and of a suffix. */
export const PREFIX_HEX = 5;
export const SUFFIX_HEX = 35;
/** How many prefixes there are: 16^5. */
export const PREFIX_COUNT = 1 << 20;

/** Hex digit values by character code (0-255), -1 for anything else. */
export const HEX_VALUE: Int8Array = (() => {
  const table = new Int8Array(256).fill(-1);
  for (let i = 0; i < 10; i++) table[0x30 + i] = i;
  for (let i = 0; i < 6; i++) {
    table[0x41 + i] = 10 + i;
    table[0x61 + i] = 10 + i;
  }
  return table;
})();

const UPPER_HEX = '0123456789ABCDEF';

/** `crypto.hash` (Node 20.12+): one call, no Hash object; its string outputs are the cheapest. */
const oneShotHash = (crypto as unknown as { hash?: (algorithm: string, data: string, encoding: 'latin1') => string }).hash;

/** SHA-1 of the password's UTF-8 bytes, as the range API and its datasets hash them (no normalization). */
export function sha1OfPassword(password: string): Buffer {
  if (!oneShotHash) return createHash('sha1').update(password, 'utf8').digest();
  // One character per byte; measured at a third of createHash's cost, and under half of asking for a Buffer.
  const bytes = oneShotHash('sha1', password, 'latin1');
  const hash = Buffer.allocUnsafe(HASH_BYTES);
  for (let i = 0; i < HASH_BYTES; i++) hash[i] = bytes.charCodeAt(i);
  return hash;
}

/** 40 hex digits in either case -> 20 bytes; null when the text is anything else. */
export function parseSha1Hex(text: string): Buffer | null {
  if (text.length !== 40) return null;
  const hash = Buffer.allocUnsafe(HASH_BYTES);
  for (let i = 0; i < HASH_BYTES; i++) {
    const hi = hexDigit(text.charCodeAt(2 * i));
    const lo = hexDigit(text.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return null;
    hash[i] = (hi << 4) | lo;
  }
  return hash;
}

function hexDigit(code: number): number {
  return code < 256 ? HEX_VALUE[code] : -1;
}

/** A 5-hex-digit prefix in either case -> its number (0 to 2^20 - 1); -1 when it is not one. */
export function parsePrefix(text: string): number {
  if (text.length !== PREFIX_HEX) return -1;
  let value = 0;
  for (let i = 0; i < PREFIX_HEX; i++) {
    const digit = hexDigit(text.charCodeAt(i));
    if (digit < 0) return -1;
    value = (value << 4) | digit;
  }
  return value;
}

/** The hash's prefix as a number: its first 20 bits. */
export function prefixOf(hash: Uint8Array, offset = 0): number {
  return (hash[offset] << 12) | (hash[offset + 1] << 4) | (hash[offset + 2] >> 4);
}

/** A prefix number as the range API writes it: 5 upper-case hex digits. */
export function prefixHex(prefix: number): string {
  return prefix.toString(16).toUpperCase().padStart(PREFIX_HEX, '0');
}

/** The hash's 35-hex-digit suffix, upper case. */
export function suffixHex(hash: Uint8Array): string {
  return (
    UPPER_HEX[hash[2] & 0x0f] +
    Buffer.from(hash.buffer, hash.byteOffset + 3, HASH_BYTES - 3)
      .toString('hex')
      .toUpperCase()
  );
}
