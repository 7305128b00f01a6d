import { generateKey, hashKey, visiblePrefix } from '../lib/api-keys.js';
import type { ProductId } from '../products/catalog.js';
import type { CreatedSubscription, MeterAdmin } from './types.js';

// The key text itself (generated, hashed, shown in part) is no meter's business: src/lib/api-keys.ts,
// which captcha's site keys use too. Re-exported here, where the key administration always found it.
export { generateKey, hashKey, visiblePrefix } from '../lib/api-keys.js';

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
