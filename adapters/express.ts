import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { LookupError } from '../src/errors.js';
import { splitUrl } from '../src/api/input.js';
import { clientClosed } from '../src/api/body.js';
import type { Api, RequestBody } from '../src/api/types.js';
import { consumedByOtherCode, declaresBody, failingBody } from './consumed-body.js';
import { serveRequest } from './node.js';
import { inLine, whenFirstInLine } from './pipelining.js';
import { createTurnCork } from './turn-cork.js';

export interface SeclookupExpressOptions {
  api: Api;
}

/**
 * The middleware pair `seclookup()` returns: the request handler, and an error handler that
 * answers an app body parser's refusals (malformed JSON, body too large, an unsupported charset
 * or Content-Encoding, client gone mid-body) on the API's paths in the API's envelope. `app.use`
 * takes the pair as one argument.
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
  const ownsPath = (req: Request) => api.owns(splitUrl(req.url)[0]);

  const handler: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (!ownsPath(req)) return next();
    serve(req, res, bodyReadEarlier(req) ?? req);
  };

  // A parser's error skips ordinary middleware; hand it to the core as the body, so the API
  // still checks the key first, answers in its own envelope and logs the request.
  const parserErrors: ErrorRequestHandler = (error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!ownsPath(req)) return next(error);
    const body = refusedBody(error);
    if (body === undefined) return next(error);
    serve(req, res, body);
  };

  return [handler, parserErrors];
}

/**
 * The errors body-parser (`express.json()`, `.urlencoded()`, `.text()`, `.raw()`, with raw-body
 * under them) passes to `next`, by their `type`, and what the core reads in their place:
 * - `read`: the body was read whole and refused by the parser's own rules (JSON that does not
 *   parse or that strict mode refuses, a form with more fields than `parameterLimit` or nested
 *   deeper than `depth`): the core reads those bytes by its own rules, as if no parser had run;
 * - an error code: the core answers it in its envelope (after checking the key).
 * `entity.verify.failed` is absent on purpose: it is the application's own `verify` refusing the
 * body, and its verdict and answer stay the application's (`next(error)`).
 */
const PARSER_ERRORS: Readonly<
  Record<string, 'read' | 'payload_too_large' | 'unsupported_media_type' | 'invalid_json' | 'client_closed_request' | 'internal_error'>
> = {
  'entity.parse.failed': 'read',
  'parameters.too.many': 'read',
  'querystring.parse.rangeError': 'read',
  'entity.too.large': 'payload_too_large',
  'charset.unsupported': 'unsupported_media_type',
  'encoding.unsupported': 'unsupported_media_type',
  // Fewer or more bytes than the declared Content-Length: not a readable body.
  'request.size.invalid': 'invalid_json',
  'request.aborted': 'client_closed_request',
  // The request stream was consumed or set to text by other code first: the server's fault.
  'stream.encoding.set': 'internal_error',
  'stream.not.readable': 'internal_error',
};

/** What the core reads for an app parser's error on an API path, or undefined for an error that is not a parser's. */
function refusedBody(error: unknown): RequestBody | undefined {
  const { type, body, message } = (error ?? {}) as { type?: unknown; body?: unknown; message?: unknown };
  const answer = typeof type === 'string' && Object.hasOwn(PARSER_ERRORS, type) ? PARSER_ERRORS[type] : undefined;
  const detail = typeof message === 'string' ? message : String(type);
  switch (answer) {
    case undefined:
      return undefined;
    case 'read':
      if (typeof body === 'string' || body instanceof Uint8Array) return body;
      return failingBody(new LookupError('invalid_json', `request body is not valid: ${detail}`));
    case 'client_closed_request':
      return failingBody(clientClosed(error));
    case 'payload_too_large':
      return failingBody(new LookupError(answer, 'request body exceeds the size limit'));
    case 'unsupported_media_type':
      return failingBody(new LookupError(answer, `request body cannot be read: ${detail}`));
    case 'invalid_json':
      return failingBody(new LookupError(answer, `request body is not valid: ${detail}`));
    case 'internal_error':
      // As a cause, so the core passes it to onError; the client hears only "unexpected".
      return failingBody(new LookupError(answer, 'unexpected server error', { cause: error }));
  }
}

/**
 * The body as a parser mounted earlier left it, or undefined when the stream is still unread.
 * body-parser 1 (Express 4) marks its work with `_body`; body-parser 2 (Express 5) only
 * consumes the stream, and always leaves a value in `req.body`. A stream read to its end with
 * nothing there was read by other code (a raw-body collector for webhook signatures): the body
 * the client sent is gone, which is the server's fault, not a client that sent nothing.
 */
function bodyReadEarlier(req: Request): RequestBody | undefined {
  const parsedByBodyParser1 = (req as Request & { _body?: boolean })._body === true;
  if (!parsedByBodyParser1 && !req.readableEnded) return undefined;
  const body: unknown = req.body;
  if (!parsedByBodyParser1 && body === undefined && declaresBody(req))
    return consumedByOtherCode('seclookup/express: the request body was read by middleware mounted before seclookup(), which left nothing in req.body');
  return typeof body === 'string' || body instanceof Uint8Array ? body : { parsed: body };
}
