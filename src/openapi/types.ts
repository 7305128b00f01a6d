/**
 * What a product module says about its HTTP routes for the OpenAPI document (`doc` on
 * ProductModule and ServiceModule). The routes themselves come from the module; this adds what
 * code cannot tell: descriptions, parameter rules, the result schema and the product's codes.
 */
import type { ErrorCode } from '../errors.js';
import type { JsonSchema } from './schema.js';

export interface ParamDoc {
  description: string;
  /** @default a string */
  schema?: JsonSchema;
  /** The query form needs it (on the path form the value is in the path instead). @default false */
  required?: boolean;
}

/** A lookup product's routes. */
export interface ProductDoc {
  /** What the product answers, one or two sentences (the tag's description). */
  summary: string;
  /** Query parameters the GET routes read, by name; the path form (`lookup/:ip`) takes its own from the path. */
  query?: Readonly<Record<string, ParamDoc>>;
  /**
   * Each of the batch route's `inputs`, on a product that has one: the value itself, as a JSON
   * string (never a query parameter's URL form), and its schema when narrower than a string.
   */
  batchInput?: {
    description: string;
    schema?: JsonSchema;
    /** Codes of `errors` an input of a batch cannot get (one of a parameter a batch does not take). */
    notInBatch?: readonly ErrorCode[];
  };
  /** The body of the POST lookup route, as JSON or an HTML form. */
  body?: JsonSchema;
  /** The result's fields (an `obj`), which the envelope's `success`, `request_id`, `cached` and `fetched_at` join. */
  result: JsonSchema;
  /** The product's own codes (SPEC's product-specific table), beside the shared ones every lookup has. */
  errors: readonly ErrorCode[];
  /** Fields the status resource adds for this product. */
  status?: Readonly<Record<string, JsonSchema>>;
  /** Docs of the module's `extraRoutes`, by path (`range/:prefix`). */
  extraRoutes?: Readonly<Record<string, ExtraRouteDoc>>;
}

/** A JSON result (an `obj`), or a body of another content type. */
export type ResultDoc = JsonSchema | { contentType: string; schema: JsonSchema; example?: string };

/** A route beyond the spec (pwbreach's range). */
export interface ExtraRouteDoc {
  summary: string;
  description?: string;
  /** The `:name` segment's value. */
  pathParam?: ParamDoc;
  query?: Readonly<Record<string, ParamDoc>>;
  /** Request headers the route reads. */
  headers?: Readonly<Record<string, ParamDoc>>;
  body?: JsonSchema;
  result: ResultDoc;
  errors: readonly ErrorCode[];
}

/** Who may call a service route. */
export type RouteAuth = 'none' | 'public' | 'secret' | 'public or secret';

/** One route of a service (captcha). */
export interface ServiceRouteDoc {
  summary: string;
  description?: string;
  /** Which key the route takes, and how (`key` says where when not the Bearer header). */
  auth: RouteAuth;
  /** Where else the key may be sent: `the sitekey query parameter`. */
  keyIn?: string;
  /** False for a route that reads its key only from `keyIn`, never from a Bearer header. @default true */
  bearer?: boolean;
  query?: Readonly<Record<string, ParamDoc>>;
  body?: JsonSchema;
  /** False when the body may be left out. @default true */
  bodyRequired?: boolean;
  /** The answers that are not errors, by status; null for an empty body (a 204). */
  answers: Readonly<Record<number, JsonSchema | null>>;
  /** Every error_code the route can answer. */
  errors: readonly ErrorCode[];
  /**
   * The codes of `errors` answered before the route's own work began (reading the body, the
   * key's checks): those answers carry neither limit headers nor CORS headers.
   */
  early?: readonly ErrorCode[];
  /** False for a route that never counts against the rate (a CORS preflight): no limit headers at all. @default true */
  metered?: boolean;
  /**
   * CORS headers: `reflect` (a browser route: Access-Control-Allow-Origin when the Origin is
   * allowed for the site key, and Vary: Origin, on every answer past `early`), or `preflight`
   * (an OPTIONS route: the Access-Control-Allow-* set on its success, Vary: Origin on its
   * refusals past `early`).
   */
  cors?: 'reflect' | 'preflight';
  /** Fields some of its error envelopes carry beside `error_code` (`interactive_required`). */
  errorFields?: Readonly<Record<string, JsonSchema>>;
  /** The route is ours, not the spec's. */
  beyondSpec?: boolean;
}

/** A response header a route sends. */
export interface HeaderDoc {
  description: string;
  /** @default a string */
  schema?: JsonSchema;
  /** Sent on every such answer. @default false */
  required?: boolean;
}

/** A service's static files (the widget). The API adds ETag, Cache-Control and 304 itself (api/create-api.ts). */
export interface AssetsDoc {
  summary: string;
  /** The content types of the files, as sent. */
  contentTypes: readonly string[];
  /** Headers the files carry beside the API's own (ServiceAsset.headers). */
  headers: Readonly<Record<string, HeaderDoc>>;
}

export interface ServiceDoc {
  summary: string;
  /** By `METHOD path`: `GET challenge`. */
  routes: Readonly<Record<string, ServiceRouteDoc>>;
  /** The service's static files (the widget), when it has them. */
  assets?: AssetsDoc;
}
