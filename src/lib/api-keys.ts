/**
 * API keys as text: a product's prefix and 192 random bits, stored only as a SHA-256 hash and
 * shown in listings by a short visible start. Pure helpers, used by the key administration
 * (src/metering/keys.ts) and by captcha's site keys; no meter or store here.
 */
import * as crypto from 'node:crypto';
import { PRODUCTS, type ProductId } from '../products/catalog.js';

/** Random characters after the product prefix: 32 base64url characters = 192 bits. */
const KEY_RANDOM_BYTES = 24;
/** Characters of the random part kept visible in listings. */
const VISIBLE_RANDOM_CHARS = 6;

/** SHA-256 of a key, lowercase hex: the only form in which keys are stored. */
export const hashKey: (key: string) => string =
  // crypto.hash (Node >= 20.12) is the one-shot form, about twice as fast as a Hash object.
  typeof crypto.hash === 'function' ? (key) => crypto.hash('sha256', key, 'hex') : (key) => crypto.createHash('sha256').update(key).digest('hex');

export function generateKey(product: ProductId, kind: 'secret' | 'public'): string {
  const info = PRODUCTS[product];
  const prefix = kind === 'secret' ? info.secretPrefix : info.publicPrefix;
  return prefix + crypto.randomBytes(KEY_RANDOM_BYTES).toString('base64url');
}

/** The short, non-secret start of a key shown in listings, e.g. `ua_sec_3kT9xQ`. */
export function visiblePrefix(key: string): string {
  const cut = key.indexOf('_', key.indexOf('_') + 1) + 1;
  return key.slice(0, cut + VISIBLE_RANDOM_CHARS);
}
