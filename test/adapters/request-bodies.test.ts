/**
 * Request bodies through each adapter, over real sockets: the API's `bodyLimit`, its envelope
 * for an app parser's refusals, a JSON `null`, repeated form fields, and a Fastify prefix with a
 * trailing slash. The Express variants mount body-parser (`express.json()`,
 * `express.urlencoded()`) before the API, as an application with its own routes does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type ErrorRequestHandler, type Express } from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seclookup as seclookupExpress } from '../../adapters/express.js';
import { seclookup as seclookupFastify, seclookupFrameworkErrors } from '../../adapters/fastify.js';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { createApi } from '../../src/api/create-api.js';
import { DEFAULT_BODY_LIMIT } from '../../src/api/body.js';
import type { Api, ApiOptions } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { chunked, exchange, jsonOf, type RawResponse } from './raw-http.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SMALL_LIMIT = 1024;

interface Stack {
  api: Api;
  meter: Meter;
  key: string;
  errors: unknown[];
}

async function createStack(options: Partial<ApiOptions> = {}): Promise<Stack> {
  const meter = createMemoryMeter();
  const errors: unknown[] = [];
  const api = createApi({ lookup: createLookup(), meter, onError: (error) => errors.push(error), ...options });
  const { secretKey } = await issueKeys(meter, { product: 'useragent', plan: 'enterprise' });
  return { api, meter, key: secretKey, errors };
}

interface Running {
  port: number;
  close(): Promise<void>;
}

async function listenNode(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function listenFastify(app: FastifyInstance): Promise<Running> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
}

/** An Express app: `before` mounts the app's own middleware, then the API, then an app error handler. */
function expressApp(api: Api, before: (app: Express) => void): Promise<Running> {
  const app = express();
  before(app);
  app.use(seclookupExpress({ api }));
  // The application's own error handler: what an error the API passes on reaches.
  const appErrors: ErrorRequestHandler = (error, _req, res, _next) =>
    void res
      .status(418)
      .type('text/plain')
      .send(`app handled ${error.type ?? error.message}`);
  app.use(appErrors);
  return listenNode(handleClientErrors(createServer(app), api));
}

interface Post {
  path?: string;
  key?: string;
  type?: string;
  /** 'length' (Content-Length) or 'chunked' framing. @default 'length' */
  framing?: 'length' | 'chunked';
  headers?: Record<string, string>;
}

/** One POST on a new connection, with exactly these bytes, and its answer. */
async function post(port: number, body: string | Buffer, options: Post = {}): Promise<RawResponse> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const head = [
    `POST ${options.path ?? '/v1/useragent/lookup'} HTTP/1.1`,
    'Host: test',
    ...(options.key ? [`Authorization: Bearer ${options.key}`] : []),
    `Content-Type: ${options.type ?? 'application/json'}`,
    options.framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes.length}`,
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  const payload = options.framing === 'chunked' ? Buffer.from(chunked(bytes.toString().match(/[\s\S]{1,4000}/g) ?? [])) : bytes;
  const reply = await exchange(port, Buffer.concat([Buffer.from(`${head}\r\n\r\n`), payload]), { responses: 1 });
  expect(reply.responses, `no answer; got ${JSON.stringify(reply.leftover.slice(0, 200))}`).toHaveLength(1);
  return reply.responses[0];
}

/** The status and error code of an answer in the API's envelope (its JSON type and request id checked). */
function envelope(response: RawResponse): [number, string | undefined] {
  const body = jsonOf(response);
  expect(response.headers['content-type'], response.body.slice(0, 200)).toBe('application/json; charset=utf-8');
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  return [response.status, body.success === true ? undefined : body.error_code];
}

/** A JSON body of about `size` bytes, with a valid User-Agent. */
function jsonOfSize(size: number): string {
  return JSON.stringify({ ua: CHROME, pad: 'x'.repeat(size - CHROME.length - 20) });
}

describe('bodyLimit with express.json() mounted first (its own limit is 100 KB)', () => {
  let small: Stack;
  let byDefault: Stack;
  let smallApp: Running;
  let defaultApp: Running;

  beforeAll(async () => {
    small = await createStack({ bodyLimit: SMALL_LIMIT });
    byDefault = await createStack();
    smallApp = await expressApp(small.api, (app) => app.use(express.json()));
    defaultApp = await expressApp(byDefault.api, (app) => app.use(express.json()));
  });
  afterAll(async () => {
    await Promise.all([smallApp.close(), defaultApp.close()]);
    await Promise.all([small.meter.close(), byDefault.meter.close()]);
  });

  it('answers 413 payload_too_large for a 50 KB body over bodyLimit 1024, as without an app parser', async () => {
    const body = jsonOfSize(50_000);
    expect(envelope(await post(smallApp.port, body, { key: small.key }))).toEqual([413, 'payload_too_large']);
    // The key is still checked first.
    expect(envelope(await post(smallApp.port, body))).toEqual([401, 'missing_credentials']);
    // Within the limit, the parsed body is used.
    const within = await post(smallApp.port, JSON.stringify({ ua: CHROME }), { key: small.key });
    expect([within.status, jsonOf(within).user_agent]).toEqual([200, CHROME]);
  });

  it('answers 413 for a 100 KB body over the default 64 KiB', async () => {
    const body = jsonOfSize(100_000);
    expect(Buffer.byteLength(body)).toBeGreaterThan(DEFAULT_BODY_LIMIT);
    expect(envelope(await post(defaultApp.port, body, { key: byDefault.key }))).toEqual([413, 'payload_too_large']);
  });

  it('answers 413 for a chunked body whose content is over the limit, and 200 for one whose content fits', async () => {
    expect(envelope(await post(smallApp.port, jsonOfSize(50_000), { key: small.key, framing: 'chunked' }))).toEqual([413, 'payload_too_large']);
    // 1,500 bytes on the wire, of which most is whitespace the parser dropped: its content fits.
    const padded = JSON.stringify({ ua: CHROME }).replace('{', `{${' '.repeat(1_400)}`);
    expect(Buffer.byteLength(padded)).toBeGreaterThan(SMALL_LIMIT);
    const reply = await post(smallApp.port, padded, { key: small.key, framing: 'chunked' });
    expect([reply.status, jsonOf(reply).user_agent]).toEqual([200, CHROME]);
  });

  it('answers 413 for a gzip body whose inflated content is over the limit, though its Content-Length is not', async () => {
    const compressed = gzipSync(jsonOfSize(50_000));
    expect(compressed.length).toBeLessThan(SMALL_LIMIT);
    expect(envelope(await post(smallApp.port, compressed, { key: small.key, headers: { 'Content-Encoding': 'gzip' } }))).toEqual([413, 'payload_too_large']);
  });
});

describe("express.json()'s and express.urlencoded()'s refusals on the API's paths", () => {
  let stack: Stack;
  let jsonApp: Running;
  let formApp: Running;
  let verifyApp: Running;
  let encodingSetApp: Running;

  beforeAll(async () => {
    stack = await createStack();
    jsonApp = await expressApp(stack.api, (app) => app.use(express.json()));
    formApp = await expressApp(stack.api, (app) => app.use(express.urlencoded({ extended: true, parameterLimit: 3 })));
    verifyApp = await expressApp(stack.api, (app) =>
      app.use(
        express.json({
          verify: () => {
            throw new Error('no signature');
          },
        }),
      ),
    );
    // Code that sets the request's encoding before the parser: body-parser's 500 stream.encoding.set.
    encodingSetApp = await expressApp(stack.api, (app) => {
      app.use((req, _res, next) => {
        req.setEncoding('utf8');
        next();
      });
      app.use(express.json());
    });
  });
  afterAll(async () => {
    await Promise.all([jsonApp.close(), formApp.close(), verifyApp.close(), encodingSetApp.close()]);
    await stack.meter.close();
  });

  it.each([
    ['an unsupported charset (charset.unsupported)', { type: 'application/json; charset=latin1' }],
    ['an unsupported Content-Encoding (encoding.unsupported)', { headers: { 'Content-Encoding': 'foo' } }],
  ])('answers %s with 415 unsupported_media_type in the envelope, after the key', async (_what, options: Post) => {
    const body = JSON.stringify({ ua: CHROME });
    expect(envelope(await post(jsonApp.port, body, { ...options, key: stack.key }))).toEqual([415, 'unsupported_media_type']);
    expect(envelope(await post(jsonApp.port, body, options))).toEqual([401, 'missing_credentials']);
  });

  it('reads a form the parser refused for too many fields or too deep a nesting by its own rules', async () => {
    const form = 'application/x-www-form-urlencoded';
    const tooMany = await post(formApp.port, `ua=${encodeURIComponent(CHROME)}&a=1&b=2&c=3`, { key: stack.key, type: form });
    expect([tooMany.status, jsonOf(tooMany).user_agent]).toEqual([200, CHROME]);
    // Deeper than body-parser 2's default `depth` for extended forms, 32.
    const tooDeep = await post(formApp.port, `ua=${encodeURIComponent(CHROME)}&a${'[b]'.repeat(40)}=1`, { key: stack.key, type: form });
    expect([tooDeep.status, jsonOf(tooDeep).user_agent]).toEqual([200, CHROME]);
  });

  it("answers a stream the app's own code broke (stream.encoding.set) with 500 internal_error, reported to onError", async () => {
    const errorsBefore = stack.errors.length;
    expect(envelope(await post(encodingSetApp.port, JSON.stringify({ ua: CHROME }), { key: stack.key }))).toEqual([500, 'internal_error']);
    expect(stack.errors.slice(errorsBefore)).toMatchObject([{ code: 'internal_error', cause: { type: 'stream.encoding.set' } }]);
  });

  it("leaves the app's own verify refusal (entity.verify.failed) to the app's error handler", async () => {
    const reply = await post(verifyApp.port, JSON.stringify({ ua: CHROME }), { key: stack.key });
    expect([reply.status, reply.body]).toEqual([418, 'app handled entity.verify.failed']);
  });
});

describe('a body the app read itself before the API (a raw-body collector for webhook signatures)', () => {
  let stack: Stack;
  let collectorApp: Running;
  const collected: Buffer[] = [];

  beforeAll(async () => {
    stack = await createStack();
    // Drains the raw stream and keeps the bytes for itself, leaving req.body unset.
    collectorApp = await expressApp(stack.api, (app) =>
      app.use((req, _res, next) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          collected.push(Buffer.concat(chunks));
          next();
        });
      }),
    );
  });
  afterAll(async () => {
    await collectorApp.close();
    await stack.meter.close();
  });

  it('answers 500 internal_error, reported to onError, after the key; never a client error', async () => {
    const body = JSON.stringify({ ua: CHROME });
    const errorsBefore = stack.errors.length;
    expect(envelope(await post(collectorApp.port, body))).toEqual([401, 'missing_credentials']);
    expect(envelope(await post(collectorApp.port, body, { key: stack.key }))).toEqual([500, 'internal_error']);
    expect(envelope(await post(collectorApp.port, body, { key: stack.key, framing: 'chunked' }))).toEqual([500, 'internal_error']);
    expect(stack.errors.slice(errorsBefore)).toMatchObject([
      { code: 'internal_error', cause: { message: expect.stringContaining('read by middleware mounted before seclookup()') } },
      { code: 'internal_error', cause: { message: expect.stringContaining('read by middleware mounted before seclookup()') } },
    ]);
    expect(collected.at(-1)?.toString()).toBe(body);
  });

  it('still serves what needs no body: an empty POST and a GET', async () => {
    const errorsBefore = stack.errors.length;
    expect(envelope(await post(collectorApp.port, '', { key: stack.key }))).toEqual([400, 'invalid_user_agent']);
    const get = await exchange(
      collectorApp.port,
      `GET /v1/useragent/lookup?ua=${encodeURIComponent(CHROME)} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${stack.key}\r\n\r\n`,
      { responses: 1 },
    );
    expect([get.responses[0].status, jsonOf(get.responses[0]).user_agent]).toEqual([200, CHROME]);
    expect(stack.errors.slice(errorsBefore)).toEqual([]);
  });
});

/** Every way a body reaches the core: read by the core itself, or parsed by the app first. */
const VARIANTS: readonly { name: string; start(api: Api): Promise<Running> }[] = [
  { name: 'node', start: (api) => listenNode(handleClientErrors(createServer(createListener(api)), api)) },
  { name: 'express', start: (api) => expressApp(api, () => {}) },
  { name: 'express after express.json()', start: (api) => expressApp(api, (app) => app.use(express.json())) },
  { name: 'express after express.json({ strict: false })', start: (api) => expressApp(api, (app) => app.use(express.json({ strict: false }))) },
  { name: 'express after express.urlencoded({ extended: false })', start: (api) => expressApp(api, (app) => app.use(express.urlencoded({ extended: false }))) },
  { name: 'express after express.urlencoded({ extended: true })', start: (api) => expressApp(api, (app) => app.use(express.urlencoded({ extended: true }))) },
  {
    name: 'fastify',
    start: async (api) => {
      const app = Fastify();
      await app.register(seclookupFastify, { api });
      return listenFastify(app);
    },
  },
];

describe.each(VARIANTS)('$name', (variant) => {
  let stack: Stack;
  let running: Running;

  beforeAll(async () => {
    stack = await createStack();
    running = await variant.start(stack.api);
  });
  afterAll(async () => {
    await running.close();
    await stack.meter.close();
  });

  it('answers a JSON null body 400 invalid_json, as [], "str" and 123', async () => {
    for (const body of ['null', '[]', '"str"', '123']) {
      expect(envelope(await post(running.port, body, { key: stack.key })), body).toEqual([400, 'invalid_json']);
    }
  });

  it('reads an empty JSON body as no fields, as before (so the missing input is the product’s error)', async () => {
    expect(envelope(await post(running.port, '', { key: stack.key }))).toEqual([400, 'invalid_user_agent']);
  });

  it('reads a repeated form field as its first non-empty value', async () => {
    const form = 'application/x-www-form-urlencoded';
    const reply = await post(running.port, `ua=&ua=${encodeURIComponent(CHROME)}&ua=curl%2F8.0`, { key: stack.key, type: form });
    expect([reply.status, jsonOf(reply).user_agent]).toEqual([200, CHROME]);
  });
});

describe('fastify registered with a prefix', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await createStack();
  });
  afterAll(async () => {
    await stack.meter.close();
  });

  it.each(['/security', '/security/', 'security/'])('serves the API under %s', async (prefix) => {
    const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(stack.api, { prefix }) });
    app.get('/securityx/healthz', async () => ({ app: true }));
    await app.register(seclookupFastify, { api: stack.api, prefix });
    const running = await listenFastify(app);
    try {
      const get = (path: string, key?: string) =>
        exchange(running.port, `GET ${path} HTTP/1.1\r\nHost: test\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}\r\n`, { responses: 1 }).then(
          (reply) => reply.responses[0],
        );
      const healthz = await get('/security/healthz');
      expect([healthz.status, jsonOf(healthz)]).toEqual([200, { success: true, status: 'ok' }]);
      const lookup = await get(`/security/v1/useragent/lookup?ua=${encodeURIComponent(CHROME)}`, stack.key);
      expect([lookup.status, jsonOf(lookup).user_agent]).toEqual([200, CHROME]);
      expect(envelope(await post(running.port, JSON.stringify({ ua: CHROME }), { path: '/security/v1/useragent/lookup', key: stack.key }))).toEqual([
        200,
        undefined,
      ]);
      expect(envelope(await get('/security/v1/nothing', stack.key))).toEqual([404, 'not_found']);
      // Broken percent-encoding, refused by Fastify before any route: the product's input error.
      expect(envelope(await get('/security/v1/useragent/lookup/%E0%A4%A', stack.key))).toEqual([400, 'invalid_user_agent']);
      // Under the widget's mount, whose every path the plugin's route takes: the API's 404, as for a file not there.
      expect(envelope(await get('/security/widget/%zz'))).toEqual([404, 'not_found']);
      expect(envelope(await get('/security/widget/nothing.js'))).toEqual([404, 'not_found']);
      // A path that only begins with the prefix's text is the application's.
      const other = await get('/securityx/healthz');
      expect([other.status, jsonOf(other)]).toEqual([200, { app: true }]);
    } finally {
      await running.close();
    }
  });
});
