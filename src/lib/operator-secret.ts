/**
 * The operator secret: a key the operator keeps outside the store (a file or an environment
 * variable), under which keys the store must hold are wrapped with AES-256-GCM (captcha's
 * signing keys, in the meter's settings). A copy of the store without that secret holds
 * nothing that signs: each wrapped key is bound to its id (the GCM additional data), and a
 * wrong secret or an altered entry fails the GCM tag instead of yielding a key.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { invalidOption } from '../errors.js';

/** The fewest bytes an operator secret may have (`openssl rand -base64 32` gives 44 characters). */
export const MIN_SECRET_BYTES = 32;
const HKDF_INFO = 'seclookup captcha signing-key wrapping v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key-encryption key derived from an operator secret. Opaque: build it with
 * {@link createOperatorSecret}; the secret's bytes are not kept.
 */
export interface OperatorSecret {
  /** @internal the AES-256 key (HKDF-SHA256 of the secret). */
  readonly kek: Buffer;
}

/**
 * Derive the wrapping key from the operator's secret: text (surrounding white space, such as a
 * key file's final newline, is ignored) or bytes, at least 32 of them. Throws a TypeError
 * (`invalid_option`) for a shorter secret.
 */
export function createOperatorSecret(secret: string | Uint8Array): OperatorSecret {
  const bytes = typeof secret === 'string' ? Buffer.from(secret.trim(), 'utf8') : Buffer.from(secret);
  if (bytes.length < MIN_SECRET_BYTES)
    throw invalidOption(`the operator secret must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes.length}); make one with: openssl rand -base64 32`);
  return { kek: Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), HKDF_INFO, 32)) };
}

export function isOperatorSecret(value: unknown): value is OperatorSecret {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as OperatorSecret).kek) && (value as OperatorSecret).kek.length === 32;
}

/** A fresh random secret as text, for a new key file. */
export function newOperatorSecretText(): string {
  return `${randomBytes(32).toString('base64')}\n`;
}

/** `key` encrypted under the operator secret, bound to `kid`: base64 of IV, ciphertext and tag. */
export function wrapKey(secret: OperatorSecret, kid: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', secret.kek, iv);
  cipher.setAAD(additionalData(kid));
  const body = Buffer.concat([cipher.update(key), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
}

/** The key a `wrapKey` result holds, or null: another secret, another kid, or altered bytes. */
export function unwrapKey(secret: OperatorSecret, kid: string, wrapped: string): Buffer | null {
  const bytes = Buffer.from(wrapped, 'base64');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret.kek, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(additionalData(kid));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}

function additionalData(kid: string): Buffer {
  return Buffer.from(`seclookup-captcha-signing-key:${kid}`, 'utf8');
}
