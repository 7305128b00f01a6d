/**
 * Ranges from a range API compatible with Have I Been Pwned's
 * (`https://api.pwnedpasswords.com/range/{prefix}`): only the 5-hex-digit prefix leaves the
 * process, in the URL; the request asks for padding (`Add-Padding: true`) so the answer's size
 * says nothing about the prefix, and the padding (count 0) is dropped. Each attempt has connect
 * and total deadlines; failures that may pass (no connection, a cut or late answer, 5xx, 429,
 * 408) are retried a bounded number of times with jittered exponential backoff. Ranges are
 * cached (the product cache, so a shared store works too) and concurrent requests for one
 * prefix share one upstream call.
 */
import { LookupError, SeclookupError, invalidOption } from '../../errors.js';
import type { ProductCache } from '../../lib/cache.js';
import { resolveTimeouts, type TimeoutOptions } from '../../lib/deadline.js';
import { httpGet } from '../../lib/http-get.js';
import type { OutboundSlots } from '../../lib/outbound-slots.js';
import { checkKnownNames, checkTimeoutOptions, describeValue } from '../../lib/option-checks.js';
import { isPromise, type MaybePromise } from '../../lib/outcome.js';
import { prefixHex } from './hash.js';
import { EmptyRangeError, parseRangeAnswer, textRange, type BreachRange } from './range.js';
import { redactUserinfo } from '../../lib/redact-url.js';

export interface UpstreamOptions {
  /** URL template with `{prefix}`, http or https: `https://api.pwnedpasswords.com/range/{prefix}`. */
  url: string;
  /** Per attempt. @default { connectMs: 2000, totalMs: 5000 } */
  timeouts?: TimeoutOptions;
  /** Attempts per range, the first included (1 to 10). @default 3 */
  attempts?: number;
  /** The wait before the first retry, doubled each time (jittered: half to all of it; at most 2 s). @default 100 */
  backoffMs?: number;
  /** Largest answer accepted. @default 1 MB (a padded range is about 40 KB) */
  maxBytes?: number;
}

export const UPSTREAM_DEFAULTS = { timeouts: { connectMs: 2_000, totalMs: 5_000 }, attempts: 3, backoffMs: 100, maxBytes: 1024 * 1024 } as const;
const MAX_BACKOFF_MS = 2_000;
const USER_AGENT = 'seclookup-pwbreach';

export interface SourcedRange {
  range: BreachRange;
  /** True when the range came from the cache. */
  cached: boolean;
}

export interface UpstreamSource {
  range(prefix: number): MaybePromise<SourcedRange>;
}

/** Check a URL template: http(s), with `{prefix}`. Throws a TypeError (invalid_option). */
export function checkUpstreamUrl(url: string): string {
  if (typeof url !== 'string') throw invalidOption(`pwbreach upstream url must be an http(s) URL template with {prefix} (got ${describeValue(url)})`);
  let parsed: URL;
  try {
    parsed = new URL(url.replaceAll('{prefix}', '00000'));
  } catch {
    throw invalidOption(`pwbreach upstream must be an http(s) URL template with {prefix} (got ${JSON.stringify(redactUserinfo(url))})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalidOption(`pwbreach upstream must be an http or https URL (got ${JSON.stringify(redactUserinfo(url))})`);
  if (!url.includes('{prefix}'))
    throw invalidOption(`pwbreach upstream must contain {prefix}, where the 5 hex digits go (got ${JSON.stringify(redactUserinfo(url))})`);
  return url;
}

/** A failure that may pass; `retryAfterMs` when the upstream said how long to wait (Retry-After). */
class RetryableError extends Error {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: { cause?: unknown; retryAfterMs?: number | null } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs ?? undefined;
  }
}

/** A Retry-After header (RFC 9110 10.2.3: seconds, or an HTTP date) in ms from now; null when absent or unreadable. */
function retryAfterMs(header: string | string[] | undefined): number | null {
  if (typeof header !== 'string' || header.trim() === '') return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

const UPSTREAM_OPTION_NAMES = ['url', 'timeouts', 'attempts', 'backoffMs', 'maxBytes'] as const;

/**
 * The `upstream` option (a URL template, or its options), checked and filled in with the
 * defaults; no request is made. TypeError `invalid_option` naming the option.
 */
export function resolveUpstreamOptions(upstream: unknown): {
  template: string;
  timeouts: Required<TimeoutOptions>;
  attempts: number;
  backoffMs: number;
  maxBytes: number;
} {
  if (typeof upstream !== 'string' && (typeof upstream !== 'object' || upstream === null || Array.isArray(upstream)))
    throw invalidOption(
      `pwbreach upstream must be an http(s) URL template with {prefix}, or { ${UPSTREAM_OPTION_NAMES.join(', ')} } (got ${describeValue(upstream)})`,
    );
  const options = (typeof upstream === 'string' ? { url: upstream } : upstream) as Record<string, unknown>;
  checkKnownNames(options, UPSTREAM_OPTION_NAMES, 'pwbreach upstream');
  const template = checkUpstreamUrl(options.url as string);
  checkTimeoutOptions(options.timeouts, 'pwbreach upstream timeouts');
  const timeouts = resolveTimeouts(options.timeouts as TimeoutOptions | undefined, UPSTREAM_DEFAULTS.timeouts, 'pwbreach upstream timeouts');
  const attempts = options.attempts ?? UPSTREAM_DEFAULTS.attempts;
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 1 || attempts > 10)
    throw invalidOption(`pwbreach upstream attempts must be 1 to 10 (got ${describeValue(attempts)})`);
  const backoffMs = options.backoffMs ?? UPSTREAM_DEFAULTS.backoffMs;
  if (typeof backoffMs !== 'number' || !Number.isFinite(backoffMs) || backoffMs < 0)
    throw invalidOption(`pwbreach upstream backoffMs must be >= 0 (got ${describeValue(backoffMs)})`);
  const maxBytes = options.maxBytes ?? UPSTREAM_DEFAULTS.maxBytes;
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw invalidOption(`pwbreach upstream maxBytes must be a whole number of bytes >= 1 (got ${describeValue(maxBytes)})`);
  return { template, timeouts, attempts, backoffMs, maxBytes };
}

export function createUpstreamSource(options: UpstreamOptions, cache: ProductCache<string> | null, slots?: OutboundSlots): UpstreamSource {
  const { template, timeouts, attempts, backoffMs, maxBytes } = resolveUpstreamOptions(options);
  const inFlight = new Map<number, Promise<SourcedRange>>();

  async function fetchOnce(prefix: string): Promise<string> {
    let response;
    try {
      response = await httpGet(template.replaceAll('{prefix}', prefix), {
        timeouts,
        maxBytes,
        slots,
        headers: { 'add-padding': 'true', 'user-agent': USER_AGENT },
      });
    } catch (error) {
      // An answer over the cap would be as large next time; refused, reset, cut or late: worth another attempt.
      if (error instanceof SeclookupError && error.message.startsWith('response larger than')) throw error;
      throw new RetryableError('request failed', { cause: error });
    }
    const { status } = response;
    if (status >= 500 || status === 429 || status === 408)
      throw new RetryableError(`answered HTTP ${status}`, { retryAfterMs: retryAfterMs(response.headers['retry-after']) });
    if (status !== 200) throw new SeclookupError('upstream_failed', `the range API answered HTTP ${status}`);
    try {
      return parseRangeAnswer(response.body.toString('latin1'));
    } catch (error) {
      if (error instanceof EmptyRangeError) throw new RetryableError(error.message);
      throw error;
    }
  }

  async function fetchRange(prefix: number): Promise<SourcedRange> {
    const hex = prefixHex(prefix);
    let lastError: unknown;
    let waitAtLeastMs = 0;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(Math.max(waitAtLeastMs, Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** (attempt - 2)) * (0.5 + Math.random() / 2)));
      try {
        const text = await fetchOnce(hex);
        cache?.set(hex, text);
        return { range: textRange(text), cached: false };
      } catch (error) {
        lastError = error instanceof RetryableError && error.cause !== undefined ? error.cause : error;
        if (!(error instanceof RetryableError)) break;
        // The upstream said when to come back (429, 503): no sooner; later than a backoff could wait is too late to help.
        waitAtLeastMs = error.retryAfterMs ?? 0;
        if (waitAtLeastMs > MAX_BACKOFF_MS) break;
      }
    }
    // The client hears only that the lookup failed; the cause stays with the error.
    throw new LookupError('lookup_failed', 'the breach range lookup failed; retry with backoff', { cause: lastError });
  }

  function shared(prefix: number): Promise<SourcedRange> {
    let pending = inFlight.get(prefix);
    if (!pending) {
      pending = fetchRange(prefix).finally(() => inFlight.delete(prefix));
      inFlight.set(prefix, pending);
    }
    return pending;
  }

  return {
    range(prefix) {
      const hit = cache?.get(prefixHex(prefix));
      if (isPromise(hit)) return hit.then((text) => (typeof text === 'string' ? { range: textRange(text), cached: true } : shared(prefix)));
      return typeof hit === 'string' ? { range: textRange(hit), cached: true } : shared(prefix);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
