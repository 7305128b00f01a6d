import * as crypto from 'node:crypto';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import type { CreatedSubscription, KeyKind, MeterAdmin } from './types.js';

/** Random characters after the product prefix: 32 base64url characters = 192 bits. */
const KEY_RANDOM_BYTES = 24;
/** Characters of the random part kept visible in listings. */
const VISIBLE_RANDOM_CHARS = 6;

/** SHA-256 of a key, lowercase hex: the only form in which keys are stored. */
export const hashKey: (key: string) => string =
  // crypto.hash (Node >= 20.12) is the one-shot form, about twice as fast as a Hash object.
  typeof crypto.hash === 'function' ? (key) => crypto.hash('sha256', key, 'hex') : (key) => crypto.createHash('sha256').update(key).digest('hex');

export function generateKey(product: ProductId, kind: KeyKind): string {
  const info = PRODUCTS[product];
  const prefix = kind === 'secret' ? info.secretPrefix : info.publicPrefix;
  return prefix + crypto.randomBytes(KEY_RANDOM_BYTES).toString('base64url');
}

/** The short, non-secret start of a key shown in listings, e.g. `ua_sec_3kT9xQ`. */
export function visiblePrefix(key: string): string {
  const cut = key.indexOf('_', key.indexOf('_') + 1) + 1;
  return key.slice(0, cut + VISIBLE_RANDOM_CHARS);
}

export interface IssueKeysOptions {
  product: ProductId;
  /** Plan slug; default `starter`. */
  plan?: string;
  /**
   * Networks (`10.0.0.0/8`) or bare addresses the keys may be used from; applies to both keys
   * of the pair. Default: any address. The store refuses (TypeError) text that is no CIDR and a
   * CIDR with host bits set (`10.0.0.1/8`).
   */
  ipAllow?: string[];
}

export interface IssuedKeys extends CreatedSubscription {
  product: ProductId;
  plan: string;
  /** Shown once: only its hash is stored. */
  secretKey: string;
  publicKey: string;
}

/**
 * Create a subscription with a secret/public key pair. The plaintext keys exist only in the
 * returned object; the store receives their SHA-256 hashes and visible prefixes.
 */
export async function issueKeys(meter: MeterAdmin, options: IssueKeysOptions): Promise<IssuedKeys> {
  const plan = options.plan ?? 'starter';
  const secretKey = generateKey(options.product, 'secret');
  const publicKey = generateKey(options.product, 'public');
  const created = await meter.createSubscription({
    product: options.product,
    plan,
    ipAllow: options.ipAllow ?? [],
    keys: [
      { kind: 'secret', hash: hashKey(secretKey), prefix: visiblePrefix(secretKey) },
      { kind: 'public', hash: hashKey(publicKey), prefix: visiblePrefix(publicKey) },
    ],
  });
  return { ...created, product: options.product, plan, secretKey, publicKey };
}
