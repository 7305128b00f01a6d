/**
 * Requests Node's HTTP parser refuses before any listener runs: malformed bytes, a header block
 * over the limit, a request that took too long, an `Expect` other than 100-continue. Node
 * would answer them with a bare status and no body; these answer them in the API's envelope,
 * log them, and never cut off answers still owed to earlier requests on the same connection.
 */
import { METHODS, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Api, ApiResponse } from '../src/api/types.js';
import type { ErrorCode } from '../src/errors.js';
import { closeUnreadBodyAfterAnswer, isHttp2Request } from './http2.js';
import { closeLingering, lingerAfterResponse } from './lingering-close.js';

/** A connection's last two responses; the parser's error comes after both requests. */
interface Connection {
  previous?: ServerResponse;
  last?: ServerResponse;
  /** The parser failed on this connection; it reports again on every later read. */
  refused?: boolean;
}

const connections = new WeakMap<Socket, Connection>();

/**
 * A server whose HTTP/1.1 connections Node's HTTP/1.1 parser reads: HTTP, HTTPS, and HTTP/2 over
 * TLS with `allowHTTP1` (Node hands its HTTP/1.1 connections to the same parser, which emits the
 * same events on the HTTP/2 server).
 */
export type Http1CapableServer = Server | HttpsServer | Http2SecureServer;
const trackedServers = new WeakSet<object>();

function track(req: IncomingMessage, res: ServerResponse): void {
  const connection = connections.get(req.socket);
  if (!connection) return void connections.set(req.socket, { last: res });
  connection.previous = connection.last;
  connection.last = res;
}

/**
 * Has a request arrived on `res`'s connection after `res`'s own, its answer still owed (pipelined)?
 * False on a server whose responses are not tracked (see `trackResponses`).
 */
export function laterRequestOnConnection(res: ServerResponse): boolean {
  const last = connections.get(res.req.socket)?.last;
  return last !== undefined && last !== res;
}

/** Remember each connection's latest responses, so a parse error waits for them. Idempotent. */
export function trackResponses(server: Http1CapableServer): void {
  if (trackedServers.has(server)) return;
  trackedServers.add(server);
  // On an HTTP/2 server, its HTTP/2 requests come here too: keyed by their stream's own socket
  // stand-in, they are never a connection's HTTP/1.1 requests.
  server.on('request', track);
}

/** What a `clientError` means for the client, or null when it is gone (a reset, or it hung up mid-request). */
function refusalOf(error: Error & { code?: string; reason?: unknown }): { code: ErrorCode; message: string } | null {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'request_header_fields_too_large', message: 'the request line and headers exceed the size limit' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'payload_too_large', message: 'chunk extensions exceed the size limit' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', message: 'the request did not arrive in time' };
    case 'HPE_INVALID_EOF_STATE':
      return null;
  }
  if (!error.code?.startsWith('HPE_')) return null; // ECONNRESET, EPIPE, ...: a socket error, not a request
  // llhttp's reason is a fixed phrase ("Invalid header value char"), never the client's bytes.
  return { code: 'bad_request', message: `malformed HTTP request${typeof error.reason === 'string' ? `: ${error.reason}` : ''}` };
}

/**
 * Answer Node's `clientError` (see `handleClientErrors`). Answers already owed on the
 * connection are written first: the bad bytes come after the last request, or cut into its
 * body, in which case the answer is for that request and follows the one before it.
 */
export function answerClientError(api: Api, error: Error, socket: Socket): void {
  const connection = connections.get(socket) ?? {};
  if (connection.refused) return;
  connection.refused = true;
  connections.set(socket, connection);
  const refusal = socket.writable ? refusalOf(error) : null;
  if (!refusal) return void socket.destroy();

  const { previous, last } = connection;
  const cutsLast = last !== undefined && !last.req.complete;
  const method = cutsLast ? last.req.method : refusedMethod(error);
  afterFinished(cutsLast ? previous : last, () => {
    // A request that answered before its body broke off needs no second answer; let its own finish.
    if (cutsLast && last.headersSent) return afterFinished(last, () => socket.destroy());
    if (!socket.writable) return void socket.destroy();
    const response = api.refuse(refusal.code, refusal.message, { method, remoteAddress: socket.remoteAddress });
    socket.end(httpMessage(response, method === 'HEAD'), () => socket.destroy());
  });
}

const KNOWN_METHODS = new Set(METHODS);

/**
 * The method of a request the parser refused, read from the bytes it was parsing when it failed
 * (Node's `rawPacket`, up to `bytesParsed`): the request starts after the last blank line before
 * the failure, or with those bytes. Undefined when its request line came in an earlier read
 * (headers sent slowly) or is not a method Node knows. A HEAD must be answered without a body:
 * a client reads none after a HEAD's headers, and Node's fails on the bytes it did not expect.
 */
function refusedMethod(error: Error & { rawPacket?: unknown; bytesParsed?: unknown }): string | undefined {
  const bytes = error.rawPacket;
  if (!Buffer.isBuffer(bytes)) return undefined;
  const end = typeof error.bytesParsed === 'number' ? Math.min(error.bytesParsed, bytes.length) : bytes.length;
  // A blank line ending before the failure ends an earlier request (a negative offset would count from the end).
  const blank = end >= 4 ? bytes.lastIndexOf('\r\n\r\n', end - 4) : -1;
  const start = blank === -1 ? 0 : blank + 4;
  const space = bytes.indexOf(0x20, start);
  // No method Node knows is longer than 16 characters: nothing longer is decoded.
  if (space === -1 || space - start > 16) return undefined;
  const method = bytes.toString('latin1', start, space);
  return KNOWN_METHODS.has(method) ? method : undefined;
}

/** Answer an `Expect` other than 100-continue (Node's `checkExpectation`) with 417 in the envelope. */
export function answerExpectationFailed(api: Api, req: IncomingMessage, res: ServerResponse): void {
  track(req, res);
  const response = api.refuse('expectation_failed', 'the only supported Expect is 100-continue', {
    method: req.method,
    remoteAddress: req.socket.remoteAddress,
  });
  // Over HTTP/2 the request is one stream: it closes after the answer, and a Connection header is
  // not allowed there (Node warns of it, on any client's say-so: found by a reviewer).
  if (isHttp2Request(req)) {
    res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body) });
    res.end(response.body);
    closeUnreadBodyAfterAnswer(req);
    return;
  }
  // The body was never read, so the connection cannot carry another request; the close lingers.
  lingerAfterResponse(res);
  res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body), connection: 'close' });
  res.end(response.body);
}

/** What a CONNECT is answered with: every method the API serves somewhere. */
const CONNECT_ALLOW = 'GET, HEAD, POST';
const connectServers = new WeakSet<object>();

/**
 * Answer CONNECT, which Node hands to the server's 'connect' event instead of the request
 * listener (with no listener it drops the connection without a word), with 405 in the envelope
 * and a request log line, after the answers still owed on the connection. An application with
 * its own 'connect' listener (a proxy) keeps CONNECT to itself. Idempotent per server.
 */
export function answerConnectRequests(server: Http1CapableServer, api: Api): void {
  if (connectServers.has(server)) return;
  connectServers.add(server);
  trackResponses(server);
  server.on('connect', (req: IncomingMessage | Http2ServerRequest, stream: Socket | Http2ServerResponse) => {
    if (server.listenerCount('connect') > 1) return;
    // Over HTTP/2 a CONNECT is one stream, handed over with its response: answered there.
    if (isHttp2Request(req)) return answerHttp2Connect(api, req, stream as Http2ServerResponse);
    const socket = stream as Socket;
    // Node has taken its own listeners off the socket: a reset must not become an uncaught error.
    socket.on('error', () => socket.destroy());
    afterFinished(connections.get(socket)?.last, () => {
      if (!socket.writable) return void socket.destroy();
      const response = api.refuse('method_not_allowed', 'CONNECT is not supported: this server is not a proxy', {
        method: req.method,
        remoteAddress: socket.remoteAddress,
      });
      response.headers.allow = CONNECT_ALLOW;
      socket.write(httpMessage(response));
      // Whatever the client sends after its CONNECT (tunnel bytes it did not wait to send) is discarded, not reset.
      closeLingering(socket);
    });
  });
}

/** CONNECT over HTTP/2 (RFC 9113 8.5): 405 on its stream, which then closes; the connection carries on. */
function answerHttp2Connect(api: Api, req: Http2ServerRequest, res: Http2ServerResponse): void {
  const response = api.refuse('method_not_allowed', 'CONNECT is not supported: this server is not a proxy', {
    method: req.method,
    remoteAddress: req.socket?.remoteAddress,
  });
  res.writeHead(response.status, { ...response.headers, allow: CONNECT_ALLOW, 'content-length': Buffer.byteLength(response.body) });
  res.end(response.body);
  closeUnreadBodyAfterAnswer(req);
}

/** Run `then` once `res` has handed all of its bytes to the socket (at once if there is none). */
function afterFinished(res: ServerResponse | undefined, then: () => void): void {
  if (!res || res.writableFinished || res.destroyed) return then();
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    then();
  };
  res.once('finish', once);
  res.once('close', once); // the socket closed before it finished
}

/**
 * A complete HTTP/1.1 message for writing straight onto the socket, closing the connection. For
 * a HEAD, the headers a GET would get (its Content-Length too) and no body, as the API answers HEAD.
 */
function httpMessage(response: ApiResponse, headersOnly = false): string {
  const headers = { ...response.headers, 'content-length': Buffer.byteLength(response.body), connection: 'close', date: new Date().toUTCString() };
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return headersOnly ? `${head}\r\n` : `${head}\r\n${response.body}`;
}

/**
 * Answer the requests Node's HTTP parser refuses, and CONNECT (405), in the API's envelope (with
 * `request_id`, `X-Request-Id` and `Connection: close`) and log them with route `unmatched`,
 * after every answer still owed on the connection. Works for any Node server: `http.createServer(...)`,
 * Express's `app.listen()`, an HTTPS server, or an HTTP/2 server over TLS with `allowHTTP1` (for its
 * HTTP/1.1 connections; HTTP/2's own framing errors never reach a listener). An application's own
 * 'checkExpectation' or 'connect' listener keeps those requests to itself. Returns the server.
 *
 * @example
 * const server = handleClientErrors(http.createServer(createListener(api)), api);
 * server.listen(8080);
 */
export function handleClientErrors<S extends Http1CapableServer>(server: S, api: Api): S {
  trackResponses(server);
  server.on('clientError', (error: Error, socket: Socket) => answerClientError(api, error, socket));
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // An application with its own 'checkExpectation' listener answers it: a second answer on its
    // response threw ERR_HTTP_HEADERS_SENT out of Node's parser, an uncaught exception.
    if (server.listenerCount('checkExpectation') > 1) return;
    answerExpectationFailed(api, req, res);
  });
  answerConnectRequests(server, api);
  return server;
}
