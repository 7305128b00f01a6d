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
 * The last all-ASCII encoding of each token kind, field by field: each value, its piece (tag,
 * length and text) and the encoding up to and including it. A challenge repeats most of its
 * fields (site key, hostname, puzzle, risk, and the millisecond of issue across a burst): their
 * text is reused rather than made and checked again, and the encoding up to the first field that
 * changed is reused whole.
 */
interface LastEncoding {
  kid: string;
  /** FORMAT, then the label's and the key id's pieces. */
  head: string;
  values: FieldValue[];
  pieces: string[];
  upTo: string[];
}
const lastEncodings = new WeakMap<TokenKind<string>, LastEncoding>();

/** A field's piece of an ASCII encoding: tag, four length bytes, the text. */
function piece(tag: number, text: string): string {
  const length = text.length;
  return String.fromCharCode(tag, length >>> 24, (length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff) + text;
}

/** The text of a field value (numbers must be whole). */
function fieldText(name: string, value: FieldValue): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new TypeError(`token field ${name} must be a whole number`);
  return String(value);
}

/**
 * The canonical bytes: version, label, then each field as tag (its index), length, UTF-8 bytes.
 * Written to `work` at BLOCK; returns their length. Built as one Latin-1 string when every text
 * is ASCII (ids, hostnames, numbers, JSON params: the usual case), whose Latin-1 bytes are then
 * the same as UTF-8's, and written once; else field by field. A buffer per field and a concat
 * cost more than the HMAC.
 */
function encodeIntoWork<Names extends string>(kind: TokenKind<Names>, kid: string, values: Readonly<Record<Names, FieldValue>>): number {
  const encoded = asciiEncoding(kind, kid, values);
  if (encoded !== null) {
    reserveWork(encoded.length);
    return work.write(encoded, BLOCK, 'latin1');
  }
  const texts = [kind.label, kid, ...kind.fields.map((name) => fieldText(name, values[name]))];
  let size = 1;
  for (const text of texts) size += 5 + Buffer.byteLength(text, 'utf8');
  reserveWork(size);
  work[BLOCK] = FORMAT;
  let offset = BLOCK + 1;
  for (let i = 0; i < texts.length; i++) {
    work[offset] = tagOf(i);
    const length = work.write(texts[i], offset + 5, 'utf8');
    work.writeUInt32BE(length, offset + 1);
    offset += 5 + length;
  }
  return size;
}

/** The encoding as one Latin-1 string when every text is ASCII, else null; the kind's last encoding is reused where it can be. */
function asciiEncoding<Names extends string>(kind: TokenKind<Names>, kid: string, values: Readonly<Record<Names, FieldValue>>): string | null {
  let last = lastEncodings.get(kind);
  if (last === undefined || last.kid !== kid) {
    if (!ASCII.test(kind.label) || !ASCII.test(kid)) return null;
    last = { kid, head: String.fromCharCode(FORMAT) + piece(tagOf(0), kind.label) + piece(tagOf(1), kid), values: [], pieces: [], upTo: [] };
    lastEncodings.set(kind, last);
  }
  let encoded = last.head;
  let unchanged = true;
  for (let i = 0; i < kind.fields.length; i++) {
    const value = values[kind.fields[i]];
    if (value !== last.values[i] || i >= last.values.length) {
      const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : null) : String(value);
      if (text === null || (typeof value !== 'number' && !ASCII.test(text))) {
        // The slow path writes it (or refuses the number); what is remembered after this field
        // no longer follows from the fields before it, so it starts over next time.
        lastEncodings.delete(kind);
        return null;
      }
      last.values[i] = value;
      last.pieces[i] = piece(tagOf(i + 2), text);
      unchanged = false;
    }
    if (unchanged) encoded = last.upTo[i];
    else last.upTo[i] = encoded += last.pieces[i];
  }
  return encoded;
}

/** Room in `work` for an encoding of `size` bytes. */
function reserveWork(size: number): void {
  if (BLOCK + size > work.length) work = Buffer.allocUnsafe(BLOCK + size);
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
  inner.copy(work, 0);
  // The inner digest as Latin-1 text (one byte a character): cheaper out of `hash` than a Buffer.
  outer.write(oneShotHash('sha256', work.subarray(0, BLOCK + length), 'binary'), BLOCK, 'latin1');
  // The key block is as good as the key: not left in the shared buffer.
  work.fill(0, 0, BLOCK);
  return encoding === 'buffer' ? oneShotHash('sha256', outer, 'buffer') : oneShotHash('sha256', outer, encoding);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function fromBase64Url(text: string): Buffer | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  return Buffer.from(text, 'base64url');
}
