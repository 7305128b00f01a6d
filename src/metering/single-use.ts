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
   */
  consume(id: string, expiresAt: number, now: number): MaybePromise<boolean>;
  /**
   * Is `id` consumed (by a `consume` that has resolved) and still live at `now`? Claims nothing.
   * Optional, for stores written before it: without it, captcha siteverify's `idempotency_key`
   * replays no success (a retry answers `token_already_used`, as without a key).
   */
  isUsed?(id: string, now: number): MaybePromise<boolean>;
  close(): Promise<void>;
}

/** Longest id accepted: ids are hashes or random tokens, never client text of any length. */
export const MAX_SINGLE_USE_ID = 128;

export function checkSingleUseId(id: string, expiresAt?: number): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_SINGLE_USE_ID)
    throw invalidOption(`single-use id must be 1 to ${MAX_SINGLE_USE_ID} characters`);
  if (expiresAt !== undefined && !Number.isFinite(expiresAt)) throw invalidOption('single-use expiresAt must be a time in ms');
}
