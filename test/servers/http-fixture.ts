/**
 * A real HTTP server on 127.0.0.1 (random port) for tests that exercise network code:
 * each route is a handler that answers JSON, garbage, an error status, slowly, or never.
 *
 * @example
 * const server = await startHttpFixture({ '/api.github.com/meta': respond.json(meta) });
 * await updateWebhookRanges({ dataDir, mirror: server.url });
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FixtureHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpFixture {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** Handlers by exact path (query ignored); change them between requests. */
  routes: Map<string, FixtureHandler>;
  /** Requests seen per path, including unknown ones. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startHttpFixture(routes: Record<string, FixtureHandler> = {}): Promise<HttpFixture> {
  const table = new Map(Object.entries(routes));
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fixture').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = table.get(path) ?? respond.status(404, `no fixture route for ${path}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes: table,
    hits,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections(); // hanging routes keep sockets open
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Ready-made handlers. */
export const respond = {
  /** `body` as JSON, with a Content-Length. */
  json(body: unknown, status = 200): FixtureHandler {
    return respond.text(JSON.stringify(body), { status, contentType: 'application/json' });
  },

  /** Any text, e.g. an HTML error page where JSON was expected. */
  text(body: string, options: { status?: number; contentType?: string } = {}): FixtureHandler {
    return (_req, res) => {
      res.writeHead(options.status ?? 200, { 'content-type': options.contentType ?? 'text/plain', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
  },

  /** An error status with a short body. */
  status(code: number, body = `status ${code}`): FixtureHandler {
    return respond.text(body, { status: code });
  },

  /** Accept the request and never answer, not even the headers. */
  hang(): FixtureHandler {
    return () => {};
  },

  /** Send the headers and the first part of the body, then stall forever. */
  stallBody(firstPart = '{"partial": '): FixtureHandler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(firstPart);
    };
  },

  /** Send the body in chunks without a Content-Length (chunked encoding). */
  chunked(body: string, chunkSize = 1024): FixtureHandler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < body.length; i += chunkSize) res.write(body.slice(i, i + chunkSize));
      res.end();
    };
  },

  /** A redirect (`status`, default 302) to `location`, as given (relative or absolute). */
  redirect(location: string | null, status = 302): FixtureHandler {
    return (_req, res) => {
      res.writeHead(status, location === null ? { 'content-length': 0 } : { location, 'content-length': 0 });
      res.end();
    };
  },

  /** Run `handler` after `ms` milliseconds. */
  slow(ms: number, handler: FixtureHandler): FixtureHandler {
    return (req, res) => {
      const timer = setTimeout(() => handler(req, res), ms);
      res.on('close', () => clearTimeout(timer));
    };
  },
};
