/**
 * A product that is not a lookup (captcha): it owns its routes' handling instead of the
 * lookup pipeline's `prepare` and `lookup`, but gets the same tools: the meter gate for keys,
 * rate and quota, the body reader with its limit, the caller IP, the request id. Listed once in
 * `registry.ts` beside the lookup products; the API's router reads both lists.
 */
import type { IpAddress } from '../lib/ip.js';
import type { MaybePromise } from '../lib/outcome.js';
import type { IssuedKeys } from '../metering/keys.js';
import type { SingleUseStore } from '../metering/single-use.js';
import type { MeterAdmin, QuotaState, Reservation, ResolvedKey, ResolvedPlan, SettingsStore } from '../metering/types.js';
import type { QueryParams } from '../lib/query.js';
import type { ErrorCode, LookupError } from '../errors.js';
import type { ProductId } from './catalog.js';
import type { ProductEngines } from './module.js';
import type { ServiceDoc } from '../openapi/types.js';
import type { OperatorSecret } from '../lib/operator-secret.js';

/** A key the meter knows, active, of this product, with its plan. */
export type ServiceKey = ResolvedKey & { plan: ResolvedPlan };

/** One request as a service route sees it. */
export interface ServiceRequest {
  method: string;
  query: QueryParams;
  /** Request headers, names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Response headers being collected: a route adds its own (CORS). */
  responseHeaders: Record<string, string>;
  requestId: string;
  /** The caller's address (trusted proxies applied), or null when unknown. */
  clientIp(): IpAddress | null;
  /** The host the caller addressed (`host:port` as sent): `Host`, or `X-Forwarded-Host` when a trusted proxy sent the request. */
  ownHost(): string | undefined;
  /**
   * The body as an object: JSON or an HTML form (and multipart/form-data text fields with
   * `multipart`; a file part or a body that does not parse is 400 invalid_request), within the
   * body limit (400 invalid_json, 413, 415). Read once: later calls get the first's.
   */
  body(options?: { multipart?: boolean }): Promise<Record<string, unknown>>;
  /**
   * ApiRequest's `signal`, aborted when the client is gone: an answer made for it is not billed.
   * A function, as the adapters make the signal only when it is read (an AbortController per
   * request cost the captcha challenge 6 µs of its 26).
   */
  clientGone(): AbortSignal | undefined;
}

/**
 * A service route's handler: the answer at once when nothing waits (the API then writes it in
 * the same turn, as a lookup answered at once), else a promise. It may throw its refusal, or
 * return it: the same answer, without a throw and a rejected promise (about 1 µs under load,
 * on a route a client may be refused on request after request, as siteverify's forged proofs).
 */
export type ServiceHandler = (request: ServiceRequest) => MaybePromise<ServiceAnswer | LookupError>;

/** What a service route answers: a JSON text (build it with `successBody`), and a status when not 200. */
export interface ServiceAnswer {
  status?: number;
  body: string;
  /**
   * Every character of `body` is ASCII, by how the route builds it: its length is its byte count,
   * so Content-Length is set without a scan of the body (which also copies a joined text flat
   * once more before it is written).
   */
  ascii?: true;
}

/**
 * The meter, as service routes use it. Store failures reach the route as non-LookupErrors.
 * `resolve` and `admit` answer with a value when the meter knows at once (a cached key, an
 * allowance in memory) and a promise when it must ask the store: `await` only what is pending,
 * as the lookup pipeline does (each `await` is a turn of the microtask queue). They may also
 * throw their refusal at once.
 */
export interface ServiceGate {
  /** A presented key of this product, active: 401 missing_credentials / invalid_api_key. No kind or allowlist check. */
  resolve(token: string | undefined): MaybePromise<ServiceKey>;
  /**
   * Count one request against the rate window of `rateKeyId` (captcha: the site key's for the
   * browser routes, its secret key's for the site's server), and reserve a quota unit of the
   * key's subscription when `reserveQuota`. Sets the limit headers; throws 429
   * rate_limit_exceeded / quota_exceeded.
   */
  admit(
    key: ServiceKey,
    options: { rateKeyId: string; reserveQuota: boolean; needsQuotaLeft?: boolean },
    headers: Record<string, string>,
  ): MaybePromise<{ reservation: Reservation | null; quota: QuotaState | null }>;
  /** Give back a reserved unit (the request failed). Never throws. */
  refund(reservation: Reservation, headers: Record<string, string>): Promise<void>;
  /** Keep a reserved unit billed (the request succeeded): without it the unit goes back when its lease expires. Never throws. */
  commit(reservation: Reservation): void;
}

/**
 * What a service asks of the lookup products: an engine by id, built on first use (the API hands
 * it its `Lookup`). Typed here, not as `Lookup`, because `Lookup` is derived from the registry
 * this module is listed in: importing it would close a cycle through the registry.
 */
export interface ServiceLookup {
  engine<Id extends keyof ProductEngines>(id: Id): ProductEngines[Id];
}

/** What a service is built from, once per API. */
export interface ServiceContext {
  meter: MeterAdmin & SettingsStore;
  gate: ServiceGate;
  /** Consumed single-use ids (nonces, proof ids), shared by every instance on one store. */
  singleUse: SingleUseStore;
  /** The operator secret wrapping keys kept in the store (captcha's signing keys); null when none was given. */
  secret: OperatorSecret | null;
  lookup: ServiceLookup;
  now: () => number;
  onError?: (error: unknown, context: string) => void;
}

export interface ServiceRoute {
  method: 'GET' | 'POST' | 'OPTIONS';
  /** Relative to `/v1/<id>/`; `status` replaces the shared status route. */
  path: string;
  /** The handler's name in what `create` returns. */
  handler: string;
}

/** Static files served beside the API (the captcha widget at `/widget/`). */
export interface ServiceAsset {
  /** Content type to send. */
  contentType: string;
  body: Buffer;
  /** Strong ETag (quoted). */
  etag: string;
  /** Extra headers (a Content-Security-Policy for an HTML page). */
  headers?: Record<string, string>;
}

export interface ServiceAssets {
  /** Path prefix, starting and ending with `/`: `/widget/`. */
  mount: string;
  /** The version in asset URLs (`?v=`): such requests are cached for a year. */
  version(): string;
  /** The file for a name below the mount, or undefined. Loaded on first use. */
  file(name: string): ServiceAsset | undefined;
}

export interface ServiceModule {
  id: ProductId;
  routes: readonly ServiceRoute[];
  /** The code answered for unexpected failures (captcha's table names `server_error`). @default internal_error */
  internalErrorCode?: ErrorCode;
  /** What the OpenAPI document says of each route. */
  doc: ServiceDoc;
  create(context: ServiceContext): Readonly<Record<string, ServiceHandler>>;
  assets?: ServiceAssets;
  /** The pair `serve` creates and prints on first start, when not a plain key pair (captcha: a site key). */
  starterKeys?(meter: MeterAdmin & SettingsStore): Promise<IssuedKeys>;
  /** What `serve` warns of at start about this service's state in the store (captcha: signing keys it cannot unwrap). */
  startWarnings?(meter: SettingsStore, secret: OperatorSecret | null): Promise<string[]>;
}

/** Identity, for type checking: `export default defineService({ id: 'captcha', ... })`. */
export function defineService(module: ServiceModule): ServiceModule {
  return module;
}
