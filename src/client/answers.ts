/**
 * One attempt of a call: the request, its answer read to the end (up to a size), and what the
 * answer means: a result, or a LookupError with what to do next (retry.ts).
 *
 * An attempt's outcome is unknown when the service may have answered, and billed, a request whose
 * answer the client did not get: a connection that failed after it was made (a reset, an answer cut
 * short), or a transient status from something in front of the service (a proxy's 502 page). The
 * service's own error envelopes are never billed, and a connection never made sent nothing.
 */
import { ERROR_STATUS, LookupError, type ErrorCode } from '../errors.js';
import type { RemoteOutcome } from './index.js';
import { blockedPort, failedToConnect, parseRetryAfter, retryKind, type CallScope, type RetryKind } from './retry.js';

export type Attempt =
  | { ok: true; outcome: RemoteOutcome<object> }
  | { ok: false; error: LookupError; retry: RetryKind; waitMs?: number; outcomeUnknown?: true };

/**
 * The most of a body read, in bytes: of an error answer (an envelope is a few hundred bytes, a
 * proxy's page a few KB), and of a success. The largest success is a batch: 100 results by
 * default, each a few KB; an operator may raise `batchLimit`, and 64 MiB leaves room for that.
 */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const ignore = () => {};

/**
 * One request and its answer, read and classified. Throws only when the scope aborts: at the
 * deadline or the caller's abort, also when `fetch` does not listen to the signal it is given (a
 * custom one, or a proxy agent's), since every step is raced against the scope.
 */
export async function attemptOnce(fetchFn: typeof fetch, url: string, init: RequestInit, scope: CallScope): Promise<Attempt> {
  const where = `${init.method} ${url.split('?')[0]}`;
  let response: Response;
  try {
    const pending = Promise.resolve(fetchFn(url, init));
    response = await scope.race(pending).catch((error: unknown) => {
      // An answer arriving after the call gave up is not read: its body is released.
      pending.then((late) => late.body?.cancel(), ignore).catch(ignore);
      throw error;
    });
  } catch (cause) {
    if (scope.signal.aborted) throw scope.failure();
    if (blockedPort(cause)) return portBlocked(where, url, cause);
    return transportFailure(where, cause, !failedToConnect(cause));
  }
  let text: string | undefined;
  try {
    text = await readText(response, response.ok ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES, scope);
  } catch (cause) {
    if (scope.signal.aborted) throw scope.failure();
    return transportFailure(where, cause, true); // the answer was cut: the service may have billed it
  }
  if (text === undefined) return tooLarge(where, response);
  return classify(where, response, text);
}

function transportFailure(where: string, cause: unknown, outcomeUnknown: boolean): Attempt {
  const detail = cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message) : String(cause);
  const error = new LookupError('lookup_failed', `${where}: ${detail}`, { cause });
  return outcomeUnknown ? { ok: false, error, retry: 'transient', outcomeUnknown } : { ok: false, error, retry: 'transient' };
}

/** fetch refused the port: nothing was sent (so a batch was not billed), and every retry would be refused too. */
function portBlocked(where: string, url: string, cause: unknown): Attempt {
  const { port } = new URL(url);
  const message = `${where}: fetch refuses port ${port}, one the Fetch standard blocks: serve the API on another port (nothing was sent)`;
  return { ok: false, error: new LookupError('lookup_failed', message, { cause }), retry: 'never' };
}

/**
 * The body as text, or undefined when it is longer than `cap` bytes: then the rest is not read
 * (the body is cancelled, which closes the connection), so a runaway answer costs at most `cap`.
 */
async function readText(response: Response, cap: number, scope: CallScope): Promise<string | undefined> {
  const { body } = response;
  if (!body) return '';
  if (Number(response.headers.get('content-length')) > cap) {
    body.cancel().catch(ignore);
    return undefined;
  }
  const reader = body.getReader();
  const decoder = new TextDecoder(); // UTF-8, a BOM dropped: as response.text() reads it
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await scope.race(reader.read());
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > cap) {
        reader.cancel().catch(ignore);
        return undefined;
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    reader.cancel().catch(ignore);
    throw error;
  }
}

/** An answer over the size read: a 2xx is reported as 502, like any answer the client could not use. */
function tooLarge(where: string, response: Response): Attempt {
  const cap = response.ok ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES;
  const message = `${where}: HTTP ${response.status}, an answer larger than ${cap / (1024 * 1024)} MiB, not read`;
  const error = new LookupError('lookup_failed', message, {
    requestId: response.headers.get('x-request-id') ?? undefined,
    status: errorStatus(response.status),
  });
  return { ok: false, error, retry: 'never' };
}

/** What a whole answer says: the result, the service's error, or something else's answer. */
function classify(where: string, response: Response, text: string): Attempt {
  const requestIdHeader = response.headers.get('x-request-id') ?? undefined;
  const json = parseJson(text);
  const body = isObject(json) ? json : undefined;
  if (response.status === 200 && body?.success === true) {
    const { success: _success, request_id: requestId, cached, fetched_at: fetchedAt, ...result } = body;
    const outcome: RemoteOutcome<object> = { result, cached: cached === true, requestId: typeof requestId === 'string' ? requestId : (requestIdHeader ?? '') };
    const date = typeof fetchedAt === 'string' ? parseFetchedAt(fetchedAt) : undefined;
    if (date) outcome.fetchedAt = date;
    return { ok: true, outcome };
  }
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const retryAfter = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
  if (body?.success === false && typeof body.error_code === 'string') {
    const { success: _success, error: message, error_code: code, request_id: requestId, ...fields } = body;
    const error = new LookupError(code as ErrorCode, typeof message === 'string' ? message : code, {
      requestId: typeof requestId === 'string' ? requestId : requestIdHeader,
      status: errorStatus(response.status, code),
      retryAfter,
      ...(Object.keys(fields).length > 0 ? { fields } : {}),
    });
    return { ok: false, error, retry: retryKind(response.status, code), waitMs: retryAfterMs };
  }
  const contentType = response.headers.get('content-type');
  if (response.ok && json === undefined && /^application\/([\w.+-]*\+)?json\b/i.test(contentType ?? '')) {
    // A JSON answer that does not parse was cut short (framed by the connection's close): lost.
    const message = `${where}: HTTP ${response.status}, a JSON answer cut short or malformed (${text.length} characters): the answer was lost`;
    return {
      ok: false,
      error: new LookupError('lookup_failed', message, { requestId: requestIdHeader, status: 502 }),
      retry: 'transient',
      outcomeUnknown: true,
    };
  }
  // Not seclookup's envelope: a proxy's error page, a redirect, or something else at this URL.
  const location = response.headers.get('location');
  // A browser's fetch gives a redirect not followed (redirect: 'manual') as status 0, without its Location.
  const redirect = location ?? (response.type === 'opaqueredirect' ? 'another URL' : undefined);
  const what = redirect ? `a redirect to ${redirect} (set baseUrl to where the service is)` : `${contentType ?? 'no content type'}, not a seclookup answer`;
  const error = new LookupError('lookup_failed', `${where}: HTTP ${response.status}, ${what}`, {
    requestId: requestIdHeader,
    status: errorStatus(response.status),
    retryAfter,
  });
  const retry = response.ok ? 'never' : retryKind(response.status, undefined);
  // A proxy's 502 may come after the service answered; its own 429 means it sent nothing on.
  return retry === 'transient' ? { ok: false, error, retry, waitMs: retryAfterMs, outcomeUnknown: true } : { ok: false, error, retry, waitMs: retryAfterMs };
}

/**
 * An error's `status`: the answer's when it is an error status (4xx, 5xx); for an answer that is
 * not one (a 200 page that is not seclookup's, a redirect, a browser's opaque redirect's 0), its
 * envelope code's status, else 502, as for every answer the client could not use. A LookupError's
 * status is always an error status, which callers map to their own answers.
 */
function errorStatus(status: number, code?: string): number {
  if (status >= 400 && status <= 599) return status;
  return code !== undefined && Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as ErrorCode] : 502;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * SPEC's `fetched_at`: `YYYY-MM-DD HH:MM:SS.mmm`, UTC; or an ISO 8601 date-time that names its
 * zone. Nothing else: `new Date()` reads other text by the host's guesses (`"5"` as May 2001, a
 * date-time without a zone in the host's local time).
 */
export function parseFetchedAt(text: string): Date | undefined {
  const spec = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text);
  if (!spec && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return undefined;
  const date = new Date(spec ? `${text.replace(' ', 'T')}Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
