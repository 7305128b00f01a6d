/**
 * Real servers for the adapter conformance suite: each variant mounts one `Api` the way an
 * application would, listens on a loopback port chosen by the OS, and answers `{ baseUrl, close }`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { createListener } from '../../adapters/node.js';
import { seclookup as seclookupExpress } from '../../adapters/express.js';
import { seclookup as seclookupFastify, seclookupFrameworkErrors } from '../../adapters/fastify.js';
import type { Api } from '../../src/api/types.js';

export interface RunningServer {
  /** Where the API is mounted, without a trailing slash: `http://127.0.0.1:43127` or `.../sec`. */
  baseUrl: string;
  /** Scheme, host and port only, for the application's own routes. */
  origin: string;
  close(): Promise<void>;
}

export type Host = '127.0.0.1' | '::1';

export interface AdapterVariant {
  name: string;
  /** A path (from the origin) outside the API that the application answers with HELLO, if any. */
  userRoute?: string;
  start(api: Api, host?: Host): Promise<RunningServer>;
}

/** The body every unrelated user route answers, to prove requests reach the application. */
export const HELLO = { hello: 'world' };

/** The body limit the suite's Express variant gives its own JSON parser (and the APIs it mounts). */
export const BODY_LIMIT = 1024;

function origin(host: Host, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Listen a Node server (plain or Express) and wrap it. */
function listenNode(server: Server, host: Host): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: origin(host, port),
        origin: origin(host, port),
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}

async function listenFastify(app: FastifyInstance, host: Host, prefix = ''): Promise<RunningServer> {
  await app.listen({ port: 0, host });
  const { port } = app.server.address() as AddressInfo;
  return { baseUrl: origin(host, port) + prefix, origin: origin(host, port), close: () => app.close() };
}

function expressApp(api: Api, options: { parseJsonFirst: boolean }) {
  const app = express();
  // An application that parses JSON for its own routes, before mounting the API.
  if (options.parseJsonFirst) app.use(express.json({ limit: BODY_LIMIT }));
  app.get('/hello', (_req, res) => void res.json(HELLO));
  app.use(seclookupExpress({ api }));
  return app;
}

function fastifyApp(api: Api, prefix?: string): FastifyInstance {
  const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api, { prefix }) });
  app.get('/hello', async () => HELLO);
  app.register(seclookupFastify, prefix ? { api, prefix } : { api });
  return app;
}

export const ADAPTERS: readonly AdapterVariant[] = [
  {
    name: 'node',
    start: (api, host = '127.0.0.1') => listenNode(createServer(createListener(api)), host),
  },
  {
    name: 'express',
    userRoute: '/hello',
    start: (api, host = '127.0.0.1') => listenNode(createServer(expressApp(api, { parseJsonFirst: false })), host),
  },
  {
    name: 'express after express.json()',
    userRoute: '/hello',
    start: (api, host = '127.0.0.1') => listenNode(createServer(expressApp(api, { parseJsonFirst: true })), host),
  },
  {
    name: 'fastify',
    userRoute: '/hello',
    start: (api, host = '127.0.0.1') => listenFastify(fastifyApp(api), host),
  },
  {
    name: 'fastify with prefix /sec',
    userRoute: '/hello',
    start: (api, host = '127.0.0.1') => listenFastify(fastifyApp(api, '/sec'), host, '/sec'),
  },
];
