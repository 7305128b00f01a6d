/**
 * httpGet against real loopback servers, hostile ones included: one that never answers, one
 * that stalls mid-body, one that never finishes a TLS handshake, garbage, oversize answers, a
 * closed port.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSeclookupError, type SeclookupErrorCode } from '../../src/errors.js';
import { httpGet, httpGetFollowing, redirectTarget } from '../../src/lib/http-get.js';
import { createOutboundSlots } from '../../src/lib/outbound-slots.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

let fixture: HttpFixture;
let raw: { server: Server; port: number; sockets: Set<Socket> };

/** A TCP server that accepts and then does `onConnection` (say nothing, send garbage, ...). */
async function startRawServer(onConnection: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

beforeAll(async () => {
  fixture = await startHttpFixture({
    '/ok': respond.json({ hello: 'world' }),
    '/teapot': respond.status(418, 'short and stout'),
    '/hang': respond.hang(),
    '/stall': respond.stallBody(),
    '/big': respond.text('x'.repeat(2_000)),
    '/big-chunked': respond.chunked('y'.repeat(2_000), 100),
    '/moved': respond.redirect('/moved-again', 301),
    '/moved-again': respond.redirect('ok', 307),
    '/loop': respond.redirect('/loop'),
    '/nowhere': respond.redirect(null),
    '/to-ftp': respond.redirect('ftp://127.0.0.1/list'),
    '/cut': (_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part of it');
      setTimeout(() => res.destroy(), 20);
    },
  });
  raw = await startRawServer((socket) => {
    // The first bytes decide: a TLS ClientHello (0x16) is left unanswered; HTTP gets garbage.
    socket.once('data', (chunk: Buffer) => {
      if (chunk[0] !== 0x16) socket.end('NOT HTTP AT ALL\r\n\r\n');
    });
  });
});

afterAll(async () => {
  await fixture.close();
  raw.sockets.forEach((socket) => socket.destroy());
  await new Promise((resolve) => raw.server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<{ code: SeclookupErrorCode; message: string }> {
  const error = await promise.then(
    () => expect.unreachable('expected a failure'),
    (e: unknown) => e,
  );
  expect(isSeclookupError(error)).toBe(true);
  return error as { code: SeclookupErrorCode; message: string };
}

describe('httpGet', () => {
  it('returns status, headers and body, whatever the status', async () => {
    const ok = await httpGet(`${fixture.url}/ok`);
    expect([ok.status, ok.headers['content-type'], JSON.parse(ok.body.toString())]).toEqual([200, 'application/json', { hello: 'world' }]);
    const teapot = await httpGet(`${fixture.url}/teapot`);
    expect([teapot.status, teapot.body.toString()]).toEqual([418, 'short and stout']);
  });

  it('a request Node refuses before sending (a header value it cannot carry) fails as upstream_failed and gives its socket slot back', async () => {
    const slots = createOutboundSlots(1);
    for (let i = 0; i < 3; i++) {
      const error = await failure(httpGet(`${fixture.url}/ok`, { slots, headers: { authorization: 'Bearer k\u200b' } }));
      expect(error).toMatchObject({ code: 'upstream_failed', message: 'request failed: ERR_INVALID_CHAR' });
      expect(slots.inUse).toBe(0);
    }
    // The one slot is free: a good request still gets it.
    expect((await httpGet(`${fixture.url}/ok`, { slots })).status).toBe(200);
  });

  it('fails a server that never answers at the total deadline', async () => {
    expect(await failure(httpGet(`${fixture.url}/hang`, { timeouts: { totalMs: 150 } }))).toMatchObject({ code: 'timeout', message: 'timeout after 150 ms' });
  });

  it('fails a body that stalls at the total deadline', async () => {
    expect(await failure(httpGet(`${fixture.url}/stall`, { timeouts: { totalMs: 150 } }))).toMatchObject({ code: 'timeout', message: 'timeout after 150 ms' });
  });

  it('fails a TLS server that never finishes its handshake at the connect deadline', async () => {
    const error = await failure(httpGet(`https://127.0.0.1:${raw.port}/`, { timeouts: { connectMs: 100, totalMs: 5_000 } }));
    expect(error).toMatchObject({ code: 'timeout', message: 'connect timeout after 100 ms' });
  });

  it.each([
    ['a declared length', '/big'],
    ['a chunked body', '/big-chunked'],
  ])('refuses an answer over maxBytes (%s)', async (_name, path) => {
    expect(await failure(httpGet(`${fixture.url}${path}`, { maxBytes: 1_000 }))).toMatchObject({
      code: 'upstream_failed',
      message: 'response larger than 1000 bytes',
    });
  });

  it('fails garbage instead of HTTP, a connection cut mid-body, and a closed port', async () => {
    expect((await failure(httpGet(`http://127.0.0.1:${raw.port}/`))).code).toBe('upstream_failed');
    expect((await failure(httpGet(`${fixture.url}/cut`))).code).toBe('upstream_failed');
    const closed = await startRawServer(() => {});
    await new Promise((resolve) => closed.server.close(resolve));
    expect(await failure(httpGet(`http://127.0.0.1:${closed.port}/`))).toMatchObject({ code: 'upstream_failed', message: 'request failed: ECONNREFUSED' });
  });

  it('refuses a URL that is not http(s)', async () => {
    expect((await failure(httpGet('ftp://127.0.0.1/'))).code).toBe('invalid_option');
  });
});

describe('httpGetFollowing (what the dataset updaters fetch with)', () => {
  it('follows redirects, relative ones too, to the answer, and says where it came from', async () => {
    const answer = await httpGetFollowing(`${fixture.url}/moved`);
    expect([answer.status, JSON.parse(answer.body.toString()), answer.url]).toEqual([200, { hello: 'world' }, `${fixture.url}/ok`]);
  });

  it('gives up after five redirects (a loop), and on a redirect without a Location or to another scheme', async () => {
    expect(await failure(httpGetFollowing(`${fixture.url}/loop`))).toMatchObject({
      code: 'upstream_failed',
      message: 'more than 5 redirects (the last to 127.0.0.1:' + new URL(fixture.url).port + ')',
    });
    expect(await failure(httpGetFollowing(`${fixture.url}/loop`, { maxRedirects: 0 }))).toMatchObject({
      message: expect.stringMatching(/^more than 0 redirects/),
    });
    expect(await failure(httpGetFollowing(`${fixture.url}/nowhere`))).toMatchObject({ code: 'upstream_failed', message: 'HTTP 302 without a Location' });
    expect(await failure(httpGetFollowing(`${fixture.url}/to-ftp`))).toMatchObject({ code: 'upstream_failed', message: 'refusing a redirect to a ftp: URL' });
  });

  it('never steps down from https to http; up, or within a scheme, is fine', () => {
    expect(() => redirectTarget('https://feed.example/list', 301, 'http://feed.example/list')).toThrow(
      'refusing a redirect from https down to http (feed.example)',
    );
    expect(redirectTarget('http://feed.example/list', 301, 'https://feed.example/list').href).toBe('https://feed.example/list');
    expect(redirectTarget('https://feed.example/a/list', 302, '../b/list?x=1').href).toBe('https://feed.example/b/list?x=1');
    expect(() => redirectTarget('https://feed.example/', 302, 'http://[::1')).toThrow('which is not a URL');
  });
});
