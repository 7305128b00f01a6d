/**
 * A request body that other code read before the API: the app's own middleware-like code that
 * drained the request stream (a raw-body collector for webhook signatures). The body the client
 * sent is gone, which is the server's fault, not a client that sent nothing. Shared by the Node
 * and Express adapters.
 */
import type { IncomingMessage } from 'node:http';
import { LookupError } from '../src/errors.js';
import type { RequestBody } from '../src/api/types.js';

/** Whether the request's head announces a body: chunked, or a Content-Length above 0. */
export function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

/**
 * 500 for a body read by other code before the API, failing only when the core reads it: a
 * route without a body (a GET) is still served, and the key is still checked first.
 */
export function consumedByOtherCode(message: string): RequestBody {
  // As a cause, so the core passes it to onError; the client hears only "unexpected".
  return failingBody(new LookupError('internal_error', 'unexpected server error', { cause: new Error(message) }));
}

/** A body that fails with `error` as soon as the core reads it, for one the app's parser refused. */
// biome-ignore lint/correctness/useYield: the body fails on its first read, so it has nothing to yield
export async function* failingBody(error: LookupError): AsyncGenerator<Uint8Array> {
  throw error;
}
