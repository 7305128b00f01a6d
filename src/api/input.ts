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

/** `/path?query` split at the first `?`. */
export function splitUrl(url: string): [string, string?] {
  const at = url.indexOf('?');
  return at === -1 ? [url] : [url.slice(0, at), url.slice(at + 1)];
}
