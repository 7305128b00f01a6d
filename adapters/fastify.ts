import { isBodiless } from '../src/api/conditional.js';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Api, ApiResponse, RequestBody } from '../src/api/types.js';
import { HEALTH_PATH } from '../src/api/router.js';
import { answerClientError, answerConnectRequests, trackResponses } from './client-errors.js';
import { withClientGoneSignal } from './client-gone.js';
import { refuseHostHeader } from './host-header.js';
import { endUnreadBody } from './lingering-close.js';
import { inLine, untilFirstInLine } from './pipelining.js';
import { createTurnCork, type TurnCork } from './turn-cork.js';
import { isPromise } from '../src/lib/outcome.js';

export interface SeclookupFastifyOptions {
  api: Api;
}

/**
 * Hand one request to the core and send its answer, corked per event-loop turn (see
 * turn-cork.ts). `url` is relative to the plugin's prefix. Returns the reply, which tells
 * Fastify the answer may be sent after the handler's promise settles.
 */
async function forward(api: Api, cork: TurnCork, request: FastifyRequest, reply: FastifyReply, url: string, body: RequestBody | undefined) {
  // Pipelined requests one at a time (see pipelining.ts); one whose connection closed first is never handled.
  if (inLine(reply.raw) && !(await untilFirstInLine(request.raw, reply.raw))) return reply.hijack();
  const turn = cork.arrival();
  const remoteAddress = request.raw.socket.remoteAddress;
  // Wrong Host lines are refused before the core sees the request (host-header.ts).
  const refused = refuseHostHeader(api, request.raw, { method: request.method, remoteAddress });
  let answer: ApiResponse | Promise<ApiResponse>;
  if (refused) answer = refused;
  else {
    const withSignal = withClientGoneSignal({ method: request.method, url, headers: request.headers, body, remoteAddress }, request.raw, reply.raw);
    // An answer made at once is not awaited (see Api.respond).
    answer = api.respond ? api.respond(withSignal) : api.handle(withSignal);
  }
  const response = isPromise(answer) ? await answer : answer;
  cork.send(turn, () => {
    try {
      // As in writeResponse (node.ts).
      endUnreadBody(request.raw as IncomingMessage | Http2ServerRequest, reply.raw, response.headers);
      // Nothing, not '', for a 204 or 304: Fastify gives an empty string body a Content-Length.
      reply
        .code(response.status)
        .headers(response.headers)
        .send(isBodiless(response.status) ? undefined : response.body);
    } catch (error) {
      // Sent outside the handler, so Fastify cannot catch this; a socket must never hang.
      request.log.error(error);
      reply.raw.destroy();
    }
  });
  return reply;
}

/**
 * `url` without `base` (a prefix as `mountPath` gives it), or null when it is not under it.
 * `caseSensitive: false` (the server's router option) matches the prefix in any case, as
 * Fastify's router then does: `/API/healthz` reached the plugin registered at `/api`.
 */
function withoutPrefix(url: string, base: string, caseSensitive = true): string | null {
  if (!base) return url;
  const head = url.slice(0, base.length);
  if (caseSensitive ? head !== base : head.toLowerCase() !== base.toLowerCase()) return null;
  // Under `/x`, but not `/xy`: the prefix ends where a path segment does.
  const next = url.charCodeAt(base.length);
  if (next === 0x2f /* / */) return url.slice(base.length);
  if (Number.isNaN(next) || next === 0x3f /* ? */) return `/${url.slice(base.length)}`;
  return null;
}

/**
 * A `register` prefix as the path Fastify mounts routes under: a trailing `/` dropped
 * (`register(p, { prefix: '/x/' })` serves `/x/healthz`, while `fastify.prefix` is then `/x/`),
 * a missing leading one added; '' for none or for `/`.
 */
function mountPath(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * Fastify's refusals of a request on one of the plugin's routes before its handler runs, which
 * the API answers itself, as on every other adapter: a Content-Type Fastify cannot parse
 * (`garbage`, `/`; the API's 415 `unsupported_media_type`, after its key check) and a QUERY
 * without one (the API's 405 `method_not_allowed`).
 */
const REFUSED_BEFORE_THE_HANDLER: ReadonlySet<string> = new Set(['FST_ERR_CTP_INVALID_MEDIA_TYPE', 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE']);

/**
 * A Fastify plugin serving the API under `/v1/*`, the captcha widget under `/widget/*` and
 * `/healthz` (plus any `prefix` given to
 * `register`). It is encapsulated: its raw-body content-type parser does not leak into the
 * rest of the application.
 *
 * @example
 * const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api) });
 * app.register(seclookup, { api });
 */
export async function seclookup(fastify: FastifyInstance, options: SeclookupFastifyOptions): Promise<void> {
  const { api } = options ?? ({} as SeclookupFastifyOptions);
  if (!api || typeof api.handle !== 'function') throw new TypeError('seclookup/fastify: pass { api } from createApi()');

  // Hand the untouched body stream to the core, which applies its own size cap and parsing.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void) =>
    done(null, payload),
  );

  // Lets seclookupClientErrors() write the answers still owed before a parse error's answer.
  trackResponses(fastify.server);
  // CONNECT never reaches a route: answer it 405 in the envelope rather than let Node drop it.
  answerConnectRequests(fastify.server, api);

  const cork = createTurnCork();
  const base = mountPath(fastify.prefix);
  const caseSensitive = routesCaseSensitive(fastify);
  const apiUrl = (request: FastifyRequest) => withoutPrefix(request.url, base, caseSensitive) ?? request.url;
  // The plugin's routes log their requests without the secrets a URL can carry (see redactedRequest).
  const logSerializers = { req: redactedRequest(fastify.log) };
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    forward(api, cork, request, reply, apiUrl(request), request.body as AsyncIterable<Uint8Array> | undefined);
  // Scoped to this plugin's routes: the application's own routes keep its error handler.
  fastify.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (!REFUSED_BEFORE_THE_HANDLER.has(error.code)) throw error;
    // The body is still unread: the core checks the key first, then reads it by its own rules.
    return forward(api, cork, request, reply, apiUrl(request), request.raw);
  });
  fastify.all('/v1/*', { logSerializers }, handler);
  for (const mount of api.assetMounts) fastify.all(`${mount}*`, { logSerializers }, handler);
  // Every method, as on the other adapters: the core answers the ones /healthz does not take with 405 and Allow.
  fastify.all(HEALTH_PATH, { logSerializers }, handler);
}

/** Whether the server's router tells paths apart by case (`caseSensitive`, Fastify's default true). */
function routesCaseSensitive(fastify: FastifyInstance): boolean {
  const config = fastify.initialConfig as { caseSensitive?: boolean; routerOptions?: { caseSensitive?: boolean } };
  // Fastify 5 keeps it under routerOptions (reading the top-level one there warns); Fastify 4 at the top.
  return (config.routerOptions ? config.routerOptions.caseSensitive : config.caseSensitive) !== false;
}

/** Query parameters that carry a key in the clear: captcha's `secret` (`GET /v1/captcha/usage?secret=tf_sec_...`). */
const SECRET_PARAMETERS: ReadonlySet<string> = new Set(['secret']);

/**
 * `url` with the value of every secret-bearing query parameter replaced, its name read as the
 * API reads it (percent-decoded, `+` a space: `?%73ecret=` is `secret` too).
 */
function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const pairs = url.slice(query + 1).split('&');
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const equals = pairs[i].indexOf('=');
    if (equals === -1) continue;
    if (SECRET_PARAMETERS.has(decodedName(pairs[i].slice(0, equals)).toLowerCase())) {
      pairs[i] = `${pairs[i].slice(0, equals)}=[redacted]`;
      changed = true;
    }
  }
  return changed ? `${url.slice(0, query)}?${pairs.join('&')}` : url;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

type RequestSerializer = (request: FastifyRequest) => unknown;

/**
 * The `req` serializer of the plugin's routes: the server logger's own (pino keeps it under
 * `Symbol.for('pino.serializers')`; Fastify's default, or the app's), with the URL's secret
 * query values redacted. Fastify logs every request's URL at info (`incoming request`), and a
 * captcha secret key may come in the query string: that would put it in the app's log.
 */
function redactedRequest(log: unknown): RequestSerializer {
  const serializers = (log as Record<symbol, Record<string, RequestSerializer> | undefined> | undefined)?.[Symbol.for('pino.serializers')];
  const parent: RequestSerializer =
    typeof serializers?.req === 'function'
      ? serializers.req
      : (request) => ({ method: request.method, url: request.url, host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort });
  return (request) => {
    const serialized = parent(request);
    if (serialized === null || typeof serialized !== 'object') return serialized;
    const { url } = serialized as { url?: unknown };
    return typeof url === 'string' ? { ...serialized, url: redactUrl(url) } : serialized;
  };
}

/**
 * Fastify answers a URL with broken percent-encoding (`/v1/useragent/lookup/%E0%A4%A`) itself,
 * before any route or plugin runs. Pass this as the server's `frameworkErrors` option so that
 * on the API's paths (and anywhere under the widget's `/widget/`, which the plugin's route takes
 * whole) such requests reach the core and get the API's envelope and the product's own input
 * error (`invalid_user_agent`, `invalid_ip`); elsewhere Fastify's default answer stays.
 *
 * @param options.prefix the `prefix` the plugin is registered with, if any. @default ''
 * @param options.caseSensitive false when the server's router is (`caseSensitive: false`), so the prefix matches in any case. @default true
 */
export function seclookupFrameworkErrors(api: Api, options: { prefix?: string; caseSensitive?: boolean } = {}) {
  const base = mountPath(options.prefix ?? '');
  const caseSensitive = options.caseSensitive ?? true;
  const cork = createTurnCork();
  // The plugin's routes take the whole of each asset mount (`/widget/*`), not only its files.
  const underMount = (path: string) => api.assetMounts.some((mount) => (caseSensitive ? path : path.toLowerCase()).startsWith(mount));
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const url = withoutPrefix(request.raw.url ?? '/', base, caseSensitive);
    const path = url?.split('?', 1)[0];
    if (url !== null && path !== undefined && (api.owns(path) || underMount(path))) return forward(api, cork, request, reply, url, request.raw);
    const statusCode = error.statusCode ?? 400;
    return reply.code(statusCode).send({ error: 'Bad Request', code: error.code, message: error.message, statusCode });
  };
}

/**
 * Fastify's own `clientErrorHandler` answers a request Node's parser refuses with its 400/408/431
 * body and closes at once, dropping answers still owed on the connection. Pass this as the
 * server's `clientErrorHandler` for the API's envelope, a request log line and those answers
 * first. (An `Expect` other than 100-continue still gets Node's bare 417 under Fastify.)
 *
 * @example
 * const app = Fastify({ clientErrorHandler: seclookupClientErrors(api) });
 */
export function seclookupClientErrors(api: Api) {
  return (error: Error, socket: Socket) => answerClientError(api, error, socket);
}
