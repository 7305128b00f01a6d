/**
 * API-level test harness: a createApi over an in-memory meter, driven through `api.handle`
 * directly (no sockets), for the per-product HTTP forms and the pipeline's rules. Transport
 * concerns are the adapter conformance suite's.
 */
import { createApi } from '../../src/api/create-api.js';
import type { Api, ApiOptions, ApiRequest, RequestBody, RequestLogEvent } from '../../src/api/types.js';
import { createLookup, type Lookup } from '../../src/lookup.js';
import { issueKeys, type IssuedKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter, Plan } from '../../src/metering/types.js';
import type { ProductId } from '../../src/products/catalog.js';
import { checkResponse } from '../openapi/check-response.js';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body ({} for an empty one, as HEAD answers, and for a text answer). */
  body: Record<string, unknown>;
  raw: string;
}

export interface CallOptions {
  key?: string;
  method?: string;
  body?: RequestBody;
  /** A JSON body (sets Content-Type). */
  json?: unknown;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** Plans tests subscribe to, beside the default starter and enterprise ones. */
export const TEST_PLANS = {
  quota3: { slug: 'test-quota3', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 3 },
  quota50: { slug: 'test-quota50', product: '*', rateLimitPerMinute: 1_000, monthlyQuota: 50 },
  rate2: { slug: 'test-rate2', product: '*', rateLimitPerMinute: 2, monthlyQuota: 100 },
} as const satisfies Record<string, Plan>;

/** The operator secret every test stack wraps captcha's signing keys under. */
export const TEST_SECRET = 'test-operator-secret-0123456789abcdef0123456789';

/** Every stack's clock: stopped, so a test's requests share one rate window. */
export const FROZEN_NOW = Date.now();

export interface ApiStack {
  api: Api;
  meter: Meter;
  lookup: Lookup;
  logged: RequestLogEvent[];
  errors: { error: unknown; context: string }[];
  keys(product: ProductId, options?: { plan?: string; ipAllow?: string[] }): Promise<IssuedKeys>;
  call(path: string, options?: CallOptions): Promise<Reply>;
}

export async function createApiStack(options: Partial<ApiOptions> = {}): Promise<ApiStack> {
  const meter = options.meter ?? createMemoryMeter();
  for (const plan of Object.values(TEST_PLANS)) await meter.setPlan(plan);
  const lookup = options.lookup ?? createLookup();
  const logged: RequestLogEvent[] = [];
  const errors: { error: unknown; context: string }[] = [];
  const api = createApi({
    now: () => FROZEN_NOW,
    secret: TEST_SECRET,
    onResponse: (event) => logged.push(event),
    onError: (error, context) => errors.push({ error, context }),
    ...options,
    lookup,
    meter,
  });
  return {
    api,
    meter,
    lookup,
    logged,
    errors,
    keys: (product, keyOptions = {}) => issueKeys(meter, { product, ...keyOptions }),
    call: (path, callOptions = {}) => call(api, path, callOptions),
  };
}

export async function call(api: Api, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const request: ApiRequest = {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    url: path,
    headers,
    body,
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
  };
  const response = await api.handle(request);
  checkResponse({
    method: request.method,
    path: path.split('?')[0],
    status: response.status,
    contentType: response.headers['content-type'] ?? null,
    body: response.body,
    headers: response.headers,
  });
  // A text answer (pwbreach's range route) has no JSON body: read it from `raw`.
  const json = response.body !== '' && (response.headers['content-type'] ?? '').startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(response.body) : {}, raw: response.body };
}

/** A request body that sends `first` and then never ends (a stalled upload), until `end()`. */
export function stalledBody(first = '{"ua":"Mozi'): { body: AsyncIterable<Uint8Array>; end(): void } {
  let release: () => void = () => {};
  const ended = new Promise<void>((resolve) => (release = resolve));
  return {
    body: (async function* () {
      yield Buffer.from(first);
      await ended;
    })(),
    end: () => release(),
  };
}
