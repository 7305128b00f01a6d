/**
 * Signed, stateless tokens (challenges and proofs): HMAC-SHA256 over a canonical binary
 * encoding of every field. Each field is written as a one-byte tag, a four-byte length and its
 * bytes, in a fixed order, after a domain label naming the token kind; nothing is joined by a
 * separator, so no two different field lists share an encoding (the flaw of signing
 * `a + ":" + b`, where a field holding the separator shifts the boundary). The signature is
 * checked in constant time before any field is believed.
 *
 * A token is `base64url(encoding) "." base64url(mac)`. The key id travels in the encoding, so
 * keys can rotate: verification picks the key named there from the ring.
 *
 * A token is signed on every challenge and proof, so the encoding is written into one reused
 * buffer, behind room for the HMAC's key block (see `hmac`), and not copied again.
 */
import crypto, { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The encoding's version byte. */
const FORMAT = 1;

/** A signing key and its id. */
export interface SigningKey {
  kid: string;
  secret: Buffer;
}

/** The keys that verify (all of them) and the one that signs (the newest). */
export interface KeyRing {
  current: SigningKey;
  byId: ReadonlyMap<string, SigningKey>;
}

/** Field values: text, or whole numbers (written as decimal text). */
export type FieldValue = string | number;

/** A token kind: its label (bound into the MAC) and its field names in order. */
export interface TokenKind<Names extends string> {
  label: string;
  fields: readonly Names[];
}

export function newSigningKey(): SigningKey {
  return { kid: randomBytes(6).toString('base64url'), secret: randomBytes(32) };
}

/** Every character below 128: one byte each in UTF-8 and in Latin-1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is U+0000 to U+007F, controls included.
const ASCII = /^[\x00-\x7f]*$/;

/** HMAC-SHA256's block: the key block that comes before the message in the inner hash. */
const BLOCK = 64;
/**
 * The encoding being signed or checked, at BLOCK, behind the key block. One per process: every
 * use is synchronous, from writing the encoding to its MAC. Grows for a longer encoding.
 */
let work = Buffer.allocUnsafe(BLOCK + 1024);

/**
 * The last encoding of a token kind that `work` holds, field by field: each value, its text and
 * where its piece ends. A challenge repeats most of its fields (site key, hostname, puzzle, risk,
 * and the millisecond of issue across a burst): their bytes are left where they are, and only a
 * field that changed is written again, in place while it keeps its length.
 */
interface LastEncoding {
  kid: string;
  /** Where the fields start (after the version, the label and the key id). */
  fieldsAt: number;
  values: FieldValue[];
  texts: string[];
  ends: number[];
}
const lastEncodings = new WeakMap<TokenKind<string>, LastEncoding>();
/** The one whose bytes are in `work` now; null once anything else was written there. */
let workHolds: LastEncoding | null = null;

/** The text of a field value (numbers must be whole). */
function fieldText(name: string, value: FieldValue): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new TypeError(`token field ${name} must be a whole number`);
  return String(value);
}

/**
 * The canonical bytes: version, label, then each field as tag (its index), length, UTF-8 bytes.
 * Written to `work` at BLOCK; returns their length. Only what differs from the kind's last
 * encoding is written (see LastEncoding): a buffer per field and a concat would cost more than
 * the HMAC, and a write per field about as much.
 */
function encodeIntoWork<Names extends string>(kind: TokenKind<Names>, kid: string, values: Readonly<Record<Names, FieldValue>>): number {
  const { fields } = kind;
  let last = lastEncodings.get(kind);
  // Once a piece ends elsewhere than before, every piece after it is written again.
  let moved = false;
  if (last === undefined || last.kid !== kid || workHolds !== last) {
    last = { kid, fieldsAt: 0, values: [], texts: [], ends: [] };
    lastEncodings.set(kind, last);
    work[BLOCK] = FORMAT;
    last.fieldsAt = writePiece(tagOf(1), kid, writePiece(tagOf(0), kind.label, 1));
    moved = true;
  }
  // Until every field is written, `work` holds no whole encoding: a throw leaves no memo to trust.
  workHolds = null;
  let offset = last.fieldsAt;
  for (let i = 0; i < fields.length; i++) {
    const value = values[fields[i]];
    const same = value === last.values[i] && i < last.texts.length;
    if (same && !moved) {
      offset = last.ends[i];
      continue;
    }
    const text = same ? last.texts[i] : fieldText(fields[i], value);
    offset = writePiece(tagOf(i + 2), text, offset);
    moved ||= offset !== last.ends[i];
    last.values[i] = value;
    last.texts[i] = text;
    last.ends[i] = offset;
  }
  workHolds = last;
  return offset;
}

/** Write one piece (tag, u32 length, UTF-8 text) at `offset` past BLOCK; returns where it ends. */
function writePiece(tag: number, text: string, offset: number): number {
  // At most three UTF-8 bytes per UTF-16 unit.
  reserveWork(offset + 5 + 3 * text.length);
  const at = BLOCK + offset;
  const length = work.write(text, at + 5, 'utf8');
  work[at] = tag;
  work.writeUInt32BE(length, at + 1);
  return offset + 5 + length;
}

/** Room in `work` for an encoding of `size` bytes; what it holds is kept. */
function reserveWork(size: number): void {
  if (BLOCK + size <= work.length) return;
  const grown = Buffer.allocUnsafe(BLOCK + size);
  work.copy(grown);
  work = grown;
}

/** The canonical bytes of a token of `kind` (a copy: tests and callers keep it). */
export function encodeFields<Names extends string>(kind: TokenKind<Names>, kid: string, values: Readonly<Record<Names, FieldValue>>): Buffer {
  const length = encodeIntoWork(kind, kid, values);
  return Buffer.from(work.subarray(BLOCK, BLOCK + length));
}

/** The tag of the i-th text written: the label's, the key id's, then each field's index. */
function tagOf(i: number): number {
  return i === 0 ? 0xff : i === 1 ? 0xfe : i - 2;
}

/** Sign `values` as a token of `kind` with the ring's current key. */
export function signToken<Names extends string>(ring: KeyRing, kind: TokenKind<Names>, values: Readonly<Record<Names, FieldValue>>): string {
  const length = encodeIntoWork(kind, ring.current.kid, values);
  return `${work.toString('base64url', BLOCK, BLOCK + length)}.${hmac(ring.current.secret, length, 'base64url')}`;
}

/**
 * The fields of a token of `kind` whose signature a key of the ring verifies, as text; null for
 * anything else (malformed, another kind, an unknown key, a bad signature). Never throws.
 */
export function openToken<Names extends string>(ring: KeyRing, kind: TokenKind<Names>, token: string): Record<Names, string> | null {
  return checkToken(ring, readToken(kind, token));
}

/**
 * A token of `kind` whose version, label and key id parse, not yet verified: its key id picks
 * the ring to check it with. Its fields are read only once its signature checks out: a forged
 * token costs no more parsing than it must.
 */
export interface ReadToken<Names extends string> {
  kind: TokenKind<Names>;
  kid: string;
  encoded: Buffer;
  signature: Buffer;
  /** Where the fields start in `encoded`. */
  fieldsAt: number;
}

/**
 * Parse a token of `kind` without believing it (null when it does not parse). Hand it to
 * `checkToken`: reading once serves both picking the key ring and checking the signature.
 */
export function readToken<Names extends string>(kind: TokenKind<Names>, token: string): ReadToken<Names> | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const encoded = fromBase64Url(token.slice(0, dot));
  const signature = fromBase64Url(token.slice(dot + 1));
  if (!encoded || !signature || signature.length !== 32) return null;
  const header = readHeader(encoded, kind);
  return header ? { kind, kid: header.kid, encoded, signature, fieldsAt: header.fieldsAt } : null;
}

/** The fields of a read token when a key of the ring verifies its signature (constant time) and they parse, else null. */
export function checkToken<Names extends string>(ring: KeyRing, read: ReadToken<Names> | null): Record<Names, string> | null {
  if (!read) return null;
  const key = ring.byId.get(read.kid);
  if (!key) return null;
  reserveWork(read.encoded.length);
  read.encoded.copy(work, BLOCK);
  workHolds = null;
  if (!timingSafeEqual(hmac(key.secret, read.encoded.length, 'buffer'), read.signature)) return null;
  return readValues(read.encoded, read.fieldsAt, read.kind);
}

/** The key id a token names (unverified: only to pick the key), or null when it does not parse. */
export function tokenKeyId<Names extends string>(kind: TokenKind<Names>, token: string): string | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  const encoded = fromBase64Url(token.slice(0, Math.max(0, token.indexOf('.'))));
  return encoded ? (readHeader(encoded, kind)?.kid ?? null) : null;
}

/**
 * Reads an encoding's texts in order: tag, u32 length, UTF-8 bytes. The bytes are decoded once
 * as Latin-1 (a character each) on first use: an ASCII text is a slice of that, any other is
 * decoded as UTF-8.
 */
class FieldReader {
  private latin1: string | undefined;
  constructor(
    private readonly bytes: Buffer,
    public offset: number,
  ) {}

  next(tag: number): string | null {
    const { bytes, offset } = this;
    if (offset + 5 > bytes.length || bytes[offset] !== tag) return null;
    const end = offset + 5 + bytes.readUInt32BE(offset + 1);
    if (end > bytes.length) return null;
    this.latin1 ??= bytes.toString('latin1');
    const slice = this.latin1.slice(offset + 5, end);
    this.offset = end;
    return ASCII.test(slice) ? slice : bytes.toString('utf8', offset + 5, end);
  }
}

/** Strict parse of the start: version, this kind's label, a key id. */
function readHeader(bytes: Buffer, kind: TokenKind<string>): { kid: string; fieldsAt: number } | null {
  if (bytes.length < 1 || bytes[0] !== FORMAT) return null;
  const reader = new FieldReader(bytes, 1);
  if (reader.next(0xff) !== kind.label) return null;
  const kid = reader.next(0xfe);
  return kid === null ? null : { kid, fieldsAt: reader.offset };
}

/** Strict parse of the rest: exactly the kind's fields in order, nothing after. */
function readValues<Names extends string>(bytes: Buffer, fieldsAt: number, kind: TokenKind<Names>): Record<Names, string> | null {
  const reader = new FieldReader(bytes, fieldsAt);
  const values = {} as Record<Names, string>;
  for (let index = 0; index < kind.fields.length; index++) {
    const value = reader.next(index);
    if (value === null) return null;
    values[kind.fields[index]] = value;
  }
  return reader.offset === bytes.length ? values : null;
}

/** Node's one-shot hash (Node >= 20.12); undefined before it. */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** A key's blocks for the inner and outer hash (RFC 2104): key XOR ipad, and key XOR opad with room for the inner digest. */
interface KeyBlocks {
  inner: Buffer;
  outer: Buffer;
}
const keyBlocks = new WeakMap<Buffer, KeyBlocks>();
const ZERO_BLOCK = new Uint8Array(BLOCK);

function blocksOf(secret: Buffer): KeyBlocks {
  let blocks = keyBlocks.get(secret);
  if (!blocks) {
    // A key longer than the block is hashed first (RFC 2104); ours are 32 bytes.
    const key = secret.length > BLOCK ? createHash('sha256').update(secret).digest() : secret;
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK + 32, 0x5c);
    for (let i = 0; i < key.length; i++) {
      inner[i] ^= key[i];
      outer[i] ^= key[i];
    }
    outer.fill(0, BLOCK);
    keyBlocks.set(secret, (blocks = { inner, outer }));
  }
  return blocks;
}

/**
 * HMAC-SHA256 of the `length` bytes in `work` at BLOCK. Built from two one-shot hashes where
 * Node has them: a `createHmac` object costs about three times as much (its setup, not the
 * hashing), and this runs on every token. Same bytes as createHmac (a test holds them equal).
 */
function hmac(secret: Buffer, length: number, encoding: 'base64url'): string;
function hmac(secret: Buffer, length: number, encoding: 'buffer'): Buffer;
function hmac(secret: Buffer, length: number, encoding: 'base64url' | 'buffer'): string | Buffer {
  if (!oneShotHash) {
    const digest = createHmac('sha256', secret).update(work.subarray(BLOCK, BLOCK + length));
    return encoding === 'buffer' ? digest.digest() : digest.digest(encoding);
  }
  const { inner, outer } = blocksOf(secret);
  // TypedArray `set` is a plain copy; Buffer's `copy` and `fill` validate their arguments first.
  work.set(inner, 0);
  // The inner digest as Latin-1 text (one byte a character): cheaper out of `hash` than a Buffer.
  outer.write(oneShotHash('sha256', work.subarray(0, BLOCK + length), 'binary'), BLOCK, 'latin1');
  // The key block is as good as the key: not left in the shared buffer.
  work.set(ZERO_BLOCK, 0);
  return encoding === 'buffer' ? oneShotHash('sha256', outer, 'buffer') : oneShotHash('sha256', outer, encoding);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64URL_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The bytes of unpadded base64url text, or null. Only the canonical text of some bytes is
 * taken: the bits the last character carries past the data must be zero, else `...A` and
 * `...B` would be two tokens for one signature.
 */
function fromBase64Url(text: string): Buffer | null {
  const rest = text.length % 4;
  if (!BASE64URL.test(text) || rest === 1) return null;
  if (rest !== 0 && (BASE64URL_DIGITS.indexOf(text[text.length - 1]) & (rest === 2 ? 0x0f : 0x03)) !== 0) return null;
  return Buffer.from(text, 'base64url');
}
