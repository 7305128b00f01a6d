import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiRequest } from '../src/api/types.js';

/**
 * Give `request` its `signal` (aborted when the client's connection closes before the answer
 * was written), made only when the core reads it: only a lookup holding quota does, so other
 * requests pay nothing for it.
 */
export function withClientGoneSignal(request: ApiRequest, req: IncomingMessage, res: ServerResponse): ApiRequest {
  let signal: AbortSignal | undefined;
  Object.defineProperty(request, 'signal', { get: () => (signal ??= clientGone(req, res)), enumerable: true, configurable: true });
  return request;
}

function clientGone(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const socket = req.socket;
  if (socket.destroyed) {
    controller.abort();
    return controller.signal;
  }
  // The socket, not the response: a keep-alive connection's queued (pipelined) responses have
  // no socket yet, and a request's own 'close' only says its body was read.
  const gone = () => {
    if (!res.writableFinished) controller.abort();
  };
  socket.once('close', gone);
  res.once('finish', () => socket.off('close', gone));
  return controller.signal;
}
