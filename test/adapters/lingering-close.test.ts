/**
 * The lingering close itself, with small bounds, on a plain Node server that answers 413 before
 * reading the body, the way the adapters do (their defaults are tested in large-body.test.ts).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lingerAfterResponse, lingerOnClose, type LingerBounds } from '../../adapters/lingering-close.js';
import { parseResponses } from './raw-http.js';

const BOUNDS: LingerBounds = { maxBytes: 256 * 1024, maxMs: 300 };

let server: Server;
let port: number;
/** The server's side of the latest connection. */
let serverSocket: Socket;

beforeEach(async () => {
  server = createServer((req, res) => {
    serverSocket = req.socket;
    lingerOnClose(req.socket, BOUNDS);
    lingerAfterResponse(res); // already lingering: keeps the bounds above
    res.writeHead(413, { connection: 'close', 'content-length': 8 });
    res.end('too big\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A client that may go on sending after the server's FIN; `received` and `events` fill as things happen. */
async function client(declaredLength: number) {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await once(socket, 'connect');
  const state = { received: Buffer.alloc(0), events: [] as string[] };
  socket.on('data', (chunk: Buffer) => (state.received = Buffer.concat([state.received, chunk])));
  socket.on('end', () => state.events.push('end'));
  socket.on('error', (error: NodeJS.ErrnoException) => state.events.push(`error ${error.code}`));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`POST / HTTP/1.1\r\nHost: test\r\nContent-Length: ${declaredLength}\r\n\r\n`);
  return { socket, state, closed };
}

async function waitUntil(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('lingering close', () => {
  it('reads the rest of the body after the answer and closes cleanly once the client has sent it and closed', async () => {
    const { socket, state, closed } = await client(100_000);
    await waitUntil(() => parseResponses(state.received).responses.length === 1);
    await waitUntil(() => state.events.includes('end')); // the server's FIN: it sends no more
    for (let i = 0; i < 10; i++) socket.write(Buffer.alloc(10_000, 'a'));
    // Every byte reaches the server, which is still reading: no reset for the client.
    await waitUntil(() => serverSocket.bytesRead >= 100_000);
    socket.end();
    await closed;
    expect(parseResponses(state.received).responses.map((r) => [r.status, r.headers.connection, r.body])).toEqual([[413, 'close', 'too big\n']]);
    expect(state.events).toEqual(['end']);
    expect(serverSocket.destroyed).toBe(true);
  });

  it('cuts off a client that stops sending but never closes, once the time bound has passed', async () => {
    const { socket, state, closed } = await client(100_000);
    await waitUntil(() => state.events.includes('end'));
    socket.write('{"partial":');
    // The server cuts it (this client would wait for ever), having read far less than the byte bound.
    await waitUntil(() => serverSocket.destroyed);
    expect(serverSocket.bytesRead).toBeLessThan(1000);
    expect(parseResponses(state.received).responses.map((r) => r.status)).toEqual([413]);
    // The server has closed for good: more bytes are refused (the reset shows on a later write).
    while (!socket.destroyed) {
      socket.write('"more"');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await closed;
    expect(state.events).toEqual(['end', expect.stringMatching(/^error (ECONNRESET|EPIPE)$/)]);
  });

  it('cuts off a client that keeps sending once it has read the byte bound after the answer', async () => {
    const { socket, state, closed } = await client(2 ** 30);
    await waitUntil(() => state.events.includes('end'));
    const chunk = Buffer.alloc(16 * 1024, 'a');
    let written = 0;
    while (!socket.destroyed) {
      if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
      written += chunk.length;
    }
    await closed;
    expect(parseResponses(state.received).responses.map((r) => r.status)).toEqual([413]);
    expect(serverSocket.bytesRead).toBeGreaterThan(BOUNDS.maxBytes);
    expect(written).toBeLessThan(2 ** 30);
  });

  it('takes a reset from the client while lingering quietly, and the server goes on serving', async () => {
    const first = await client(100_000);
    await waitUntil(() => first.state.events.includes('end'));
    first.socket.write('{"partial":');
    await waitUntil(() => serverSocket.bytesRead > 0);
    const lingering = serverSocket;
    first.socket.resetAndDestroy();
    await first.closed;
    await waitUntil(() => lingering.destroyed);
    const second = await client(10);
    await waitUntil(() => parseResponses(second.state.received).responses.length === 1);
    second.socket.destroy();
    expect(parseResponses(second.state.received).responses.map((r) => r.status)).toEqual([413]);
  });
});
