/**
 * Random hex for request ids, captcha nonces, proof ids and pow salts, drawn from a pool: one
 * CSPRNG call per 64 KB and one hex conversion per 4 KB (256 ids of 16 bytes), instead of one of
 * each per id, which cost more than signing a token. An id is then a slice of the pool's text.
 * The bytes are the CSPRNG's; each is handed out once.
 *
 * Why two sizes: under serve's load a CSPRNG call costs far more than in a loop (about 41 µs for
 * 4 KB, against 3-10 µs alone: OpenSSL's code is cold by then), and mostly per call, so the bytes
 * are drawn 64 KB at a time; hex text of 64 KB at once would be one large string, so it is made
 * 4 KB at a time.
 */
import { randomBytes } from 'node:crypto';

const RAW_BYTES = 65_536;
const TEXT_BYTES = 4096;
let raw = Buffer.alloc(0);
let rawOffset = 0;
let text = '';
let textOffset = 0;

/** `bytes` random bytes (at most 4096) as lower-case hex. */
export function randomHex(bytes: number): string {
  const length = bytes * 2;
  if (textOffset + length > text.length) refillText();
  const hex = text.slice(textOffset, textOffset + length);
  textOffset += length;
  return hex;
}

function refillText(): void {
  if (rawOffset + TEXT_BYTES > raw.length) {
    raw = randomBytes(RAW_BYTES);
    rawOffset = 0;
  }
  text = raw.toString('hex', rawOffset, rawOffset + TEXT_BYTES);
  rawOffset += TEXT_BYTES;
  textOffset = 0;
}
