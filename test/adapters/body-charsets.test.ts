/**
 * How a request body's bytes become text, over real sockets, on the Node listener (what serve
 * runs) beside an Express app with express.json() and express.urlencoded() mounted first: a
 * UTF-8 byte order mark, a charset parameter other than UTF-8, and form fields whose bytes or
 * percent-escapes are not UTF-8 (which must never be looked up, or billed, as U+FFFD).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seclookup as seclookupExpress } from '../../adapters/express.js';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { createApi } from '../../src/api/create-api.js';
import type { Api } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { exchange, jsonOf, type RawResponse } from './raw-http.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FORM = 'application/x-www-form-urlencoded';

let meter: Meter;
let api: Api;
let uaKey: string;
let pwKey: string;
const servers: Server[] = [];
let nodePort: number;
let expressPort: number;

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  meter = createMemoryMeter();
  api = createApi({ lookup: createLookup(), meter });
  uaKey = (await issueKeys(meter, { product: 'useragent', plan: 'enterprise' })).secretKey;
  pwKey = (await issueKeys(meter, { product: 'pwbreach' })).secretKey;
  nodePort = await listen(handleClientErrors(createServer(createListener(api)), api));
  const app = express();
  app.use(express.json());
  app.use(express.urlencoded({ extended: false }));
  app.use(seclookupExpress({ api }));
  expressPort = await listen(handleClientErrors(createServer(app), api));
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await meter.close();
});

async function post(port: number, body: Buffer | string, type: string, key: string, path = '/v1/useragent/lookup'): Promise<RawResponse> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const head = `POST ${path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\nContent-Length: ${bytes.length}\r\n\r\n`;
  const reply = await exchange(port, Buffer.concat([Buffer.from(head), bytes]), { responses: 1 });
  expect(reply.responses, reply.leftover.slice(0, 200)).toHaveLength(1);
  return reply.responses[0];
}

/** The status and the user_agent looked up, or the error code. */
function outcome(response: RawResponse): [number, unknown] {
  const body = jsonOf(response);
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  return [response.status, body.success === true ? body.user_agent : body.error_code];
}

async function quotaRemaining(key: string): Promise<unknown> {
  const reply = await exchange(nodePort, `GET /v1/pwbreach/status HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\n\r\n`, { responses: 1 });
  return jsonOf(reply.responses[0]).quota_remaining;
}

describe('request body charsets, on the Node listener and behind express.json() / express.urlencoded()', () => {
  it('reads a JSON body that starts with a UTF-8 byte order mark, on both', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ ua: CHROME }))]);
    expect(outcome(await post(expressPort, body, 'application/json', uaKey))).toEqual([200, CHROME]);
    expect(outcome(await post(nodePort, body, 'application/json', uaKey))).toEqual([200, CHROME]);
  });

  it('reads a JSON body whose charset parameter says UTF-8 in any spelling, and UTF-16 JSON, on both', async () => {
    const text = JSON.stringify({ ua: 'Mozilla/5.0 é' });
    for (const type of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"']) {
      for (const port of [nodePort, expressPort]) expect(outcome(await post(port, text, type, uaKey)), type).toEqual([200, 'Mozilla/5.0 é']);
    }
    const utf16 = Buffer.from(text, 'utf16le');
    for (const port of [nodePort, expressPort])
      expect(outcome(await post(port, utf16, 'application/json; charset=utf-16le', uaKey))).toEqual([200, 'Mozilla/5.0 é']);
  });

  it('answers 415 unsupported_media_type for a JSON or form body in another charset, on both', async () => {
    const json = JSON.stringify({ ua: CHROME });
    const form = `ua=${encodeURIComponent(CHROME)}`;
    for (const port of [expressPort, nodePort]) {
      expect(outcome(await post(port, json, 'application/json; charset=latin1', uaKey)), `${port}`).toEqual([415, 'unsupported_media_type']);
      expect(outcome(await post(port, Buffer.from('{"ua":"caf\xe9"}', 'latin1'), 'application/json; charset=latin1', uaKey))).toEqual([
        415,
        'unsupported_media_type',
      ]);
      expect(outcome(await post(port, form, `${FORM}; charset=koi8-r`, uaKey)), `${port}`).toEqual([415, 'unsupported_media_type']);
    }
  });

  it('refuses a form whose field is not UTF-8 (a %E9 escape, a raw 0xE9 byte) with 400, unbilled: never a password of U+FFFD', async () => {
    const before = await quotaRemaining(pwKey);
    for (const body of [Buffer.from('password=caf%E9'), Buffer.from('password=caf\xe9', 'latin1'), Buffer.from('password=%C3')]) {
      const reply = await post(nodePort, body, FORM, pwKey, '/v1/pwbreach/lookup');
      expect([reply.status, jsonOf(reply).error_code], body.toString('latin1')).toEqual([400, 'invalid_json']);
    }
    expect(await quotaRemaining(pwKey)).toBe(before);
    // Malformed escapes (not bytes) stay text, as URLSearchParams and a query string read them;
    // `+` is a space and a well-formed multi-byte escape is its character.
    expect(outcome(await post(nodePort, 'ua=a%zz%+b%C3%A9', FORM, uaKey))).toEqual([200, 'a%zz% bé']);
    expect(outcome(await post(nodePort, 'ua=&ua=curl%2F8', FORM, uaKey))).toEqual([200, 'curl/8']);
  });
});
