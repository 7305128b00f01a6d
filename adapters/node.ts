import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Api, ApiRequest, ApiResponse } from '../src/api/types.js';
import { laterRequestOnConnection } from './client-errors.js';
import { consumedByOtherCode, declaresBody } from './consumed-body.js';
import { answeringHere, withClientGoneSignal } from './client-gone.js';
import { refuseHostHeader } from './host-header.js';
import { endUnreadBody } from './lingering-close.js';
import { inLine, whenFirstInLine } from './pipelining.js';
import { createTurnCork, type TurnCork } from './turn-cork.js';
import { isPromise } from '../src/lib/outcome.js';
import { isBodiless } from '../src/api/conditional.js';

/**
 * Write a core response onto a Node response. Shared by the Node and Express adapters. An
 * answer given before the request's body has fully arrived (a 413 mid-body, a 401 before
 * reading) closes the connection: the rest of the body is left unread, so the next request on
 * that connection could never be found. The close lingers (see lingering-close.ts), so a client
 * still sending that body reads the answer rather than a reset.
 */
export function writeResponse(res: ServerResponse, response: ApiResponse): void {
  // The core builds a fresh response per request, so its headers can take the length directly.
  // A HEAD answer comes with GET's length already (and no body); a 204 or 304 has none.
  if (!isBodiless(response.status)) response.headers['content-length'] ??= String(Buffer.byteLength(response.body));
  // A `Connection: close` from the core (serve's drain, shutdown.ts) ends the connection after
  // this answer, and Node drops the answers queued behind it: while a later request on the
  // connection is still owed its answer, the close is left to that answer, which carries it too.
  if (response.headers.connection === 'close' && laterRequestOnConnection(res)) delete response.headers.connection;
  endUnreadBody(res.req, res, response.headers);
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

/** Write the core's answer, or the last-resort 500 if even that fails; never throws. */
function deliver(res: ServerResponse, response: ApiResponse): void {
  // Answered already by the app around the API (a timeout middleware): the client has that
  // answer, and the core was told (client-gone.ts), so this one is dropped, not forced through.
  if (res.headersSent) return;
  answeringHere(res);
  try {
    writeResponse(res, response);
  } catch {
    writeCrash(res);
  }
}

/**
 * Hand a request to the core and write its answer, corked per event-loop turn (see
 * turn-cork.ts), with a signal that says when the client is gone (client-gone.ts). Shared by
 * the Node and Express adapters.
 */
export function serveRequest(api: Api, cork: TurnCork, res: ServerResponse, request: ApiRequest): void {
  // Answered already by the app before it handed the request over (an auth check that answered
  // 401 and fell through): the client has that answer, so nothing is looked up, billed or logged.
  // Handed on, an answer the core made at once was billed, as it is written in its own turn.
  if (res.headersSent) return;
  const turn = cork.arrival();
  let answer: ApiResponse | Promise<ApiResponse>;
  try {
    // Wrong Host lines are refused before the core sees the request (host-header.ts).
    const refused = refuseHostHeader(api, res.req, request);
    if (refused) answer = refused;
    else {
      const withSignal = withClientGoneSignal(request, res.req, res);
      // An answer made at once costs no promise (see Api.respond).
      answer = api.respond ? api.respond(withSignal) : api.handle(withSignal);
    }
  } catch {
    return writeCrash(res);
  }
  if (isPromise(answer))
    answer.then(
      (response) => cork.send(turn, () => deliver(res, response)),
      () => writeCrash(res),
    );
  else cork.send(turn, () => deliver(res, answer));
}

/** Last resort if the core itself throws: it never should, but a socket must never hang. */
export function writeCrash(res: ServerResponse): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ success: false, error: 'unexpected server error', error_code: 'internal_error' });
  res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const CONSUMED = "seclookup/node: the request body was read by the application's code before createListener()'s listener was called";

/** A request listener for `http.createServer`, `https.createServer`, or HTTP/2's `createServer` and `createSecureServer`. */
export interface ApiListener {
  (req: IncomingMessage, res: ServerResponse): void;
  (req: Http2ServerRequest, res: Http2ServerResponse): void;
}

/**
 * A Node `http` request listener serving the whole API (every path, including 404s). Pair it
 * with `handleClientErrors` so requests Node's HTTP/1.1 parser refuses get the envelope too.
 *
 * @example
 * handleClientErrors(http.createServer(createListener(api)), api).listen(8080);
 * // HTTP/2, with HTTP/1.1 for older clients (whose malformed requests get the envelope too).
 * handleClientErrors(http2.createSecureServer({ key, cert, allowHTTP1: true }, createListener(api)), api).listen(8443);
 */
export function createListener(api: Api): ApiListener {
  const cork = createTurnCork();
  const serve = (req: IncomingMessage, res: ServerResponse) =>
    serveRequest(api, cork, res, {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      // A body the app's own code read before handing the request over is gone: a 500, never an empty body.
      body: req.readableEnded && declaresBody(req) ? consumedByOtherCode(CONSUMED) : req,
      remoteAddress: req.socket.remoteAddress,
    });
  // Pipelined requests one at a time (pipelining.ts); the usual request, first in line, costs no closure.
  // An HTTP/2 request and response stand in for HTTP/1.1's: the same fields are read and written.
  const listener = (req: IncomingMessage, res: ServerResponse) => (inLine(res) ? whenFirstInLine(req, res, () => serve(req, res)) : serve(req, res));
  return listener as ApiListener;
}

export { handleClientErrors } from './client-errors.js';
export type { Api, ApiResponse };
