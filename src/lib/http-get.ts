/**
 * HTTP(S) GET with the deadlines every outbound call has: a connect limit (TCP, and the TLS
 * handshake for https) and a total limit (headers and body), plus a cap on the body size. Built
 * on node:http so both limits are real: a server that accepts and never answers, or trickles
 * its body, is cut at `totalMs`; one that never accepts, at `connectMs`.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { SeclookupError, invalidOption } from '../errors.js';
import { DEFAULT_TIMEOUTS, resolveTimeouts, type TimeoutOptions } from './deadline.js';
import { upstreamEnd, upstreamStart, type UpstreamKind } from './observe.js';
import type { OutboundSlot, OutboundSlots } from './outbound-slots.js';

export interface HttpGetOptions {
  /** @default DEFAULT_TIMEOUTS: connect 3 s, total 10 s */
  timeouts?: TimeoutOptions;
  /** Largest body accepted; a larger one fails with `upstream_failed`. @default 5 MB */
  maxBytes?: number;
  headers?: Record<string, string>;
  /**
   * How the URL's host is resolved; the outbound guard's `pinnedLookup` connects to the address
   * it checked (TLS still verifies and sends SNI for the URL's name). @default the system's
   */
  lookup?: LookupFunction;
  /** What the call is, for the upstream observers (metrics). @default 'http' */
  upstreamKind?: UpstreamKind;
  /**
   * The cap on outbound sockets (the outbound guard's `slots`): the call waits for a slot within
   * its total deadline, and holds it until its socket closes. @default none (no cap)
   */
  slots?: OutboundSlots;
}

export interface HttpGetResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

/**
 * GET `url`, whatever its status (the caller decides what a 404 means). Rejects with
 * SeclookupError `timeout` (message `connect timeout after N ms` or `timeout after N ms`) or
 * `upstream_failed` (`request failed: ECONNREFUSED`, `response larger than 5 MB`, ...).
 */
export async function httpGet(url: string, options: HttpGetOptions = {}): Promise<HttpGetResponse> {
  const { connectMs, totalMs } = resolveTimeouts(options.timeouts, DEFAULT_TIMEOUTS);
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw invalidOption(`not an http(s) URL: ${url}`);
  if (!options.slots) return getOnce(target, options, connectMs, totalMs, null);
  // The wait for a slot counts against the call's total deadline.
  const waitStarted = performance.now();
  const slot = await options.slots.acquire(totalMs);
  const left = Math.max(1, Math.floor(totalMs - (performance.now() - waitStarted)));
  return getOnce(target, options, Math.min(connectMs, left), left, slot);
}

/** One GET within `connectMs` and `totalMs`, holding `slot` (when given) until its socket closes. */
function getOnce(target: URL, options: HttpGetOptions, connectMs: number, totalMs: number, slot: OutboundSlot | null): Promise<HttpGetResponse> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const secure = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    const started = upstreamStart();
    const settle = (error: Error | null, response?: HttpGetResponse) => {
      if (done) return;
      done = true;
      timers.forEach(clearTimeout);
      upstreamEnd(options.upstreamKind ?? 'http', error === null, started);
      if (error) {
        request?.destroy();
        reject(error);
      } else resolve(response!);
    };
    const fail = (code: 'timeout' | 'upstream_failed', message: string, cause?: unknown) => settle(new SeclookupError(code, message, { cause }));

    let request: http.ClientRequest | undefined;
    const onResponse = (response: http.IncomingMessage) => {
      const declared = Number(response.headers['content-length']);
      if (declared > maxBytes) return fail('upstream_failed', `response larger than ${formatBytes(maxBytes)}`);
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail('upstream_failed', `response larger than ${formatBytes(maxBytes)}`);
        chunks.push(chunk);
      });
      response.on('end', () => settle(null, { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, size) }));
      response.on('error', (error) => fail('upstream_failed', `reading the response failed: ${describe(error)}`, error));
      response.on('aborted', () => fail('upstream_failed', 'the server closed the connection mid-response'));
    };
    try {
      // agent: false: one connection per call, nothing pooled that could outlive the deadline.
      request = (secure ? https : http).get(target, { headers: options.headers, agent: false, lookup: options.lookup }, onResponse);
    } catch (error) {
      // Refused before anything was sent (a header value Node cannot carry): no socket will close to give the slot back.
      slot?.release();
      return fail('upstream_failed', `request failed: ${describe(error as Error)}`, error);
    }
    // The request closes once its socket has (agent: false: never kept for another call).
    if (slot) request.once('close', slot.release);
    request.on('error', (error) => fail('upstream_failed', `request failed: ${describe(error)}`, error));
    timers.push(setTimeout(() => fail('timeout', `timeout after ${totalMs} ms`), totalMs));
    if (connectMs < totalMs) {
      const connectTimer = setTimeout(() => fail('timeout', `connect timeout after ${connectMs} ms`), connectMs);
      timers.push(connectTimer);
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting && !secure) return clearTimeout(connectTimer);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
    }
  });
}

/** The statuses that send a GET on to their Location. */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Redirects a dataset download follows at most, as browsers and curl's own default limits do. */
export const DEFAULT_MAX_REDIRECTS = 5;

/**
 * Where a redirect sends a GET next: its `location` resolved against `from`. A missing Location,
 * a scheme other than http(s), or a step down from https to http (which would let anyone on the
 * path read and change what follows) is `upstream_failed`.
 */
export function redirectTarget(from: string, status: number, location: string | string[] | undefined): URL {
  if (typeof location !== 'string' || location === '') throw new SeclookupError('upstream_failed', `HTTP ${status} without a Location`);
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new SeclookupError('upstream_failed', `HTTP ${status} to ${JSON.stringify(location.slice(0, 64))}, which is not a URL`);
  }
  if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new SeclookupError('upstream_failed', `refusing a redirect to a ${next.protocol} URL`);
  if (next.protocol === 'http:' && new URL(from).protocol === 'https:')
    throw new SeclookupError('upstream_failed', `refusing a redirect from https down to http (${next.host})`);
  return next;
}

/**
 * GET `url` as `httpGet` does, following up to `maxRedirects` redirects (see `redirectTarget`),
 * each hop with the same limits. Resolves with the final answer and the URL it came from.
 */
export async function httpGetFollowing(url: string, options: HttpGetOptions & { maxRedirects?: number } = {}): Promise<HttpGetResponse & { url: string }> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await httpGet(current, options);
    if (!REDIRECT_STATUSES.has(response.status)) return { ...response, url: current };
    const next = redirectTarget(current, response.status, response.headers.location);
    if (hop >= maxRedirects) throw new SeclookupError('upstream_failed', `more than ${maxRedirects} redirects (the last to ${next.host})`);
    current = next.href;
  }
}

/** Node's network errors carry the useful part (ECONNREFUSED, ENOTFOUND, ...) in `code`. */
function describe(error: Error & { code?: string }): string {
  return error.code ?? error.message;
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / (1024 * 1024)).toFixed(1)} MB` : `${bytes} bytes`;
}
