import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ApiRequest, RequestBody } from '../src/api/types.js';

/**
 * An adapter's request whose `signal` (aborted when the client's connection closes before the
 * answer was written) is made only when the core reads it: only a lookup holding quota does,
 * so other requests pay nothing for it. The getter lives on the class, not on each object: an
 * accessor defined per request (`Object.defineProperty`) is allocated in V8's old space, and
 * under load that cost a major GC every few hundred milliseconds and slow scavenges (about a
 * fifth of the server's CPU on a cached lookup).
 */
class AdapterRequest implements ApiRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: ApiRequest['headers'];
  readonly body: RequestBody | undefined;
  readonly remoteAddress: string | undefined;
  private clientGone: AbortSignal | undefined;

  constructor(
    request: ApiRequest,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.method = request.method;
    this.url = request.url;
    this.headers = request.headers;
    this.body = request.body;
    this.remoteAddress = request.remoteAddress;
  }

  get signal(): AbortSignal {
    return (this.clientGone ??= clientGone(this.req, this.res));
  }
}

/** `request` with a `signal` made on first read (see AdapterRequest). */
export function withClientGoneSignal(request: ApiRequest, req: IncomingMessage, res: ServerResponse): ApiRequest {
  return new AdapterRequest(request, req, res);
}

/**
 * Per socket, what its requests do when it closes: one 'close' listener per socket, however many
 * requests a client pipelines on it. A listener per request (as before) passed Node's limit of
 * ten on a connection with eleven slow lookups in flight, and serve printed a "possible memory
 * leak" warning.
 */
const onClose = new WeakMap<Socket, Set<() => void>>();

/** Run `gone` when `socket` closes; returns what takes it off again. */
export function whenClosed(socket: Socket, gone: () => void): () => void {
  let waiting = onClose.get(socket);
  if (!waiting) {
    const created = new Set<() => void>();
    socket.once('close', () => {
      onClose.delete(socket);
      for (const callback of created) callback();
    });
    onClose.set(socket, (waiting = created));
  }
  waiting.add(gone);
  return () => waiting.delete(gone);
}

/** Responses the core's answer is being written to (see answeringHere). */
const answeredHere = new WeakSet<ServerResponse>();

/**
 * Say the core's answer is being written to `res`. A response that finishes without it was
 * answered by someone else (an Express app's timeout middleware, say): the client has its
 * answer, the core's is never sent, so the signal aborts and the lookup is not billed.
 */
export function answeringHere(res: ServerResponse): void {
  answeredHere.add(res);
}

function clientGone(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const socket = req.socket;
  if (socket.destroyed || (res.headersSent && !answeredHere.has(res))) {
    controller.abort();
    return controller.signal;
  }
  // The socket, not the response: a keep-alive connection's queued (pipelined) responses have
  // no socket yet, and a request's own 'close' only says its body was read.
  const forget = whenClosed(socket, () => {
    if (!res.writableFinished) controller.abort();
  });
  res.once('finish', () => {
    forget();
    if (!answeredHere.has(res)) controller.abort();
  });
  return controller.signal;
}
