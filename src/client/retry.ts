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

export function retryKind(status: number, code: string | undefined): RetryKind {
  if (status === 429) return code === undefined || code === 'rate_limit_exceeded' ? 'rate_limit' : 'never'; // quota_exceeded: never
  if (code !== undefined && PERMANENT_CODES.has(code)) return 'never';
  return TRANSIENT_STATUSES.has(status) ? 'transient' : 'never';
}

/**
 * Exponential backoff with full jitter: before retry `n` (1, 2, ...), a delay drawn uniformly
 * from [0, min(cap, base * 2^(n-1))).
 */
export function backoffDelay(retry: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** `Retry-After` in ms: delay-seconds (what seclookup sends) or an HTTP-date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One call's deadline and abort signals, merged into one `signal` that fetch and every wait
 * listen to. Aborting any source signal rejects at once with that signal's reason; the deadline
 * rejects with a LookupError `lookup_failed` whose cause is a `TimeoutError`.
 */
export class CallScope {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly deadline: number;
  private readonly timer: ReturnType<typeof setTimeout> | undefined;
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
      const onAbort = () => this.controller.abort(source.reason);
      source.addEventListener('abort', onAbort, { once: true });
      this.unlisten.push(() => source.removeEventListener('abort', onAbort));
    }
    if (!this.signal.aborted && timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new DOMException(`${describe}: no answer within ${timeoutMs} ms`, 'TimeoutError'));
      }, timeoutMs);
    }
  }

  /** Milliseconds left before the deadline (Infinity without one). */
  remaining(): number {
    return this.timer === undefined ? Infinity : this.deadline - Date.now();
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

  /** Wait `ms`, rejecting at once when the scope aborts. */
  sleep(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return this.race(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))).finally(() => clearTimeout(timer));
  }

  close(): void {
    clearTimeout(this.timer);
    for (const unlisten of this.unlisten.splice(0)) unlisten();
  }
}
