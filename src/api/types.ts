import type { ErrorCode } from '../errors.js';
import type { Lookup } from '../lookup.js';
import type { RefusedRequest } from './client-error.js';
import type { Meter } from '../metering/types.js';
import type { SingleUseStore } from '../metering/single-use.js';
import type { ProductId } from '../products/catalog.js';
import type { OperatorSecret } from '../lib/operator-secret.js';

/**
 * A request as every adapter hands it to the core: no framework objects, no parsing done.
 */
export interface ApiRequest {
  method: string;
  /** Path and query string exactly as received, still percent-encoded: `/v1/useragent/lookup?ua=...`. */
  url: string;
  /** Header names in lower case (as Node delivers them). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The body, unread: a stream (Node's IncomingMessage is one), bytes or text. When a framework
   * has already parsed it (Express with express.json()), pass `{ parsed: value }`.
   * The core reads it only on routes that take a body, and never more than the body limit.
   */
  body?: RequestBody;
  /** The socket's peer address; the caller IP unless a trusted proxy says otherwise. */
  remoteAddress?: string;
  /**
   * Aborted when the client is gone (its connection closed before the answer was written). A
   * lookup holding quota then gives it back at once, without waiting for its engine, and an
   * answer made for a client already gone is not billed. Without it, every successful lookup
   * is billed. The bundled adapters set it.
   */
  signal?: AbortSignal;
}

export type RequestBody = Uint8Array | string | AsyncIterable<Uint8Array> | { parsed: unknown };

/** What an adapter writes back: status, headers and a ready-to-send JSON text. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One line of the request log. Holds no key, password or other secret input. */
export interface RequestLogEvent {
  time: string;
  request_id: string;
  method: string;
  /** The matched route pattern (`/v1/useragent/lookup/:ua`), never the raw path with its input. */
  route: string;
  product: ProductId | null;
  status: number;
  error_code: string | null;
  latency_ms: number;
  client_ip: string | null;
}

export interface ApiOptions {
  /** The engines to serve (from `createLookup`). */
  lookup: Lookup;
  /** Keys, plans, rate windows and quotas. */
  meter: Meter;
  /**
   * Where captcha challenge nonces and proof ids are consumed, once each. Several instances
   * must share one (`createSqliteSingleUseStore` on the meter's file for processes on one
   * machine). @default an in-process store
   */
  singleUse?: SingleUseStore;
  /**
   * The operator secret (at least 32 bytes; text or bytes) under which the captcha signing keys
   * are wrapped in the meter's settings: every instance on one store needs the same one, and
   * a copy of the store without it signs nothing. Keep it outside the store (a file, the
   * environment). Without it captcha's challenge, verify, managed and siteverify answer 500
   * server_error (reported through `onError`); other routes and products do not need it.
   * @default none
   */
  secret?: string | Uint8Array | OperatorSecret;
  /** Largest request body accepted, in bytes; larger ones get 413 payload_too_large. @default 65536 */
  bodyLimit?: number;
  /**
   * Most inputs one `POST /v1/<product>/batch` may carry; more is 400 invalid_request. A batch
   * body is still bound by `bodyLimit`. @default 100
   */
  batchLimit?: number;
  /**
   * How long one batch may take in all; inputs not answered by then get `lookup_failed` (and are
   * not billed). Each lookup keeps its own deadlines too. @default 8000
   */
  batchDeadlineMs?: number;
  /**
   * CIDRs of reverse proxies whose forwarded headers are believed, one setting for all of
   * them: `X-Forwarded-For` (the caller IP is the right-most address in the chain that is not
   * itself a trusted proxy) and `X-Forwarded-Host` (the API's own origin, for captcha's origin
   * check). From any other peer both are ignored; `Forwarded` (RFC 7239) is never read.
   * @default [] (the socket address and `Host` only)
   */
  trustProxy?: readonly string[];
  /**
   * What to do when the meter store fails (for example the database is unreachable):
   * `'deny'` answers 500 internal_error; `'allow'` serves the lookup unmetered. @default 'deny'
   */
  onMeterError?: 'deny' | 'allow';
  /**
   * Deadline of each meter store call in ms. A store that does not answer in time counts as
   * failed, so `onMeterError` applies to a hung store as to a broken one; a quota unit a late
   * answer reserved is given back. Calls fail between this and 1.25 times this. @default 2000
   */
  meterTimeoutMs?: number;
  /**
   * Called once per answered request, after the response is built. An observer: a throw here
   * goes to `onError` (with the request id) and changes neither the answer nor the bill. @default none
   */
  onResponse?: (event: RequestLogEvent) => void;
  /**
   * Called with unexpected errors (the ones answered as 500 internal_error, and meter store
   * failures), for the operator's log. `context` is a request id or a short label. A throw here
   * is dropped. @default none
   */
  onError?: (error: unknown, context: string) => void;
  /**
   * A pino logger (or anything with pino's `info` and `error`), for an app that has one: each
   * answered request is logged at info with the fields of `serve`'s request line (`request_id`,
   * `method`, `route`, `product`, `status`, `error_code`, `latency_ms`, `client_ip`; the logger
   * adds its own `time`), and each unexpected error at error with `context` and `error`. Called
   * besides `onResponse` and `onError`. @default none
   */
  logger?: ApiLogger;
  /** Clock in ms since the epoch (tests pass a fixed one). @default Date.now */
  now?: () => number;
}

/** The part of a pino logger `createApi({ logger })` uses. */
export interface ApiLogger {
  info(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export interface Api {
  handle(request: ApiRequest): Promise<ApiResponse>;
  /**
   * What `handle` answers, without the promise when every step answered at once (a warm key, a
   * local or cached lookup): the adapters call it to spare each such request a promise and a
   * microtask. Never throws; an error is its envelope, as with `handle`.
   */
  respond?(request: ApiRequest): ApiResponse | Promise<ApiResponse>;
  /** Prefixes of the static files served beside the routes (`/widget/`), for adapters that register routes by pattern. */
  readonly assetMounts: readonly string[];
  /**
   * True when `path` (no query) belongs to this API, so a mounted adapter can pass other paths
   * on: `/healthz`, everything under `/v1/`, and the files under an asset mount (`/widget/api.js`;
   * another path under `/widget/` is the app's).
   */
  owns(path: string): boolean;
  /**
   * The answer to a request the HTTP layer refused before `handle` could see it (malformed
   * bytes, headers too large, an unsupported `Expect`): the error envelope, logged through
   * `onResponse` with route `unmatched`. Adapters call it (see `handleClientErrors`).
   */
  refuse(code: ErrorCode, message: string, request: RefusedRequest): ApiResponse;
}
