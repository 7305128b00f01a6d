import type { ErrorCode } from '../errors.js';
import type { LookupOutcome, MaybePromise } from '../lib/outcome.js';
import type { QueryParams } from '../lib/query.js';

/** What a lookup route receives, already decoded by the API layer. */
export interface RouteInput {
  query: QueryParams;
  /** The URL-decoded value of the path form (`/lookup/{value}`), when that form was used. */
  pathValue?: string;
  /** The decoded JSON or form body of a POST. */
  body?: Record<string, unknown>;
  /** The request headers, names in lower case (pwbreach's range route reads `Add-Padding`). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * One lookup route of a product: the request shape it takes and the engine arguments it
 * reads from it. The API decodes the request, calls `args`, and hands them to the product's
 * `prepare` (validation) and `lookup`.
 */
export interface LookupRoute<Args extends unknown[]> {
  method: 'GET' | 'POST';
  /** Below `/v1/<product>/`: `lookup`, or `lookup/:name` for the path form (the rest of the path is the value). */
  path: string;
  /** The product's code for bad input, used when the path value cannot be URL-decoded. */
  inputError: ErrorCode;
  /** The engine arguments this request carries. Reads only; validation is the engine's. */
  args(input: RouteInput): Args;
}

/**
 * A route beyond the product's lookup, such as pwbreach's `range/:prefix`: it checks its own
 * input and gives its own answer (a JSON result, or a text body through `LookupOutcome.text`),
 * in place of the module's `prepare` and `lookup`. The API treats it as a lookup in every other
 * way: secret key, rate limit, quota (billed on success, refunded on failure), request log.
 */
/** Who sent a request to an extra route: a route that records it (scamrisk's reports) says so. */
export interface RouteCaller {
  subscriptionId: string;
}

export interface ExtraRoute<Engine = unknown, Query = unknown> {
  method: 'GET' | 'POST';
  /** Below `/v1/<product>/`, with at most one trailing `:name` segment: `range/:prefix`. */
  path: string;
  /** The product's code for bad input, used when the path value cannot be URL-decoded. */
  inputError: ErrorCode;
  /**
   * Validation and normalization, as a module's `prepare`: synchronous, free of I/O, throws
   * LookupError. `caller` is who asked: the subscription of the key that authenticated.
   */
  prepare(engine: Engine, input: RouteInput, caller: RouteCaller): Query;
  /** The answer, as a module's `lookup`. */
  lookup(engine: Engine, query: Query): MaybePromise<LookupOutcome<object>>;
}

/**
 * The first non-empty value of a query parameter, under its name or its other name (`ua` or
 * `user_agent`), in the order the query gives them: `?ua=&user_agent=curl/8` reads `curl/8`.
 * Undefined when it is absent or only empty.
 */
export function queryValue(query: QueryParams, name: string, otherName = name): string | undefined {
  return query.getEither(name, otherName) || undefined;
}

/** The first non-empty string field among several body field names. */
export function bodyString(body: Record<string, unknown> | undefined, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = body?.[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * SPEC's two GET forms shared by most products: `/lookup?{param}=` and `/lookup/{value}`.
 * `args` turns the value (empty string when missing) and the query into engine arguments.
 */
export function getLookupRoutes<Args extends unknown[]>(
  param: string,
  inputError: ErrorCode,
  args: (value: string, query: QueryParams) => Args,
): LookupRoute<Args>[] {
  return [
    { method: 'GET', path: 'lookup', inputError, args: ({ query }) => args(queryValue(query, param) ?? '', query) },
    // `/lookup/?ip=...` (a trailing slash) has an empty path value: the query's is read then.
    { method: 'GET', path: `lookup/:${param}`, inputError, args: ({ query, pathValue }) => args(pathValue || (queryValue(query, param) ?? ''), query) },
  ];
}

/** SPEC's two GET forms for the products whose one input is `ip` (geoip, asn, timezone, riskscore). */
export const IP_LOOKUP_ROUTES: readonly LookupRoute<[string]>[] = getLookupRoutes('ip', 'invalid_ip', (ip): [string] => [ip]);
