/**
 * Requests Node's HTTP server would answer around `seclookup serve`'s listener, or not at all:
 * - Host header lines (RFC 9112 3.2): an HTTP/1.1 request without one, which Node would answer
 *   with a bare 400 and no log line, and a request with two, which Node would serve with the
 *   first. Both get 400 `bad_request` in the envelope and a request line.
 * - CONNECT: Node hands it to the server's 'connect' event, never to the request listener, and
 *   drops the connection without a word when nobody listens there.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { exchange, jsonOf } from '../adapters/raw-http.js';
import { createTempDirs } from './harness.js';
import { running, startServe, type ServeInProcess } from './serve-process.js';

const temp = createTempDirs();
let serve: ServeInProcess;
let port: number;
let key: string;

beforeAll(async () => {
  const db = join(temp.make(), 'serve.db');
  const meter = createSqliteMeter(db);
  ({ secretKey: key } = await issueKeys(meter, { product: 'useragent' }));
  await meter.close();
  let baseUrl: string;
  ({ serve, baseUrl } = await startServe(db));
  port = Number(new URL(baseUrl).port);
});
afterAll(async () => {
  for (const run of running) await run.stop('SIGKILL');
  temp.cleanup();
});

/** `request` with a healthz pipelined behind it: 400 in the envelope, logged, and the healthz still answered. */
async function expectRefused(request: string, message: string, method: string) {
  const reply = await exchange(port, `${request}GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n`, { responses: 2 });
  expect(reply.responses.map((r) => r.status)).toEqual([400, 200]);
  const [answer] = reply.responses;
  const body = jsonOf(answer);
  expect({ status: answer.status, body }).toEqual({
    status: 400,
    body: { success: false, error: message, error_code: 'bad_request', request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/) },
  });
  expect(answer.headers['x-request-id']).toBe(body.request_id);
  const line = await serve.waitFor(() => serve.requestLines().find((l) => l.request_id === body.request_id));
  expect(line).toMatchObject({ method, route: 'unmatched', product: null, status: 400, error_code: 'bad_request', client_ip: '127.0.0.1' });
}

describe('seclookup serve: Host header lines', () => {
  it('refuses an HTTP/1.1 request without Host in the envelope and logs it', async () => {
    await expectRefused('GET /healthz HTTP/1.1\r\n\r\n', 'the request has no Host header, which HTTP/1.1 requires', 'GET');
  });

  it('refuses a lookup with two Host lines before it runs: nothing billed', async () => {
    const lookup = `GET /v1/useragent/lookup?ua=curl%2F8.0 HTTP/1.1\r\nHost: api.example\r\nAuthorization: Bearer ${key}\r\nhost: other.example\r\n\r\n`;
    await expectRefused(lookup, 'the request has more than one Host header; send one', 'GET');
    const status = await fetch(`http://127.0.0.1:${port}/v1/useragent/status`, { headers: { authorization: `Bearer ${key}` } });
    expect(status.headers.get('x-quota-limit')).toMatch(/^\d+$/);
    expect(status.headers.get('x-quota-remaining')).toBe(status.headers.get('x-quota-limit'));
    expect(serve.requestLines().filter((l) => l.route === '/v1/useragent/lookup')).toEqual([]);
  });

  it('serves HTTP/1.0 without Host, which needs none', async () => {
    const reply = await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(reply.responses.map((r) => [r.status, jsonOf(r)])).toEqual([[200, { success: true, status: 'ok' }]]);
  });
});

describe('seclookup serve: CONNECT', () => {
  it('is answered 405 method_not_allowed in the envelope and logged like any refusal', async () => {
    const reply = await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
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
  });
});

describe('seclookup serve after those requests', () => {
  it('stops cleanly on SIGTERM', async () => {
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
