/**
 * Random hex for request ids, captcha nonces, proof ids and pow salts, drawn from a pool: one
 * CSPRNG call and one hex conversion per 4 KB (256 ids of 16 bytes) instead of one of each per
 * id, which cost more than signing a token. An id is then a slice of the pool's text. The bytes
 * are the CSPRNG's; each is handed out once.
 */
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = '';
let offset = 0;

/** `bytes` random bytes (at most 4096) as lower-case hex. */
export function randomHex(bytes: number): string {
  const length = bytes * 2;
  if (offset + length > pool.length) {
    pool = randomBytes(POOL_BYTES).toString('hex');
    offset = 0;
  }
  const text = pool.slice(offset, offset + length);
  offset += length;
  return text;
}
