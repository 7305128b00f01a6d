import type { ErrorCode } from '../errors.js';
import type { Lookup, LookupOutcome } from '../lookup.js';
import type { QueryParams } from '../lib/query.js';
import type { ProductId } from './catalog.js';

/** What a lookup route receives, already decoded by the API layer. */
export interface RouteInput {
  query: QueryParams;
  /** The URL-decoded value of the path form (`/lookup/{value}`), when that form was used. */
  pathValue?: string;
  /** The decoded JSON or form body of a POST. */
  body?: Record<string, unknown>;
}

/** One lookup route of a product: which request shape it takes and which engine call it makes. */
export interface LookupRoute {
  method: 'GET' | 'POST';
  /** Below `/v1/<product>/`: `lookup`, or `lookup/:name` for the path form (the rest of the path is the value). */
  path: string;
  /** The product's code for bad input, used when the path value cannot be URL-decoded. */
  inputError: ErrorCode;
  run(lookup: Lookup, input: RouteInput): Promise<LookupOutcome<object>>;
}

/** A product as the API serves it: its lookup routes and the extras on its status resource. */
export interface ProductRoutes {
  product: ProductId;
  routes: LookupRoute[];
}

/** The first non-empty value among several query parameter names (`ua` or `user_agent`). */
export function queryValue(query: QueryParams, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = query.get(name);
    if (value !== null) return value;
  }
  return undefined;
}

/** The first string field among several body field names. */
export function bodyString(body: Record<string, unknown> | undefined, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = body?.[name];
    if (typeof value === 'string') return value;
  }
  return undefined;
}
