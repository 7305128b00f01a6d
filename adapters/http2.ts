/**
 * Requests that arrive over HTTP/2 through Node's compatibility API (`http2.createServer` or
 * `createSecureServer` with the Node adapter's listener, Fastify with `http2: true`). Each request
 * is one stream of a shared connection: there is no connection of its own to close, no
 * `Connection` header (RFC 9113 8.2.2 forbids it), and a body left unread is ended by closing
 * that stream, not the socket.
 */
import { constants, type Http2ServerRequest } from 'node:http2';
import type { IncomingMessage } from 'node:http';

/** True for a request that came over HTTP/2. */
export function isHttp2Request(req: IncomingMessage | Http2ServerRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2 && 'stream' in req;
}

/**
 * Once the answer is sent, close a stream whose request body was not read to its end (a 413, a
 * 401 before reading) with NO_ERROR: RFC 9113 8.1's way of asking the client to stop sending,
 * after a complete response. Left open, the stream would wait for the body for as long as the
 * connection lives. A request with no body (END_STREAM on its headers) or read whole is left be.
 */
export function closeUnreadBodyAfterAnswer(req: Http2ServerRequest): void {
  const stream = req.stream;
  if (stream.endAfterHeaders || req.readableEnded || stream.destroyed) return;
  const close = () => {
    if (!stream.closed && !stream.destroyed) stream.close(constants.NGHTTP2_NO_ERROR);
  };
  if (stream.writableFinished) close();
  else stream.once('finish', close);
}

/**
 * HTTP/2's `Connection: close`: the core marks answers so while the server drains (`api.drain()`,
 * a graceful stop), and over HTTP/1.1 the client then takes its next request elsewhere. HTTP/2
 * forbids the header, so say it with GOAWAY NO_ERROR (RFC 9113 6.8): `session.close()` lets the
 * streams already open finish (this answer among them) and refuses new ones; the connection ends
 * once they are done, so the server's `close()` can complete. Dropping the header alone left the
 * client opening streams on a draining server for ever.
 */
export function goAwayAfterAnswer(req: Http2ServerRequest): void {
  const session = req.stream.session;
  if (session && !session.closed && !session.destroyed) session.close();
}
