import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { LookupError } from '../src/errors.js';
import { clientClosed } from '../src/api/body.js';
import type { Api, RequestBody } from '../src/api/types.js';
import { serveRequest } from './node.js';
import { inLine, whenFirstInLine } from './pipelining.js';
import { createTurnCork } from './turn-cork.js';

export interface SeclookupExpressOptions {
  api: Api;
}

/**
 * The middleware pair `seclookup()` returns: the request handler, and an error handler that
 * answers an app body parser's refusals (malformed JSON, body too large, client gone mid-body)
 * on the API's paths. `app.use` takes the pair as one argument.
 */
export type SeclookupMiddleware = [RequestHandler, ErrorRequestHandler];

/**
 * Express middleware serving the API's paths (`/v1/...` and `/healthz`, relative to where it
 * is mounted) and passing every other path on with `next()`. A body already read by an app
 * parser mounted earlier (`express.json()`, `express.text()`, ...) is used as that parser left
 * it; otherwise the core reads the raw stream under its size cap.
 *
 * @example
 * app.use(seclookup({ api }));          // or app.use('/security', seclookup({ api }))
 */
export function seclookup(options: SeclookupExpressOptions): SeclookupMiddleware {
  const { api } = options ?? ({} as SeclookupExpressOptions);
  if (!api || typeof api.handle !== 'function') throw new TypeError('seclookup/express: pass { api } from createApi()');

  const cork = createTurnCork();
  const serveNow = (req: Request, res: Response, body: RequestBody) =>
    serveRequest(api, cork, res, { method: req.method, url: req.url, headers: req.headers, body, remoteAddress: req.socket.remoteAddress });
  // Pipelined requests one at a time (pipelining.ts).
  const serve = (req: Request, res: Response, body: RequestBody) =>
    inLine(res) ? whenFirstInLine(req, res, () => serveNow(req, res, body)) : serveNow(req, res, body);
  const ownsPath = (req: Request) => api.owns(req.url.split('?', 1)[0]);

  const handler: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (!ownsPath(req)) return next();
    serve(req, res, bodyReadEarlier(req) ?? req);
  };

  // A parser's error skips ordinary middleware; hand it to the core as the body, so the API
  // still checks the key first, answers in its own envelope and logs the request.
  const parserErrors: ErrorRequestHandler = (error: unknown, req: Request, res: Response, next: NextFunction) => {
    const type = (error as { type?: unknown } | null)?.type;
    if (!ownsPath(req)) return next(error);
    if (type === 'entity.parse.failed') return serve(req, res, String((error as { body?: unknown }).body ?? ''));
    if (type === 'entity.too.large') return serve(req, res, failingBody(new LookupError('payload_too_large', 'request body exceeds the size limit')));
    if (type === 'request.aborted') return serve(req, res, failingBody(clientClosed(error)));
    next(error);
  };

  return [handler, parserErrors];
}

/**
 * The body as a parser mounted earlier left it, or undefined when the stream is still unread.
 * body-parser 1 (Express 4) marks its work with `_body`; body-parser 2 (Express 5) only
 * consumes the stream.
 */
function bodyReadEarlier(req: Request): RequestBody | undefined {
  if ((req as Request & { _body?: boolean })._body !== true && !req.readableEnded) return undefined;
  const body: unknown = req.body;
  return typeof body === 'string' || body instanceof Uint8Array ? body : { parsed: body };
}

/** A body that fails with `error` as soon as the core reads it, for one the app's parser refused. */
// biome-ignore lint/correctness/useYield: the body fails on its first read, so it has nothing to yield
async function* failingBody(error: LookupError): AsyncGenerator<Uint8Array> {
  throw error;
}
