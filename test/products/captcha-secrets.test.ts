/**
 * Captcha signing keys at rest: the meter's settings (SQLite file, Redis hash) hold them only
 * wrapped under the operator secret. Whoever reads the store cannot mint a token with anything
 * in it; a store opened with another secret (or none) signs nothing and is left as it was;
 * plaintext keys of an older version are replaced, not kept.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorSecret } from '../../src/lib/operator-secret.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { createKeyRingSource, rotateSigningKey, SIGNING_KEYS_SETTING } from '../../src/products/captcha/key-ring.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { newSigningKey, openToken, signToken, type KeyRing, type TokenKind } from '../../src/products/captcha/signing.js';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { createApiStack, TEST_SECRET } from '../api/harness.js';
import { createTempDirs } from '../cli/harness.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';

const KIND: TokenKind<'a'> = { label: 'seclookup-captcha-proof', fields: ['a'] };
const SECRET = createOperatorSecret('captcha-secrets-test-secret-0123456789abcdef');
const OTHER_SECRET = createOperatorSecret('another-operator-secret-0123456789abcdef0123');
const temp = createTempDirs();
afterAll(() => temp.cleanup());

/** Every string anywhere in a JSON value. */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** A reader of the store tries every stored string (and its base64 and hex decodings) as the HMAC key. */
function mintsWithStoreAlone(stored: string, token: string, kid: string): boolean {
  for (const text of stringsIn(JSON.parse(stored))) {
    for (const candidate of [Buffer.from(text, 'base64'), Buffer.from(text, 'hex'), Buffer.from(text, 'utf8')]) {
      const ring: KeyRing = { current: { kid, secret: candidate }, byId: new Map([[kid, { kid, secret: candidate }]]) };
      if (openToken(ring, KIND, token)) return true;
    }
  }
  return false;
}

async function storeHoldsNothingThatSigns(meter: Meter): Promise<void> {
  const ring = await createKeyRingSource(meter, SECRET)();
  const token = signToken(ring, KIND, { a: 'x' });
  const stored = (await meter.getSetting(SIGNING_KEYS_SETTING))!;
  expect(JSON.parse(stored)[0]).toEqual({ kid: ring.current.kid, wrapped: expect.any(String), created_at: expect.any(Number) });
  expect(stored).not.toContain(ring.current.secret.toString('base64'));
  expect(stored).not.toContain(ring.current.secret.toString('hex'));
  expect(mintsWithStoreAlone(stored, token, ring.current.kid)).toBe(false);
  // Sanity of the probe itself: with the key in the clear, it mints.
  expect(mintsWithStoreAlone(JSON.stringify([{ secret: ring.current.secret.toString('base64') }]), token, ring.current.kid)).toBe(true);
}

describe('captcha signing keys at rest', () => {
  it('SQLite: the settings row holds only the wrapped key; nothing in it signs a token the ring accepts', async () => {
    const meter = createSqliteMeter(join(temp.make(), 'meter.db'));
    try {
      await storeHoldsNothingThatSigns(meter);
    } finally {
      await meter.close();
    }
  });

  it('a store opened with another secret, or none, yields no signing key (secret_unavailable) and is left as it was', async () => {
    const meter = createMemoryMeter();
    const ring = await createKeyRingSource(meter, SECRET)();
    const stored = await meter.getSetting(SIGNING_KEYS_SETTING);
    await expect(createKeyRingSource(meter, OTHER_SECRET)()).rejects.toMatchObject({
      code: 'secret_unavailable',
      message: expect.stringContaining('another operator secret'),
    });
    await expect(createKeyRingSource(meter, null)()).rejects.toMatchObject({ code: 'secret_unavailable', message: expect.stringContaining('--secret-file') });
    await expect(rotateSigningKey(meter, null)).rejects.toMatchObject({ code: 'secret_unavailable' });
    expect(await meter.getSetting(SIGNING_KEYS_SETTING)).toBe(stored);
    // An altered wrapped key fails as a wrong secret does.
    const altered = JSON.parse(stored!);
    altered[0].kid = 'other-kid';
    await meter.setSetting(SIGNING_KEYS_SETTING, JSON.stringify(altered));
    await expect(createKeyRingSource(meter, SECRET)()).rejects.toMatchObject({ code: 'secret_unavailable' });
    expect(ring.current.secret).toHaveLength(32);
  });

  it('a new operator secret takes over through a forced rotation: keys it cannot unwrap are dropped', async () => {
    const meter = createMemoryMeter();
    const old = await createKeyRingSource(meter, SECRET)();
    const { kid, dropped } = await rotateSigningKey(meter, OTHER_SECRET, Date.now(), { force: true });
    expect(dropped).toBe(1);
    const ring = await createKeyRingSource(meter, OTHER_SECRET)();
    expect([ring.current.kid, ring.byId.has(old.current.kid)]).toEqual([kid, false]);
    await expect(createKeyRingSource(meter, SECRET)()).rejects.toMatchObject({ code: 'secret_unavailable' });
  });

  it('a rotation with a secret that cannot unwrap the current key is refused unless forced, and leaves the store as it was', async () => {
    const meter = createMemoryMeter();
    const ring = await createKeyRingSource(meter, SECRET)();
    const stored = await meter.getSetting(SIGNING_KEYS_SETTING);
    await expect(rotateSigningKey(meter, OTHER_SECRET)).rejects.toMatchObject({
      code: 'secret_unavailable',
      message: expect.stringContaining(`the current captcha signing key (${ring.current.kid}) does not unwrap under this operator secret`),
    });
    expect(await meter.getSetting(SIGNING_KEYS_SETTING)).toBe(stored);
    // The secret that wrapped it rotates as before, keeping the old key for verification.
    const { kid } = await rotateSigningKey(meter, SECRET);
    const after = await createKeyRingSource(meter, SECRET)();
    expect([after.current.kid, after.byId.has(ring.current.kid)]).toEqual([kid, true]);
  });

  it('plaintext keys written by an older version are replaced by a fresh wrapped key, never kept', async () => {
    const meter = createMemoryMeter();
    const legacy = newSigningKey();
    await meter.setSetting(SIGNING_KEYS_SETTING, JSON.stringify([{ kid: legacy.kid, secret: legacy.secret.toString('base64'), created_at: Date.now() }]));
    const oldToken = signToken({ current: legacy, byId: new Map([[legacy.kid, legacy]]) }, KIND, { a: 'x' });
    const ring = await createKeyRingSource(meter, SECRET)();
    expect(ring.current.kid).not.toBe(legacy.kid);
    expect(openToken(ring, KIND, oldToken)).toBeNull();
    const stored = (await meter.getSetting(SIGNING_KEYS_SETTING))!;
    expect(stored).not.toContain(legacy.secret.toString('base64'));
    expect(stored).not.toContain('"secret"');
  });

  it('a copy of the SQLite store served without its secret answers 500 server_error on captcha routes and signs nothing', async () => {
    const dir = temp.make();
    const original = createSqliteMeter(join(dir, 'seclookup.db'));
    const site = await createSiteKey(original, { domains: ['shop.example.com'] });
    const first = await createApiStack({ meter: original });
    const url = `/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example.com`;
    expect((await first.call(url)).status).toBe(200);
    await original.close();
    copyFileSync(join(dir, 'seclookup.db'), join(dir, 'copy.db'));

    for (const secret of [undefined, 'a-thief-s-own-secret-0123456789abcdef012345']) {
      const copy = createSqliteMeter(join(dir, 'copy.db'));
      const thief = await createApiStack({ meter: copy, secret });
      const reply = await thief.call(url);
      expect([reply.status, reply.body.error_code, reply.body.challenge]).toEqual([500, 'server_error', undefined]);
      expect(thief.errors.map((e) => (e.error as { code?: string }).code)).toContain('secret_unavailable');
      await copy.close();
    }
    // With the secret, the copy works: the secret, not the file, is what signs.
    const copy = createSqliteMeter(join(dir, 'copy.db'));
    expect((await (await createApiStack({ meter: copy, secret: TEST_SECRET })).call(url)).status).toBe(200);
    await copy.close();
  });

  it('refuses an operator secret shorter than 32 bytes at construction', () => {
    expect(() => createOperatorSecret('short')).toThrow(/at least 32 bytes/);
  });
});

describe('captcha signing keys at rest in Redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the admin settings hash holds only the wrapped key; another secret reads nothing that signs', async () => {
    const meter = createRedisMeter(server.url());
    try {
      await storeHoldsNothingThatSigns(meter);
      const raw = await server.command('HGET', 'seclookup:{admin}:settings', SIGNING_KEYS_SETTING);
      expect(raw).toContain('"wrapped"');
      expect(raw).not.toContain('"secret"');
      await expect(createKeyRingSource(meter, OTHER_SECRET)()).rejects.toMatchObject({ code: 'secret_unavailable' });
    } finally {
      await meter.close();
    }
  });
});
