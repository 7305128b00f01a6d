import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Api } from '../src/api/types.js';
import { writeCrash, writeResponse } from './node.js';

export interface SeclookupExpressOptions {
  api: Api;
}

/**
 * Express middleware serving the API's paths (`/v1/...` and `/healthz`, relative to where it
 * is mounted) and passing every other path on with `next()`. A body already parsed by
 * `express.json()` is used as is; otherwise the core reads the raw stream under its size cap.
 *
 * @example
 * app.use(seclookup({ api }));          // or app.use('/security', seclookup({ api }))
 */
export function seclookup(options: SeclookupExpressOptions): RequestHandler {
  const { api } = options ?? ({} as SeclookupExpressOptions);
  if (!api || typeof api.handle !== 'function') throw new TypeError('seclookup/express: pass { api } from createApi()');
  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    const path = url.split('?', 1)[0];
    if (!api.owns(path)) return next();
    // body-parser marks a parsed body with `_body`; then the stream is already consumed.
    const parsed = (req as Request & { _body?: boolean })._body === true;
    api
      .handle({ method: req.method, url, headers: req.headers, body: parsed ? { parsed: req.body } : req, remoteAddress: req.socket.remoteAddress })
      .then((response) => writeResponse(res, response), () => writeCrash(res));
  };
}
