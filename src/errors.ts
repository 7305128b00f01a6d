/**
 * The one error table: every `error_code` the API can answer with, and its HTTP status.
 * Codes from SPEC.md keep the spec's status; the transport codes at the end are ours
 * (the spec is silent on them) and are documented in the README. A product's own codes (beyond
 * the shared ones) come from its descriptor (src/products/<id>/descriptor.ts).
 */
import type { ProductDescriptor } from './products/descriptor.js';
import { PRODUCT_DESCRIPTORS } from './products/descriptors.js';

const SHARED_STATUS = {
  // Authentication and limits, common to every product.
  missing_credentials: 401,
  invalid_api_key: 401,
  wrong_key_type: 401,
  ip_not_allowed: 403,
  rate_limit_exceeded: 429,
  quota_exceeded: 429,
  internal_error: 500,

  // Product input and lookup failures.
  invalid_user_agent: 400,
  invalid_ip: 400,
  invalid_provider: 400,
  invalid_host: 400,
  invalid_domain: 400,
  invalid_email: 400,
  invalid_password: 400,
  invalid_request: 400,
  invalid_identifier: 400,
  ip_not_found: 404,
  domain_not_found: 404,
  ip_not_routable: 422,
  host_not_allowed: 422,
  lookup_failed: 502,
  upstream_unconfigured: 503,
} as const;

/** The transport codes (ours: the spec does not name these). */
const TRANSPORT_STATUS = {
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_json: 400,
  // Requests Node's HTTP parser refuses before any route runs (malformed bytes, too-large
  // headers, a request that did not arrive in time, an Expect other than 100-continue).
  bad_request: 400,
  request_timeout: 408,
  expectation_failed: 417,
  request_header_fields_too_large: 431,
  // The client went away before its request was complete: never answered (nobody is left to
  // read it), only logged. 499 is nginx's status for this; it is not a standard HTTP status.
  client_closed_request: 499,
} as const;

type Descriptor = (typeof PRODUCT_DESCRIPTORS)[number];
/** The codes products declare in their descriptors (captcha's, scamrisk's). */
type ProductErrorCode = Descriptor extends infer Each ? (Each extends { errorCodes: infer Codes } ? keyof Codes & string : never) : never;

export type ErrorCode = keyof typeof SHARED_STATUS | ProductErrorCode | keyof typeof TRANSPORT_STATUS;

/** Every code and its status: the shared ones, each product's own (in descriptor order), then transport's. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  ...SHARED_STATUS,
  ...Object.assign({}, ...(PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).map((descriptor) => descriptor.errorCodes ?? {})),
  ...TRANSPORT_STATUS,
};

/**
 * The single error class of seclookup. Engines throw it for bad input and failed lookups;
 * the API turns it into the spec's error envelope with `status` as the HTTP status.
 *
 * @example
 * try { await lookup.webhookip('10.0.0.1') }
 * catch (e) { if (e instanceof LookupError && e.code === 'ip_not_routable') ... }
 */
export class LookupError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /**
   * Fields the error envelope carries beside `error` and `error_code` (captcha's
   * `interactive_required`, siteverify's Turnstile-named `error-codes`).
   */
  readonly fields?: Readonly<Record<string, unknown>>;
  /**
   * The `request_id` of the answer that carried this error, on errors a remote service answered
   * (`seclookup/client`); absent on errors raised in-process and on the client's own.
   */
  declare readonly requestId?: string;
  /**
   * Seconds the service asked to wait (its `Retry-After` header), on remote
   * `rate_limit_exceeded` and `quota_exceeded` errors.
   */
  declare readonly retryAfter?: number;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; fields?: Record<string, unknown>; requestId?: string; retryAfter?: number; status?: number },
  ) {
    super(message, options);
    this.name = 'LookupError';
    this.code = code;
    // `status` is given by the client for a remote answer: the HTTP status it arrived with, which
    // is this table's for every code this version knows.
    this.status = options?.status ?? ERROR_STATUS[code];
    if (options?.fields) this.fields = options.fields;
    if (options?.requestId !== undefined) this.requestId = options.requestId;
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/**
 * A LookupError for the API's refusals of a request (no key, a limit reached, no such route, a
 * bad body): they are answered, never debugged, and a client that floods them should cost
 * little. It is made without Error's constructor, which calls into V8's runtime even with no
 * stack frames to capture (about 0.4 µs alone, over 1 µs under load; a refused siteverify paid
 * it on every request). See {@link Refusal} for what it holds.
 */
export function refusal(code: ErrorCode, message: string, options?: RefusalOptions): LookupError {
  return new Refusal(code, message, options) as unknown as LookupError;
}

/**
 * The answer to a request whose connection closed before it was answered: nobody reads it, it is
 * only logged. 499, as for a body cut short (src/api/body.ts) and as nginx logs it: almost always the
 * client's leaving, not an upstream failure (a 502 here read as an outage on a dashboard of 5xx
 * rates). The rest are the connections serve cuts at its shutdown deadline (src/cli/shutdown.ts).
 */
export function clientGoneRefusal(): LookupError {
  return refusal('client_closed_request', 'the connection closed before the answer; not billed');
}

/** A refusal's cause (the failure behind it) and the envelope's extra fields. */
export interface RefusalOptions {
  cause?: unknown;
  fields?: Record<string, unknown>;
}

/**
 * What `new LookupError` gives with no stack frames, made with a plain constructor: `code`,
 * `status`, `fields` and `name` are own properties in that order; `message` and a one-line
 * `stack` are read from a private field, so, as on an Error, they are not enumerated, and a
 * `cause` (rare: a body cut short) is defined as an Error's is. It is `instanceof LookupError`
 * and `Error`, and its text, JSON and deep equality are a stackless one's; `util.inspect` shows
 * no frames, and `util.types.isNativeError` tells it apart.
 */
const Refusal = class LookupError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: Readonly<Record<string, unknown>> | undefined;
  readonly name = 'LookupError';
  readonly #message: string;

  constructor(code: ErrorCode, message: string, options: RefusalOptions | undefined) {
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.fields = options?.fields;
    this.#message = message;
    if (options !== undefined && 'cause' in options) Object.defineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
  }

  get message(): string {
    return this.#message;
  }

  get stack(): string {
    return `${this.name}: ${this.#message}`;
  }
};
Object.setPrototypeOf(Refusal.prototype, LookupError.prototype);
Object.defineProperty(Refusal.prototype, Symbol.toStringTag, { value: 'Error' });

export function isLookupError(value: unknown): value is LookupError {
  return value instanceof LookupError;
}

/**
 * Stable codes for operator-facing failures: configuration, datasets, stores and deadlines.
 * Match on `code` (with {@link isSeclookupError}), never on the message text.
 */
export type SeclookupErrorCode =
  /** An option or a command-line value is wrong; thrown at construction. */
  | 'invalid_option'
  /** A dataset file is absent. The message names the file. */
  | 'dataset_missing'
  /** A dataset file exists but does not parse or validate. The message names the file. */
  | 'dataset_invalid'
  /** An operation did not finish within its deadline (a meter call, a connect, a whole request). */
  | 'timeout'
  /** A meter or cache store failed (closed, unreachable, corrupt). */
  | 'store_failed'
  /** A SQLite file given as a store holds another application's tables and none of seclookup's. */
  | 'foreign_database'
  /** The captcha signing keys cannot be used: no operator secret, or the store's keys were wrapped with another one. */
  | 'secret_unavailable'
  /** An outbound call failed: refused, reset, an HTTP error status, an answer too large or malformed. */
  | 'upstream_failed'
  /** The outbound guard refused a target: not a public address (lib/outbound.ts). */
  | 'target_refused'
  /** A name has no address (NXDOMAIN, or no A/AAAA records). */
  | 'name_not_found';

/**
 * The error seclookup throws at run time for problems that are the operator's to fix, not the
 * client's: a missing dataset, a store that failed or hung, an upstream that failed. The API
 * answers these as 500 `internal_error` and reports them through `onError`. Configuration
 * mistakes are TypeErrors with `code: 'invalid_option'` (see {@link invalidOption}), thrown at
 * construction.
 *
 * @example
 * try { await createLookup({ dataDir: '/empty' }).webhookip('140.82.112.5') }
 * catch (e) { if (e instanceof SeclookupError && e.code === 'dataset_missing') ... }
 */
export class SeclookupError extends Error {
  readonly code: SeclookupErrorCode;

  constructor(code: SeclookupErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SeclookupError';
    this.code = code;
  }
}

const SECLOOKUP_ERROR_CODES: ReadonlySet<string> = new Set<SeclookupErrorCode>([
  'invalid_option',
  'dataset_missing',
  'dataset_invalid',
  'timeout',
  'store_failed',
  'foreign_database',
  'secret_unavailable',
  'upstream_failed',
  'target_refused',
  'name_not_found',
]);

/** An error of seclookup's with a stable `code`: a SeclookupError, or a configuration TypeError. */
export function isSeclookupError(value: unknown, code?: SeclookupErrorCode): value is Error & { code: SeclookupErrorCode } {
  const found = value instanceof Error ? (value as Error & { code?: unknown }).code : undefined;
  return typeof found === 'string' && SECLOOKUP_ERROR_CODES.has(found) && (code === undefined || found === code);
}

/**
 * A configuration mistake (a bad option, plan or CIDR): a TypeError, as Node's own argument
 * errors are, carrying `code: 'invalid_option'`.
 */
export function invalidOption(message: string): TypeError & { code: 'invalid_option' } {
  return Object.assign(new TypeError(message), { code: 'invalid_option' as const });
}

/** Client text for an error message: JSON-quoted (control characters escaped) and cut at 64 characters. */
export function quoteInput(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}
