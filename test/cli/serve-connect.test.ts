/**
 * CONNECT against `seclookup serve`: Node hands it to the server's 'connect' event, never to the
 * request listener, and drops the connection without a word when nobody listens there.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { exchange, jsonOf } from '../adapters/raw-http.js';
import { createTempDirs } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

describe('seclookup serve: CONNECT', () => {
  it('is answered 405 method_not_allowed in the envelope and logged like any refusal', async () => {
    const { serve, baseUrl } = await startServe(join(temp.make(), 'serve.db'));
    const reply = await exchange(Number(new URL(baseUrl).port), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(reply.responses).toHaveLength(1);
    const [answer] = reply.responses;
    const body = jsonOf(answer);
    expect({ status: answer.status, success: body.success, error_code: body.error_code }).toEqual({
      status: 405,
      success: false,
      error_code: 'method_not_allowed',
    });
    expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(answer.headers).toMatchObject({
      'x-request-id': body.request_id,
      allow: 'GET, HEAD, POST',
      connection: 'close',
      'content-type': 'application/json; charset=utf-8',
    });
    expect(reply.closedByServer).toBe(true);

    const line = await serve.waitFor(() => serve.requestLines().find((l) => l.request_id === body.request_id));
    expect(line).toEqual({
      level: 'info',
      time: expect.any(String),
      request_id: body.request_id,
      method: 'CONNECT',
      route: 'unmatched',
      product: null,
      status: 405,
      error_code: 'method_not_allowed',
      latency_ms: 0,
      client_ip: '127.0.0.1',
    });
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
