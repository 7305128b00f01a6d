import { isLookupError, refusal, type LookupError } from '../errors.js';
import { firstHeader } from '../lib/headers.js';
import { decodeFormComponent } from '../lib/query.js';
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
  // An HTTP/2 request is one stream of the connection, and destroying it would cancel the answer
  // too: what still arrives is discarded, and the adapter closes the stream once it has answered.
  if ((stream as { httpVersionMajor?: number }).httpVersionMajor === 2) {
    stream.on('error', () => {});
    stream.resume();
    return;
  }
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

/** What a route takes beyond JSON and a form. */
export interface BodyOptions {
  /**
   * multipart/form-data text fields too (captcha's siteverify, as Turnstile's: Cloudflare's own
   * example posts a FormData). Elsewhere multipart is 415.
   */
  multipart?: boolean;
}

/** The usual options, one object for every POST rather than a new one each. */
const JSON_OR_FORM: BodyOptions = Object.freeze({});

/**
 * Decode a request body into a plain object: JSON (the default when no type is sent) or an
 * HTML form (or multipart text fields, when `options.multipart`). Anything else is 415; JSON that
 * does not parse, or is not an object, is 400. A repeated form field reads as its first non-empty
 * value, as a repeated query parameter does.
 */
export async function parseBody(
  body: RequestBody | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  limit: number,
  options: BodyOptions = JSON_OR_FORM,
): Promise<Record<string, unknown>> {
  if (body !== undefined && typeof body === 'object' && 'parsed' in body) return parsedBody(body.parsed, headers, limit, options);
  // Read whole first, as before any refusal here, so the connection can carry the next request.
  const raw = await readRawBody(body, firstHeader(headers['content-length']), limit);
  const type = checkedMediaType(headers, options);
  refuseCompressed(headers);
  if (type === MULTIPART) return multipartFields(raw, headers);
  const decoder = decoderOf(headers, type);
  if (type === FORM) return formFields(raw);
  if (raw.length === 0) return {};
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    // JSON is UTF-8 (RFC 8259 8.1). Read leniently, a stray byte would become U+FFFD in a value:
    // pwbreach would then check a password nobody sent.
    throw refusal('invalid_json', `request body is not valid JSON: it is not ${decoder === STRICT_UTF8 ? 'UTF-8' : decoder.encoding.toUpperCase()}`);
  }
  // A leading byte order mark may be ignored (RFC 8259 8.1), as express.json() does.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refusal('invalid_json', 'request body is not valid JSON');
  }
  return asObject(value);
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** JSON's other Unicode encodings, when a charset parameter names one (as express.json() reads them); their BOM is dropped. */
const STRICT_UTF16: Readonly<Record<string, TextDecoder>> = {
  'utf-16': new TextDecoder('utf-16le', { fatal: true }),
  'utf-16le': new TextDecoder('utf-16le', { fatal: true }),
  'utf-16be': new TextDecoder('utf-16be', { fatal: true }),
};

/**
 * The decoder the Content-Type's charset parameter asks for: UTF-8 when there is none; UTF-16
 * for JSON too. Any other charset is 415, as express.json() and express.urlencoded() answer it:
 * read as UTF-8, a Latin-1 body would be refused as invalid JSON, or its form fields looked up
 * with U+FFFD in them.
 */
function decoderOf(headers: Readonly<Record<string, string | string[] | undefined>>, type: string): TextDecoder {
  const contentType = firstHeader(headers['content-type']);
  if (contentType === undefined || contentType === 'application/json' || !contentType.includes('=')) return STRICT_UTF8;
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  if (!match) return STRICT_UTF8;
  const charset = (match[1] ?? match[2]).toLowerCase();
  if (charset === 'utf-8' || charset === 'utf8') return STRICT_UTF8;
  if (type !== FORM && Object.hasOwn(STRICT_UTF16, charset)) return STRICT_UTF16[charset];
  throw refusal('unsupported_media_type', `unsupported charset ${JSON.stringify(charset.slice(0, 40))}; send UTF-8`);
}

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';

/**
 * The body's media type: a form, JSON (`application/json`, `+json`) or none, and multipart when
 * the route takes it; anything else is 415.
 */
function checkedMediaType(headers: Readonly<Record<string, string | string[] | undefined>>, options: BodyOptions): string {
  const type = mediaType(headers);
  if (type === MULTIPART && options.multipart) return type;
  if (type !== FORM && type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
    throw refusal('unsupported_media_type', `unsupported Content-Type ${JSON.stringify(type)}; send application/json`);
  }
  return type;
}

/** Decoded here, a compressed body would be read as its compressed bytes: 400 for valid JSON. */
function refuseCompressed(headers: Readonly<Record<string, string | string[] | undefined>>): void {
  const encoding = firstHeader(headers['content-encoding']);
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw refusal('unsupported_media_type', `unsupported Content-Encoding ${JSON.stringify(encoding.slice(0, 40))}; send the body uncompressed`);
  }
}

/**
 * Most parts a multipart body may have: the route that takes one (siteverify) reads four fields.
 * The parser builds a File for every file part before any can be refused, 40-60 ms of CPU for a
 * 64 KiB body of a thousand empty ones, asked for with no key: counted first, on the bytes.
 */
export const MAX_MULTIPART_PARTS = 16;
const PART_DELIMITER = Buffer.from('\r\n--');

/**
 * A multipart body's text fields, decoded by Node's own parser (undici's, behind Response):
 * a field given more than once keeps its first non-empty value, as in a form. A body that does
 * not parse (no boundary, cut short), has more than MAX_MULTIPART_PARTS parts or holds a file is
 * 400 `invalid_request`.
 */
async function multipartFields(raw: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): Promise<Record<string, unknown>> {
  // Every delimiter but the first follows a CRLF: more of them than parts allowed (the closing
  // one included) is refused before the parser runs. A value holding CRLF-- counts too: no
  // field of siteverify's does.
  let delimiters = 0;
  for (let at = raw.indexOf(PART_DELIMITER); at !== -1 && delimiters <= MAX_MULTIPART_PARTS; at = raw.indexOf(PART_DELIMITER, at + 1)) delimiters++;
  if (delimiters > MAX_MULTIPART_PARTS) throw refusal('invalid_request', `a multipart body may have at most ${MAX_MULTIPART_PARTS} parts`);
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw), { headers: { 'content-type': firstHeader(headers['content-type']) ?? MULTIPART } }).formData();
  } catch {
    throw refusal('invalid_request', 'request body is not valid multipart/form-data');
  }
  const fields = new Map<string, string>();
  for (const [name, value] of form) {
    if (typeof value !== 'string') throw refusal('invalid_request', `multipart part ${JSON.stringify(name.slice(0, 40))} is a file: send text fields only`);
    if (!fields.get(name)) fields.set(name, value);
  }
  return Object.fromEntries(fields);
}

/** The Content-Type's media type, lower-cased without parameters ('' when none is sent). */
function mediaType(headers: Readonly<Record<string, string | string[] | undefined>>): string {
  const contentType = firstHeader(headers['content-type']);
  // The usual header as it is, without a split, a trim and a lower-casing on every POST.
  return contentType === 'application/json' ? contentType : (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * An HTML form's fields; a field given more than once keeps its first non-empty value. Its
 * bytes and its percent-escapes must be UTF-8, as a JSON body's: URLSearchParams would make a
 * stray byte (`%E9`, a Latin-1 page's é) U+FFFD, and pwbreach would check a password nobody
 * sent. 400 invalid_json, the code of every body that cannot be read (a form's too, as behind
 * express.urlencoded()). A malformed escape (`%zz`) stays text, as URLSearchParams keeps it.
 */
function formFields(raw: Buffer): Record<string, unknown> {
  let text: string;
  try {
    text = STRICT_UTF8.decode(raw);
  } catch {
    throw notUtf8Form();
  }
  const fields = new Map<string, string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = formComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : formComponent(pair.slice(eq + 1));
    if (!fields.get(name)) fields.set(name, value);
  }
  return Object.fromEntries(fields);
}

function notUtf8Form(): LookupError {
  return refusal('invalid_json', 'request body is not a valid form: its fields must be UTF-8 (percent-encoded UTF-8 bytes)');
}

/** One form name or value, decoded; its escaped bytes must be UTF-8. */
function formComponent(raw: string): string {
  const text = decodeFormComponent(raw, true);
  if (text === null) throw notUtf8Form();
  return text;
}

/**
 * A body a framework's parser read before the API (`express.json()`, `express.urlencoded()`),
 * held to the same `limit` as one the API reads: by its declared Content-Length, which counts
 * the bytes that came in; and when there is none (a chunked body) or it counted compressed
 * bytes that the parser inflated, by the bytes of what the parser made of it (see
 * `contentBytes`). A form parser's repeated fields (arrays) read as their first non-empty value.
 */
function parsedBody(
  parsed: unknown,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  limit: number,
  options: BodyOptions,
): Record<string, unknown> {
  const declared = firstHeader(headers['content-length']);
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const encoding = firstHeader(headers['content-encoding']);
  const inflated = encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
  if ((declared === undefined || inflated) && contentBytes(parsed, limit) > limit) throw tooLarge(limit);
  // The API's media types whoever parsed the body (an app parser for `*/*` takes text/plain too).
  const type = checkedMediaType(headers, options);
  const fields = asObject(parsed);
  // A multipart parser's (multer's `none()`) repeated fields are arrays too, as a form parser's.
  return type === FORM || type === MULTIPART ? firstOfRepeated(fields) : fields;
}

/**
 * The UTF-8 bytes of the keys and strings of a parsed body, plus one for each other value: a
 * lower bound of the size of any JSON or form encoding of it, so a body within the limit is
 * never refused for it, while one whose content alone is over it is. Whitespace, quotes and
 * escapes the sender added are not counted (they were read and dropped by the app's parser,
 * under its own limit). Stops counting once past `limit`; walks without recursion, so a deeply
 * nested body cannot overflow the stack.
 */
function contentBytes(value: unknown, limit: number): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && bytes <= limit) {
    const item = pending.pop();
    if (typeof item === 'string') bytes += Buffer.byteLength(item);
    else if (Array.isArray(item)) {
      bytes += 1;
      for (const element of item) pending.push(element);
    } else if (item !== null && typeof item === 'object') {
      bytes += 1;
      for (const [name, field] of Object.entries(item)) {
        bytes += Buffer.byteLength(name);
        pending.push(field);
      }
    } else if (item !== undefined) bytes += 1;
  }
  return bytes;
}

/**
 * A parsed form's fields with each repeated one (an array of values, as qs and Node's
 * querystring give it) reduced to its first non-empty string, or its first string when all are
 * empty. The app's object is not changed; a parser that kept only the last value left nothing to
 * choose from.
 */
function firstOfRepeated(fields: Record<string, unknown>): Record<string, unknown> {
  if (!Object.values(fields).some(Array.isArray)) return fields;
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]): [string, unknown] => {
      if (!Array.isArray(value)) return [name, value];
      const strings = value.filter((item): item is string => typeof item === 'string');
      return [name, strings.find((item) => item !== '') ?? strings[0] ?? value];
    }),
  );
}

/** An empty body (undefined) has no fields; any JSON value but an object, `null` included, is refused. */
function asObject(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw refusal('invalid_json', 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
