/**
 * Single-use ids (captcha challenge nonces and proof ids): each id can be consumed once while it
 * is live. Behind an interface like the meter's, so several instances can share one store
 * (memory/, sqlite/ and redis/ beside this file); `consume` must be atomic across every process that
 * shares the store, so two parallel submits of one token never both pass.
 */
import { invalidOption } from '../errors.js';
import type { MaybePromise } from '../lib/outcome.js';

export interface SingleUseStore {
  /**
   * Mark `id` used until `expiresAt` (ms since the epoch). True the first time; false when it
   * was already used and its entry is still live. Entries expire at `expiresAt` and are never
   * dropped before (no eviction under memory pressure: a dropped entry could be used twice).
   * May answer synchronously.
   *
   * With an `owner`, the claim remembers it, and a later consume of the live id with the same
   * owner is true again: a retry of that claim (captcha siteverify's `idempotency_key`), decided
   * in the same atomic step, so a retry racing its first call on another instance still agrees
   * with it. An id consumed without an owner, or with another, stays false. A store that ignores
   * `owner` only loses those retries (they answer `token_already_used`).
   */
  consume(id: string, expiresAt: number, now: number, owner?: string): MaybePromise<boolean>;
  close(): Promise<void>;
}

/** Longest id accepted: ids are hashes or random tokens, never client text of any length. */
export const MAX_SINGLE_USE_ID = 128;

export function checkSingleUseId(id: string, expiresAt: number, owner?: string): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_SINGLE_USE_ID)
    throw invalidOption(`single-use id must be 1 to ${MAX_SINGLE_USE_ID} characters`);
  if (!Number.isFinite(expiresAt)) throw invalidOption('single-use expiresAt must be a time in ms');
  if (owner !== undefined && (typeof owner !== 'string' || owner.length === 0 || owner.length > MAX_SINGLE_USE_ID))
    throw invalidOption(`single-use owner must be 1 to ${MAX_SINGLE_USE_ID} characters`);
}
