/**
 * The whois product's outbound calls: RDAP over HTTP(S) with redirects, and WHOIS over TCP.
 * Every connection goes through the outbound guard (each redirect hop and each referral
 * too: a name must resolve to public addresses only, and the connection goes to the address
 * that was checked). Every call has a connect and a total deadline, each also cut to what is
 * left of the lookup's own budget, and a byte cap; each socket takes one of the guard's slots
 * (its cap on sockets open at once), waiting for one within that budget. Failures are
 * SeclookupErrors: `timeout`, `upstream_failed`, and the guard's `target_refused` /
 * `name_not_found`.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { SeclookupError } from '../../errors.js';
import { withDeadline } from '../../lib/deadline.js';
import { formatBytes, httpGet, REDIRECT_STATUSES, redirectTarget, type HttpGetResponse } from '../../lib/http-get.js';
import { upstreamEnd, upstreamStart } from '../../lib/observe.js';
import type { CheckedTarget, OutboundGuard } from '../../lib/outbound.js';
import { formatAddress, type ServerAddress } from './servers.js';

/** The limits of one lookup, shared by all its calls. */
export interface CallContext {
  guard: OutboundGuard;
  connectMs: number;
  totalMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** performance.now() after which the lookup gives up. */
  deadline: number;
}

const RDAP_ACCEPT = 'application/rdap+json, application/json;q=0.9';
const USER_AGENT = 'seclookup-whois';

/** What is left of the lookup's budget, in whole ms (at least 1), or a `timeout` when nothing is. */
function remaining(ctx: CallContext, what: string): number {
  const left = Math.floor(ctx.deadline - performance.now());
  if (left < 1) throw new SeclookupError('timeout', `${what}: the lookup's time budget is spent`);
  return left;
}

/** The guard's check of `host`, within the lookup's budget (the DNS question may be slow). */
async function checkHost(ctx: CallContext, host: string): Promise<CheckedTarget> {
  return withDeadline(ctx.guard.check(host), remaining(ctx, host), `resolving ${host}`);
}

/**
 * GET an RDAP URL, following up to `maxRedirects` redirects (each hop checked by the guard,
 * http(s) only, never from https down to http). Answers any final status; a redirect past the limit (or a loop) is
 * `upstream_failed`.
 */
export async function rdapGet(url: string, ctx: CallContext): Promise<HttpGetResponse & { url: string }> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = upstreamUrl(current);
    if (target.protocol !== 'https:' && target.protocol !== 'http:')
      throw new SeclookupError('upstream_failed', `refusing to follow a redirect to ${target.protocol} URL`);
    const checked = await checkHost(ctx, target.hostname);
    const left = remaining(ctx, target.host);
    const response = await httpGet(current, {
      lookup: checked.literal ? undefined : ctx.guard.pinnedLookup(checked),
      timeouts: { connectMs: Math.min(ctx.connectMs, left), totalMs: Math.min(ctx.totalMs, left) },
      maxBytes: ctx.maxBytes,
      headers: { accept: RDAP_ACCEPT, 'user-agent': USER_AGENT },
      upstreamKind: 'rdap',
      slots: ctx.guard.slots,
    });
    if (!REDIRECT_STATUSES.has(response.status)) return { ...response, url: current };
    // http(s) only, and never down from https to http (where anyone on the path could rewrite the answer).
    const next = redirectTarget(current, response.status, response.headers.location);
    if (hop >= ctx.maxRedirects) throw new SeclookupError('upstream_failed', `more than ${ctx.maxRedirects} redirects (last to ${next.host})`);
    current = next.href;
  }
}

/**
 * A URL an upstream gave (a redirect's Location, a registrar link), resolved against `base`:
 * one that does not parse is the upstream's failure (`upstream_failed`), not ours.
 */
function upstreamUrl(text: string, base?: string): URL {
  try {
    return new URL(text, base);
  } catch {
    throw new SeclookupError('upstream_failed', `the RDAP server gave a link that is not a URL: ${JSON.stringify(text.slice(0, 64))}`);
  }
}

/**
 * Ask a WHOIS server (RFC 3912): connect, send the query and CRLF, read until the server
 * closes. An answer over `maxBytes` (a server that never stops) fails rather than being
 * parsed cut short; so does an empty one.
 */
export async function whoisQuery(server: ServerAddress, query: string, ctx: CallContext): Promise<string> {
  const name = formatAddress(server);
  const checked = await checkHost(ctx, server.host);
  // A slot for the socket, waited for within what is left of the lookup's budget.
  const slot = await ctx.guard.slots.acquire(Math.min(ctx.totalMs, remaining(ctx, name)));
  let left: number;
  try {
    left = remaining(ctx, name);
  } catch (error) {
    slot.release();
    throw error;
  }
  const connectMs = Math.min(ctx.connectMs, left);
  const totalMs = Math.min(ctx.totalMs, left);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const started = upstreamStart();
    const socket = net.connect({ host: checked.address, port: server.port, family: checked.family });
    slot.releaseOnClose(socket);
    const finish = (error: SeclookupError | null) => {
      if (settled) return;
      settled = true;
      upstreamEnd('whois', error === null, started);
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      socket.destroy();
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const connectTimer = setTimeout(() => finish(new SeclookupError('timeout', `${name}: connect timeout after ${connectMs} ms`)), connectMs);
    const totalTimer = setTimeout(() => finish(new SeclookupError('timeout', `${name}: timeout after ${totalMs} ms`)), totalMs);
    socket.once('connect', () => {
      clearTimeout(connectTimer);
      socket.write(`${query}\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > ctx.maxBytes) return finish(new SeclookupError('upstream_failed', `${name}: answer larger than ${formatBytes(ctx.maxBytes)}`));
      chunks.push(chunk);
    });
    socket.on('end', () => finish(null));
    socket.on('close', () => finish(null));
    socket.on('error', (error: Error & { code?: string }) =>
      finish(new SeclookupError('upstream_failed', `${name}: ${error.code ?? error.message}`, { cause: error })),
    );
  });
  const text = decode(body);
  if (text.trim() === '') throw new SeclookupError('upstream_failed', `${name} closed the connection without an answer`);
  return text;
}

/** UTF-8, or Latin-1 when the bytes are not UTF-8 (older ccTLD servers). */
function decode(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (!text.includes('\uFFFD') || bytes.includes(Buffer.from([0xef, 0xbf, 0xbd]))) return text;
  return bytes.toString('latin1');
}
