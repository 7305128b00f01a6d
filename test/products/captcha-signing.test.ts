/**
 * The signed-token encoding: fields are length-prefixed, never joined, so moving a boundary
 * between two fields changes the bytes (and the MAC); any altered byte, another kind, an
 * unknown key or trailing bytes fail; rotation keeps old tokens verifying.
 */
import { describe, expect, it } from 'vitest';
import {
  checkToken,
  encodeFields,
  newSigningKey,
  openToken,
  readToken,
  signToken,
  tokenKeyId,
  type KeyRing,
  type TokenKind,
} from '../../src/products/captcha/signing.js';
import { createHmac, randomBytes } from 'node:crypto';
import { createPowPuzzle } from '../../src/products/captcha/puzzles/pow.js';
import { createSliderPuzzle } from '../../src/products/captcha/puzzles/slider.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createOperatorSecret } from '../../src/lib/operator-secret.js';
import { createKeyRingSource, rotateSigningKey, RETIRED_KEY_LIFETIME_MS, SIGNING_KEYS_SETTING } from '../../src/products/captcha/key-ring.js';
import { equal, none, returns, same, throwsA } from '../cheap-expect.js';

const KIND: TokenKind<'a' | 'b' | 'n'> = { label: 'test-kind', fields: ['a', 'b', 'n'] };
const OTHER: TokenKind<'a' | 'b' | 'n'> = { label: 'other-kind', fields: ['a', 'b', 'n'] };
const SECRET = createOperatorSecret('signing-test-operator-secret-0123456789abcdef');
const ringOf = (...keys: ReturnType<typeof newSigningKey>[]): KeyRing => ({ current: keys[0], byId: new Map(keys.map((k) => [k.kid, k])) });

/** The layout written out by hand: version, then tag, u32 length and UTF-8 bytes of the label, the key id and each field of KIND. */
function referenceEncoding(kid: string, v: { a: string; b: string; n: number }): number[] {
  const field = (tag: number, text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const head = Buffer.alloc(5);
    head[0] = tag;
    head.writeUInt32BE(bytes.length, 1);
    return [...head, ...bytes];
  };
  return [1, ...field(0xff, 'test-kind'), ...field(0xfe, kid), ...field(0, v.a), ...field(1, v.b), ...field(2, String(v.n))];
}

describe('captcha token signing', () => {
  it('encodes any text as tag, u32 length and UTF-8 bytes per field (multi-byte and unpaired surrogates included)', () => {
    const values = { a: 'bücher.example.com', b: 'x\ud800y 😀', n: 9007199254740991 };
    expect([...encodeFields(KIND, 'kid', values)]).toEqual(referenceEncoding('kid', values));
    expect(() => encodeFields(KIND, 'kid', { ...values, n: 1.5 })).toThrow(TypeError);
    // All-ASCII texts take the one-string path: the same bytes, lengths past 255 and 65535 included.
    const ascii = { a: 'shop.example.com', b: `{"salt":"${'7f'.repeat(40_000)}"}\u007f`, n: 0 };
    expect([...encodeFields(KIND, 'k-_9', ascii)]).toEqual(referenceEncoding('k-_9', ascii));
    expect([...encodeFields(KIND, 'k', { a: '', b: 'x\u0080', n: -3 })]).toEqual(referenceEncoding('k', { a: '', b: 'x\u0080', n: -3 }));
    expect([...encodeFields(KIND, 'ké', { a: 'a', b: 'b', n: 1 })]).toEqual(referenceEncoding('ké', { a: 'a', b: 'b', n: 1 }));
  });

  it('encodes a run of tokens of one kind right whichever fields change, after a refused number and a non-ASCII text too', () => {
    const runs: { kid: string; v: { a: string; b: string; n: number } }[] = [
      { kid: 'k1', v: { a: 'site', b: 'p1', n: 5 } },
      { kid: 'k1', v: { a: 'site', b: 'p2', n: 5 } },
      { kid: 'k1', v: { a: 'site', b: 'p2', n: 5 } },
      { kid: 'k1', v: { a: 'other', b: 'p2', n: 5 } },
      { kid: 'k1', v: { a: 'site', b: 'p2', n: 5 } },
      { kid: 'k1', v: { a: 'site', b: 'ü', n: 5 } },
      { kid: 'k1', v: { a: 'site', b: 'p2', n: 5 } },
      { kid: 'k1', v: { a: 'new', b: 'p2', n: 1.5 } },
      { kid: 'k1', v: { a: 'new', b: 'p2', n: 5 } },
      { kid: 'k2', v: { a: 'new', b: 'p2', n: 5 } },
      { kid: 'k2', v: { a: 'new', b: 'p2', n: 6 } },
      { kid: 'k1', v: { a: 'new', b: 'p2', n: 6 } },
    ];
    for (const [index, { kid, v }] of runs.entries()) {
      if (!Number.isSafeInteger(v.n)) {
        expect(() => encodeFields(KIND, kid, v)).toThrow(TypeError);
        continue;
      }
      expect([...encodeFields(KIND, kid, v)], `run ${index}`).toEqual(referenceEncoding(kid, v));
    }
  });

  it('rewrites only what changed and stays right: same-length changes in place, longer and shorter ones, a grown buffer, another token checked between', () => {
    const key = newSigningKey();
    const ring = ringOf(key);
    const other = signToken(ring, OTHER, { a: 'o'.repeat(300), b: 'p', n: 1 });
    // Signing and encoding under the ring's key id, so each step starts from the last one's bytes.
    type Step = { a: string; b: string; n: number } | 'check other' | 'sign other';
    const steps: Step[] = [
      { a: 'site', b: 'ab', n: 10 },
      { a: 'site', b: 'cd', n: 10 },
      { a: 'sitf', b: 'cd', n: 10 },
      { a: 'sitf', b: 'cd', n: 11 },
      // Longer: its bytes run over where n was, so n is written again after it.
      { a: 'sitf', b: 'a much longer text', n: 11 },
      { a: 'sitf', b: 'x', n: 11 },
      // As many characters, more bytes.
      { a: 'sitf', b: 'ü', n: 11 },
      { a: 'sitf', b: 'y', n: 11 },
      'check other',
      { a: 'sitf', b: 'z', n: 11 },
      'sign other',
      { a: 'sitf', b: 'z', n: 11 },
      // Past the buffer's size (the MAC test above grew it to 70,000 bytes) while the last
      // encoding is kept, then a change after it.
      { a: 'sitf', b: 'w'.repeat(100_000), n: 11 },
      { a: 'sitf', b: 'w'.repeat(100_000), n: 12 },
      { a: 'sitf', b: 'w', n: 12 },
    ];
    for (const [index, step] of steps.entries()) {
      if (step === 'check other') expect(openToken(ring, OTHER, other)).toMatchObject({ b: 'p' });
      else if (step === 'sign other') signToken(ring, OTHER, { a: 'q'.repeat(400), b: 'r', n: 2 });
      else {
        const token = signToken(ring, KIND, step);
        equal([...Buffer.from(token.split('.')[0], 'base64url')], referenceEncoding(key.kid, step), `step ${index}`);
        same(
          token.split('.')[1],
          createHmac('sha256', key.secret)
            .update(Buffer.from(referenceEncoding(key.kid, step)))
            .digest('base64url'),
          `step ${index}`,
        );
        equal([...encodeFields(KIND, key.kid, step)], referenceEncoding(key.kid, step), `step ${index}`);
      }
    }
  });

  it('stays right over 3,000 random steps: fields that change or not, in any length and script, refused numbers, other tokens between', () => {
    const key = newSigningKey();
    const ring = ringOf(key);
    const other = signToken(ring, OTHER, { a: 'other', b: 'p', n: 1 });
    // A seeded generator, so a failure can be replayed.
    let seed = 0x9e3779b9;
    const random = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const texts = ['', 'a', 'ab', 'ba', 'ü', 'üü', '😀', 'x\ud800', 'site.example.com', 'a'.repeat(300), 'b'.repeat(300)];
    const numbers = [0, 1, 9, 10, -1, 123456789, Number.MAX_SAFE_INTEGER, 1.5, Number.NaN];
    let step = { a: 'site', b: 'p', n: 1 };
    for (let index = 0; index < 3_000; index++) {
      const roll = random();
      if (roll < 0.05) openToken(ring, OTHER, other);
      else if (roll < 0.08) signToken(ring, OTHER, { a: pick(texts), b: 'q', n: 2 });
      // Each field changes about one time in three; most steps keep most of the last token.
      step = {
        a: random() < 0.3 ? pick(texts) : step.a,
        b: random() < 0.3 ? pick(texts) : step.b,
        n: random() < 0.3 ? pick(numbers) : step.n,
      };
      if (!Number.isSafeInteger(step.n)) {
        throwsA(() => signToken(ring, KIND, step), TypeError, `step ${index}`);
        continue;
      }
      const [payload, mac] = signToken(ring, KIND, step).split('.');
      equal([...Buffer.from(payload, 'base64url')], referenceEncoding(key.kid, step), `step ${index}`);
      same(
        mac,
        createHmac('sha256', key.secret)
          .update(Buffer.from(referenceEncoding(key.kid, step)))
          .digest('base64url'),
        `step ${index}`,
      );
    }
  });

  it('the MAC is HMAC-SHA256 of the encoding, byte for byte, for any key length and any encoding length', () => {
    // Keys at, below and above the hash's 64-byte block (a longer key is hashed first), and
    // encodings past the reused buffer's first size, then a short one after it grew.
    for (const keyLength of [1, 32, 63, 64, 65, 200]) {
      const key = { kid: `k${keyLength}`, secret: randomBytes(keyLength) };
      for (const size of [0, 1, 55, 56, 119, 2_000, 70_000, 3]) {
        const values = { a: 'x'.repeat(size), b: size % 2 ? 'ünï' : 'y', n: size };
        const token = signToken(ringOf(key), KIND, values);
        const expected = createHmac('sha256', key.secret)
          .update(encodeFields(KIND, key.kid, values))
          .digest('base64url');
        expect(token.split('.')[1], `key ${keyLength}, field ${size}`).toBe(expected);
        expect(token.split('.')[0]).toBe(encodeFields(KIND, key.kid, values).toString('base64url'));
        if (token.length <= 4096) expect(openToken(ringOf(key), KIND, token)).toEqual({ ...values, n: String(size) });
      }
    }
  });

  it("a puzzle's params text is JSON.stringify's, for every puzzle type", () => {
    for (const puzzle of [createPowPuzzle(), createPowPuzzle({ difficulty: 20, count: 3 }), createSliderPuzzle()]) {
      for (let i = 0; i < 50; i++) {
        const params = puzzle.create();
        expect(puzzle.json(params as never)).toBe(JSON.stringify(params));
      }
    }
  });

  it('readToken then checkToken is openToken: a token read once verifies with the ring its key id picks, and nothing forged passes', () => {
    const key = newSigningKey();
    const ring = ringOf(key);
    const token = signToken(ring, KIND, { a: 'x', b: 'y', n: 3 });
    const read = readToken(KIND, token);
    expect(read?.kid).toBe(key.kid);
    expect(checkToken(ring, read)).toEqual({ a: 'x', b: 'y', n: '3' });
    expect(checkToken(ringOf(newSigningKey()), read)).toBeNull();
    const [payload, mac] = token.split('.');
    const flipped = `${payload}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    expect(checkToken(ring, readToken(KIND, flipped))).toBeNull();
    expect(readToken(OTHER, token)).toBeNull();
    expect(readToken(KIND, `${token}.x`)).toBeNull();
    expect(checkToken(ring, null)).toBeNull();
    // Signed by the key but with other fields under the same label: the MAC checks out, the fields do not parse.
    const SHORT: TokenKind<'a' | 'b'> = { label: 'test-kind', fields: ['a', 'b'] };
    const short = signToken(ring, SHORT, { a: 'x', b: 'y' });
    expect(readToken(KIND, short)?.kid).toBe(key.kid);
    expect(checkToken(ring, readToken(KIND, short))).toBeNull();
    expect(openToken(ring, SHORT, short)).toEqual({ a: 'x', b: 'y' });
  });

  it('never throws on hostile tokens: random text, and a real header followed by random bytes under a real or forged MAC', () => {
    const key = newSigningKey();
    const ring = ringOf(key);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    const header = encodeFields(KIND, key.kid, { a: '', b: '', n: 0 }).subarray(0, 1 + 5 + 9 + 5 + key.kid.length);
    for (let i = 0; i < 2_000; i++) {
      const length = (i * 7919) % 600;
      const text = Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('');
      none(openToken(ring, KIND, text), text);
      returns(() => tokenKeyId(KIND, text), text);
      // A header that parses, then anything: forged, the MAC fails; signed, the strict parse of the fields must refuse it.
      const body = Buffer.concat([header, randomBytes(length % 64)]);
      const signed = createHmac('sha256', key.secret).update(body).digest('base64url');
      const forged = randomBytes(32).toString('base64url');
      const payload = body.toString('base64url');
      same(readToken(KIND, `${payload}.${forged}`)?.kid, key.kid, payload);
      none(openToken(ring, KIND, `${payload}.${forged}`), payload);
      returns(() => openToken(ring, KIND, `${payload}.${signed}`), payload);
    }
  });

  it('shifting text across a field boundary changes the encoding (the concatenation flaw cannot happen)', () => {
    const one = encodeFields(KIND, 'k', { a: 'shop.example.com', b: 'login:pow', n: 1 });
    const two = encodeFields(KIND, 'k', { a: 'shop.example.com:login', b: 'pow', n: 1 });
    const three = encodeFields(KIND, 'k', { a: 'shop.example.com', b: 'login', n: 1 });
    expect(one.equals(two)).toBe(false);
    expect(one.equals(three)).toBe(false);
    // Byte layout: version, label and key id, then tag, u32 length, bytes per field.
    expect([...encodeFields(KIND, 'k', { a: '', b: 'x', n: 7 })]).toEqual([
      1,
      0xff,
      0,
      0,
      0,
      9,
      ...Buffer.from('test-kind'),
      0xfe,
      0,
      0,
      0,
      1,
      107,
      0,
      0,
      0,
      0,
      0,
      1,
      0,
      0,
      0,
      1,
      120,
      2,
      0,
      0,
      0,
      1,
      55,
    ]);
  });

  it('round-trips, and refuses every altered byte, another kind, an unknown key, and extra parts', () => {
    const key = newSigningKey();
    const ring = ringOf(key);
    const token = signToken(ring, KIND, { a: 'ünïcode.example', b: 'a.b:c', n: 1_800_000_000_000 });
    expect(openToken(ring, KIND, token)).toEqual({ a: 'ünïcode.example', b: 'a.b:c', n: '1800000000000' });
    expect(tokenKeyId(KIND, token)).toBe(key.kid);
    expect(openToken(ring, OTHER, token)).toBeNull();
    expect(openToken(ringOf(newSigningKey()), KIND, token)).toBeNull();
    expect(openToken(ring, KIND, `${token}.x`)).toBeNull();
    expect(openToken(ring, KIND, token.replace('.', '..'))).toBeNull();
    const [payload, mac] = token.split('.');
    const bytes = Buffer.from(payload, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] ^= 0x20;
      expect(openToken(ring, KIND, `${altered.toString('base64url')}.${mac}`), `byte ${i}`).toBeNull();
    }
    const longer = Buffer.concat([bytes, Buffer.from([0])]);
    expect(openToken(ring, KIND, `${longer.toString('base64url')}.${mac}`)).toBeNull();
    expect(openToken(ring, KIND, '')).toBeNull();
    expect(openToken(ring, KIND, 'x'.repeat(5000))).toBeNull();
  });

  it('instances starting at once agree on one signing key; a damaged stored ring is replaced', async () => {
    const meter = createMemoryMeter();
    const rings = await Promise.all(Array.from({ length: 5 }, () => createKeyRingSource(meter, SECRET)()));
    expect(new Set(rings.map((r) => r.current.kid)).size).toBe(1);
    const damaged = createMemoryMeter();
    await damaged.setSetting(SIGNING_KEYS_SETTING, 'not json');
    const ring = await createKeyRingSource(damaged, SECRET)();
    expect(ring.current.secret).toHaveLength(32);
    expect(JSON.parse((await damaged.getSetting(SIGNING_KEYS_SETTING))!)[0].kid).toBe(ring.current.kid);
  });

  it('rotation: the new key signs, the previous one verifies for an hour, then is dropped', async () => {
    const meter = createMemoryMeter();
    const ring = createKeyRingSource(meter, SECRET, () => 0);
    const first = await ring();
    const token = signToken(first, KIND, { a: 'x', b: 'y', n: 1 });
    const t0 = Date.now();
    const { kid } = await rotateSigningKey(meter, SECRET, t0);
    const fresh = createKeyRingSource(meter, SECRET);
    const second = await fresh();
    expect(second.current.kid).toBe(kid);
    expect(openToken(second, KIND, token)).not.toBeNull();
    await rotateSigningKey(meter, SECRET, t0 + RETIRED_KEY_LIFETIME_MS + 1);
    const third = await createKeyRingSource(meter, SECRET)();
    expect(third.byId.has(first.current.kid)).toBe(false);
    expect(third.byId.has(kid)).toBe(true);
    expect(JSON.parse((await meter.getSetting(SIGNING_KEYS_SETTING))!)).toHaveLength(2);
  });
});
