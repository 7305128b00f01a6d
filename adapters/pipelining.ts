import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { whenClosed } from './client-gone.js';

/**
 * Requests at most waiting in line on one connection; any more are handled at once, as Node
 * handles pipelined requests. Node stops reading a connection once 16 KiB of queued answers pile
 * up, and answers not yet made take no room: a client pipelining without reading would otherwise
 * have every request it sends parsed and held (500,000 small ones took serve from 316 to 1,300
 * MiB). Past the line, the answers queue in Node and its guard holds; those few are billed when
 * made, as every answer was before the line.
 */
export const MAX_WAITING = 32;

/** Per connection, how many of its requests wait in line. */
const lines = new WeakMap<Socket, { waiting: number }>();

/**
 * Requests pipelined on one connection are handled one at a time, as nginx handles them: one
 * whose answer would queue behind an answer still owed waits until Node hands its response the
 * socket. Its answer could not be written sooner anyway, and handled at once it would hold a
 * quota unit and be billed even when the client leaves before that answer is written (only
 * answers sent are billed). Up to MAX_WAITING requests wait in line; one beyond is handled at
 * once (see MAX_WAITING).
 *
 * Calls `handle` at once when the request is first in line (the usual case: no pipelining) or
 * the line is full, else once the answers ahead of it are written; `closedFirst` instead when
 * the connection closes before that (the request was never handled: nothing to answer, bill or
 * log).
 */
export function whenFirstInLine(req: IncomingMessage, res: ServerResponse, handle: () => void, closedFirst?: () => void): void {
  if (!inLine(res)) return handle();
  const socket = req.socket;
  if (socket.destroyed) return closedFirst?.();
  const line = lines.get(socket) ?? { waiting: 0 };
  if (line.waiting >= MAX_WAITING) return handle();
  lines.set(socket, line);
  line.waiting++;
  const forget = whenClosed(socket, () => {
    res.off('socket', turnCame);
    closedFirst?.();
  });
  function turnCame() {
    forget();
    line.waiting--;
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
