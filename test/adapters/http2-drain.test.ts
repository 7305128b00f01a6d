/**
 * A graceful stop over HTTP/2. `api.drain()` marks every later answer `Connection: close`, which
 * over HTTP/1.1 tells a keep-alive client to go elsewhere. HTTP/2 forbids the header, and used to
 * drop it and say nothing else: the client kept sending new streams on its connection for as long
 * as the process lived, and `server.close()` (which waits for every session to end) never
 * finished. The HTTP/2 way to say it is GOAWAY (RFC 9113 6.8): the answer in hand completes, the
 * client opens no more streams there (found by a reviewer).
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { seclookup } from '../../adapters/fastify.js';
import { createListener } from '../../adapters/node.js';
import { trackInFlight } from '../../src/api/in-flight.js';
import { createApiStack } from '../api/harness.js';

function get(session: ClientHttp2Session, path: string) {
  return new Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const stream = session.request({ ':path': path });
    let headers: http2.IncomingHttpHeaders = {};
    let body = '';
    stream.on('response', (h) => (headers = h));
    stream.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    stream.on('error', reject);
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, body }));
  });
}

const closers: Array<() => Promise<unknown>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

const servers = {
  'the Node adapter on http2.createServer': async (api: ReturnType<typeof trackInFlight>) => {
    const server = http2.createServer(createListener(api));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  },
  'Fastify with http2: true': async (api: ReturnType<typeof trackInFlight>) => {
    const app = Fastify({ http2: true });
    await app.register(seclookup, { api });
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    return app.server;
  },
};

describe.each(Object.entries(servers))('api.drain() over HTTP/2: %s', (_name, start) => {
  it('answers the request in hand whole, then sends GOAWAY NO_ERROR: no Connection header, and server.close() completes', async () => {
    const stack = await createApiStack();
    const api = trackInFlight(stack.api);
    const server = await start(api);
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    session.on('error', () => {});
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
    try {
      expect((await get(session, '/healthz')).status).toBe(200);
      api.drain();
      const drained = await get(session, '/healthz');
      expect(drained.status).toBe(200);
      expect(JSON.parse(drained.body)).toMatchObject({ success: true });
      expect(drained.headers.connection).toBeUndefined();
      // Told to go away before it can open another stream there (it used to be answered on, for ever).
      const next = await Promise.race([
        goaway.then((code) => `goaway ${code}`),
        get(session, '/healthz').then(
          () => 'answered',
          () => 'refused',
        ),
      ]);
      expect(next).toBe(`goaway ${http2.constants.NGHTTP2_NO_ERROR}`);
      // The client's connection ends once its streams are done; the server's close then completes.
      await new Promise<void>((resolve) => server.close(() => resolve()));
    } finally {
      session.destroy();
    }
  });
});
