/**
 * The request pipeline: one `handle(request) -> response` that every adapter calls. It matches
 * the route, hands the key and the limits to the meter gate, decodes and validates the input,
 * runs the product's lookup, and builds the envelope and the request log event.
 */
import { withLogger } from './logger.js';
import { checkApiOptions } from './options.js';
import { clientGoneRefusal, isLookupError, LookupError, refusal, type ErrorCode, invalidOption } from '../errors.js';
import { formatIp, type IpAddress } from '../lib/ip.js';
import { checkMs } from '../lib/deadline.js';
import { isPromise, type LookupOutcome, type MaybePromise } from '../lib/outcome.js';
import { parseQuery } from '../lib/query.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import { PRODUCT_MODULES, SERVICE_MODULES, productModule } from '../products/registry.js';
import type { ProductEngine } from '../products/module.js';
import type { ServiceAnswer, ServiceAssets, ServiceHandler, ServiceLookup, ServiceModule } from '../products/service.js';
import { createMemorySingleUseStore } from '../metering/memory/single-use.js';
import { createOperatorSecret, isOperatorSecret } from '../lib/operator-secret.js';
import { bearerToken } from './auth.js';
import { createBatchHandler, DEFAULT_BATCH_DEADLINE_MS, DEFAULT_BATCH_LIMIT } from './batch.js';
import { DEFAULT_BODY_LIMIT, parseBody } from './body.js';
import { etagMatches, isBodiless } from './conditional.js';
import { createClientIpResolver, createOwnHostResolver } from './client-ip.js';
import { refuseRequest } from './client-error.js';
import { baseHeaders, errorBody, newRequestId, successBody } from './envelope.js';
import { decodeInput, splitUrl } from './input.js';
import { createMeterGate, DEFAULT_METER_TIMEOUT_MS, type GatePass, type Headers } from './meter-gate.js';
import type { Reservation } from '../metering/types.js';
import type { RouteInput } from '../products/route.js';
import { createRouter, HEALTH_PATH, type RouteMatch } from './router.js';
import { unlessClientGone } from './client-gone.js';
import { statusExtras, statusResource } from './status.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { createIsoFormatter } from '../lib/iso-time.js';
import type { Api, ApiOptions, ApiRequest, ApiResponse } from './types.js';

const HEALTH_BODY = JSON.stringify({ success: true, status: 'ok' });
/** Stands in for a result whose JSON the engine already made. */
const NO_RESOURCE = {};

/** What one request carries through the pipeline. `headers` collects the response headers. */
interface RequestContext {
  request: ApiRequest;
  /** The request's method, upper case (GET when absent). */
  method: string;
  /** The query string, without `?`. */
  search: string;
  requestId: string;
  /** The caller's address, worked out on first use (allowlists and the request log need it). */
  clientIp: () => IpAddress | null;
  headers: Headers;
}

/**
 * The transport-agnostic API. Order of checks: route (404/405), key (401/403), body
 * (400/413/415) and the product's input checks (400/422), then rate and quota (429) in one
 * atomic meter call, then the lookup. Every authenticated request counts against the
 * per-minute rate (a rate-limited client hears 429 before any input error); only a valid
 * request reserves quota, and only a successful lookup keeps it.
 *
 * @example
 * const api = createApi({ lookup: createLookup(), meter: createSqliteMeter('./seclookup.db') });
 * const res = await api.handle({ method: 'GET', url: '/v1/useragent/status', headers, remoteAddress });
 */
export function createApi(givenOptions: ApiOptions): Api {
  checkApiOptions(givenOptions);
  const options = withObserversGuarded(withLogger(givenOptions));
  const { lookup, meter } = options;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const onMeterError = options.onMeterError ?? 'deny';
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw invalidOption(`bodyLimit must be a positive integer (got ${bodyLimit})`);
  const batchLimit = options.batchLimit ?? DEFAULT_BATCH_LIMIT;
  if (!Number.isSafeInteger(batchLimit) || batchLimit < 1) throw invalidOption(`batchLimit must be a positive integer (got ${batchLimit})`);
  if (onMeterError !== 'deny' && onMeterError !== 'allow') throw invalidOption(`onMeterError must be 'deny' or 'allow' (got ${String(onMeterError)})`);
  const meterTimeoutMs = checkMs(options.meterTimeoutMs ?? DEFAULT_METER_TIMEOUT_MS, 'meterTimeoutMs');
  const clientIpOf = createClientIpResolver(options.trustProxy ?? []);
  const ownHostOf = createOwnHostResolver(options.trustProxy ?? []);
  const match = createRouter(PRODUCT_MODULES, SERVICE_MODULES);
  const gate = createMeterGate({ meter, now, onMeterError, meterTimeoutMs, onError: options.onError });
  const singleUse = options.singleUse ?? createMemorySingleUseStore();
  const secret = options.secret === undefined ? null : isOperatorSecret(options.secret) ? options.secret : createOperatorSecret(options.secret);
  // The OpenAPI document, made on its first request.
  let openApiText: string | undefined;
  const batchDeadlineMs = checkMs(options.batchDeadlineMs ?? DEFAULT_BATCH_DEADLINE_MS, 'batchDeadlineMs');
  const batch = createBatchHandler({ lookup, gate, bodyLimit, batchLimit, deadlineMs: batchDeadlineMs, onError: options.onError });
  // Each service's handlers, built on its first request.
  const services = new Map<ProductId, Readonly<Record<string, ServiceHandler>>>();
  // The same engines, seen through the registry-free type services are written against.
  const serviceLookup: ServiceLookup = { engine: (id) => lookup.engine(id) as never };
  const serviceHandlers = (module: ServiceModule) => {
    let built = services.get(module.id);
    if (!built)
      services.set(
        module.id,
        (built = module.create({ meter, gate: gate.forService(module.id), singleUse, secret, lookup: serviceLookup, now, onError: options.onError })),
      );
    return built;
  };

  /**
   * The request's answer, synchronous when every step answered at once (a warm key, an
   * allowance, a local or cached lookup): no promise, no microtask. `handle` is the same as a
   * promise; the adapters call this.
   */
  function respond(request: ApiRequest): ApiResponse | Promise<ApiResponse> {
    if (!isApiRequest(request)) return malformedRequest(request);
    const started = options.onResponse ? performance.now() : 0;
    const requestId = newRequestId();
    const headers: Headers = baseHeaders(requestId);
    const method = (request.method || 'GET').toUpperCase();
    const [path, search = ''] = splitUrl(request.url);
    const route = match(method, path);
    let resolvedIp: IpAddress | null | undefined;
    const clientIp = () => (resolvedIp === undefined ? (resolvedIp = clientIpOf(request.remoteAddress, request.headers['x-forwarded-for'])) : resolvedIp);
    const context: RequestContext = { request, method, search, requestId, clientIp, headers };
    let answer: ReturnType<typeof dispatch>;
    try {
      answer = dispatch(route, context);
    } catch (error) {
      return failed(error, route, context, started);
    }
    // Closures only for an answer that waits.
    return isPromise(answer)
      ? answer.then(
          (done) => answered(done, route, context, started),
          (error) => failed(error, route, context, started),
        )
      : answered(answer, route, context, started);
  }

  function answered(answer: string | ServiceAnswer | LookupError, route: RouteMatch, context: RequestContext, started: number): ApiResponse {
    if (typeof answer === 'string') return finish(route, context, started, 200, answer, null);
    // A service's refusal, returned rather than thrown (see ServiceHandler).
    if (isLookupError(answer)) return failed(answer, route, context, started);
    if (answer.ascii && !isBodiless(answer.status ?? 200)) context.headers['content-length'] = String(answer.body.length);
    return finish(route, context, started, answer.status ?? 200, answer.body, null);
  }

  function failed(error: unknown, route: RouteMatch, context: RequestContext, started: number): ApiResponse {
    const failure = toLookupError(error, route.kind === 'service' ? SERVICE_BY_ID.get(route.product)?.internalErrorCode : undefined);
    if (!isLookupError(error) || failure.code === 'internal_error') options.onError?.(error, context.requestId);
    if (failure.code === 'method_not_allowed' && route.kind === 'method_not_allowed') context.headers.allow = route.allow.join(', ');
    const body = errorBody(failure.code, failure.message, context.requestId, failure.fields);
    return finish(route, context, started, failure.status, body, failure.code);
  }

  /** The response, and its request line for `onResponse`. */
  function finish(
    route: RouteMatch,
    { method, requestId, clientIp, headers }: RequestContext,
    started: number,
    status: number,
    body: string,
    errorCode: ErrorCode | null,
  ): ApiResponse {
    // HEAD: GET's headers, Content-Length included (RFC 9110 8.6: the GET body's length), no body.
    // A 204 or 304 has no body and no Content-Length (RFC 9110 8.6).
    if (method === 'HEAD' && !isBodiless(status)) headers['content-length'] = String(Buffer.byteLength(body));
    const response: ApiResponse = { status, headers, body: method === 'HEAD' ? '' : body };
    options.onResponse?.({
      time: isoNow(),
      request_id: requestId,
      method,
      route: 'pattern' in route ? route.pattern : 'unmatched',
      product: route.kind === 'health' || route.kind === 'openapi' || route.kind === 'asset' ? null : route.product,
      status,
      error_code: errorCode,
      latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
      client_ip: logIp(clientIp()),
    });
    return response;
  }

  /** Not async itself: the route handlers are, and one promise per request is enough. */
  function dispatch(route: RouteMatch, context: RequestContext): MaybePromise<string | ServiceAnswer | LookupError> {
    switch (route.kind) {
      case 'health':
        return HEALTH_BODY;
      case 'openapi':
        return (openApiText ??= JSON.stringify(buildOpenApiDocument({ batchLimit })));
      case 'not_found':
        throw refusal('not_found', 'no such route; GET /v1/openapi.json lists every route, and GET /v1/<product>/status each product');
      case 'method_not_allowed':
        throw refusal('method_not_allowed', `method not allowed; use ${route.allow.join(' or ')}`);
      case 'status':
        return status(route.product, context);
      case 'lookup':
        return lookupRoute(route, context);
      case 'service':
        return serviceRoute(route, context);
      case 'asset':
        return asset(route, context);
      case 'batch':
        return batch(productModule(route.product)!, context);
    }
  }

  function serviceRoute(
    route: Extract<RouteMatch, { kind: 'service' }>,
    { request, method, search, requestId, clientIp, headers }: RequestContext,
  ): MaybePromise<ServiceAnswer | LookupError> {
    const handler = serviceHandlers(SERVICE_BY_ID.get(route.product)!)[route.handler];
    let body: Promise<Record<string, unknown>> | undefined;
    return handler({
      method,
      query: parseQuery(search),
      headers: request.headers,
      responseHeaders: headers,
      requestId,
      clientIp,
      ownHost: () => ownHostOf(request.remoteAddress, request.headers),
      body: (options) => (body ??= parseBody(request.body, request.headers, bodyLimit, options)),
      clientGone: () => request.signal,
    });
  }

  /** A static file of a service (the captcha widget), with its ETag; `?v=<current version>` URLs are cached for a year. */
  function asset(route: Extract<RouteMatch, { kind: 'asset' }>, { request, search, headers }: RequestContext): ServiceAnswer {
    const file = route.assets.file(route.name);
    if (!file) throw refusal('not_found', 'no such file');
    headers['content-type'] = file.contentType;
    headers.etag = file.etag;
    headers['cache-control'] = parseQuery(search).get('v') === route.assets.version() ? 'public, max-age=31536000, immutable' : 'public, max-age=300';
    Object.assign(headers, file.headers);
    if (etagMatches(request.headers['if-none-match'], file.etag)) return { status: 304, body: '' };
    return { body: file.body.toString('utf8') };
  }

  async function status(product: ProductId, { request, search, requestId, clientIp, headers }: RequestContext): Promise<string> {
    const keyParam = PRODUCTS[product].statusKeyParam;
    const token = bearerToken(request.headers) ?? (keyParam ? (parseQuery(search).get(keyParam) ?? undefined) : undefined);
    // `await` only what is pending, as lookupRoute does.
    const authenticated = gate.authenticate(token, product, { requireSecret: false, lenient: false }, clientIp);
    const pass = isPromise(authenticated) ? await authenticated : authenticated;
    const admitted = gate.admit(pass, product, { reserveQuota: false, lenient: false }, headers);
    const { quota } = isPromise(admitted) ? await admitted : admitted;
    const extras = statusExtras(productModule(product), () => lookup.engine(product as never) as ProductEngine, pass.key);
    return successBody(statusResource(product, pass.key, quota!, extras), { requestId });
  }

  /**
   * A lookup: key, input, rate and quota, the engine, the envelope. Synchronous when each step
   * answers at once; each step that waits continues as a promise.
   */
  function lookupRoute(route: Extract<RouteMatch, { kind: 'lookup' }>, context: RequestContext): MaybePromise<string> {
    const authenticated = gate.authenticate(bearerToken(context.request.headers), route.product, { requireSecret: true, lenient: true }, context.clientIp);
    return isPromise(authenticated) ? authenticated.then((pass) => lookupAs(route, context, pass)) : lookupAs(route, context, authenticated);
  }

  /**
   * Everything the client sent is read and checked before any quota is reserved, so bad input
   * or a slow upload never holds a unit.
   */
  function lookupAs(route: Extract<RouteMatch, { kind: 'lookup' }>, context: RequestContext, pass: GatePass): MaybePromise<string> {
    const { request, search, headers } = context;
    const engine = lookup.engine(route.product as never) as ProductEngine;
    const prepare = (input: RouteInput) =>
      'prepare' in route.route ? route.route.prepare(engine, input, { subscriptionId: pass.key.subscriptionId }) : engine.prepare(...route.route.args(input));
    const rejected = (error: unknown) => rejectInput(error, pass, route.product, headers);
    let query: unknown;
    try {
      const decoded = decodeInput(route.route, request, search, route.rawPathValue, bodyLimit);
      if (isPromise(decoded)) return decoded.then(prepare).then((prepared) => admitAndLookUp(route, context, pass, engine, prepared), rejected);
      query = prepare(decoded);
    } catch (error) {
      return rejected(error);
    }
    return admitAndLookUp(route, context, pass, engine, query);
  }

  /** Bad input still counts against the rate (see MeterGate.countRejected), then it is answered. */
  async function rejectInput(error: unknown, pass: GatePass, product: ProductId, headers: Headers): Promise<never> {
    if (isLookupError(error)) await gate.countRejected(pass, product, headers);
    throw error;
  }

  function admitAndLookUp(
    route: Extract<RouteMatch, { kind: 'lookup' }>,
    context: RequestContext,
    pass: GatePass,
    engine: ProductEngine,
    query: unknown,
  ): MaybePromise<string> {
    const admitted = gate.admit(pass, route.product, { reserveQuota: true, lenient: true }, context.headers);
    return isPromise(admitted)
      ? admitted.then(({ reservation }) => answerLookup(route, context, engine, query, reservation, true))
      : answerLookup(route, context, engine, query, admitted.reservation, false);
  }

  /** The engine's answer in its envelope; the unit is billed when it is answered, else given back. */
  function answerLookup(
    route: Extract<RouteMatch, { kind: 'lookup' }>,
    context: RequestContext,
    engine: ProductEngine,
    query: unknown,
    reservation: Reservation | null,
    admissionWaited: boolean,
  ): MaybePromise<string> {
    let body: string;
    try {
      const lookingUp = 'lookup' in route.route ? route.route.lookup(engine, query) : engine.lookup(query);
      if (isPromise(lookingUp)) return answerLater(route.product, context, lookingUp, reservation);
      body = envelope(route.product, context, lookingUp);
      // While the meter was asked, the client may have left, or the app around the API answered
      // it (a timeout middleware): that answer is not billed. (A request admitted at once is still
      // in the turn it arrived in: nothing can have happened to it.)
      if (reservation && admissionWaited && context.request.signal?.aborted) throw clientGoneRefusal();
    } catch (error) {
      return giveBack(reservation, context.headers, error);
    }
    // An answer made at once is written in this turn: billed now.
    if (reservation) gate.commit(reservation);
    return body;
  }

  async function answerLater(
    product: ProductId,
    context: RequestContext,
    lookingUp: Promise<LookupOutcome<object>>,
    reservation: Reservation | null,
  ): Promise<string> {
    let answered = false;
    // Holding quota for a client that left is not waited for: its lookup is abandoned.
    const signal = reservation ? context.request.signal : undefined;
    try {
      const outcome = signal ? await unlessClientGone(lookingUp, signal) : await lookingUp;
      const body = envelope(product, context, outcome);
      answered = true;
      return body;
    } finally {
      // Billed only when the answer goes to a client still there; else the unit goes back.
      if (reservation && answered && !signal?.aborted) gate.commit(reservation);
      else if (reservation) await gate.refund(reservation, context.headers);
    }
  }

  async function giveBack(reservation: Reservation | null, headers: Headers, error: unknown): Promise<never> {
    if (reservation) await gate.refund(reservation, headers);
    throw error;
  }

  function envelope(product: ProductId, { requestId, headers }: RequestContext, outcome: LookupOutcome<object>): string {
    if (outcome.text) {
      headers['content-type'] = outcome.text.contentType;
      return outcome.text.body;
    }
    const fetchedAt = PRODUCTS[product].hasFetchedAt ? outcome.fetchedAt : undefined;
    // Read `result` only when there is no JSON of it: engines may make it lazily.
    const { json } = outcome;
    return json === undefined
      ? successBody(outcome.result, { requestId, cached: outcome.cached, fetchedAt })
      : successBody(NO_RESOURCE, { requestId, cached: outcome.cached, fetchedAt }, json);
  }

  /** An adapter's mistake (no url, no headers): a 500 in the envelope and a word to `onError`, never a throw. */
  function malformedRequest(request: unknown): ApiResponse {
    options.onError?.(new TypeError(`api.respond needs { method, url, headers, remoteAddress } (got ${describeRequest(request)})`), 'respond');
    return refuseRequest('internal_error', 'unexpected server error; retry with backoff', {}, options.onResponse);
  }

  return {
    // A promise always: the public contract. It does not wait a turn more than `respond`.
    handle: async (request) => respond(request),
    respond,
    assetMounts: ASSET_MOUNTS,
    // Below an asset mount, only the files there: an app's own `/widget/...` routes and static files stay the app's.
    owns: (path) =>
      path === HEALTH_PATH ||
      path.startsWith('/v1/') ||
      SERVICE_ASSETS.some((assets) => path.startsWith(assets.mount) && assets.file(path.slice(assets.mount.length)) !== undefined),
    refuse: (code, message, request) => refuseRequest(code, message, request, options.onResponse),
  };
}

/** The fields every request path reads without checking: a url and a headers object. */
function isApiRequest(request: ApiRequest): boolean {
  return typeof request === 'object' && request !== null && typeof request.url === 'string' && typeof request.headers === 'object' && request.headers !== null;
}

function describeRequest(request: unknown): string {
  if (typeof request !== 'object' || request === null) return String(request);
  const { url, headers } = request as Partial<ApiRequest>;
  return `url ${typeof url}, headers ${headers === null ? 'null' : typeof headers}`;
}

/**
 * `onResponse` and `onError` are observers: a throw in one is not the client's answer (it was
 * a 500, still billed, and `respond` threw). A throw in `onResponse` goes to `onError`; one in
 * `onError` has nowhere left to go and is dropped.
 */
function withObserversGuarded(options: ApiOptions): ApiOptions {
  const { onResponse, onError } = options;
  if (!onResponse && !onError) return options;
  const tellError = (error: unknown, context: string) => {
    try {
      onError?.(error, context);
    } catch {
      // Nowhere left to report it.
    }
  };
  return {
    ...options,
    onError: onError && tellError,
    onResponse:
      onResponse &&
      ((event) => {
        try {
          onResponse(event);
        } catch (error) {
          tellError(error, event.request_id);
        }
      }),
  };
}

const isoTextOf = createIsoFormatter();

/** `new Date().toISOString()`, made once per millisecond: a busy server logs many requests in one. */
function isoNow(): string {
  return isoTextOf(Date.now());
}

/** Caller addresses as logged, per parsed address (the resolver hands back the same object for a repeated peer). */
const loggedIps = new WeakMap<IpAddress, string>();

function logIp(ip: IpAddress | null): string | null {
  if (!ip) return null;
  let text = loggedIps.get(ip);
  if (text === undefined) loggedIps.set(ip, (text = formatIp(ip)));
  return text;
}

function toLookupError(error: unknown, internalCode: ErrorCode = 'internal_error'): LookupError {
  if (isLookupError(error)) return error;
  return new LookupError(internalCode, 'unexpected server error; retry with backoff');
}

const SERVICE_BY_ID: ReadonlyMap<ProductId, ServiceModule> = new Map(SERVICE_MODULES.map((module) => [module.id, module]));
const SERVICE_ASSETS: readonly ServiceAssets[] = SERVICE_MODULES.flatMap((module) => (module.assets ? [module.assets] : []));
const ASSET_MOUNTS: readonly string[] = SERVICE_ASSETS.map((assets) => assets.mount);
