/**
 * A retired signing key verifies for an hour after the rotation that replaced it, then no
 * longer, even when no second rotation comes to drop it from the store: the one rotation an
 * operator does after a leak must end the leaked key. The current key always verifies.
 */
import { describe, expect, it } from 'vitest';
import { openToken, signToken, type KeyRing, type SigningKey, type TokenKind } from '../../src/products/captcha/signing.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createOperatorSecret } from '../../src/lib/operator-secret.js';
import { createKeyRingSource, rotateSigningKey, SIGNING_KEYS_SETTING } from '../../src/products/captcha/key-ring.js';

const KIND: TokenKind<'id'> = { label: 'keyring-expiry-test', fields: ['id'] };
const SECRET = createOperatorSecret('keyring-expiry-test-operator-secret-0123456789');
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 15, 12);

/** A token signed with `key` alone: what whoever copied a leaked key can make at any time. */
const signedWith = (key: SigningKey) => signToken({ current: key, byId: new Map([[key.kid, key]]) }, KIND, { id: 'x' });
const verifies = (ring: KeyRing, key: SigningKey) => openToken(ring, KIND, signedWith(key)) !== null;

/** A store whose first key was made five hours before T0, then one rotation at T0; and a running instance's ring source on `clock`. */
async function rotatedOnce(clock: { now: number }) {
  const meter = createMemoryMeter();
  await rotateSigningKey(meter, SECRET, T0 - 5 * 60 * MINUTE);
  const ring = createKeyRingSource(meter, SECRET, () => clock.now);
  const old = (await ring()).current;
  const { kid } = await rotateSigningKey(meter, SECRET, T0);
  return { meter, ring, old, kid };
}

describe('captcha signing keys: a retired key expires an hour after its rotation', () => {
  it('rotated once: the old key verifies at +59 min and not at +61 min, the new one always', async () => {
    const clock = { now: T0 };
    const { meter, ring, old, kid } = await rotatedOnce(clock);
    clock.now = T0 + 59 * MINUTE;
    const before = await ring();
    expect(before.current.kid).toBe(kid);
    expect(verifies(before, old)).toBe(true);
    expect(verifies(before, before.current)).toBe(true);
    clock.now = T0 + 61 * MINUTE;
    const after = await ring();
    expect(after.current.kid).toBe(kid);
    expect(after.byId.has(old.kid)).toBe(false);
    expect(verifies(after, old)).toBe(false);
    expect(verifies(after, after.current)).toBe(true);
    // The store still lists it (the next rotation drops it): it is the ring that leaves it out.
    expect(JSON.parse((await meter.getSetting(SIGNING_KEYS_SETTING))!).map((k: { kid: string }) => k.kid)).toEqual([kid, old.kid]);
  });

  it('the hour counts from the rotation, not from when the old key was made (five hours before)', async () => {
    const clock = { now: T0 };
    const { ring, old } = await rotatedOnce(clock);
    clock.now = T0 + 30 * MINUTE;
    expect(verifies(await ring(), old)).toBe(true);
  });

  it('a ring read less than a minute ago drops the key at the end of its hour, without waiting for the next read', async () => {
    const clock = { now: T0 };
    const { ring, old } = await rotatedOnce(clock);
    clock.now = T0 + 59 * MINUTE + 30_000;
    expect(verifies(await ring(), old)).toBe(true);
    clock.now = T0 + 60 * MINUTE;
    expect(verifies(await ring(), old)).toBe(false);
  });

  it("a wall clock stepped back (NTP) does not hide another instance's rotation: a token naming the new key is met with a re-read", async () => {
    const meter = createMemoryMeter();
    await rotateSigningKey(meter, SECRET, T0 - 10 * MINUTE);
    const clock = { now: T0 };
    const ring = createKeyRingSource(meter, SECRET, () => clock.now);
    await ring();
    clock.now = T0 - 30 * MINUTE;
    const { kid } = await rotateSigningKey(meter, SECRET, T0 + 5 * MINUTE);
    clock.now = T0 - 25 * MINUTE;
    expect((await ring(kid)).byId.has(kid)).toBe(true);
  });

  it('an instance started after the hour never takes the old key in', async () => {
    const clock = { now: T0 };
    const { meter, old, kid } = await rotatedOnce(clock);
    clock.now = T0 + 2 * 60 * MINUTE;
    const ring = await createKeyRingSource(meter, SECRET, () => clock.now)();
    expect(ring.current.kid).toBe(kid);
    expect(verifies(ring, old)).toBe(false);
    expect(verifies(ring, ring.current)).toBe(true);
  });

  it('the current key verifies however long ago it was made', async () => {
    const meter = createMemoryMeter();
    const { kid } = await rotateSigningKey(meter, SECRET, T0);
    const ring = await createKeyRingSource(meter, SECRET, () => T0 + 365 * 24 * 60 * MINUTE)();
    expect(ring.current.kid).toBe(kid);
    expect(verifies(ring, ring.current)).toBe(true);
  });
});
