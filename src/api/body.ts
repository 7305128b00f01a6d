import { isLookupError, refusal, type LookupError } from '../errors.js';
import { firstHeader } from '../lib/headers.js';
import type { Readable } from 'node:stream';
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
  if (isNodeReadable(body)) return readStream(body, limit);
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

/** A Node readable stream (an IncomingMessage): read by its events rather than an async iterator. */
function isNodeReadable(body: AsyncIterable<Uint8Array>): body is Readable {
  return typeof (body as Partial<Readable>).on === 'function' && typeof (body as Partial<Readable>).destroy === 'function' && 'readableEnded' in body;
}

/**
 * A Node stream's bytes, read by its 'data' and 'end' events: what `for await` does, without
 * the async iterator and the promise per chunk it costs (about 1.5 µs on every POST). A body
 * over the limit, or a stream that fails or closes before its end, is abandoned as the
 * iterator's exit abandoned it (see `abandon`). The listeners stay on the stream once it is
 * settled (each ignores what comes after), since the request is let go of with its answer:
 * taking four off, and copying a body that came in one chunk, were most of the 0.8 µs that
 * settling a read took under serve's load.
 */
function readStream(stream: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: LookupError | null) => {
      if (settled) return;
      settled = true;
      // One chunk (the usual small body) is the body itself: no copy.
      if (error === null) return resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      abandon(stream);
      reject(error);
    };
    const onData = (chunk: Buffer | string) => {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.byteLength;
      if (size > limit) return settle(tooLarge(limit));
      chunks.push(bytes);
    };
    if (stream.readableEnded) return resolve(Buffer.alloc(0));
    if (stream.destroyed) return reject(clientClosed());
    stream.on('data', onData);
    stream.on('end', () => settle(null));
    stream.on('error', (error: Error) => settled || settle(clientClosed(error)));
    // Closed before its end: the client went away (Node emits 'close' without 'error' for an
    // abort). A request read whole closes too, once answered: settled by then.
    stream.on('close', () => settled || settle(clientClosed()));
  });
}

/**
 * Stop reading a body for good, as `for await` leaving the loop does (Node's stream destroyer):
 * a server request first lets go of its socket, so destroying it does not cut the connection the
 * answer (a 413) is still to be written on; that answer then closes it (lingering-close.ts).
 */
function abandon(stream: Readable): void {
  // Already destroyed (the client went away): nothing to let go of, as in Node's destroyer.
  if (stream.destroyed) return;
  // A server request (Node's IncomingMessage, as Express and Fastify hand it over too).
  if ('socket' in stream && 'complete' in stream) (stream as { socket: unknown }).socket = null;
  // Destroyed without an error, so nothing is emitted for a listener to miss; any later one is moot.
  stream.on('error', () => {});
  stream.destroy();
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
  const contentType = firstHeader(headers['content-type']);
  // The usual header as it is, without a split, a trim and a lower-casing on every POST.
  const type = contentType === 'application/json' ? contentType : (contentType ?? '').split(';')[0].trim().toLowerCase();
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
