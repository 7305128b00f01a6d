/**
 * The captcha signing keys, kept in the meter's settings (`captcha.signing_keys`) so that every
 * instance on one store signs and verifies with the same keys, and a restart keeps tokens
 * already handed out valid. The first instance to need a key makes one. Rotation
 * (`seclookup sitekeys rotate-signing-key`) puts a new key first; older keys keep verifying for
 * an hour (far beyond the 120 s challenges and 300 s proofs) and are then dropped.
 */
import type { Meter } from '../../metering/types.js';
import { newSigningKey, type KeyRing, type SigningKey } from './signing.js';

export const SIGNING_KEYS_SETTING = 'captcha.signing_keys';
/** How long a replaced key still verifies. */
export const RETIRED_KEY_LIFETIME_MS = 3_600_000;
/** How often an instance re-reads the ring (a rotation elsewhere reaches it within this). */
const REFRESH_MS = 60_000;

interface StoredKey {
  kid: string;
  secret: string;
  created_at: number;
}

function parseStored(text: string | null): StoredKey[] {
  if (!text) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.filter((k): k is StoredKey => typeof k?.kid === 'string' && typeof k?.secret === 'string' && typeof k?.created_at === 'number' && Buffer.from(k.secret, 'base64').length === 32);
  } catch {
    return [];
  }
}

function toRing(stored: StoredKey[]): KeyRing {
  const keys: SigningKey[] = stored.map((k) => ({ kid: k.kid, secret: Buffer.from(k.secret, 'base64') }));
  return { current: keys[0], byId: new Map(keys.map((k) => [k.kid, k])) };
}

function store(key: SigningKey, now: number): StoredKey {
  return { kid: key.kid, secret: key.secret.toString('base64'), created_at: now };
}

/**
 * Put a new signing key first; keys replaced more than an hour ago are dropped. The key that
 * was current until now keeps verifying: its `created_at` becomes the time it was retired.
 */
export async function rotateSigningKey(meter: Meter, now = Date.now()): Promise<string> {
  const stored = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING));
  const fresh = newSigningKey();
  const kept = stored.map((k, i) => (i === 0 ? { ...k, created_at: now } : k)).filter((k) => now - k.created_at < RETIRED_KEY_LIFETIME_MS);
  await meter.setSetting(SIGNING_KEYS_SETTING, JSON.stringify([store(fresh, now), ...kept]));
  return fresh.kid;
}

/**
 * The ring as this instance sees it: read on first use, re-read every minute (elapsed time, not
 * a request clock), and at once (at most once a second) when a token names a key it does not
 * have: a key another instance just rotated in.
 */
export function createKeyRingSource(meter: Meter, now: () => number = () => performance.now()): (kid?: string) => Promise<KeyRing> {
  let ring: KeyRing | null = null;
  let readAt = 0;
  let pending: Promise<KeyRing> | null = null;

  async function load(): Promise<KeyRing> {
    let stored = parseStored(await meter.getSetting(SIGNING_KEYS_SETTING));
    if (stored.length === 0) {
      // Set only if absent: when several instances start at once, they all keep the one key stored first.
      const fresh = JSON.stringify([store(newSigningKey(), Date.now())]);
      stored = parseStored(await meter.setSettingIfAbsent(SIGNING_KEYS_SETTING, fresh));
      // A value there that holds no usable key (damaged by hand): replaced.
      if (stored.length === 0) {
        await meter.setSetting(SIGNING_KEYS_SETTING, fresh);
        stored = parseStored(fresh);
      }
    }
    ring = toRing(stored);
    readAt = now();
    return ring;
  }

  return (kid) => {
    const stale = ring === null || now() - readAt >= REFRESH_MS || (kid !== undefined && !ring.byId.has(kid) && now() - readAt >= 1_000);
    if (ring && !stale) return Promise.resolve(ring);
    return (pending ??= load().finally(() => {
      pending = null;
    }));
  };
}
