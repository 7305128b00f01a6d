/**
 * Transport abuse over real sockets: bodies over the limit, clients that vanish mid-body,
 * pipelined requests ending in garbage, and requests Node's own parser refuses. Each adapter
 * is mounted the way the README tells an application to.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { seclookup as seclookupExpress } from '../../adapters/express.js';
import { seclookup as seclookupFastify, seclookupClientErrors, seclookupFrameworkErrors } from '../../adapters/fastify.js';
import { createApi } from '../../src/api/create-api.js';
import type { Api, RequestLogEvent } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { MAX_WAITING } from '../../adapters/pipelining.js';
import { chunked, collect, exchange, jsonOf, openSocket, rawGet, type RawResponse } from './raw-http.js';

const BODY_LIMIT = 1024;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FROZEN_NOW = Date.now();
/** The slow DNS server's delay: long enough to look at a lookup while it is held. */
const DNS_DELAY_MS = 100;
let slowDns: DnsTestServer;

beforeAll(async () => {
  slowDns = await startDnsServer({ behaviour: 'slow', delayMs: DNS_DELAY_MS });
});
afterAll(async () => {
  await slowDns.close();
});

interface Running {
  server: Server;
  port: number;
  close(): Promise<void>;
}

interface Variant {
  name: string;
  /** The app's body parser reads a body it refused to its end (body-parser does), keeping the connection. */
  drainsRefusedBodies?: boolean;
  /** Node's `checkExpectation` is ours (Fastify's server leaves it to Node's bare 417). */
  answersExpectations: boolean;
  start(api: Api): Promise<Running>;
}

async function listenNode(server: Server): Promise<Running> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const VARIANTS: readonly Variant[] = [
  {
    name: 'node',
    answersExpectations: true,
    start: (api) => listenNode(handleClientErrors(createServer(createListener(api)), api)),
  },
  {
    name: 'express',
    answersExpectations: true,
    start: (api) => {
      const app = express();
      app.use(seclookupExpress({ api }));
      return listenNode(handleClientErrors(createServer(app), api));
    },
  },
  {
    name: 'express after express.json()',
    drainsRefusedBodies: true,
    answersExpectations: true,
    start: (api) => {
      const app = express();
      app.use(express.json({ limit: BODY_LIMIT }));
      app.use(seclookupExpress({ api }));
      return listenNode(handleClientErrors(createServer(app), api));
    },
  },
  {
    name: 'fastify',
    answersExpectations: false,
    start: async (api) => {
      const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api), clientErrorHandler: seclookupClientErrors(api) });
      app.register(seclookupFastify, { api });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return {
        server: app.server,
        port: (app.server.address() as AddressInfo).port,
        close: async () => {
          const closing = app.close();
          app.server.closeAllConnections();
          await closing;
        },
      };
    },
  },
];

/** One API on one adapter, with its meter, request log and operator error log. */
interface Stack {
  meter: Meter;
  port: number;
  server: Server;
  logged: RequestLogEvent[];
  errors: unknown[];
}

function lookupRequest(key: string, ua = CHROME): string {
  return `GET /v1/useragent/lookup?ua=${encodeURIComponent(ua)} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`;
}

function postHead(key: string, framing: string): string {
  return `POST /v1/useragent/lookup HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n`;
}

function expectEnvelope(response: RawResponse, status: number, errorCode: string): void {
  const body = jsonOf(response);
  expect({ status: response.status, error_code: body.error_code, success: body.success }).toEqual({ status, error_code: errorCode, success: false });
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(response.headers['x-request-id']).toBe(body.request_id);
}

/** Requests Node's HTTP parser refuses before any listener runs: [what, bytes, status, error_code]. */
const REFUSED_BY_NODE: readonly [string, string, number, string][] = [
  ['bad bytes in the request target', 'GET /v1/useragent/lookup?ua=a\x01b HTTP/1.1\r\nHost: test\r\n\r\n', 400, 'bad_request'],
  ['obsolete header folding', 'GET /healthz HTTP/1.1\r\nHost: test\r\nX-Folded: a\r\n b\r\n\r\n', 400, 'bad_request'],
  ['a control character in a header value', 'GET /healthz HTTP/1.1\r\nHost: test\r\nX-Note: a\x01b\r\n\r\n', 400, 'bad_request'],
  ['a header block over 16 KB', `GET /healthz HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, 431, 'request_header_fields_too_large'],
  ['TLS bytes on the plain-HTTP port', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 400, 'bad_request'],
];
const UNSUPPORTED_EXPECT = 'POST /v1/useragent/lookup HTTP/1.1\r\nHost: test\r\nExpect: bogus\r\nContent-Length: 2\r\n\r\n{}';

/** Poll until `ready()` holds; false if it still does not after `ms` (then the assertions say what was seen). */
async function waitUntil(ready: () => boolean, ms = 4000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

describe.each(VARIANTS)('$name adapter', (variant) => {
  let stack: Stack;
  let running: Running;

  beforeAll(async () => {
    const meter = createMemoryMeter();
    const logged: RequestLogEvent[] = [];
    const errors: unknown[] = [];
    const api = createApi({
      lookup: createLookup({ dns: { servers: [slowDns.address] } }),
      meter,
      bodyLimit: BODY_LIMIT,
      now: () => FROZEN_NOW,
      onResponse: (event) => logged.push(event),
      onError: (error) => errors.push(error),
    });
    running = await variant.start(api);
    stack = { meter, port: running.port, server: running.server, logged, errors };
  });

  afterAll(async () => {
    await running.close();
    await stack.meter.close();
  });

  describe('a chunked body over the limit', () => {
    // Far more than the socket buffers hold, so the parser is still mid-body when the core stops reading.
    const oversized = JSON.stringify({ ua: CHROME.padEnd(200_000, 'x') });
    const pieces = oversized.match(/[\s\S]{1,4000}/g) ?? [];

    it('answers 413, then closes with Connection: close or answers the next request; never stalls', async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const request = postHead(secretKey, 'Transfer-Encoding: chunked\r\n') + chunked(pieces) + 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n';
      const reply = await exchange(stack.port, request, { responses: 2 });
      expectEnvelope(reply.responses[0], 413, 'payload_too_large');
      if (variant.drainsRefusedBodies) {
        // express.json() reads a refused body to its end itself, so the connection goes on.
        expect(reply.responses.map((r) => r.status)).toEqual([413, 200]);
        expect(jsonOf(reply.responses[1])).toEqual({ success: true, status: 'ok' });
      } else {
        expect(reply.responses.map((r) => r.status)).toEqual([413]);
        expect(reply.responses[0].headers.connection).toBe('close');
        expect(reply.closedByServer).toBe(true);
      }
    });

    it.each([
      ['2 KB, which arrives with its headers', 2 * BODY_LIMIT],
      ['100 KB, which is still arriving when the 413 is sent', 100_000],
    ])('when a lookup is pipelined after a body over the limit of %s, bills it only if it answers it', async (_what, size) => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const body = JSON.stringify({ ua: CHROME.padEnd(size, 'x') });
      const reply = await exchange(stack.port, postHead(secretKey, `Content-Length: ${body.length}\r\n`) + body + lookupRequest(secretKey), { responses: 2 });
      expectEnvelope(reply.responses[0], 413, 'payload_too_large');
      // Either the body had fully arrived and the connection goes on, or it closes after the 413.
      const answered = reply.responses.slice(1).map((r) => [r.status, jsonOf(r).user_agent]);
      expect(answered).toEqual(reply.responses[0].headers.connection === 'close' ? [] : [[200, CHROME]]);
      // A lookup the server ran after its Connection: close would be billed and never answered.
      const healthz = await exchange(stack.port, 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n', { responses: 1 });
      expect(healthz.responses.map((r) => r.status)).toEqual([200]);
      expect(await waitUntil(() => stack.logged.some((e, i) => i >= loggedBefore && e.route === '/healthz'))).toBe(true);
      // (In any order: express.json() drains the refused body first, so the lookup can finish before the 413.)
      const logged = stack.logged.slice(loggedBefore).map((e) => `${e.status} ${e.route}`);
      expect(logged.sort()).toEqual(['200 /healthz', ...answered.map(() => '200 /v1/useragent/lookup'), '413 /v1/useragent/lookup'].sort());
      expect((await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000 - answered.length);
    });

    it('closes after refusing a request before its body arrived, and sends no second answer for garbage that follows', async () => {
      const socket = await openSocket(stack.port);
      socket.write('POST /v1/useragent/lookup HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"ua":\r\n');
      const replying = collect(socket);
      await once(socket, 'data');
      socket.write('zz\r\n');
      const reply = await replying;
      expect(reply.responses).toHaveLength(1);
      expectEnvelope(reply.responses[0], 401, 'missing_credentials');
      expect(reply.responses[0].headers.connection).toBe('close');
      expect(reply.closedByServer).toBe(true);
    });

    it('still keeps the connection for the next request when a chunked body is within the limit', async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const body = JSON.stringify({ ua: CHROME });
      const request =
        postHead(secretKey, 'Transfer-Encoding: chunked\r\n') + chunked([body.slice(0, 50), body.slice(50)]) + 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n';
      const reply = await exchange(stack.port, request, { responses: 2 });
      expect(reply.responses.map((r) => r.status)).toEqual([200, 200]);
      expect(jsonOf(reply.responses[1])).toEqual({ success: true, status: 'ok' });
    });
  });

  describe('a client that goes away mid-body', () => {
    it.each([
      ['closes its connection', 'close'],
      ['resets its connection', 'reset'],
    ] as const)('when it %s, the request is logged as 499 client_closed_request, not a server error, and costs no quota', async (_name, how) => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const errorsBefore = stack.errors.length;
      const socket = await openSocket(stack.port);
      socket.on('error', () => {});
      const arrived = once(stack.server, 'request');
      // 40 of the 1,000 bytes promised: the core is left waiting for the rest.
      socket.write(postHead(secretKey, 'Content-Length: 1000\r\n') + '{"ua":"' + 'x'.repeat(33));
      await arrived;
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();

      expect(await waitUntil(() => stack.logged.length > loggedBefore)).toBe(true);
      expect(stack.logged.slice(loggedBefore)).toMatchObject([
        { method: 'POST', route: '/v1/useragent/lookup', product: 'useragent', status: 499, error_code: 'client_closed_request' },
      ]);
      expect(stack.errors.slice(errorsBefore)).toEqual([]);
      const quota = await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW);
      expect(quota.remaining).toBe(10_000);
    });
  });

  describe('pipelined requests ending in a malformed one', () => {
    it('writes all 100 answers, in order, before the error answer, and bills exactly those 100', async () => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const userAgents = Array.from({ length: 100 }, (_, i) => `${CHROME} probe/${i}`);
      const malformed = 'GET /v1/useragent/lookup HTTP/1.1\r\nHost: test\r\nBad Header\r\n\r\n';
      const reply = await exchange(stack.port, userAgents.map((ua) => lookupRequest(secretKey, ua)).join('') + malformed);

      expect(reply.responses).toHaveLength(101);
      expect(reply.responses.slice(0, 100).map((r) => [r.status, jsonOf(r).user_agent])).toEqual(userAgents.map((ua) => [200, ua]));
      const last = reply.responses[100];
      expectEnvelope(last, 400, 'bad_request');
      expect(last.headers.connection).toBe('close');
      expect(reply.closedByServer).toBe(true);

      expect((await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000 - 100);
      expect(await waitUntil(() => stack.logged.length >= loggedBefore + 101)).toBe(true);
      const events = stack.logged.slice(loggedBefore);
      expect(events.slice(0, 100).map((e) => e.status)).toEqual(Array(100).fill(200));
      expect(events.slice(100)).toMatchObject([{ route: 'unmatched', status: 400, error_code: 'bad_request', request_id: jsonOf(last).request_id }]);
    });
  });

  describe('pipelined lookups held up by a slow upstream', () => {
    it('handles them one at a time, as nginx does: one quota unit held, then each answered in order and billed', async () => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'emailauth' });
      const remaining = async () => (await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining;
      const domains = Array.from({ length: 4 }, (_, i) => `held${i}.example.com`);
      const requests = domains.map((domain) => rawGet(`/v1/emailauth/lookup?domain=${domain}`, secretKey));
      const queriesBefore = slowDns.total();
      const replying = exchange(stack.port, requests.join(''), { responses: 4 });
      expect(await waitUntil(() => slowDns.total() > queriesBefore)).toBe(true);
      // The first lookup is waiting for DNS; the three behind it have not been handled yet.
      expect(await remaining()).toBe(10_000 - 1);
      const reply = await replying;

      expect(reply.responses.map((r) => [r.status, jsonOf(r).domain])).toEqual(domains.map((domain) => [200, domain]));
      expect(await remaining()).toBe(10_000 - 4);
    });

    it('never handles those still in line when the client leaves: not answered, billed or logged', async () => {
      const held = await issueKeys(stack.meter, { product: 'emailauth' });
      const cached = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const queriesBefore = slowDns.total();
      const socket = await openSocket(stack.port);
      socket.on('error', () => {});
      socket.write(rawGet('/v1/emailauth/lookup?domain=left.example.com', held.secretKey) + lookupRequest(cached.secretKey).repeat(3));
      expect(await waitUntil(() => slowDns.total() > queriesBefore)).toBe(true);
      socket.destroy();

      // The held lookup is abandoned and logged; the three behind it never ran.
      expect(await waitUntil(() => stack.logged.length > loggedBefore)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 3 * DNS_DELAY_MS));
      expect(stack.logged.slice(loggedBefore).map((event) => event.product)).toEqual(['emailauth']);
      // The held unit comes back when the abandoned lookup ends: its DNS answers may take longer on a loaded machine.
      const heldRemaining = async () => (await stack.meter.quota(held.subscriptionId, 10_000, FROZEN_NOW)).remaining;
      for (let tries = 0; (await heldRemaining()) !== 10_000 && tries < 400; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await heldRemaining()).toBe(10_000);
      expect((await stack.meter.quota(cached.subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000);
    });
  });

  describe('a client that pipelines without reading', () => {
    it('has at most MAX_WAITING requests waiting in line: the rest are handled at once, so Node stops reading it', async () => {
      let parsed = 0;
      const count = () => parsed++;
      stack.server.on('request', count);
      const loggedBefore = stack.logged.length;
      const socket = await openSocket(stack.port);
      socket.on('error', () => {});
      // The client reads nothing back, so no answer is written and no turn in line comes.
      socket.pause();
      socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n'.repeat(20_000));
      for (let seen = -1; seen !== parsed; ) {
        seen = parsed;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const handled = stack.logged.length - loggedBefore;
      socket.destroy();
      stack.server.off('request', count);
      // Requests parsed but never handled take memory and make no answer that Node's flood guard
      // (it stops reading at 16 KiB of queued answers) could count: they stay at the line's length.
      expect(parsed).toBeGreaterThan(MAX_WAITING);
      expect(parsed - handled).toBeLessThanOrEqual(MAX_WAITING + 1);
    });
  });

  describe('pipelined POSTs', () => {
    it('reads each body, Content-Length and chunked alike, in one write, and answers each with its own, in order', async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const userAgents = Array.from({ length: 40 }, (_, i) => `${CHROME} post/${i}`);
      const posts = userAgents.map((ua, i) => {
        const body = JSON.stringify({ ua });
        return i % 2
          ? postHead(secretKey, `Content-Length: ${Buffer.byteLength(body)}\r\n`) + body
          : postHead(secretKey, 'Transfer-Encoding: chunked\r\n') + chunked([body.slice(0, 9), body.slice(9)]);
      });
      const reply = await exchange(stack.port, posts.join(''), { responses: 40 });

      expect(reply.responses.map((r) => [r.status, jsonOf(r).user_agent])).toEqual(userAgents.map((ua) => [200, ua]));
    });
  });

  describe('a request target in absolute form (RFC 9112 3.2.2: a server must accept it)', () => {
    it('is served as its path: healthz, and a lookup with its query, billed and logged under its route', async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const lookup = `GET http://api.example/v1/useragent/lookup?ua=${encodeURIComponent(CHROME)} HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${secretKey}\r\n\r\n`;
      const reply = await exchange(stack.port, `GET HTTP://api.example/healthz HTTP/1.1\r\nHost: api.example\r\n\r\n${lookup}`, { responses: 2 });
      expect(reply.responses.map((r) => r.status)).toEqual([200, 200]);
      expect(jsonOf(reply.responses[1]).user_agent).toBe(CHROME);
      expect(reply.responses[1].headers['x-quota-remaining']).toBeDefined();
      expect(stack.logged.at(-1)).toMatchObject({ route: '/v1/useragent/lookup', status: 200 });
    });
  });

  describe("requests Node's parser refuses", () => {
    const cases = [
      ...REFUSED_BY_NODE,
      ...(variant.answersExpectations ? [['an Expect other than 100-continue', UNSUPPORTED_EXPECT, 417, 'expectation_failed'] as const] : []),
    ];

    it.each(cases)('answers %s in the envelope, closes, and logs it', async (_what, bytes, status, errorCode) => {
      const loggedBefore = stack.logged.length;
      const reply = await exchange(stack.port, bytes);
      expect(reply.responses).toHaveLength(1);
      const [answer] = reply.responses;
      expectEnvelope(answer, status, errorCode);
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(reply.closedByServer).toBe(true);
      expect(await waitUntil(() => stack.logged.length > loggedBefore)).toBe(true);
      expect(stack.logged.slice(loggedBefore)).toEqual([
        {
          time: expect.any(String),
          request_id: jsonOf(answer).request_id,
          // The method when its request line was read (TLS bytes have none).
          method: /^(GET|POST) /.exec(bytes)?.[1] ?? '-',
          route: 'unmatched',
          product: null,
          status,
          error_code: errorCode,
          latency_ms: 0,
          client_ip: '127.0.0.1',
        },
      ]);
    });

    // A HEAD's answer has no body (RFC 9110 9.3.2): a client reads none, and Node's own client
    // failed on the envelope's bytes ("Data after Connection: close"), found by the fuzz run.
    const headOf = (bytes: string) => bytes.replace(/^GET /, 'HEAD ');
    it.each(REFUSED_BY_NODE.filter(([, bytes]) => bytes.startsWith('GET ')))(
      "answers a HEAD with %s with the envelope's headers and no body, and logs it as HEAD",
      async (_what, bytes, status, errorCode) => {
        const loggedBefore = stack.logged.length;
        const socket = await openSocket(stack.port);
        const received: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        socket.write(Buffer.from(headOf(bytes), 'latin1'));
        await once(socket, 'close');
        const text = Buffer.concat(received).toString('latin1');
        const headEnd = text.indexOf('\r\n\r\n');
        expect(headEnd).toBeGreaterThan(0);
        // Nothing after the header block.
        expect(text.length).toBe(headEnd + 4);
        expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(text).toMatch(/\r\nconnection: close\r\n/);
        expect(stack.logged.slice(loggedBefore)).toEqual([expect.objectContaining({ method: 'HEAD', status, error_code: errorCode })]);
        // The Content-Length a GET's answer has: the envelope's length.
        const length = Number(/\r\ncontent-length: (\d+)\r\n/.exec(text)?.[1]);
        const get = await exchange(stack.port, bytes);
        expect(get.responses[0].body.length).toBe(length);
      },
    );

    it('answers a HEAD over the header limit pipelined after a GET in the same write: 200, then 431 with no body', async () => {
      const big = REFUSED_BY_NODE.find(([what]) => what === 'a header block over 16 KB')![1];
      const socket = await openSocket(stack.port);
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.write(Buffer.from(`GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n${headOf(big)}`, 'latin1'));
      await once(socket, 'close');
      const text = Buffer.concat(received).toString('latin1');
      const second = text.indexOf('HTTP/1.1 431 ');
      expect(text.slice(0, second)).toMatch(/^HTTP\/1\.1 200 [\s\S]*\{"success":true,"status":"ok"\}$/);
      expect(text.indexOf('\r\n\r\n', second) + 4).toBe(text.length);
    });

    it("answers Node's own client a HEAD with a header over the limit: 431, no parse error", async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const answer = await new Promise<{ status?: number; headers?: Record<string, unknown>; error?: string }>((resolve) => {
        const req = httpRequest(
          {
            port: stack.port,
            host: '127.0.0.1',
            method: 'HEAD',
            path: '/v1/useragent/lookup?ua=x',
            headers: { authorization: `Bearer ${secretKey}${'a'.repeat(40_000)}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
            res.on('error', (error) => resolve({ error: error.message }));
          },
        );
        req.on('error', (error) => resolve({ error: error.message }));
        req.end();
      });
      expect(answer).toEqual({ status: 431, headers: expect.objectContaining({ connection: 'close', 'content-type': 'application/json; charset=utf-8' }) });
    });

    it('refuses a lookup with two Host lines (RFC 9112 3.2) in the envelope, logs it, bills nothing, and answers the request pipelined behind it', async () => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const twoHosts = lookupRequest(secretKey).replace('Host: test\r\n', 'Host: test\r\nHost: other.example\r\n');
      const reply = await exchange(stack.port, `${twoHosts}GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n`, { responses: 2 });
      expect(reply.responses.map((r) => r.status)).toEqual([400, 200]);
      expectEnvelope(reply.responses[0], 400, 'bad_request');
      expect(jsonOf(reply.responses[0]).error).toBe('the request has more than one Host header; send one');
      // The request was framed as any other: the connection goes on.
      expect(reply.responses[0].headers.connection).not.toBe('close');
      expect(await waitUntil(() => stack.logged.length >= loggedBefore + 2)).toBe(true);
      expect(stack.logged.slice(loggedBefore).map((e) => [e.method, e.route, e.status, e.error_code])).toEqual([
        ['GET', 'unmatched', 400, 'bad_request'],
        ['GET', '/healthz', 200, null],
      ]);
      expect((await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000);
    });

    it('answers CONNECT, which never reaches a request listener, 405 in the envelope after the lookup before it, and logs it', async () => {
      const { secretKey } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const reply = await exchange(stack.port, lookupRequest(secretKey) + 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expect(reply.responses.map((r) => r.status)).toEqual([200, 405]);
      const [, answer] = reply.responses;
      expectEnvelope(answer, 405, 'method_not_allowed');
      expect(answer.headers.allow).toBe('GET, HEAD, POST');
      expect(answer.headers.connection).toBe('close');
      expect(reply.closedByServer).toBe(true);
      expect(await waitUntil(() => stack.logged.length >= loggedBefore + 2)).toBe(true);
      expect(stack.logged.slice(loggedBefore)).toMatchObject([
        { method: 'GET', route: '/v1/useragent/lookup', status: 200 },
        {
          request_id: jsonOf(answer).request_id,
          method: 'CONNECT',
          route: 'unmatched',
          product: null,
          status: 405,
          error_code: 'method_not_allowed',
          client_ip: '127.0.0.1',
        },
      ]);
    });

    it('answers the lookup before a POST whose chunked body turns into garbage, then refuses that POST', async () => {
      const { secretKey, subscriptionId } = await issueKeys(stack.meter, { product: 'useragent' });
      const loggedBefore = stack.logged.length;
      const reply = await exchange(stack.port, lookupRequest(secretKey) + postHead(secretKey, 'Transfer-Encoding: chunked\r\n') + '6\r\n{"ua":\r\nzz\r\n');
      expect(reply.responses.map((r) => r.status)).toEqual([200, 400]);
      expect(jsonOf(reply.responses[0]).user_agent).toBe(CHROME);
      expectEnvelope(reply.responses[1], 400, 'bad_request');
      expect(reply.closedByServer).toBe(true);
      // The POST itself never completed: the core logs it as cut off, and bills only the lookup.
      expect(await waitUntil(() => stack.logged.length >= loggedBefore + 3)).toBe(true);
      expect(stack.logged.slice(loggedBefore).map((e) => [e.route, e.status, e.error_code])).toEqual([
        ['/v1/useragent/lookup', 200, null],
        ['unmatched', 400, 'bad_request'],
        ['/v1/useragent/lookup', 499, 'client_closed_request'],
      ]);
      expect((await stack.meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000 - 1);
    });
  });
});

describe('a request that does not arrive in time (node adapter)', () => {
  it('a body that trickles in (slowloris) is cut at requestTimeout: 408 in the envelope, logged as 499 for the lookup, no quota', async () => {
    const meter = createMemoryMeter();
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter, now: () => FROZEN_NOW, onResponse: (event) => logged.push(event) });
    const { secretKey, subscriptionId } = await issueKeys(meter, { product: 'useragent' });
    const server = createServer({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 }, createListener(api));
    const running = await listenNode(handleClientErrors(server, api));
    try {
      const socket = await openSocket(running.port);
      socket.write(postHead(secretKey, 'Content-Length: 1000\r\n') + '{"ua":"');
      const replying = collect(socket, { waitMs: 10_000 });
      // One more byte now and then, never the whole body.
      const trickle = setInterval(() => socket.writable && socket.write('x'), 50);
      const reply = await replying;
      clearInterval(trickle);
      expect(reply.responses).toHaveLength(1);
      expectEnvelope(reply.responses[0], 408, 'request_timeout');
      expect(reply.closedByServer).toBe(true);
      expect(await waitUntil(() => logged.length >= 2)).toBe(true);
      expect(logged.map((e) => [e.route, e.status, e.error_code]).sort()).toEqual([
        ['/v1/useragent/lookup', 499, 'client_closed_request'],
        ['unmatched', 408, 'request_timeout'],
      ]);
      expect((await meter.quota(subscriptionId, 10_000, FROZEN_NOW)).remaining).toBe(10_000);
    } finally {
      await running.close();
      await meter.close();
    }
  });

  it('is answered 408 request_timeout in the envelope and closed', async () => {
    const meter = createMemoryMeter();
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => logged.push(event) });
    // Node checks for overdue requests every connectionsCheckingInterval.
    const server = createServer({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 }, createListener(api));
    const running = await listenNode(handleClientErrors(server, api));
    try {
      const reply = await exchange(running.port, 'GET /healthz HTTP/1.1\r\nHost: te');
      expect(reply.responses).toHaveLength(1);
      expectEnvelope(reply.responses[0], 408, 'request_timeout');
      expect(reply.closedByServer).toBe(true);
      expect(logged).toMatchObject([{ route: 'unmatched', status: 408, error_code: 'request_timeout' }]);
    } finally {
      await running.close();
      await meter.close();
    }
  });
});

describe('an HTTP/1.1 request without Host (node adapter)', () => {
  async function answerTo(options: { requireHostHeader?: boolean }) {
    const meter = createMemoryMeter();
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => logged.push(event) });
    const running = await listenNode(handleClientErrors(createServer(options, createListener(api)), api));
    try {
      // Then a request with its Host, pipelined behind.
      const bytes = 'GET /healthz HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: test\r\n\r\n';
      return { reply: await exchange(running.port, bytes, { responses: 2, waitMs: 2000 }), logged };
    } finally {
      await running.close();
      await meter.close();
    }
  }

  it("is refused in the envelope and logged on a server with Node's check off (requireHostHeader: false, as serve's)", async () => {
    const { reply, logged } = await answerTo({ requireHostHeader: false });
    expect(reply.responses.map((r) => r.status)).toEqual([400, 200]);
    expectEnvelope(reply.responses[0], 400, 'bad_request');
    expect(jsonOf(reply.responses[0]).error).toBe('the request has no Host header, which HTTP/1.1 requires');
    expect(logged).toMatchObject([
      { method: 'GET', route: 'unmatched', status: 400, error_code: 'bad_request' },
      { route: '/healthz', status: 200 },
    ]);
  });

  it("keeps Node's own bare 400 on a server made with Node's defaults: the application's other routes are its own", async () => {
    const { reply, logged } = await answerTo({});
    // Node closes after its own answer: the request behind it is never read.
    expect(reply.responses.map((r) => [r.status, r.body])).toEqual([[400, '']]);
    expect(reply.closedByServer).toBe(true);
    expect(logged).toEqual([]);
  });
});
