/**
 * The API mounted in an Express app, beside the app's own answers:
 * - billing follows answers when the app answers first: a timeout middleware (connect-timeout's
 *   way) sends 503 while a lookup waits on the meter. The client has the app's answer, so the
 *   lookup is not billed and is logged as 499, and the core's late answer is dropped without
 *   cutting the keep-alive connection;
 * - the app's own paths below the widget's mount stay the app's;
 * - Fastify: a request Fastify refuses before the handler (a Content-Type it cannot parse, a
 *   method the app added) gets the API's answer on the API's paths, while the app's error
 *   handler and 404 handler keep answering everywhere else, and errors of the app's own hooks;
 * - an app stopping the documented way (trackInFlight) closes its meter after the refunds.
 */
import { once } from 'node:events';
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyError } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { seclookup } from '../../adapters/express.js';
import { seclookup as seclookupFastify, seclookupFrameworkErrors } from '../../adapters/fastify.js';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { exchange } from './raw-http.js';
import { trackInFlight } from '../../src/api/in-flight.js';
import { createApi } from '../../src/api/create-api.js';
import type { RequestLogEvent } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { ConsumeRequest, Meter } from '../../src/metering/types.js';
import { startDnsServer } from '../servers/dns-server.js';

let server: Server | undefined;
afterEach(() => server?.close());

describe('an answer the app sent before the API', () => {
  it('Express: a timeout middleware answers 503 while the lookup waits on the meter: not billed, logged 499, the connection kept', async () => {
    const inner = createMemoryMeter();
    const { secretKey, subscriptionId } = await issueKeys(inner, { product: 'useragent', plan: 'starter' });
    // The meter's consume waits at a gate the test opens, once the app has answered.
    let entered!: () => void;
    const consumeEntered = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const consume = async (request: ConsumeRequest) => {
      entered();
      await gate;
      return inner.consume(request);
    };
    const meter = new Proxy(inner, {
      get: (target, name) => {
        if (name === 'consume') return consume;
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Meter;
    const logged: RequestLogEvent[] = [];
    const errors: unknown[] = [];
    const responded = new Promise<void>((resolve) => {
      const api = createApi({
        lookup: createLookup(),
        meter,
        onError: (error) => errors.push(error),
        onResponse: (event) => void (logged.push(event), resolve()),
      });
      let held: express.Response | undefined;
      const app = express();
      app.use((req, res, next) => {
        if (req.path.startsWith('/v1/')) held = res;
        next();
      });
      app.use(seclookup({ api }));
      app.get('/app-timeout', (_req, res) => {
        held?.status(503).json({ appTimeout: true });
        res.json({ answered: true });
      });
      server = app.listen(0, '127.0.0.1');
    });
    await once(server!, 'listening');
    const { port } = server!.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string, key?: string) =>
      new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path, agent, headers: key ? { authorization: `Bearer ${key}` } : {} }, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body, socket: res.socket }));
        })
          .on('error', reject)
          .end();
      });

    const lookup = get('/v1/useragent/lookup?ua=curl%2F8', secretKey);
    await consumeEntered;
    // The app's timeout fires: it answers the lookup's request itself (from another connection here).
    const other = new Agent();
    await new Promise<void>((resolve) =>
      request({ port, host: '127.0.0.1', path: '/app-timeout', agent: other }, (res) => res.resume().on('end', resolve)).end(),
    );
    const answer = await lookup;
    expect([answer.status, JSON.parse(answer.body)]).toEqual([503, { appTimeout: true }]);
    release();
    await responded;
    expect(logged.map((event) => [event.status, event.error_code])).toEqual([[499, 'client_closed_request']]);
    expect(errors).toEqual([]);
    expect((await inner.usage()).reduce((sum, row) => sum + row.lookups, 0)).toBe(0);
    expect(await inner.quota(subscriptionId, 1000, Date.now())).toMatchObject({ remaining: 1000 });
    // The core's late answer was dropped, not forced onto the connection: it still serves the next request.
    const next = await get('/healthz');
    expect([next.status, next.socket]).toEqual([200, answer.socket]);
    agent.destroy();
    other.destroy();
  });
});

describe('a plain Node app that hands its /api/ paths to the listener', () => {
  /** A Node app: `before` runs first on every request (the app's own middleware-like code), then `/api/...` goes to the API. */
  async function nodeApp(before: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void) {
    const meter = createMemoryMeter();
    const { secretKey, subscriptionId } = await issueKeys(meter, { product: 'useragent', plan: 'starter' });
    const logged: RequestLogEvent[] = [];
    const errors: unknown[] = [];
    const api = createApi({ lookup: createLookup(), meter, onError: (error) => errors.push(error), onResponse: (event) => logged.push(event) });
    const listener = createListener(api);
    server = createServer(async (req, res) => {
      await before(req, res);
      if (!req.url?.startsWith('/api/')) return void res.end('app');
      req.url = req.url.slice('/api'.length);
      listener(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const send = (method: string, path: string, body?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers = { authorization: `Bearer ${secretKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
        request({ port, host: '127.0.0.1', method, path, headers }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        })
          .on('error', reject)
          .end(body);
      });
    const remaining = async () => (await meter.quota(subscriptionId, 1000, Date.now())).remaining;
    return { send, remaining, logged, errors };
  }

  it('a request the app answered before calling the listener is not looked up, billed or logged', async () => {
    // An auth check that answers 401 and, by mistake, falls through to the API.
    const app = await nodeApp((req, res) => {
      if (req.url?.includes('ua=blocked')) res.writeHead(401, { 'content-type': 'text/plain' }).end('app says no');
    });
    expect(await app.send('GET', '/api/v1/useragent/lookup?ua=blocked')).toEqual({ status: 401, body: 'app says no' });
    // The connection's next request (and the turn's end) come and go; nothing was billed.
    expect((await app.send('GET', '/api/v1/useragent/lookup?ua=curl%2F8')).status).toBe(200);
    expect(await app.remaining()).toBe(999);
    expect(app.logged.map((event) => [event.status, event.route])).toEqual([[200, '/v1/useragent/lookup']]);
    expect(app.errors).toEqual([]);
  });

  it("a body the app's own code read first is a 500 reported to onError, not the client's empty body", async () => {
    const collected: string[] = [];
    const app = await nodeApp(async (req) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      collected.push(text);
    });
    const answer = await app.send('POST', '/api/v1/useragent/lookup', JSON.stringify({ ua: 'curl/8' }));
    expect([answer.status, JSON.parse(answer.body).error_code]).toEqual([500, 'internal_error']);
    expect(collected).toEqual(['{"ua":"curl/8"}']);
    expect(app.errors).toMatchObject([{ code: 'internal_error', cause: { message: expect.stringContaining('read by the application') } }]);
    // Not counted as the client's bad input; a GET, which takes no body, is served as usual.
    expect((await app.send('GET', '/api/v1/useragent/lookup?ua=curl%2F8')).status).toBe(200);
    expect(await app.remaining()).toBe(999);
  });
});

describe("a Node app's own 'checkExpectation' listener beside handleClientErrors", () => {
  it.each(['before', 'after'])('registered %s it, answers an unsupported Expect alone: no second answer, nothing thrown or logged', async (order) => {
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter: createMemoryMeter(), onResponse: (event) => logged.push(event) });
    server = createServer(createListener(api));
    const appExpect = (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(417, { 'content-type': 'text/plain' }).end('app 417');
    if (order === 'before') server.on('checkExpectation', appExpect);
    handleClientErrors(server, api);
    if (order === 'after') server.on('checkExpectation', appExpect);
    const thrown: unknown[] = [];
    const onUncaught = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      const reply = await exchange(port, 'GET /v1/useragent/status HTTP/1.1\r\nHost: test\r\nExpect: bogus\r\n\r\n', { responses: 1, waitMs: 1000 });
      expect(reply.responses.map((response) => [response.status, response.body])).toEqual([[417, 'app 417']]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(thrown).toEqual([]);
      expect(logged).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe("the app's own paths beside the API's", () => {
  it("Express: /widget/ paths that are not the widget's files go to the app's routes and static files", async () => {
    const meter = createMemoryMeter();
    const api = createApi({ lookup: createLookup(), meter });
    const app = express();
    // What helmet sets app-wide by default: the widget's files still say they may be embedded.
    app.use((_req, res, next) => {
      res.setHeader('cross-origin-resource-policy', 'same-origin');
      next();
    });
    app.use(seclookup({ api }));
    app.get('/widget/settings', (_req, res) => res.json({ app: 'settings' }));
    app.use((req, res) => res.status(404).json({ app404: req.path }));
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answer = async (path: string, method = 'GET') => {
      const response = await fetch(`${base}${path}`, { method });
      return [response.status, response.headers.get('content-type'), await response.text()];
    };
    expect(await answer('/widget/settings')).toEqual([200, expect.stringContaining('json'), '{"app":"settings"}']);
    expect(await answer('/widget/app-widget.js')).toEqual([404, expect.stringContaining('json'), '{"app404":"/widget/app-widget.js"}']);
    // The widget's own files are the API's.
    const widget = await answer('/widget/api.js');
    expect(widget.slice(0, 2)).toEqual([200, expect.stringContaining('javascript')]);
    expect((await fetch(`${base}/widget/api.js`)).headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect((await fetch(`${base}/widget/settings`)).headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect((await answer('/widget/api.js', 'POST'))[0]).toBe(405);
  });
});

describe("Fastify: what Fastify refuses before a route's handler", () => {
  it("is the API's on its paths and the app's everywhere else", async () => {
    const meter = createMemoryMeter();
    const { secretKey } = await issueKeys(meter, { product: 'useragent', plan: 'starter' });
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => void logged.push(event) });
    const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api, { prefix: '/api' }) });
    const appErrors: string[] = [];
    app.setErrorHandler((error: FastifyError, request, reply) => {
      appErrors.push(`${request.method} ${request.url} ${error.code ?? error.message}`);
      return reply
        .code(error.statusCode ?? 500)
        .type('text/plain')
        .send('app error');
    });
    app.setNotFoundHandler((_request, reply) => reply.code(404).type('text/plain').send('app 404'));
    // The app's own hook, refusing on every path: its error stays the app's.
    app.addHook('onRequest', async (request) => {
      if (request.headers['x-app-refuses']) throw new Error('refused by the app');
    });
    app.post('/echo', async (request) => ({ got: request.body }));
    // A method Fastify does not route, added by the app as docs/mounting.md says: then the API's.
    app.addHttpMethod('PROPFIND', { hasBody: true });
    await app.register(seclookupFastify, { api, prefix: '/api' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const answer = async (method: string, path: string, headers: Record<string, string> = {}) => {
        const response = await fetch(`${base}${path}`, { method, headers, body: method === 'POST' ? '{}' : undefined });
        const text = await response.text();
        return [response.status, text.startsWith('{') ? JSON.parse(text).error_code : text];
      };
      const lookup = '/api/v1/useragent/lookup';
      expect(await answer('POST', lookup, { 'content-type': 'garbage' })).toEqual([401, 'missing_credentials']);
      expect(await answer('POST', lookup, { 'content-type': 'garbage', authorization: `Bearer ${secretKey}` })).toEqual([415, 'unsupported_media_type']);
      expect(await answer('QUERY', lookup)).toEqual([405, 'method_not_allowed']);
      expect(await answer('PROPFIND', lookup)).toEqual([405, 'method_not_allowed']);
      expect(logged.map((event) => `${event.method} ${event.status}`)).toEqual(['POST 401', 'POST 415', 'QUERY 405', 'PROPFIND 405']);
      // One the app did not add stays Fastify's: the app's 404, on the API's paths too.
      expect(await answer('PURGE', '/api/healthz')).toEqual([404, 'app 404']);
      // The app's paths: its error handler, its 404.
      expect(await answer('POST', '/echo', { 'content-type': 'garbage' })).toEqual([415, 'app error']);
      expect(await answer('PROPFIND', '/echo')).toEqual([404, 'app 404']);
      expect(await answer('PROPFIND', '/api/elsewhere')).toEqual([404, 'app 404']);
      // The app's own hook refusing on the API's path.
      expect(await answer('POST', lookup, { 'content-type': 'garbage', 'x-app-refuses': '1' })).toEqual([500, 'app error']);
      expect(appErrors).toEqual(['POST /echo FST_ERR_CTP_INVALID_MEDIA_TYPE', 'POST /api/v1/useragent/lookup refused by the app']);
      expect(logged).toHaveLength(4);
    } finally {
      await app.close();
      await meter.close();
    }
  });
});

describe('stopping an app that embeds the API', () => {
  it('trackInFlight: after the connections are cut, settled() waits for the cut lookup to give its unit back; then the meter closes clean', async () => {
    const dns = await startDnsServer({ behaviour: 'silent' });
    const meter = createMemoryMeter();
    const { secretKey, subscriptionId } = await issueKeys(meter, { product: 'emailauth', plan: 'starter' });
    const errors: unknown[] = [];
    const lookup = createLookup({ dns: { servers: [dns.address] } });
    const api = trackInFlight(createApi({ lookup, meter, onError: (error) => errors.push(error) }));
    server = createServer(createListener(api));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const held = new Promise<string>((resolve) => {
      request({ port, host: '127.0.0.1', path: '/v1/emailauth/lookup?domain=example.com', headers: { authorization: `Bearer ${secretKey}` } }, () =>
        resolve('answered'),
      )
        .on('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? 'error'))
        .end();
    });
    // Held: its unit reserved, its DNS query asked of a server that never answers.
    while (api.pending === 0 || dns.total() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await meter.quota(subscriptionId, 1000, Date.now())).remaining).toBe(999);
    // SIGTERM, as docs/mounting.md has it: stop accepting, cut what is open, wait, then close the stores.
    server.close();
    server.closeAllConnections();
    expect(await held).toBe('ECONNRESET');
    await api.settled();
    expect(api.pending).toBe(0);
    // The cut lookup's unit is back before the meter closes, so nothing fails on a closed meter.
    expect((await meter.quota(subscriptionId, 1000, Date.now())).remaining).toBe(1000);
    await meter.close();
    await lookup.close();
    await dns.close();
    expect(errors).toEqual([]);
  });
});
