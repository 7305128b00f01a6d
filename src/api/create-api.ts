import { isLookupError, LookupError, type ErrorCode } from '../errors.js';
import { formatIp, type IpAddress } from '../lib/ip.js';
import { quotaPeriodResetAt } from '../metering/calendar.js';
import type { ConsumeOutcome, QuotaState, RateState, Reservation } from '../metering/types.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import type { ProductRoutes } from '../products/route.js';
import { userAgentRoutes } from '../products/useragent/route.js';
import { webhookIpRoutes } from '../products/webhookip/route.js';
import { createAuthenticator, bearerToken, hasKeyShape, type AuthenticatedKey } from './auth.js';
import { DEFAULT_BODY_LIMIT, parseBody } from './body.js';
import { createClientIpResolver } from './client-ip.js';
import { parseQuery } from '../lib/query.js';
import { errorBody, newRequestId, successBody } from './envelope.js';
import { createRouter, HEALTH_PATH, type RouteMatch } from './router.js';
import { statusResource } from './status.js';
import type { Api, ApiOptions, ApiRequest, ApiResponse } from './types.js';

/** The products whose lookup routes are built. Others answer only their status route. */
export const BUILT_PRODUCTS: readonly ProductRoutes[] = [userAgentRoutes, webhookIpRoutes];

const HEALTH_BODY = JSON.stringify({ success: true, status: 'ok' });

/** Thrown inside the pipeline when the meter store fails and the policy is to deny. */
class MeterFailure extends Error {}

/**
 * What a failed meter call throws on: the client's own LookupError (a bad key) as it is,
 * anything else (the store failed) as a MeterFailure, answered 500. Status routes always
 * need the store; lookup routes first ask `allowedThrough`.
 */
function meterFailure(error: unknown): Error {
  return isLookupError(error) ? error : new MeterFailure('meter store failed', { cause: error });
}

/** What one request carries through the pipeline. `headers` collects the response headers. */
interface RequestContext {
  request: ApiRequest;
  /** The query string, without `?`. */
  search: string;
  requestId: string;
  /** The caller's address, worked out on first use (allowlists and the request log need it). */
  clientIp: () => IpAddress | null;
  headers: Record<string, string>;
}

/**
 * The transport-agnostic API: one `handle(request) -> response` that every adapter calls.
 * Order of checks: route (404/405), key (401/403), rate and quota (429), body (400/413/415),
 * input (the product's 400/422), lookup. Every authenticated request counts against the
 * per-minute rate; only a successful lookup consumes monthly quota.
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
  if (!lookup || !meter) throw new TypeError('createApi needs { lookup, meter }');
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 1) throw new TypeError(`bodyLimit must be a positive integer (got ${bodyLimit})`);
  if (onMeterError !== 'deny' && onMeterError !== 'allow') throw new TypeError(`onMeterError must be 'deny' or 'allow' (got ${String(onMeterError)})`);
  const clientIpOf = createClientIpResolver(options.trustProxy ?? []);
  const match = createRouter(BUILT_PRODUCTS);
  const auth = createAuthenticator(meter);

  async function handle(request: ApiRequest): Promise<ApiResponse> {
    const started = options.onResponse ? performance.now() : 0;
    const requestId = newRequestId();
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-request-id': requestId,
    };
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
      time: new Date().toISOString(),
      request_id: requestId,
      method,
      route: 'pattern' in route ? route.pattern : 'unmatched',
      product: route.kind === 'health' ? null : route.product,
      status,
      error_code: errorCode,
      latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
      client_ip: formatClientIp(clientIp()),
    });
    return response;
  }

  /** Not async itself: the route handlers are, and one promise per request is enough. */
  function dispatch(route: RouteMatch, context: RequestContext): Promise<string> | string {
    switch (route.kind) {
      case 'health':
        return HEALTH_BODY;
      case 'not_found':
        throw new LookupError('not_found', 'no such route; see /v1/<product>/status and /v1/<product>/lookup');
      case 'method_not_allowed':
        throw new LookupError('method_not_allowed', `method not allowed; use ${route.allow.join(' or ')}`);
      case 'status':
        return status(route.product, context);
      case 'lookup':
        return lookupRoute(route, context);
    }
  }

  async function status(product: ProductId, { request, search, requestId, clientIp, headers }: RequestContext): Promise<string> {
    // The captcha status route also takes the site key as ?sitekey= (SPEC: captcha GET status).
    const token = bearerToken(request.headers) ?? (product === 'captcha' ? parseQuery(search).get('sitekey') ?? undefined : undefined);
    let key: AuthenticatedKey;
    let outcome: ConsumeOutcome;
    try {
      key = await auth.resolve(token, product);
    } catch (error) {
      throw meterFailure(error);
    }
    auth.authorize(key, false, clientIp);
    try {
      outcome = await consume(key, product, false);
    } catch (error) {
      throw meterFailure(error);
    }
    setLimitHeaders(headers, outcome);
    rejectIfLimited(outcome, headers);
    return successBody(statusResource(product, key, outcome.quota), { requestId });
  }

  async function lookupRoute(
    route: Extract<RouteMatch, { kind: 'lookup' }>,
    { request, search, requestId, clientIp, headers }: RequestContext,
  ): Promise<string> {
    const token = bearerToken(request.headers);
    let key: AuthenticatedKey;
    let outcome: ConsumeOutcome | null;
    try {
      key = await auth.resolve(token, route.product);
    } catch (error) {
      if (!allowedThrough(error)) throw meterFailure(error);
      key = unverifiedKey(token, route.product);
    }
    auth.authorize(key, true, clientIp);
    try {
      outcome = await consume(key, route.product, true);
    } catch (error) {
      if (!allowedThrough(error)) throw meterFailure(error);
      outcome = null;
    }
    if (outcome) {
      setLimitHeaders(headers, outcome);
      rejectIfLimited(outcome, headers);
    }
    const reservation = outcome?.allowed ? outcome.reservation : null;
    let billed = false;
    try {
      const input = {
        query: parseQuery(search),
        pathValue: route.rawPathValue === undefined ? undefined : decodePathValue(route.rawPathValue, route.route.inputError),
        body: route.route.method === 'POST' ? await parseBody(request.body, request.headers, bodyLimit) : undefined,
      };
      const result = await route.route.run(lookup, input);
      billed = true;
      const fetchedAt = PRODUCTS[route.product].hasFetchedAt ? result.fetchedAt : undefined;
      return successBody(result.result, { requestId, cached: result.cached, fetchedAt }, result.json);
    } finally {
      if (reservation && !billed) await refund(reservation, headers);
    }
  }

  function consume(key: AuthenticatedKey, product: ProductId, reserveQuota: boolean): Promise<ConsumeOutcome> {
    return meter.consume({
      keyId: key.id,
      subscriptionId: key.subscriptionId,
      product,
      rateLimitPerMinute: key.plan.rateLimitPerMinute,
      monthlyQuota: key.plan.monthlyQuota,
      reserveQuota,
      now: now(),
    });
  }

  /** A reservation is billed as made; a lookup that did not succeed gives it back. */
  async function refund(reservation: Reservation, headers: Record<string, string>): Promise<void> {
    try {
      await meter.refund(reservation);
      const remaining = headers['x-quota-remaining'];
      if (remaining !== undefined && remaining !== 'unlimited') headers['x-quota-remaining'] = String(Number(remaining) + 1);
    } catch (error) {
      // The answer is already decided; a failed refund must not turn it into an error.
      options.onError?.(error, 'meter refund');
    }
  }

  /**
   * The store-failure policy for a lookup route's meter call: true when the store failed and
   * `allow` lets the lookup go on unmetered. A LookupError (a bad key) is never a store failure.
   */
  function allowedThrough(error: unknown): boolean {
    if (isLookupError(error) || onMeterError !== 'allow') return false;
    options.onError?.(error, 'meter (allowed through)');
    return true;
  }

  function rejectIfLimited(outcome: ConsumeOutcome, headers: Record<string, string>): void {
    if (outcome.allowed) return;
    const nowSeconds = Math.floor(now() / 1000);
    const resetAt = outcome.reason === 'rate_limit_exceeded' ? outcome.rate.resetAt : quotaPeriodResetAt(now());
    headers['retry-after'] = String(Math.max(1, resetAt - nowSeconds));
    throw new LookupError(
      outcome.reason,
      outcome.reason === 'rate_limit_exceeded' ? 'per-minute rate limit exceeded; retry after the Retry-After seconds' : 'monthly quota exhausted',
    );
  }

  return {
    handle,
    owns: (path) => path === HEALTH_PATH || path.startsWith('/v1/'),
  };
}

/**
 * With `onMeterError: 'allow'` and the store down, a key can only be checked for its shape:
 * the request is served as if from an active key of this product with no limits.
 */
function unverifiedKey(token: string | undefined, product: ProductId): AuthenticatedKey {
  if (!token) throw new LookupError('missing_credentials', 'no API key: send Authorization: Bearer <key>');
  const secret = hasKeyShape(token, product, 'secret');
  if (!secret && !hasKeyShape(token, product, 'public')) throw new LookupError('invalid_api_key', 'the API key is unknown, inactive or revoked');
  return {
    id: 'unverified',
    subscriptionId: 'unverified',
    product,
    kind: secret ? 'secret' : 'public',
    status: 'active',
    ipAllow: [],
    plan: { slug: 'unverified', rateLimitPerMinute: Number.MAX_SAFE_INTEGER, monthlyQuota: null },
  };
}

function setLimitHeaders(headers: Record<string, string>, outcome: { rate: RateState; quota: QuotaState }): void {
  headers['x-ratelimit-limit'] = String(outcome.rate.limit);
  headers['x-ratelimit-remaining'] = String(outcome.rate.remaining);
  headers['x-ratelimit-reset'] = String(outcome.rate.resetAt);
  headers['x-quota-limit'] = outcome.quota.limit === null ? 'unlimited' : String(outcome.quota.limit);
  headers['x-quota-remaining'] = outcome.quota.remaining === null ? 'unlimited' : String(outcome.quota.remaining);
  headers['x-quota-period'] = outcome.quota.period;
}

function formatClientIp(ip: IpAddress | null): string | null {
  return ip ? formatIp(ip) : null;
}

function splitUrl(url: string): [string, string?] {
  const at = url.indexOf('?');
  return at === -1 ? [url] : [url.slice(0, at), url.slice(at + 1)];
}

function decodePathValue(raw: string, inputError: ErrorCode): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new LookupError(inputError, 'the path value is not valid percent-encoding');
  }
}

function toLookupError(error: unknown): LookupError {
  if (isLookupError(error)) return error;
  return new LookupError('internal_error', 'unexpected server error; retry with backoff');
}

