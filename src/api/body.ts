import { isLookupError, refusal, type LookupError } from '../errors.js';
import { firstHeader } from '../lib/headers.js';
import type { RequestBody } from './types.js';

// Pure header reading lives in src/lib/headers.ts (service routes use it too); kept exported here.
export { firstHeader };

/** Default largest body, in bytes: room for captcha telemetry later, far above any lookup input. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;

function tooLarge(limit: number): LookupError {
  return refusal('payload_too_large', `request body exceeds ${limit} bytes`);
}

/**
 * Read the raw body, stopping as soon as it passes `limit` bytes (a declared Content-Length
 * over the limit is refused before reading anything).
 */
export async function readRawBody(body: RequestBody | undefined, contentLength: string | undefined, limit: number): Promise<Buffer> {
  if (contentLength !== undefined && Number(contentLength) > limit) throw tooLarge(limit);
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') body = Buffer.from(body);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw tooLarge(limit);
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  }
  if (!(Symbol.asyncIterator in body)) throw new TypeError('parsed bodies are handled by parseBody');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge(limit);
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    throw isLookupError(error) ? error : clientClosed(error);
  }
  return Buffer.concat(chunks, size);
}

/**
 * A body stream that fails (Node's 'aborted', a reset, a premature close) failed because the
 * client went away before sending all of it: the client's doing, not a server error.
 */
export function clientClosed(cause?: unknown): LookupError {
  return refusal('client_closed_request', 'the client closed the connection before the request body was complete', { cause });
}

/**
 * Decode a request body into a plain object: JSON (the default when no type is sent) or an
 * HTML form. Anything else is 415; JSON that does not parse, or is not an object, is 400.
 */
export async function parseBody(
  body: RequestBody | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  limit: number,
): Promise<Record<string, unknown>> {
  if (body !== undefined && typeof body === 'object' && 'parsed' in body) return asObject(body.parsed);
  const raw = await readRawBody(body, firstHeader(headers['content-length']), limit);
  const type = (firstHeader(headers['content-type']) ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
    throw refusal('unsupported_media_type', `unsupported Content-Type ${JSON.stringify(type)}; send application/json`);
  }
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw refusal('invalid_json', 'request body is not valid JSON');
  }
  return asObject(value);
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw refusal('invalid_json', 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
