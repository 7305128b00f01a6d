/**
 * Random hex for nonces, proof ids and pow salts, drawn from a pool: one CSPRNG call
 * (randomFillSync of 4 KB) per 256 ids of 16 bytes instead of one per id, which cost more than
 * signing the token. The bytes are the same CSPRNG's; each is handed out once.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` random bytes (at most 4096) as lower-case hex. */
export function randomHex(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return text;
}
