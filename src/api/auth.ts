import { LRUCache } from 'lru-cache';
import { refusal } from '../errors.js';
import { createCidrMatcher, type IpAddress } from '../lib/ip.js';
import { isPromise, type MaybePromise } from '../lib/outcome.js';
import { hashKey } from '../metering/keys.js';
import type { MeterHotPath, ResolvedKey, ResolvedPlan } from '../metering/types.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
// Pure header reading lives in src/lib/headers.ts (service routes use it too); kept exported here.
export { bearerToken } from '../lib/headers.js';

/** Every product's key looks like this (`geo_sec_…`, `ua_pub_…`); anything else is not worth a store lookup. */
const KEY_SHAPE = /^[a-z]{2,3}_(?:sec|pub)_[A-Za-z0-9_-]{1,200}$/;

/** Key hashes remembered at most (see findKey); real keys number far fewer. */
const KNOWN_HASHES_MAX = 10_000;

/** An authenticated key whose plan is known. */
export type AuthenticatedKey = ResolvedKey & { plan: ResolvedPlan };

/** Does the key text look like one of this product's keys of the given kind? */
export function hasKeyShape(key: string, product: ProductId, kind: 'secret' | 'public'): boolean {
  const info = PRODUCTS[product];
  return key.startsWith(kind === 'secret' ? info.secretPrefix : info.publicPrefix);
}

/**
 * Checks a presented key against SPEC's rules, in order: known and active
 * (invalid_api_key), of this product (invalid_api_key), a secret key where one is required
 * (wrong_key_type), and called from an allowed address (ip_not_allowed).
 */
export function createAuthenticator(meter: Pick<MeterHotPath, 'resolveKey'>) {
  const allowlists = new LRUCache<string, (addr: IpAddress) => boolean>({ max: 1000 });
  const knownHashes = new Map<string, string>();

  /**
   * The stored key for a presented one. Text that cannot be a key is not looked up. The key's
   * SHA-256 is remembered for keys the store knows: a busy key is hashed once rather than per
   * request. Unknown keys are never remembered, so guessing cannot grow or churn the memo.
   */
  function findKey(token: string): MaybePromise<ResolvedKey | null> {
    const remembered = knownHashes.get(token);
    if (remembered === undefined && !KEY_SHAPE.test(token)) return null;
    const hash = remembered ?? hashKey(token);
    const remember = (key: ResolvedKey | null) => {
      if (key && remembered === undefined) {
        if (knownHashes.size >= KNOWN_HASHES_MAX) knownHashes.clear();
        knownHashes.set(token, hash);
      }
      return key;
    };
    // A store answering synchronously (memory, sqlite's key cache) costs no promise here.
    const key = meter.resolveKey(hash);
    return isPromise(key) ? key.then(remember) : remember(key);
  }

  function isAllowed(ipAllow: string[], clientIpOf: () => IpAddress | null): boolean {
    if (ipAllow.length === 0) return true;
    const clientIp = clientIpOf();
    if (!clientIp) return false;
    const id = ipAllow.join(',');
    let matcher = allowlists.get(id);
    if (!matcher) allowlists.set(id, (matcher = createCidrMatcher(ipAllow)));
    return matcher(clientIp);
  }

  /**
   * Resolve the key; store failures propagate (thrown, or as a rejection) so the caller can
   * apply its store-failure policy. Synchronous when the store answered synchronously.
   */
  function resolve(token: string | undefined, product: ProductId): MaybePromise<AuthenticatedKey> {
    if (!token) throw refusal('missing_credentials', 'no API key: send Authorization: Bearer <key>');
    const key = findKey(token);
    return isPromise(key) ? key.then((found) => checkKey(found, product)) : checkKey(key, product);
  }

  function checkKey(key: ResolvedKey | null, product: ProductId): AuthenticatedKey {
    if (!key || key.status !== 'active' || key.plan === null) {
      throw refusal('invalid_api_key', 'the API key is unknown, inactive or revoked');
    }
    if (key.product !== product) throw refusal('invalid_api_key', `the API key does not belong to the ${product} product`);
    return key as AuthenticatedKey;
  }

  /** `clientIp` is called only when the key has an allowlist. */
  function authorize(key: AuthenticatedKey, requireSecret: boolean, clientIp: () => IpAddress | null): void {
    if (requireSecret && key.kind !== 'secret') {
      throw refusal('wrong_key_type', 'this route needs the secret key; the public key works on the status route only');
    }
    if (!isAllowed(key.ipAllow, clientIp)) throw refusal('ip_not_allowed', "the caller IP is not on this key's allowlist");
  }

  return { resolve, authorize };
}
