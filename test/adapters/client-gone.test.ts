/**
 * The adapters' request objects: `signal` made on first read, from a getter on the class. An
 * accessor defined on each request object (as before) is allocated in V8's old space, which
 * under load cost a major GC every few hundred milliseconds; this holds the shape that avoids it.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { answeringHere, withClientGoneSignal } from '../../adapters/client-gone.js';
import type { ApiRequest } from '../../src/api/types.js';

/** One real request on loopback, handed to `inspect` with its req and res; answered after. */
async function withRealRequest(inspect: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void): Promise<void> {
  let failure: unknown;
  const server = createServer(async (req, res) => {
    try {
      await inspect(req, res);
    } catch (error) {
      failure = error;
    } finally {
      res.end('ok');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    httpRequest({ port, host: '127.0.0.1', path: '/x?y=1', headers: { 'x-test': 'yes' } }, (res) => res.resume().on('end', resolve))
      .on('error', reject)
      .end();
  });
  server.close();
  if (failure) throw failure;
}

describe('withClientGoneSignal', () => {
  it('keeps the request fields and makes the signal on first read, from the prototype, never as an own accessor', async () => {
    await withRealRequest((req, res) => {
      const fields: ApiRequest = { method: 'GET', url: req.url!, headers: req.headers, body: req, remoteAddress: req.socket.remoteAddress };
      const request = withClientGoneSignal(fields, req, res);
      expect(request).toMatchObject({ method: 'GET', url: '/x?y=1', remoteAddress: '127.0.0.1', body: req });
      expect(request.headers['x-test']).toBe('yes');
      // No accessor on the object itself: the shape V8 keeps in the young generation.
      expect(Object.getOwnPropertyDescriptor(request, 'signal')).toBeUndefined();
      const signal = request.signal!;
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(signal.aborted).toBe(false);
      expect(request.signal).toBe(signal);
    });
  });

  it('aborts the signal when the client closes its connection before the answer', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const aborted = new Promise<boolean>((resolve) => {
      server.on('request', (req, res) => {
        const request = withClientGoneSignal({ method: 'GET', url: req.url!, headers: req.headers }, req, res);
        const signal = request.signal!;
        signal.addEventListener('abort', () => {
          resolve(true);
          res.destroy();
        });
        client.destroy();
      });
    });
    const client = httpRequest({ port, host: '127.0.0.1', path: '/' }).on('error', () => {});
    client.end();
    expect(await aborted).toBe(true);
    server.close();
  });

  it('holds one close listener per connection however many requests are pipelined on it, and aborts each of them when it closes', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const PIPELINED = 15;
    const signals: AbortSignal[] = [];
    const listenerCounts: number[] = [];
    const allArrived = new Promise<void>((resolve) => {
      // No request is answered: each one is held, as a slow lookup holding quota is.
      server.on('request', (req, res) => {
        signals.push(withClientGoneSignal({ method: 'GET', url: req.url!, headers: req.headers }, req, res).signal!);
        listenerCounts.push(req.socket.listenerCount('close'));
        if (signals.length === PIPELINED) resolve();
      });
    });
    const client = connect(port, '127.0.0.1');
    client.on('error', () => {});
    client.write('GET /held HTTP/1.1\r\nHost: t\r\n\r\n'.repeat(PIPELINED));
    await allArrived;
    // The first request's signal added the one listener; the fourteen after it added none.
    expect(new Set(listenerCounts).size).toBe(1);
    expect(signals.some((signal) => signal.aborted)).toBe(false);
    client.destroy();
    await Promise.all(signals.map((signal) => (signal.aborted ? undefined : once(signal, 'abort'))));
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    process.off('warning', onWarning);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
    server.close();
  });

  it('takes an answered request off its connection: the close that follows aborts none of them', async () => {
    const abortedAtClose: Promise<boolean>[] = [];
    const server = createServer((req, res) => {
      const signal = withClientGoneSignal({ method: 'GET', url: req.url!, headers: req.headers }, req, res).signal!;
      answeringHere(res); // the adapter writes the core's answer
      res.end('ok');
      abortedAtClose.push(once(req.socket, 'close').then(() => signal.aborted));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const client = connect(port, '127.0.0.1');
    client.write('GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n');
    let received = '';
    client.on('data', (chunk) => (received += chunk));
    while ((received.match(/HTTP\/1\.1 200/g) ?? []).length < 2) await once(client, 'data');
    client.destroy();
    expect(await Promise.all(abortedAtClose)).toEqual([false, false]);
    server.close();
  });

  it('aborts the signal when something else answers the request first (an app around the API), read before or after', async () => {
    const seen = new Promise<boolean[]>((resolve) => {
      const server = createServer(async (req, res) => {
        const early = withClientGoneSignal({ method: 'GET', url: req.url!, headers: req.headers }, req, res).signal!;
        res.writeHead(503).end('the app answered');
        await once(res, 'finish');
        const late = withClientGoneSignal({ method: 'GET', url: req.url!, headers: req.headers }, req, res).signal!;
        server.close();
        resolve([early.aborted, late.aborted]);
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        httpRequest({ port, host: '127.0.0.1', path: '/' }, (res) => res.resume()).end();
      });
    });
    expect(await seen).toEqual([true, true]);
  });
});
