import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Api, ApiResponse } from '../src/api/types.js';

/** Write a core response onto a Node response. Shared by the Node and Express adapters. */
export function writeResponse(res: ServerResponse, response: ApiResponse): void {
  // The core builds a fresh response per request, so its headers can take the length directly.
  response.headers['content-length'] = String(Buffer.byteLength(response.body));
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

/** Last resort if the core itself throws: it never should, but a socket must never hang. */
export function writeCrash(res: ServerResponse): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ success: false, error: 'unexpected server error', error_code: 'internal_error' });
  res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A Node `http` request listener serving the whole API (every path, including 404s).
 *
 * @example
 * http.createServer(createListener(api)).listen(8080);
 */
export function createListener(api: Api): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    api
      .handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: req, remoteAddress: req.socket.remoteAddress })
      .then((response) => writeResponse(res, response), () => writeCrash(res));
  };
}

export type { Api, ApiResponse };
