import type { IncomingMessage, ServerResponse } from 'node:http';
import { whenClosed } from './client-gone.js';

/**
 * Requests pipelined on one connection are handled one at a time, as nginx handles them: one
 * whose answer would queue behind an answer still owed waits until Node hands its response the
 * socket. Its answer could not be written sooner anyway, and handled at once it would hold a
 * quota unit and be billed even when the client leaves before that answer is written (only
 * answers sent are billed). It also bounds what one connection holds: one lookup, not hundreds.
 *
 * Calls `handle` at once when the request is first in line (the usual case: no pipelining),
 * else once the answers ahead of it are written; `closedFirst` instead when the connection
 * closes before that (the request was never handled: nothing to answer, bill or log).
 */
export function whenFirstInLine(req: IncomingMessage, res: ServerResponse, handle: () => void, closedFirst?: () => void): void {
  if (!inLine(res)) return handle();
  if (req.socket.destroyed) return closedFirst?.();
  const forget = whenClosed(req.socket, () => {
    res.off('socket', turnCame);
    closedFirst?.();
  });
  function turnCame() {
    forget();
    handle();
  }
  res.once('socket', turnCame);
}

/** Is `res` queued behind another answer on its connection? Node gives it the socket when its turn comes. */
export function inLine(res: ServerResponse): boolean {
  return res.socket === null && !res.writableEnded;
}

/** `whenFirstInLine` as a promise: true when the request's turn came, false when its connection closed first. */
export function untilFirstInLine(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) =>
    whenFirstInLine(
      req,
      res,
      () => resolve(true),
      () => resolve(false),
    ),
  );
}
