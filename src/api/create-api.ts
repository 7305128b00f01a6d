/**
 * The request pipeline: one `handle(request) -> response` that every adapter calls. It matches
 * the route, hands the key and the limits to the meter gate, decodes and validates the input,
 * runs the product's lookup, and builds the envelope and the request log event.
 */
import { isLookupError, LookupError, type ErrorCode, invalidOption } from '../errors.js';
import { formatIp, type IpAddress } from '../lib/ip.js';
import { checkMs } from '../lib/deadline.js';
import { parseQuery } from '../lib/query.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import { PRODUCT_MODULES, productModule } from '../products/registry.js';
import { bearerToken } from './auth.js';
import { DEFAULT_BODY_LIMIT } from './body.js';
import { createClientIpResolver } from './client-ip.js';
import { refuseRequest } from './client-error.js';
import { baseHeaders, errorBody, newRequestId, successBody } from './envelope.js';
import { decodeInput, splitUrl } from './input.js';
import { createMeterGate, DEFAULT_METER_TIMEOUT_MS, type Headers } from './meter-gate.js';
import { createRouter, HEALTH_PATH, type RouteMatch } from './router.js';
import { statusExtras, statusResource } from './status.js';
import type { Api, ApiOptions, ApiRequest, ApiResponse } from './types.js';

const HEALTH_BODY = JSON.stringify({ success: true, status: 'ok' });
/** Stands in for a result whose JSON the engine already made. */
const NO_RESOURCE = {};

/** What one request carries through the pipeline. `headers` collects the response headers. */
interface RequestContext {
  request: ApiRequest;
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
export function createApi(options: ApiOptions): Api {
  const { lookup, meter } = options;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const onMeterError = options.onMeterError ?? 'deny';
  const now = options.now ?? Date.now;
  if (!lookup || !meter) throw invalidOption('createApi needs { lookup, meter }');
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw invalidOption(`bodyLimit must be a positive integer (got ${bodyLimit})`);
  if (onMeterError !== 'deny' && onMeterError !== 'allow') throw invalidOption(`onMeterError must be 'deny' or 'allow' (got ${String(onMeterError)})`);
  const meterTimeoutMs = checkMs(options.meterTimeoutMs ?? DEFAULT_METER_TIMEOUT_MS, 'meterTimeoutMs');
  const clientIpOf = createClientIpResolver(options.trustProxy ?? []);
  const match = createRouter(PRODUCT_MODULES);
  const gate = createMeterGate({ meter, now, onMeterError, meterTimeoutMs, onError: options.onError });

  async function handle(request: ApiRequest): Promise<ApiResponse> {
    const started = options.onResponse ? performance.now() : 0;
    const requestId = newRequestId();
    const headers: Headers = baseHeaders(requestId);
    const method = (request.method || 'GET').toUpperCase();
    const [path, search = ''] = splitUrl(request.url);
    const route = match(method, path);
    let resolvedIp: IpAddress | null | undefined;
    const clientIp = () => (resolvedIp === undefined ? (resolvedIp = clientIpOf(request.remoteAddress, request.headers['x-forwarded-for'])) : resolvedIp);
    const context: RequestContext = { request, search, requestId, clientIp, headers };

    let status = 200;
    let body: string;
    let errorCode: ErrorCode | null = null;
    try {
      body = await dispatch(route, context);
    } catch (error) {
      const failure = toLookupError(error);
      if (failure.code === 'internal_error') options.onError?.(error, requestId);
      if (failure.code === 'method_not_allowed' && route.kind === 'method_not_allowed') headers.allow = route.allow.join(', ');
      status = failure.status;
      errorCode = failure.code;
      body = errorBody(failure.code, failure.message, requestId);
    }

    const response: ApiResponse = { status, headers, body: method === 'HEAD' ? '' : body };
    options.onResponse?.({
      time: isoNow(),
      request_id: requestId,
      method,
      route: 'pattern' in route ? route.pattern : 'unmatched',
      product: route.kind === 'health' ? null : route.product,
      status,
      error_code: errorCode,
      latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
      client_ip: logIp(clientIp()),
    });
    return response;
  }

  /** Not async itself: the route handlers are, and one promise per request is enough. */
  function dispatch(route: RouteMatch, context: RequestContext): Promise<string> | string {
    switch (route.kind) {
      case 'health':
        return HEALTH_BODY;
      case 'not_found':
        throw new LookupError('not_found', 'no such route; see the README for the routes of each product, and GET /v1/<product>/status');
      case 'method_not_allowed':
        throw new LookupError('method_not_allowed', `method not allowed; use ${route.allow.join(' or ')}`);
      case 'status':
        return status(route.product, context);
      case 'lookup':
        return lookupRoute(route, context);
    }
  }

  async function status(product: ProductId, { request, search, requestId, clientIp, headers }: RequestContext): Promise<string> {
    const keyParam = PRODUCTS[product].statusKeyParam;
    const token = bearerToken(request.headers) ?? (keyParam ? parseQuery(search).get(keyParam) ?? undefined : undefined);
    const pass = await gate.authenticate(token, product, { requireSecret: false, lenient: false }, clientIp);
    const { quota } = await gate.admit(pass, product, false, headers, false);
    const extras = statusExtras(product, productModule(product), () => lookup.engine(product as never), pass.key);
    return successBody(statusResource(product, pass.key, quota!, extras), { requestId });
  }

  async function lookupRoute(route: Extract<RouteMatch, { kind: 'lookup' }>, { request, search, requestId, clientIp, headers }: RequestContext): Promise<string> {
    const { product } = route;
    const module = productModule(product)!;
    const pass = await gate.authenticate(bearerToken(request.headers), product, { requireSecret: true, lenient: true }, clientIp);

    // Everything the client sent is read and checked before any quota is reserved, so bad
    // input or a slow upload never holds a unit.
    const engine = lookup.engine(product as never);
    let query: unknown;
    try {
      const input = await decodeInput(route.route, request, search, route.rawPathValue, bodyLimit);
      query = 'prepare' in route.route ? route.route.prepare(engine, input) : module.prepare(engine, ...route.route.args(input));
    } catch (error) {
      if (isLookupError(error)) await gate.countRejected(pass, product, headers);
      throw error;
    }

    const { reservation } = await gate.admit(pass, product, true, headers, true);
    let billed = false;
    try {
      const outcome = await ('lookup' in route.route ? route.route.lookup(engine, query) : module.lookup(engine, query));
      billed = true;
      if (outcome.text) {
        headers['content-type'] = outcome.text.contentType;
        return outcome.text.body;
      }
      const fetchedAt = PRODUCTS[product].hasFetchedAt ? outcome.fetchedAt : undefined;
      // Read `result` only when there is no JSON of it: engines may make it lazily.
      const { json } = outcome;
      return json === undefined ? successBody(outcome.result, { requestId, cached: outcome.cached, fetchedAt }) : successBody(NO_RESOURCE, { requestId, cached: outcome.cached, fetchedAt }, json);
    } finally {
      if (reservation && !billed) await gate.refund(reservation, headers);
    }
  }

  return {
    handle,
    owns: (path) => path === HEALTH_PATH || path.startsWith('/v1/'),
    refuse: (code, message, request) => refuseRequest(code, message, request, options.onResponse),
  };
}

let isoMs = Number.NaN;
let isoText = '';

/** `new Date().toISOString()`, made once per millisecond: a busy server logs many requests in one. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Caller addresses as logged, per parsed address (the resolver hands back the same object for a repeated peer). */
const loggedIps = new WeakMap<IpAddress, string>();

function logIp(ip: IpAddress | null): string | null {
  if (!ip) return null;
  let text = loggedIps.get(ip);
  if (text === undefined) loggedIps.set(ip, (text = formatIp(ip)));
  return text;
}

function toLookupError(error: unknown): LookupError {
  if (isLookupError(error)) return error;
  return new LookupError('internal_error', 'unexpected server error; retry with backoff');
}
