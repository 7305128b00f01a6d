import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../src/api/types.js';
import { HEALTH_PATH } from '../src/api/router.js';

export interface SeclookupFastifyOptions {
  api: Api;
}

/**
 * A Fastify plugin serving the API under `/v1/*` and `/healthz` (plus any `prefix` given to
 * `register`). It is encapsulated: its raw-body content-type parser does not leak into the
 * rest of the application.
 *
 * @example
 * app.register(seclookup, { api });
 */
export async function seclookup(fastify: FastifyInstance, options: SeclookupFastifyOptions): Promise<void> {
  const { api } = options ?? ({} as SeclookupFastifyOptions);
  if (!api || typeof api.handle !== 'function') throw new TypeError('seclookup/fastify: pass { api } from createApi()');

  // Hand the untouched body stream to the core, which applies its own size cap and parsing.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void) => done(null, payload));

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const prefix = fastify.prefix;
    const url = prefix && request.url.startsWith(prefix) ? request.url.slice(prefix.length) || '/' : request.url;
    const response = await api.handle({
      method: request.method,
      url,
      headers: request.headers,
      body: (request.body as AsyncIterable<Uint8Array> | undefined) ?? undefined,
      remoteAddress: request.raw.socket.remoteAddress,
    });
    return reply.code(response.status).headers(response.headers).send(response.body);
  };
  fastify.all('/v1/*', handler);
  fastify.route({ method: ['GET', 'HEAD'], url: HEALTH_PATH, handler, exposeHeadRoute: false });
}
