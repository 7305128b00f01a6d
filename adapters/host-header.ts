/**
 * RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without a Host header, and to
 * any request with more than one Host line. A proxy in front and this server could read two of
 * them as different hosts; Node's `req.headers` keeps the first, and the captcha routes read it to
 * tell the API's own pages. Node refuses a missing Host itself with a bare 400 and no log line,
 * unless the server's `requireHostHeader` is off, as serve's is: then this answers it too, in
 * the envelope. HTTP/1.0 needs no Host, and HTTP/2 carries `:authority` instead.
 */
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Api, ApiResponse } from '../src/api/types.js';

/** What is wrong with the request's Host header lines, or null when nothing is. */
export function hostHeaderProblem(req: IncomingMessage | Http2ServerRequest): string | null {
  if (req.httpVersionMajor !== 1) return null;
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) return 'the request has more than one Host header; send one';
  if (hosts === 0 && req.httpVersionMinor === 1) return 'the request has no Host header, which HTTP/1.1 requires';
  return null;
}

/**
 * The API's 400 `bad_request` for a request whose Host header lines are wrong (logged, with
 * route `unmatched`); null for a request whose Host is fine. The request was framed as any other
 * (its body, if unread, closes the connection as every early answer's does), so the connection
 * goes on: a request pipelined behind it is answered.
 */
export function refuseHostHeader(api: Api, req: IncomingMessage | Http2ServerRequest, request: { method: string; remoteAddress?: string }): ApiResponse | null {
  const problem = hostHeaderProblem(req);
  if (problem === null) return null;
  return api.refuse('bad_request', problem, request);
}
