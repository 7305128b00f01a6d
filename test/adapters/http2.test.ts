/**
 * The API over HTTP/2, as a host gets it with `http2.createServer(createListener(api))` or
 * `Fastify({ http2: true })`: each request is a stream of one shared connection. A body over the
 * limit (with or without a Content-Length), a request answered before its body is read, and a
 * CONNECT stream are each answered on their stream, which then closes; the connection, and the
 * process, carry on. Both used to kill the process with an uncaught TypeError (found by a reviewer).
 * A stream reset before its body ends is the client gone, never a whole body. Last, Fastify's
 * `inject()`, the other way a request arrives without an HTTP/1.1 connection.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { type AddressInfo, connect } from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seclookup } from '../../adapters/fastify.js';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { mintCertificate } from '../servers/tls-server.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { createApiStack, type ApiStack } from '../api/harness.js';

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
  /** The stream was closed by the end of the answer (the server closed it, or both sides ended). */
  closed: boolean;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR, or a clean end). */
  rstCode: number;
  /** Bytes of the body the client had written when the stream closed. */
  sent: number;
}

/**
 * One request on `session`. A `body` of type number is that many bytes of a JSON string, written
 * in 16 KiB pieces as flow control lets them through, without a Content-Length; `endless` keeps
 * writing until the stream closes.
 */
function send(session: ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string | { bytes: number; endless?: boolean }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream: ClientHttp2Stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let text = '';
    let sent = 0;
    stream.on('response', (h) => {
      responseHeaders = h;
      status = Number(h[':status']);
    });
    stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    stream.on('error', reject);
    const settle = () => {
      stream.destroy();
      resolve({ status, headers: responseHeaders, body: text, closed, rstCode: stream.rstCode ?? 0, sent });
    };
    let closed = false;
    stream.on('close', () => {
      closed = true;
      settle();
    });
    // The whole answer read. A client still writing hears the server's RST_STREAM as `closed`
    // without a 'close' event (its writes wait for a window that never opens): look for it.
    stream.on('end', async () => {
      for (let waited = 0; !stream.closed && waited < 2_000; waited += 10) await sleep(10);
      closed = stream.closed;
      settle();
    });
    if (typeof body === 'string') stream.end(body);
    else if (body) {
      const piece = Buffer.alloc(16 * 1024, 'x');
      stream.write('{"ua":"');
      const pump = () => {
        while (!stream.closed && !stream.destroyed && (body.endless || sent < body.bytes)) {
          sent += piece.length;
          if (!stream.write(piece)) return void stream.once('drain', pump);
        }
        if (!stream.closed && !stream.destroyed) stream.end('"}');
      };
      pump();
    }
  });
}

/** An HTTP/2 frame: 9 bytes of header (length, type, flags, stream id), then the payload. */
function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK string literal (no Huffman): its length as a 7-bit-prefix integer, then the bytes. */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text);
  const length: number[] = [];
  if (bytes.length < 127) length.push(bytes.length);
  else {
    length.push(127);
    let rest = bytes.length - 127;
    for (; rest >= 128; rest >>= 7) length.push((rest & 127) | 128);
    length.push(rest);
  }
  return Buffer.concat([Buffer.from(length), bytes]);
}

/**
 * What a browser or curl sends when it gives up mid-upload, written frame by frame (Node's own
 * client cannot: its `stream.close(code)` ends the body, END_STREAM, before the RST_STREAM, so
 * the server rightly reads a complete body): HEADERS, a DATA frame without END_STREAM, then
 * RST_STREAM CANCEL. Resolves once the server has had time to handle it.
 */
async function cancelMidBody(port: number, path: string, headers: Record<string, string>, partialBody: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.on('data', () => {});
  await once(socket, 'connect');
  // :method POST, :path /, :scheme http from the static table; the path and the rest as literals.
  const block = Buffer.concat([
    Buffer.from([0x83, 0x86, 0x04]),
    hpackString(path),
    Buffer.from([0x01]),
    hpackString('127.0.0.1'),
    ...Object.entries(headers).flatMap(([name, value]) => [Buffer.from([0x00]), hpackString(name), hpackString(value)]),
  ]);
  const END_HEADERS = 0x4;
  const cancel = Buffer.alloc(4);
  cancel.writeUInt32BE(http2.constants.NGHTTP2_CANCEL);
  socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, 0, Buffer.alloc(0)), frame(1, END_HEADERS, 1, block)]));
  socket.write(frame(0, 0, 1, Buffer.from(partialBody)));
  await sleep(50);
  socket.write(frame(3, 0, 1, cancel));
  await sleep(100);
  socket.destroy();
}

const errorOf = (answer: Answer) => JSON.parse(answer.body) as { success: boolean; error_code: string };

let stack: ApiStack;
let key: string;
let nodeServer: http2.Http2Server;
let fastify: FastifyInstance<http2.Http2Server>;
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

beforeAll(async () => {
  stack = await createApiStack();
  key = (await stack.keys('useragent')).secretKey;
  // As docs/mounting.md has it: handleClientErrors is for HTTP/1.1's parser, not needed here.
  nodeServer = http2.createServer(createListener(stack.api));
  await new Promise<void>((resolve) => nodeServer.listen(0, '127.0.0.1', resolve));
  fastify = Fastify({ http2: true });
  await fastify.register(seclookup, { api: stack.api });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  process.on('warning', onWarning);
});
afterAll(async () => {
  process.off('warning', onWarning);
  await new Promise<void>((resolve) => nodeServer.close(() => resolve()));
  await fastify.close();
});

const servers = {
  'the Node adapter on http2.createServer': () => (nodeServer.address() as AddressInfo).port,
  'Fastify with http2: true': () => (fastify.server.address() as AddressInfo).port,
};

describe.each(Object.entries(servers))('over HTTP/2: %s', (name, port) => {
  let session: ClientHttp2Session;
  beforeAll(() => {
    session = http2.connect(`http://127.0.0.1:${port()}`);
    session.on('error', () => {});
  });
  afterAll(() => session.close());

  const lookup = (extra: http2.OutgoingHttpHeaders = {}) => ({
    ':method': 'POST',
    ':path': '/v1/useragent/lookup',
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    ...extra,
  });

  it('answers a GET and a POST with no Connection header, and keeps the connection for the next request', async () => {
    const get = await send(session, { ':path': '/v1/useragent/lookup?ua=curl/8.5.0', authorization: `Bearer ${key}` });
    expect(get.status).toBe(200);
    expect(JSON.parse(get.body)).toMatchObject({ success: true, user_agent: 'curl/8.5.0', is_bot: true });
    expect(get.headers.connection).toBeUndefined();
    const post = await send(session, lookup(), JSON.stringify({ ua: 'curl/8.5.0' }));
    expect(post.status).toBe(200);
    expect(post.headers.connection).toBeUndefined();
    expect(session.closed).toBe(false);
    expect(warnings.filter((w) => w.includes('onnection'))).toEqual([]);
  });

  it("takes the API's own host from :authority (HTTP/2 sends no Host): the widget's calls from the API's origin are not a third party", async () => {
    const site = await createSiteKey(stack.meter, { domains: ['shop.example'] });
    const origin = `http://127.0.0.1:${port()}`;
    const challenge = await send(session, { ':path': `/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example`, origin });
    expect(challenge.status).toBe(200);
    expect(JSON.parse(challenge.body)).toMatchObject({ success: true, puzzle_type: 'pow' });
    // Another origin is still a third party.
    const other = await send(session, { ':path': `/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=shop.example`, origin: 'http://127.0.0.2:1' });
    expect(other.status).toBe(403);
    expect(errorOf(other).error_code).toBe('domain_not_allowed');
  });

  it('a body over the limit without a Content-Length is 413 on its stream; the connection answers on', async () => {
    const tooLarge = await send(session, lookup(), { bytes: 100 * 1024 });
    expect(tooLarge.status).toBe(413);
    expect(errorOf(tooLarge)).toMatchObject({ success: false, error_code: 'payload_too_large' });
    const after = await send(session, lookup(), JSON.stringify({ ua: 'curl/8.5.0' }));
    expect(after.status).toBe(200);
  });

  it('a body over the limit with its Content-Length is 413 before it is read', async () => {
    const tooLarge = await send(session, lookup({ 'content-length': String(100 * 1024 + 9) }), { bytes: 100 * 1024 });
    expect(tooLarge.status).toBe(413);
    expect(errorOf(tooLarge).error_code).toBe('payload_too_large');
  });

  it('a client that would send for ever is told to stop (RST_STREAM NO_ERROR after the answer), and no key is needed for it', async () => {
    const siteverify = await send(
      session,
      { ':method': 'POST', ':path': '/v1/captcha/siteverify', 'content-type': 'application/json' },
      { bytes: 0, endless: true },
    );
    expect(siteverify.status).toBe(413);
    expect(siteverify.closed).toBe(true);
    expect(siteverify.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect(siteverify.sent).toBeLessThan(16 * 1024 * 1024);
    // A 401 given before reading the body: the body is never read, and the stream still closes.
    const noKey = await send(session, { ':method': 'POST', ':path': '/v1/useragent/lookup', 'content-type': 'application/json' }, { bytes: 0, endless: true });
    expect(noKey.status).toBe(401);
    expect(noKey.closed).toBe(true);
    expect(noKey.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect((await send(session, { ':path': '/healthz' })).status).toBe(200);
  });

  it('a body cut off by RST_STREAM (no END_STREAM) is the client gone: not looked up, not billed, logged as 499', async () => {
    const own = await stack.keys('useragent');
    const logged = stack.logged.length;
    // A form body that parses as it stands: only the missing END_STREAM says it is not whole.
    await cancelMidBody(
      port(),
      '/v1/useragent/lookup',
      { authorization: `Bearer ${own.secretKey}`, 'content-type': 'application/x-www-form-urlencoded' },
      'ua=curl%2F8',
    );
    const events = stack.logged.slice(logged).filter((event) => event.route === '/v1/useragent/lookup');
    expect(events.map((event) => [event.status, event.error_code])).toEqual([[499, 'client_closed_request']]);
    const billed = (await stack.meter.usage()).filter((row) => row.subscriptionId === own.subscriptionId);
    expect(billed.reduce((sum, row) => sum + row.lookups, 0)).toBe(0);
    expect(stack.errors).toEqual([]);
  });

  it('a CONNECT stream is 405 (in the envelope, with Allow, where the plugin listens for CONNECT); the connection carries on', async () => {
    const connect = await send(session, { ':method': 'CONNECT', ':authority': 'example.com:443' }, '');
    expect(connect.status).toBe(405);
    // Node answers it itself on a server with no 'connect' listener, as the Node adapter's is.
    if (name.startsWith('Fastify')) {
      expect(connect.headers.allow).toBe('GET, HEAD, POST');
      expect(errorOf(connect).error_code).toBe('method_not_allowed');
    }
    expect((await send(session, { ':path': '/healthz' })).status).toBe(200);
  });
});

describe('HTTP/2 over TLS with allowHTTP1, passed to handleClientErrors', () => {
  let server: http2.Http2SecureServer;
  let port: number;
  const certificate = mintCertificate({ subject: 'localhost', dnsNames: ['localhost'] });
  beforeAll(async () => {
    server = handleClientErrors(
      http2.createSecureServer({ key: certificate.key.pem, cert: certificate.pem, allowHTTP1: true }, createListener(stack.api)),
      stack.api,
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /**
   * `bytes` written on a TLS connection that offers HTTP/1.1 only, and what came back by the time
   * the server closed it. Not ended after them: a TLS server closes a half-closed connection at once.
   */
  const http1 = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certificate.pem, ALPNProtocols: ['http/1.1'] }, () =>
        socket.write(bytes),
      );
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
  const bodyOf = (message: string) => JSON.parse(message.slice(message.indexOf('\r\n\r\n') + 4)) as { error_code: string; request_id: string };

  it("answers what HTTP/1.1's parser refuses in the envelope, and logs it: a malformed header (400), an Expect it cannot meet (417), CONNECT (405)", async () => {
    const logged = stack.logged.length;
    const malformed = await http1('GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bodyOf(malformed).error_code).toBe('bad_request');
    const expectation = await http1('GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\n\r\n');
    expect(expectation).toMatch(/^HTTP\/1\.1 417 /);
    expect(bodyOf(expectation).error_code).toBe('expectation_failed');
    const connectRequest = await http1('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(connectRequest).toMatch(/^HTTP\/1\.1 405 /);
    expect(connectRequest).toMatch(/\r\nallow: GET, HEAD, POST\r\n/);
    expect(stack.logged.slice(logged).map((event) => [event.route, event.status, event.error_code])).toEqual([
      ['unmatched', 400, 'bad_request'],
      ['unmatched', 417, 'expectation_failed'],
      ['unmatched', 405, 'method_not_allowed'],
    ]);
  });

  it('serves HTTP/1.1 (two pipelined requests, in order) and HTTP/2 on the one port; an HTTP/2 CONNECT is 405 in the envelope', async () => {
    const pipelined = await http1('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(pipelined.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: certificate.pem, servername: 'localhost' });
    session.on('error', () => {});
    try {
      const get = await send(session, { ':path': '/v1/useragent/lookup?ua=curl/8.5.0', authorization: `Bearer ${key}` });
      expect(get.status).toBe(200);
      expect(JSON.parse(get.body)).toMatchObject({ success: true, user_agent: 'curl/8.5.0' });
      // An Expect it cannot meet, over HTTP/2: 417 in the envelope, without the Connection header
      // HTTP/2 forbids (Node warned of it, on any client's say-so: found by a reviewer).
      const expectation = await send(session, { ':path': '/healthz', expect: '200-ok' });
      expect(expectation.status).toBe(417);
      expect(errorOf(expectation).error_code).toBe('expectation_failed');
      expect(warnings.filter((warning) => warning.includes('onnection'))).toEqual([]);
      const connectStream = await send(session, { ':method': 'CONNECT', ':authority': 'example.com:443' }, '');
      expect(connectStream.status).toBe(405);
      expect(connectStream.headers.allow).toBe('GET, HEAD, POST');
      expect(errorOf(connectStream).error_code).toBe('method_not_allowed');
      expect((await send(session, { ':path': '/healthz' })).status).toBe(200);
    } finally {
      session.close();
    }
    expect(stack.errors).toEqual([]);
  });
});

describe("Fastify's inject(): no connection under the request", () => {
  it('answers keep the connection (there is none to close): no Connection: close on a GET or a POST', async () => {
    const get = await fastify.inject({ url: '/v1/useragent/lookup?ua=curl/8.5.0', headers: { authorization: `Bearer ${key}` } });
    expect(get.statusCode).toBe(200);
    expect(get.headers.connection).not.toBe('close');
    const post = await fastify.inject({
      method: 'POST',
      url: '/v1/useragent/lookup',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ ua: 'curl/8.5.0' }),
    });
    expect(post.statusCode).toBe(200);
    expect(post.headers.connection).not.toBe('close');
  });
});
