/**
 * `seclookup/client`: the HTTP API of a seclookup service as the in-process `Lookup`'s calls.
 * One method per built product, with the same name, arguments and result type as
 * `createLookup()`'s, so code can move between in-process and remote; errors are the same
 * `LookupError`, carrying the service's `error_code`, HTTP status and `request_id`.
 *
 * Runs wherever `fetch` does: it imports no engine, no server code and no Node module, only
 * types, the product descriptors, the LookupError class and the engines' argument type checks
 * (args.ts), so that a call refuses what the in-process one refuses.
 */
import { ERROR_STATUS, invalidOption, LookupError, quoteInput, type ErrorCode } from '../errors.js';
import type { LookupCalls, LookupResult } from '../lookup.js';
import type { ProductId } from '../products/catalog.js';
import type { BuiltProductId } from '../products/registry.js';
import { batchInputs, typeName } from './args.js';
import { BATCH_INPUTS, CALL_GROUPS, PRODUCT_ID_SET, REQUESTS, type BatchProductId, type ProductCallGroups, type ProductRequest } from './requests.js';
import { attemptOnce, parseFetchedAt } from './answers.js';
import { backoffDelay, CallScope, CLIENT_DEFAULTS, type RetryKind } from './retry.js';

export { LookupError, isLookupError, ERROR_STATUS, type ErrorCode } from '../errors.js';
export type { LookupArgs, LookupCalls, LookupResult } from '../lookup.js';
export type { BuiltProductId } from '../products/registry.js';
export { CLIENT_DEFAULTS } from './retry.js';
export type { BatchProductId } from './requests.js';

/**
 * A product's secret key (captcha: the site's `tf_sec_` key), from a map or a function (which may
 * look it up asynchronously). What the function throws or rejects with is the call's rejection,
 * unchanged: it is the caller's own error, not a LookupError.
 */
export type ClientKeys = Readonly<Partial<Record<ProductId, string>>> | ((product: ProductId) => string | undefined | Promise<string | undefined>);

/** Settings that `client.with(...)` can change for the calls made through it. */
export interface CallOptions {
  /**
   * Deadline of one call in ms, every attempt and every wait between them included. `Infinity`
   * for none. @default 10000
   */
  timeoutMs?: number;
  /** Retries after the first attempt, for transient errors and rate limits together. @default 3 */
  retries?: number;
  /**
   * Aborts the call at once, also while it waits between attempts: it rejects with the signal's
   * `reason`. Combined with the client's `signal`, and with the signal of every `with(...)`
   * the client was made from.
   */
  signal?: AbortSignal;
}

export interface ClientOptions extends CallOptions {
  /**
   * The service's root URL, where `/v1/<product>/...` is found: `http://127.0.0.1:8080`, or the
   * prefix the API is mounted under. A trailing `/v1` is dropped (`http://host/v1` means the root).
   * No query string, fragment, user name or password.
   */
  baseUrl: string | URL;
  /** The secret key of each product called: `{ useragent: 'ua_sec_...', geoip: 'geo_sec_...' }`, or `(product) => key`. */
  keys: ClientKeys;
  /**
   * Exponential backoff with full jitter before retrying a transient error: retry n waits a
   * random time in [0, min(capMs, baseMs * 2^(n-1))). @default { baseMs: 250, capMs: 5000 }
   */
  backoff?: { baseMs?: number; capMs?: number };
  /** The fetch to use (a proxy agent, a test double). @default globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * Told before each retry: which product, which attempt failed and why, and how long the client
   * waits. What it throws (or an async one rejects with) is ignored: a failing logger fails no call.
   */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  product: ProductId;
  /** The attempt that failed: 1 for the first. */
  attempt: number;
  /**
   * `transient`: a 500, 502, 503, 504, 408, a network error or an answer cut short (a batch is
   * retried after one only when nothing can have been billed); `rate_limit`: a 429 `rate_limit_exceeded`.
   */
  reason: Exclude<RetryKind, 'never'>;
  /** The wait before the next attempt: the backoff's, or the `Retry-After` seconds (a 429's; a 503's when longer than the backoff). */
  delayMs: number;
  /** The failure, as the call would have thrown it. */
  error: LookupError;
}

/** A remote call's answer: the result and the envelope fields the service sent with it. */
export interface RemoteOutcome<Result> {
  result: Result;
  /** True when the service answered from its result cache (SPEC: `cached`). */
  cached: boolean;
  /** When the data was retrieved (SPEC: `fetched_at`), on the products that carry it. */
  fetchedAt?: Date;
  /** The answer's `request_id`, as the service logged it. */
  requestId: string;
}

/** The product calls resolving with `{ result, cached, fetchedAt?, requestId }`. */
export type RemoteDetailedCalls = { [Id in BuiltProductId]: (...args: Parameters<LookupCalls[Id]>) => Promise<RemoteOutcome<LookupResult<Id>>> };

/**
 * One input's answer in a batch, in the order of the inputs: its result (as `detailed` gives
 * it, without `requestId`), or the LookupError a single call would have thrown for it (its
 * `requestId` is the batch's).
 */
export type BatchItem<Result> = { success: true; result: Result; cached: boolean; fetchedAt?: Date } | { success: false; error: LookupError };

/**
 * `client.batch.<product>(inputs)`: one `POST /v1/<product>/batch` (retried and bounded as a
 * call, but never after an attempt the service may have answered and billed: a connection lost
 * mid-answer, a proxy's 502), one item per input. The call itself throws only when the whole
 * batch is refused (429 rate or quota, 400 for a bad batch, 401, ...) or fails, or its answer
 * has not one result per input (`lookup_failed`, not retried).
 */
export type RemoteBatchCalls = { [Id in BatchProductId]: (inputs: readonly string[]) => Promise<BatchItem<LookupResult<Id>>[]> };

/** SPEC's status resource: the key's plan and quota, plus the product's own fields. */
export interface KeyStatus {
  status: string;
  product: ProductId;
  plan: string;
  rate_limit_per_minute: number;
  /** -1 when unlimited. */
  monthly_quota: number;
  quota_unlimited: boolean;
  /** -1 when unlimited. */
  quota_remaining: number;
  /** YYYY-MM. */
  quota_period: string;
  /** emailval, riskscore, emailauth, geoip, asn, dnsbl, whois. */
  database_records?: number;
  /** scamrisk. */
  supported_types?: string[];
  /** captcha's own fields (`domains_configured`, `domain_count`, `ip_restrictions`). */
  [field: string]: unknown;
}

export type { CaptchaUsage, SiteverifyResult } from '../products/captcha/client-types.js';

/** The captcha routes a site's server calls, with the site's secret key (`keys.captcha`): from captcha's descriptor. */
export type CaptchaCalls = ProductCallGroups['captcha'];

export interface SeclookupClient extends LookupCalls, ProductCallGroups {
  readonly detailed: RemoteDetailedCalls;
  /** Many inputs of a one-input product in one request: `await client.batch.geoip(['8.8.8.8', '1.1.1.1'])`. */
  readonly batch: RemoteBatchCalls;
  /** A product's status resource for its key (`GET /v1/<product>/status`): plan, limits, quota left. */
  status(product: ProductId): Promise<KeyStatus>;
  /**
   * The same client with other call settings (a per-call `signal`, a longer `timeoutMs` for a
   * batch job that may wait out a rate limit): `await client.with({ signal }).geoip(ip)`.
   */
  with(options: CallOptions): SeclookupClient;
}

interface Settings {
  root: string;
  keys: ClientKeys;
  timeoutMs: number;
  retries: number;
  baseMs: number;
  capMs: number;
  fetch: typeof fetch;
  signals: readonly AbortSignal[];
  onRetry?: (event: RetryEvent) => void;
}

/**
 * A client for a seclookup service.
 *
 * @example
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8080', keys: { geoip: process.env.GEOIP_KEY } });
 * const { country } = await client.geoip('8.8.8.8');
 */
export function createClient(options: ClientOptions): SeclookupClient {
  // Every option is checked here, so that a mistake throws now rather than at a call, deep inside.
  if (!isPlainObject(options)) throw invalidOption(`createClient: options must be an object { baseUrl, keys, ... } (got ${shown(options)})`);
  const { keys, backoff, fetch: fetchOption, onRetry } = options;
  if (typeof keys !== 'function' && !isPlainObject(keys)) {
    throw invalidOption('createClient: keys must map product ids to secret keys, or be a function (product) => key');
  }
  if (backoff !== undefined && !isPlainObject(backoff))
    throw invalidOption(`createClient: backoff must be an object { baseMs?, capMs? } (got ${shown(backoff)})`);
  if (fetchOption !== undefined && typeof fetchOption !== 'function') throw invalidOption(`createClient: fetch must be a function (got ${shown(fetchOption)})`);
  const fetchFn = fetchOption ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw invalidOption('createClient: this runtime has no fetch; pass options.fetch');
  if (onRetry !== undefined && typeof onRetry !== 'function') throw invalidOption(`createClient: onRetry must be a function (got ${shown(onRetry)})`);
  const settings: Settings = {
    root: rootUrl(options.baseUrl),
    keys,
    timeoutMs: CLIENT_DEFAULTS.timeoutMs,
    retries: CLIENT_DEFAULTS.retries,
    baseMs: checkMs(backoff?.baseMs ?? CLIENT_DEFAULTS.backoffBaseMs, 'backoff.baseMs'),
    capMs: checkMs(backoff?.capMs ?? CLIENT_DEFAULTS.backoffCapMs, 'backoff.capMs'),
    fetch: fetchFn,
    signals: [],
    onRetry,
  };
  return build(withCallOptions(settings, options, 'createClient'));
}

function build(settings: Settings): SeclookupClient {
  const calls: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const detailed: Record<string, (...args: unknown[]) => Promise<RemoteOutcome<unknown>>> = {};
  for (const id of Object.keys(REQUESTS) as BuiltProductId[]) {
    const toRequest = REQUESTS[id] as (...args: unknown[]) => ProductRequest;
    detailed[id] = async (...args) => call(settings, id, requestOf(id, toRequest, args));
    calls[id] = async (...args) => (await detailed[id](...args)).result;
  }
  const batch: Record<string, (inputs: readonly string[]) => Promise<BatchItem<unknown>[]>> = {};
  for (const id of Object.keys(BATCH_INPUTS) as BatchProductId[]) {
    batch[id] = async (inputs) => {
      const sent = batchInputs(inputs, BATCH_INPUTS[id]);
      return batchItems(await call(settings, id, { method: 'POST', path: 'batch', body: { inputs: sent } }, true), sent.length);
    };
  }
  const result = async <T>(product: ProductId, request: ProductRequest) => (await call(settings, product, request)).result as T;
  // A product's own calls (captcha's siteverify and usage), from its descriptor.
  const groups = Object.fromEntries(
    [...CALL_GROUPS].map(([id, group]) => [
      id,
      Object.fromEntries(
        Object.entries(group).map(([name, request]) => [
          name,
          async (...args: unknown[]) => result(id as ProductId, requestOf(`${id}.${name}`, request, args)),
        ]),
      ),
    ]),
  );
  const status = async (product: ProductId) => {
    if (!PRODUCT_ID_SET.has(product)) throw new LookupError('invalid_request', `status: ${shown(product)} is not a product id`);
    return result<KeyStatus>(product, { method: 'GET', path: 'status' });
  };
  return {
    ...calls,
    detailed,
    batch,
    status,
    ...groups,
    with: (options: CallOptions) => {
      if (!isPlainObject(options)) throw invalidOption(`client.with: options must be an object { signal?, timeoutMs?, retries? } (got ${shown(options)})`);
      return build(withCallOptions(settings, options, 'client.with'));
    },
  } as unknown as SeclookupClient;
}

function withCallOptions(settings: Settings, options: CallOptions, where: string): Settings {
  const next = { ...settings };
  const { timeoutMs, retries, signal } = options;
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0))
      throw invalidOption(`${where}: timeoutMs must be a positive number of ms or Infinity (got ${shown(timeoutMs)})`);
    next.timeoutMs = timeoutMs;
  }
  if (retries !== undefined) {
    if (!Number.isSafeInteger(retries) || retries < 0) throw invalidOption(`${where}: retries must be a whole number >= 0 (got ${shown(retries)})`);
    next.retries = retries;
  }
  if (signal !== undefined) {
    if (!isAbortSignal(signal)) throw invalidOption(`${where}: signal must be an AbortSignal (got ${shown(signal)})`);
    next.signals = [...settings.signals, signal];
  }
  return next;
}

function checkMs(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw invalidOption(`createClient: ${name} must be a number of ms >= 0 (got ${shown(value)})`);
  return value;
}

const ignore = () => {};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What CallScope uses of a signal (a polyfill's will do). */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false;
  const signal = value as AbortSignal;
  return typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function' && typeof signal.removeEventListener === 'function';
}

/** A value for a message: numbers as they are, strings quoted, anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return quoteInput(value);
  return typeName(value);
}

/** A call's request from its arguments, by `sendable`'s rule. */
function requestOf(what: string, toRequest: (...args: never[]) => ProductRequest, args: unknown[]): ProductRequest {
  return sendable(what, () => toRequest(...(args as never[])));
}

/**
 * `make()`: a call's request, or the text of its URL or body. What the arguments' own checks
 * (args.ts) let through and still cannot be sent (a value JSON cannot hold) is a LookupError
 * `invalid_request`, thrown before any request, like every other failure of a call.
 */
function sendable<T>(what: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof LookupError) throw error;
    throw new LookupError('invalid_request', `${what}: the arguments cannot be sent (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
}

function rootUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' && !(baseUrl instanceof URL))
    throw invalidOption(`createClient: baseUrl must be a URL string or a URL (got ${shown(baseUrl)})`);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw invalidOption(`createClient: baseUrl must be an absolute http(s) URL (got ${JSON.stringify(String(baseUrl))})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidOption(`createClient: baseUrl must be http or https (got ${url.protocol})`);
  if (url.search || url.hash) throw invalidOption('createClient: baseUrl must have no query string or fragment');
  // fetch refuses a URL holding them, so they would be dropped: refused instead, and not shown.
  if (url.username || url.password)
    throw invalidOption(
      'createClient: baseUrl must hold no user name or password (the key is sent as a Bearer header; give a proxy its credentials through options.fetch)',
    );
  // `http://host/v1` is a natural guess for an API whose routes start with /v1: the root is meant.
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

/**
 * One call: its attempts, retried, waited out and bounded (retry.ts). `once` (a batch): an attempt
 * whose outcome is unknown (answers.ts) is not retried, since the service may have billed each of
 * its inputs; a single lookup's retry can cost one unit at most, and is made.
 */
async function call(settings: Settings, product: ProductId, request: ProductRequest, once = false): Promise<RemoteOutcome<object>> {
  const url = sendable(product, () => requestUrl(settings.root, product, request));
  const scope = new CallScope(settings.signals, settings.timeoutMs, `${request.method} ${settings.root}/v1/${product}/${request.path}`);
  try {
    const given = await scope.race(Promise.resolve(typeof settings.keys === 'function' ? settings.keys(product) : settings.keys[product]));
    // White space around a key (a line break read with it from a file) is dropped, wherever it
    // goes: a header drops it anyway (and the service trims a Bearer key), a body field would not.
    const key = typeof given === 'string' ? given.trim() : given;
    if (typeof key !== 'string' || key === '')
      throw new LookupError('missing_credentials', `no key for ${product}: pass it in createClient({ keys: { ${product}: '...' } })`);
    // The key goes as Bearer, or in the body field a route reads it from (captcha's siteverify).
    const body = request.keyIn ? { ...request.body, [request.keyIn]: key } : request.body;
    const init: RequestInit = {
      method: request.method,
      headers: headersFor(product, request.keyIn ? undefined : key, body !== undefined),
      body: body ? sendable(product, () => JSON.stringify(body)) : undefined,
      signal: scope.signal,
      // Never followed: a redirect would carry the key to another URL, and turn a POST into a GET.
      redirect: 'manual',
    };
    for (let attempt = 1; ; attempt++) {
      const answer = await attemptOnce(settings.fetch, url, init, scope);
      if (answer.ok) return answer.outcome;
      const { error, retry } = answer;
      if (retry === 'never') throw error;
      if (once && answer.outcomeUnknown) throw notRetried(error);
      if (attempt > settings.retries) throw error;
      const delayMs = retryDelay(answer.waitMs, retry, error.status, backoffDelay(attempt, settings.baseMs, settings.capMs));
      // A wait that would outlast the deadline cannot end in an answer: fail now, with the reason.
      if (delayMs >= scope.remaining()) throw error;
      tell(settings.onRetry, { product, attempt, reason: retry, delayMs, error });
      await scope.sleep(delayMs);
    }
  } finally {
    scope.close();
  }
}

/**
 * How long to wait before the next attempt. After 429 the server's Retry-After is the wait. A
 * 503's Retry-After (a proxy or load balancer saying when the service is back, RFC 9110 10.2.3)
 * is the least wait: retrying sooner only meets the same 503. Otherwise, the backoff's.
 */
function retryDelay(retryAfterMs: number | undefined, retry: RetryKind, status: number | undefined, backoffMs: number): number {
  if (retryAfterMs === undefined) return backoffMs;
  if (retry === 'rate_limit') return retryAfterMs;
  return status === 503 ? Math.max(retryAfterMs, backoffMs) : backoffMs;
}

/**
 * The request's headers. A key a header cannot carry (a character beyond Latin-1, such as a
 * pasted `…`, or a line break) would make every fetch throw before sending anything: it is
 * refused once, as the service refuses a wrong key, and never shown.
 */
function headersFor(product: ProductId, bearer: string | undefined, json: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    accept: 'application/json',
    ...(json ? { 'content-type': 'application/json' } : {}),
  };
  try {
    if (typeof Headers === 'function') new Headers(headers);
  } catch {
    throw new LookupError(
      'invalid_api_key',
      `the key for ${product} cannot be sent in an HTTP header (it holds a line break or a character beyond Latin-1): check how it was copied`,
    );
  }
  return headers;
}

/** A batch's error after an unknown outcome, saying why it was not retried. */
function notRetried(error: LookupError): LookupError {
  const message = `${error.message} (not retried: the service may have answered the batch, and billed it)`;
  return new LookupError(error.code, message, { cause: error.cause, status: error.status, requestId: error.requestId, retryAfter: error.retryAfter });
}

/** `onRetry`, whose failure (a logger's) must not fail the call: what it throws or rejects with is ignored. */
function tell(onRetry: Settings['onRetry'], event: RetryEvent): void {
  try {
    const returned: unknown = onRetry?.(event);
    if (returned instanceof Promise) returned.catch(ignore);
  } catch {
    // ignored, as documented
  }
}

function requestUrl(root: string, product: ProductId, request: ProductRequest): string {
  let url = `${root}/v1/${product}/${request.path}`;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) params.append(name, value);
  const search = params.toString();
  if (search) url += `?${search}`;
  return url;
}

/**
 * A batch answer's `results`, as items: each a single lookup's envelope without `request_id`.
 * Item i answers input i, so results of another count (a proxy's rewrite, another server
 * version) cannot be paired with the inputs: the batch fails, 502, and is not retried (it was
 * answered, so billed).
 */
function batchItems({ result, requestId }: RemoteOutcome<object>, inputCount: number): BatchItem<unknown>[] {
  const { results } = result as { results?: unknown };
  if (!Array.isArray(results)) throw new LookupError('lookup_failed', 'the batch answer has no results array', { requestId });
  if (results.length !== inputCount) {
    const message = `the batch answer has ${results.length} results for ${inputCount} inputs: they cannot be paired with the inputs`;
    throw new LookupError('lookup_failed', message, { requestId });
  }
  return results.map((item: Record<string, unknown>): BatchItem<unknown> => {
    if (item?.success === true) {
      const { success: _success, cached, fetched_at: fetchedAt, ...fields } = item;
      const ok: BatchItem<unknown> = { success: true, result: fields, cached: cached === true };
      const date = typeof fetchedAt === 'string' ? parseFetchedAt(fetchedAt) : undefined;
      if (date) ok.fetchedAt = date;
      return ok;
    }
    const { success: _success, error: message, error_code: code, ...fields } = item ?? {};
    const errorCode = (typeof code === 'string' ? code : 'lookup_failed') as ErrorCode;
    const status = itemStatus(fields.status, errorCode);
    if (status === fields.status) delete fields.status;
    const options = { requestId, status, ...(Object.keys(fields).length > 0 ? { fields } : {}) };
    return { success: false, error: new LookupError(errorCode, typeof message === 'string' ? message : errorCode, options) };
  });
}

/**
 * A batch item's error status, as a single call's would be: the item's own `status` if it
 * has one (the service's items have none today), else its code's, else 502 for a code this
 * version does not know (as LookupError's `status` is always a number).
 */
function itemStatus(own: unknown, code: string): number {
  if (typeof own === 'number' && Number.isInteger(own) && own >= 400 && own <= 599) return own;
  return Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as ErrorCode] : 502;
}
