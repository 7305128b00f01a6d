/**
 * Input decoding for lookup routes: the query string, the path value and the body become the
 * RouteInput a product's route reads its arguments from.
 */
import { LookupError, type ErrorCode } from '../errors.js';
import type { MaybePromise } from '../lib/outcome.js';
import { parseQuery } from '../lib/query.js';
import type { ExtraRoute, LookupRoute, RouteInput } from '../products/route.js';
import { parseBody } from './body.js';
import type { ApiRequest } from './types.js';

/**
 * Decode what `route` reads: always the query, the path value when the path form was used,
 * and the body on POST routes (read here under `bodyLimit`: 400 invalid_json, 413, 415).
 */
export function decodeInput(
  route: LookupRoute<unknown[]> | ExtraRoute,
  request: ApiRequest,
  search: string,
  rawPathValue: string | undefined,
  bodyLimit: number,
): MaybePromise<RouteInput> {
  const query = parseQuery(search);
  const pathValue = rawPathValue === undefined ? undefined : decodePathValue(rawPathValue, route.inputError);
  const { headers } = request;
  // GET routes stay synchronous: no promise on the hot path.
  if (route.method !== 'POST') return { query, pathValue, headers };
  return parseBody(request.body, headers, bodyLimit).then((body) => ({ query, pathValue, body, headers }));
}

/** The path form's value, percent-decoded; malformed encoding is the product's input error. */
function decodePathValue(raw: string, inputError: ErrorCode): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new LookupError(inputError, 'the path value is not valid percent-encoded UTF-8');
  }
}

/** `/path?query` split at the first `?`; an absolute-form target is read as its origin form first. */
export function splitUrl(url: string): [string, string?] {
  const target = originForm(url);
  const at = target.indexOf('?');
  return at === -1 ? [target] : [target.slice(0, at), target.slice(at + 1)];
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * A request target in absolute form (`GET http://host/healthz HTTP/1.1`, which RFC 9112 3.2.2
 * says a server must accept, though clients send it to proxies) as its origin form (`/healthz`);
 * any other target as it is. Node hands the target over as the client wrote it.
 */
export function originForm(url: string): string {
  if (url.charCodeAt(0) === 0x2f /* / */) return url;
  const authority = ABSOLUTE_FORM.exec(url);
  if (!authority) return url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
