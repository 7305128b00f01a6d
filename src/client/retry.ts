/**
 * The client's retry rules (SPEC, Errors: "retry transient errors (502, 500, and captcha
 * server_error) with exponential backoff; after 429, wait the number of seconds in
 * Retry-After"), and the deadline and abort handling every call runs under.
 */
import { LookupError } from '../errors.js';

/** Defaults, documented in the README (Remote: seclookup/client). */
export const CLIENT_DEFAULTS = {
  timeoutMs: 10_000,
  retries: 3,
  backoffBaseMs: 250,
  backoffCapMs: 5_000,
} as const;

/**
 * Statuses worth another attempt: the spec's 500 and 502 (every `error_code` answered with them:
 * internal_error, lookup_failed, assessment_failed, captcha's server_error), and what a proxy or
 * load balancer in front of the service answers while it restarts (503, 504) or when a request
 * did not reach it in time (408).
 */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 500, 502, 503, 504]);

/** 503 `upstream_unconfigured` is the operator's to fix (riskscore has no upstream key): no retry helps. */
const PERMANENT_CODES: ReadonlySet<string> = new Set(['upstream_unconfigured']);

/** What to do after a failed attempt. */
export type RetryKind = 'transient' | 'rate_limit' | 'never';

/**
 * For an answer of the service's (its envelope's `code`) or of something in front of it (no
 * code). The service bills none of its error envelopes, so retrying them is always safe; the
 * outcome of a request a proxy answered with a transient status is unknown (answers.ts).
 */
export function retryKind(status: number, code: string | undefined): RetryKind {
  if (status === 429) return code === undefined || code === 'rate_limit_exceeded' ? 'rate_limit' : 'never'; // quota_exceeded: never
  if (code !== undefined && PERMANENT_CODES.has(code)) return 'never';
  return TRANSIENT_STATUSES.has(status) ? 'transient' : 'never';
}

/**
 * Error codes of a connection never made (refused, no such host, DNS down, no route, connect
 * timeout): nothing was sent, so nothing was billed. Any other transport error (a reset, a
 * connection closed mid-answer) may come after the service answered, and billed, the request.
 */
const CONNECT_FAILURES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether fetch's error says the connection was never made (its `cause.code`, as undici and Node give it). */
export function failedToConnect(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof AggregateError) return cause.errors.length > 0 && cause.errors.every(isConnectFailure);
  return isConnectFailure(cause);
}

/**
 * Whether fetch refused the URL's port before connecting: the Fetch standard blocks some ports
 * (6000, 6665-6669, 10080, ...) and undici's fetch (Node's) says so by its cause's message. Nothing
 * was sent, and no retry can succeed.
 */
export function blockedPort(error: unknown): boolean {
  const cause = (error as { cause?: { message?: unknown } | null } | null)?.cause;
  return cause?.message === 'bad port';
}

function isConnectFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECT_FAILURES.has(code);
}

/**
 * Exponential backoff with full jitter: before retry `n` (1, 2, ...), a delay drawn uniformly
 * from [0, min(cap, base * 2^(n-1))).
 */
export function backoffDelay(retry: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in ms: delay-seconds (what seclookup sends) or an HTTP-date (RFC 9110 10.2.3);
 * undefined for anything else ("1.5", "-5", two headers joined as "5, 5"), so that the backoff is
 * used rather than a guess.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = parseHttpDate(value, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** RFC 9110 5.6.7's three forms, each as [pattern, the groups holding day, month, year, hour, minute, second]. */
const HTTP_DATES: readonly [RegExp, readonly number[]][] = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  [new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`), [1, 2, 3, 4, 5, 6]],
  // rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
  [new RegExp(`^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`), [1, 2, 3, 4, 5, 6]],
  // asctime-date: Sun Nov  6 08:49:37 1994
  [new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`), [2, 1, 6, 3, 4, 5]],
];

/** An HTTP-date in ms since the epoch (always GMT), or undefined when `text` is not one or names no real moment (31 Feb). */
function parseHttpDate(text: string, now: number): number | undefined {
  for (const [pattern, order] of HTTP_DATES) {
    const match = pattern.exec(text);
    if (!match) continue;
    const [day, month, year, hour, minute, second] = order.map((group) => match[group]);
    return realMoment(fullYear(year, now), MONTHS.indexOf(month), Number(day), Number(hour), Number(minute), Number(second));
  }
  return undefined;
}

/** rfc850-date's two-digit year: the one that is not more than 50 years ahead (RFC 9110 5.6.7). */
function fullYear(digits: string, now: number): number {
  if (digits.length === 4) return Number(digits);
  const thisYear = new Date(now).getUTCFullYear();
  const past = thisYear - ((((thisYear - Number(digits)) % 100) + 100) % 100);
  return past + 100 <= thisYear + 50 ? past + 100 : past;
}

/** Date.UTC of the fields, unless one is out of range (Date.UTC would roll 31 Feb into March, year 94 into 1994); a leap second counts as 59. */
function realMoment(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  const date = new Date(Date.UTC(year, month, day, hour, minute, Math.min(second, 59)));
  const same = date.getUTCFullYear() === year && date.getUTCMonth() === month && date.getUTCDate() === day;
  return same && hour <= 23 && minute <= 59 && second <= 60 ? date.getTime() : undefined;
}

/** The longest delay setTimeout takes: Node runs a longer one after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const noop = () => {};

/** setTimeout for any delay, chained in steps setTimeout takes; never for Infinity. Returns the cancel. */
function setLongTimeout(callback: () => void, ms: number): () => void {
  if (!Number.isFinite(ms)) return noop;
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS, left - MAX_TIMER_MS) : setTimeout(callback, left);
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** The callbacks listening to one caller's signal, and how to remove their shared listener. */
interface Listeners {
  callbacks: Set<() => void>;
  stop: () => void;
}

/**
 * Each caller's signal's listeners, under one 'abort' listener per signal: one per call would
 * pass Node's limit of 10 on a client-wide signal with more calls in flight, and print
 * MaxListenersExceededWarning (the signal's limit is the caller's to set, not ours).
 */
const LISTENING = new WeakMap<AbortSignal, Listeners>();

/** Run `callback` when `signal` aborts, under the signal's one listener. Returns the unsubscribe. */
function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let listeners = LISTENING.get(signal);
  if (!listeners) {
    const callbacks = new Set<() => void>();
    const fire = () => {
      LISTENING.delete(signal);
      for (const each of [...callbacks]) each();
    };
    signal.addEventListener('abort', fire, { once: true });
    listeners = { callbacks, stop: () => signal.removeEventListener('abort', fire) };
    LISTENING.set(signal, listeners);
  }
  const mine = listeners;
  mine.callbacks.add(callback);
  return () => {
    mine.callbacks.delete(callback);
    // The last call gone takes the listener with it, unless the signal has fired (then it is gone).
    if (mine.callbacks.size === 0 && LISTENING.get(signal) === mine) {
      LISTENING.delete(signal);
      mine.stop();
    }
  };
}

/**
 * One call's deadline and abort signals, merged into one `signal` that fetch and every wait
 * listen to. Aborting any source signal rejects at once with that signal's reason; the deadline
 * rejects with a LookupError `lookup_failed` whose cause is a `TimeoutError`.
 */
export class CallScope {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  /** Infinity without a deadline. */
  private readonly deadline: number;
  private readonly cancelTimer: () => void;
  private readonly unlisten: (() => void)[] = [];
  private timedOut = false;

  constructor(
    sources: readonly (AbortSignal | undefined)[],
    private readonly timeoutMs: number,
    private readonly describe: string,
  ) {
    this.signal = this.controller.signal;
    this.deadline = Date.now() + timeoutMs;
    for (const source of sources) {
      if (!source) continue;
      if (source.aborted) {
        this.controller.abort(source.reason);
        break;
      }
      this.unlisten.push(onAbort(source, () => this.controller.abort(source.reason)));
    }
    this.cancelTimer = this.signal.aborted
      ? noop
      : setLongTimeout(() => {
          this.timedOut = true;
          this.controller.abort(new DOMException(`${describe}: no answer within ${timeoutMs} ms`, 'TimeoutError'));
        }, timeoutMs);
  }

  /** Milliseconds left before the deadline (Infinity without one). */
  remaining(): number {
    return this.deadline - Date.now();
  }

  /** What the call rejects with once `signal` has aborted: the caller's reason, or the timeout's LookupError. */
  failure(): unknown {
    if (!this.timedOut) return this.signal.reason;
    return new LookupError('lookup_failed', `${this.describe}: no answer within ${this.timeoutMs} ms`, { cause: this.signal.reason });
  }

  /** `promise`, or the scope's failure as soon as it aborts. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(this.failure());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.failure());
      this.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => (this.signal.removeEventListener('abort', onAbort), resolve(value)),
        (error: unknown) => (this.signal.removeEventListener('abort', onAbort), reject(error)),
      );
    });
  }

  /** Wait `ms` (any number of them), rejecting at once when the scope aborts. */
  sleep(ms: number): Promise<void> {
    let cancel = noop;
    return this.race(new Promise<void>((resolve) => (cancel = setLongTimeout(resolve, ms)))).finally(() => cancel());
  }

  close(): void {
    this.cancelTimer();
    for (const unlisten of this.unlisten.splice(0)) unlisten();
  }
}
