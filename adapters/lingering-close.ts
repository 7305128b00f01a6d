/**
 * Lingering close, as nginx and Apache do it. An answer given before the request's body has
 * arrived (a 413 for a body over the limit, a 401 before reading) ends the connection; if the
 * server then closed its socket with the rest of the body unread, the kernel would answer the
 * unread bytes with a reset, and a client still sending (Node's fetch and `http.request` send
 * the whole body before they read) would see EPIPE or ECONNRESET, often before it read the
 * answer. So after the answer the server half-closes (FIN), keeps reading and discarding what
 * the client still sends, and closes once the client has closed its side or a bound is reached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Socket } from 'node:net';
import { closeUnreadBodyAfterAnswer, goAwayAfterAnswer, isHttp2Request } from './http2.js';

export interface LingerBounds {
  /** Most bytes read and discarded after the answer; a client sending more is cut off. */
  maxBytes: number;
  /** Longest wait after the answer for the client to close; then the connection is cut. */
  maxMs: number;
}

/** 16 MiB or 5 s after the answer, whichever comes first (nginx: 30 s, no byte bound). */
export const LINGER_BOUNDS: Readonly<LingerBounds> = { maxBytes: 16 * 1024 * 1024, maxMs: 5000 };

const lingering = new WeakSet<Socket>();

/**
 * Make the close that Node's HTTP server starts after the current response (it calls
 * `socket.destroySoon()` once a `Connection: close` answer has been written) a lingering one.
 * Call it while answering a request whose body has not fully arrived. Idempotent.
 */
export function lingerOnClose(socket: Socket, bounds: LingerBounds = LINGER_BOUNDS): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  // An own property over net.Socket's method, for this connection only.
  socket.destroySoon = () => closeLingering(socket, bounds);
}

/**
 * `lingerOnClose` for the connection `res` is answered on. A request whose body stream was
 * destroyed has let go of its socket, and a response queued behind earlier ones on the
 * connection gets it only when their turn ends.
 */
export function lingerAfterResponse(res: ServerResponse): void {
  const socket = res.socket ?? res.req.socket;
  if (socket) lingerOnClose(socket);
  else res.once('socket', (assigned: Socket) => lingerOnClose(assigned));
}

/**
 * Before an answer is written (its `headers` still open to change): a request whose body has not
 * fully arrived leaves that body unread. Over HTTP/1.1 its connection then closes, lingering
 * (the next request on it could never be found); over HTTP/2 its stream ends after the answer,
 * and no answer carries a Connection header: a `Connection: close` from the core (a drain) is
 * GOAWAY there. A request with no `complete` (Fastify's inject) has
 * no connection to close.
 */
export function endUnreadBody(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse,
  headers: Record<string, string | string[] | number | undefined>,
): void {
  if (isHttp2Request(req)) {
    if (headers.connection === 'close') goAwayAfterAnswer(req);
    delete headers.connection;
    closeUnreadBodyAfterAnswer(req);
  } else if (req.complete === false) {
    headers.connection = 'close';
    lingerAfterResponse(res);
  }
}

/**
 * Half-close now (after what is already written), discard what still arrives, and destroy the
 * socket on the client's FIN or at a bound. For a socket Node's HTTP server has handed over
 * (a CONNECT), or through `lingerOnClose` for one it still serves.
 */
export function closeLingering(socket: Socket, bounds: LingerBounds = LINGER_BOUNDS): void {
  if (socket.destroyed) return;
  let discarded = 0;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, bounds.maxMs);
  timer.unref();
  const discard = (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > bounds.maxBytes) cut();
  };
  // A 'data' listener makes Node's HTTP server stop feeding its parser from the socket
  // directly; removing the server's own listener then keeps every later byte from its parser,
  // so nothing the client sends from here on can start another request or a parse error.
  socket.on('data', discard);
  for (const listener of socket.listeners('data')) if (listener !== discard) socket.off('data', listener as (...args: unknown[]) => void);
  // Before the server's own 'end' listener, which would report the unfinished body as an error.
  socket.prependOnceListener('end', cut);
  socket.once('close', () => clearTimeout(timer));
  startReading(socket);
  socket.end();
}

/** The part of a socket's libuv handle that Node's HTTP server itself uses to pause and resume reading. */
interface ReadableHandle {
  reading?: boolean;
  readStart?(): number;
}

/**
 * Node's HTTP server stops the socket's handle reading while a request body waits to be read,
 * and restarts it from a listener that goes away with its parser; the stream itself still
 * believes it is reading, so `resume()` alone would never read again. Restart the handle as that
 * listener would.
 */
function startReading(socket: Socket): void {
  socket.resume();
  const handle = (socket as Socket & { _handle?: ReadableHandle | null })._handle;
  if (handle && handle.reading === false && typeof handle.readStart === 'function') {
    handle.reading = true;
    handle.readStart();
  }
}
