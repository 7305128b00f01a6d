/**
 * The captcha signing keys, kept in the meter's settings (`captcha.signing_keys`) so that every
 * instance on one store signs and verifies with the same keys, and a restart keeps tokens
 * already handed out valid. They are stored only wrapped under the operator secret
 * (src/lib/operator-secret.ts): the store alone signs nothing, and an instance without the secret (or with
 * another one) refuses to sign rather than make keys of its own beside the others'. The first
 * instance to need a key makes one. Rotation (`seclookup sitekeys rotate-signing-key`) puts a
 * new key first; older keys keep verifying for an hour after they were replaced (far beyond the
 * 120 s challenges and 300 s proofs), then no longer, and the next rotation drops them.
 *
 * Stores written before wrapping existed hold plaintext keys: they are not wrapped but
 * replaced by a fresh wrapped key on first use (whoever read the store may have copied them),
 * so tokens signed by them in the last few minutes fail once.
 */
import { SeclookupError } from '../../errors.js';
import type { SettingsStore } from '../../metering/types.js';
import { unwrapKey, wrapKey, type OperatorSecret } from '../../lib/operator-secret.js';
import { newSigningKey, type KeyRing, type SigningKey } from './signing.js';
import type { MaybePromise } from '../../lib/outcome.js';

export const SIGNING_KEYS_SETTING = 'captcha.signing_keys';
/** How long a replaced key still verifies. */
export const RETIRED_KEY_LIFETIME_MS = 3_600_000;
/** How often an instance re-reads the ring (a rotation elsewhere reaches it within this). */
const REFRESH_MS = 60_000;

/** A key as stored: wrapped under the operator secret. */
interface StoredKey {
  kid: string;
  wrapped: string;
  created_at: number;
}

/** The stored list, split: wrapped entries, and whether plaintext ones (of older versions) or damage were found. */
interface ParsedRing {
  wrapped: StoredKey[];
  plaintext: boolean;
}

function parseStored(text: string | null): ParsedRing {
  const empty = { wrapped: [], plaintext: false };
  if (!text) return empty;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return empty;
    const wrapped = parsed.filter((k): k is StoredKey => typeof k?.kid === 'string' && typeof k?.wrapped === 'string' && typeof k?.created_at === 'number');
    return { wrapped, plaintext: parsed.some((k) => typeof k?.secret === 'string') };
  } catch {
    return empty;
  }
}

function wrapped(secret: OperatorSecret, key: SigningKey, now: number): StoredKey {
  return { kid: key.kid, wrapped: wrapKey(secret, key.kid, key.secret), created_at: now };
}

function noSecret(): SeclookupError {
  return new SeclookupError(
    'secret_unavailable',
    'captcha needs the operator secret to use its signing keys: give serve --secret-file FILE or SECLOOKUP_SECRET (createApi: the secret option)',
  );
}

const ANOTHER_SECRET =
  'the captcha signing key in the store was wrapped with another operator secret (or altered): give this instance the same secret as the others, or make a new key under this one with `seclookup sitekeys rotate-signing-key`';

/**
 * Why the store's signing keys cannot be used under `secret` (the current one was wrapped with
 * another secret: a lost `<db>.secret`, an instance given a different one), or null: they can,
 * there are none yet (the first challenge makes them), or there is no secret (said apart).
 * `serve` says it at start, instead of captcha answering 500 from the first request on.
 */
export async function signingKeysProblem(meter: SettingsStore, secret: OperatorSecret | null): Promise<string | null> {
  if (!secret) return null;
  const current = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING)).wrapped[0];
  if (!current || unwrapKey(secret, current.kid, current.wrapped)?.length === 32) return null;
  return `${ANOTHER_SECRET}; until then challenges and proofs answer 500 server_error`;
}

/**
 * The stored keys that still verify at `now`: the current one, and those replaced less than an
 * hour ago. A replaced key's `created_at` is when it was replaced (rotateSigningKey sets it):
 * it must not outlive the hour because no second rotation came to drop it (a leaked key would).
 */
function liveKeys(stored: readonly StoredKey[], now: number): StoredKey[] {
  return stored.filter((entry, index) => index === 0 || now - entry.created_at < RETIRED_KEY_LIFETIME_MS);
}

/** When the first of these retired keys stops verifying (Infinity when none is retired). */
function firstRetiredExpiry(live: readonly StoredKey[]): number {
  return Math.min(...live.slice(1).map((entry) => entry.created_at + RETIRED_KEY_LIFETIME_MS));
}

/**
 * The ring these stored keys make under `secret`. The newest key must unwrap: an instance
 * whose secret differs from the one that wrapped it fails rather than sign with older keys.
 */
function unwrapRing(secret: OperatorSecret, stored: readonly StoredKey[]): KeyRing {
  const keys: SigningKey[] = [];
  for (const [index, entry] of stored.entries()) {
    const key = unwrapKey(secret, entry.kid, entry.wrapped);
    if (key?.length === 32) keys.push({ kid: entry.kid, secret: key });
    else if (index === 0) throw new SeclookupError('secret_unavailable', ANOTHER_SECRET);
  }
  return { current: keys[0], byId: new Map(keys.map((k) => [k.kid, k])) };
}

/**
 * Does the store hold signing keys wrapped under some operator secret? Then a new random secret
 * could never unwrap them: the CLI does not make a key file for such a store.
 */
export async function holdsWrappedSigningKeys(meter: SettingsStore): Promise<boolean> {
  return parseStored(await meter.getSetting(SIGNING_KEYS_SETTING)).wrapped.length > 0;
}

export interface RotateOptions {
  /**
   * Rotate even when `secret` cannot unwrap the current key, which is then dropped: every
   * instance still signing with it fails until it gets the new secret. Without it, such a
   * rotation is refused (SeclookupError `secret_unavailable`): a wrong or lost secret must not
   * silently take captcha away from the running servers.
   */
  force?: boolean;
}

/**
 * Put a new signing key first, wrapped under `secret`; keys replaced more than an hour ago are
 * dropped, and so are keys this secret cannot unwrap (wrapped with a previous secret, or
 * plaintext of an older version). The key that was current until now keeps verifying: its
 * `created_at` becomes the time it was retired. A current key `secret` cannot unwrap is dropped
 * only with `force` (see RotateOptions).
 */
export async function rotateSigningKey(
  meter: SettingsStore,
  secret: OperatorSecret | null,
  now = Date.now(),
  { force = false }: RotateOptions = {},
): Promise<{ kid: string; dropped: number }> {
  if (!secret) throw noSecret();
  const { wrapped: stored } = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING));
  const usable = stored.filter((k) => unwrapKey(secret, k.kid, k.wrapped) !== null);
  if (!force && stored.length > 0 && usable[0] !== stored[0])
    throw new SeclookupError(
      'secret_unavailable',
      `the current captcha signing key (${stored[0].kid}) does not unwrap under this operator secret: rotating would drop it, and every instance signing with it would answer 500 until given this secret; use the secret that wrapped it, or force the rotation`,
    );
  const fresh = newSigningKey();
  const kept = usable.map((k, i) => (i === 0 && k === stored[0] ? { ...k, created_at: now } : k)).filter((k) => now - k.created_at < RETIRED_KEY_LIFETIME_MS);
  await meter.setSetting(SIGNING_KEYS_SETTING, JSON.stringify([wrapped(secret, fresh, now), ...kept]));
  return { kid: fresh.kid, dropped: stored.length - usable.length };
}

/**
 * The ring as this instance sees it: read on first use, re-read every minute, at once (at most
 * once a second) when a token names a key it does not have (a key another instance just rotated
 * in), and when a retired key in it reaches the end of its hour (it then leaves the ring). `now`
 * is wall-clock time in ms, as the stored `created_at` (the API's clock). The ring comes at once
 * while it is fresh, and as a promise when the store is read. Rejects with SeclookupError
 * `secret_unavailable` when `secret` is null or does not unwrap the store's current key.
 */
export function createKeyRingSource(
  meter: SettingsStore,
  secret: OperatorSecret | null,
  now: () => number = Date.now,
): (kid?: string) => MaybePromise<KeyRing> {
  let ring: KeyRing | null = null;
  let readAt = 0;
  let retiredExpiry = Number.POSITIVE_INFINITY;
  let pending: Promise<KeyRing> | null = null;

  async function load(): Promise<KeyRing> {
    if (!secret) throw noSecret();
    let stored = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING));
    const fresh = () => JSON.stringify([wrapped(secret, newSigningKey(), Date.now())]);
    if (stored.plaintext) {
      // An older version's plaintext keys: dropped (a fresh wrapped key replaces them), then
      // read back, so instances migrating at once settle on the value written last.
      await meter.setSetting(SIGNING_KEYS_SETTING, stored.wrapped.length > 0 ? JSON.stringify(stored.wrapped) : fresh());
      stored = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING));
    }
    if (stored.wrapped.length === 0) {
      // Set only if absent: when several instances start at once, they all keep the one key stored first.
      const first = fresh();
      stored = parseStored(await meter.setSettingIfAbsent(SIGNING_KEYS_SETTING, first));
      // A value there that holds no usable entry (damaged by hand): replaced.
      if (stored.wrapped.length === 0) {
        await meter.setSetting(SIGNING_KEYS_SETTING, first);
        stored = parseStored(first);
      }
    }
    readAt = now();
    const live = liveKeys(stored.wrapped, readAt);
    ring = unwrapRing(secret, live);
    retiredExpiry = firstRetiredExpiry(live);
    return ring;
  }

  return (kid) => {
    const at = now();
    const elapsed = at - readAt;
    // A wall clock stepped back (NTP) makes `elapsed` negative: re-read then, or the ring would
    // stay as it is, a rotation unseen, for as long as the step.
    const stale =
      ring === null || elapsed < 0 || elapsed >= REFRESH_MS || at >= retiredExpiry || (kid !== undefined && !ring.byId.has(kid) && elapsed >= 1_000);
    // The ring itself while it is fresh: a caller awaits only a read of the store.
    if (ring && !stale) return ring;
    return (pending ??= load().finally(() => {
      pending = null;
    }));
  };
}
