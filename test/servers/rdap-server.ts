/**
 * A loopback RDAP server for the whois tests: `GET <base>domain/<name>` answers from a table
 * of domain answers (real RDAP JSON from test/fixtures/rdap, or a behaviour), 404 for names
 * not in it, and misbehaves on request: never answers, closes early, sends without end, drips
 * one byte a second, answers garbage, redirects (in a loop, if asked).
 *
 * @example
 * const server = await startRdapServer({ 'google.com': rdapAnswer.file('domain/google.com.registry-verisign.json') });
 * createLookup({ whois: { rdapServers: { com: server.base } }, outbound: { allowPrivateTargets: ['127.0.0.0/8'] } });
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import type { TestCertificate } from './tls-server.js';

export type RdapHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface RdapTestServer {
  /** `http://127.0.0.1:PORT/` (`https://` when started with a certificate) */
  url: string;
  /** The RDAP base URL (`<url>rdap/`): domains are at `<base>domain/<name>`. */
  base: string;
  /** Set or replace a domain's answer (lower-case name). */
  set(domain: string, handler: RdapHandler): void;
  /** Requests seen per path (`/rdap/domain/google.com`). */
  hits: Map<string, number>;
  /** Accept headers seen, in order. */
  accepts: string[];
  close(): Promise<void>;
}

const FIXTURES = join(import.meta.dirname, '../fixtures/rdap');

/** Over HTTPS with `certificate` (and the certificates after it in `chain`); plain HTTP without. */
export interface RdapServerTls {
  certificate: TestCertificate;
  chain?: TestCertificate[];
}

export async function startRdapServer(domains: Record<string, RdapHandler> = {}, host = '127.0.0.1', tls?: RdapServerTls): Promise<RdapTestServer> {
  const table = new Map(Object.entries(domains).map(([name, handler]) => [name.toLowerCase(), handler]));
  const hits = new Map<string, number>();
  const accepts: string[] = [];
  const sockets = new Set<Socket>();
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://rdap.test').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    accepts.push(String(req.headers.accept));
    const match = /^\/rdap\/domain\/([^/]+)$/.exec(path);
    const handler = match ? table.get(decodeURIComponent(match[1]).toLowerCase()) : table.get(path.toLowerCase());
    (handler ?? rdapAnswer.notFound())(req, res);
  };
  const server = tls
    ? createHttpsServer({ key: tls.certificate.key.pem, cert: [tls.certificate, ...(tls.chain ?? [])].map((c) => c.pem).join('') }, answer)
    : createServer(answer);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}/`;
  return {
    url,
    base: `${url}rdap/`,
    set: (domain, handler) => void table.set(domain.toLowerCase(), handler),
    hits,
    accepts,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy(); // hanging and dripping answers end here (their timers stop on 'close')
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Ready-made answers. */
export const rdapAnswer = {
  /** A JSON document as `application/rdap+json`. */
  json(body: unknown, status = 200): RdapHandler {
    const text = JSON.stringify(body);
    return (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/rdap+json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
  },
  /** A fixture from test/fixtures/rdap, byte for byte. */
  file(relative: string): RdapHandler {
    const bytes = readFileSync(join(FIXTURES, relative));
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json', 'content-length': bytes.length });
      res.end(bytes);
    };
  },
  /** RFC 9083 error body with a status. */
  error(status: number): RdapHandler {
    return rdapAnswer.json({ errorCode: status, title: `status ${status}` }, status);
  },
  notFound(): RdapHandler {
    return rdapAnswer.error(404);
  },
  /** A redirect to `location` (absolute, or relative to this server). */
  redirect(location: string, status = 302): RdapHandler {
    return (_req, res) => {
      res.writeHead(status, { location, 'content-length': 0 });
      res.end();
    };
  },
  /** Not JSON at all. */
  garbage(text = '<html><body>Service Unavailable</body></html>'): RdapHandler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
  },
  /** Accept and never answer. */
  hang(): RdapHandler {
    return () => {};
  },
  /** Promise a long body, send a little of it, then close the connection. */
  closeEarly(): RdapHandler {
    return (req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json', 'content-length': 10_000 });
      res.write('{"objectClassName":"dom');
      setImmediate(() => req.socket.destroy());
    };
  },
  /** A body that never ends (chunked, 16 KiB every millisecond). */
  endless(): RdapHandler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      res.write('{"objectClassName":"domain","notices":["');
      const chunk = 'x'.repeat(16 * 1024);
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(chunk)), 1);
      res.on('close', () => clearInterval(timer));
    };
  },
  /** One byte a second, forever. */
  drip(): RdapHandler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('{')), 1_000);
      res.on('close', () => clearInterval(timer));
    };
  },
};
