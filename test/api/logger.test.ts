/**
 * `createApi({ logger })`: an app's own pino logger receives the request lines `serve` writes
 * (the same fields, its own time) and the unexpected errors, beside onResponse and onError.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLine } from '../../src/cli/log.js';
import type { Meter } from '../../src/metering/types.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createApiStack } from './harness.js';

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ base: { app: 'mine' } }, stream), lines };
}

describe('createApi({ logger })', () => {
  it("logs each answered request at info with serve's request-line fields, and still calls onResponse", async () => {
    const { logger, lines } = capturedLogger();
    const stack = await createApiStack({ logger });
    const { secretKey } = await stack.keys('useragent');
    await stack.call('/v1/useragent/lookup?ua=curl%2F8.5.0', { key: secretKey });
    const notFound = await stack.call('/v1/nope', { key: secretKey });
    expect(notFound.body.error).toBe('no such route; GET /v1/openapi.json lists every route, and GET /v1/<product>/status each product');

    expect(stack.logged).toHaveLength(2);
    expect(lines).toHaveLength(2);
    const [ok, missing] = lines;
    // The fields of serve's own line, but for its `level` and `time`: the app's logger stamps those its way.
    const serveFields = Object.keys(JSON.parse(requestLine(stack.logged[0]))).filter((name) => name !== 'level' && name !== 'time');
    for (const name of serveFields) expect(ok).toHaveProperty(name);
    expect(ok).toMatchObject({
      level: 30,
      app: 'mine',
      msg: 'request',
      request_id: stack.logged[0].request_id,
      method: 'GET',
      route: '/v1/useragent/lookup',
      product: 'useragent',
      status: 200,
      error_code: null,
      client_ip: '127.0.0.1',
    });
    expect(typeof ok.time).toBe('number');
    expect(missing).toMatchObject({ status: 404, error_code: 'not_found', route: 'unmatched' });
  });

  it('logs an unexpected error at error level with its context, never the key', async () => {
    const { logger, lines } = capturedLogger();
    const working = createMemoryMeter();
    // A meter whose store fails on the hot path: the API answers 500 and reports the cause.
    const failing = new Proxy(working, {
      get(target, name, receiver) {
        if (name === 'consume') return () => Promise.reject(new Error('disk on fire'));
        return Reflect.get(target, name, receiver);
      },
    }) as Meter;
    const stack = await createApiStack({ logger, meter: failing });
    const { secretKey } = await stack.keys('useragent');
    const reply = await stack.call('/v1/useragent/lookup?ua=curl%2F8.5.0', { key: secretKey });
    expect(reply.status).toBe(500);
    const error = lines.find((line) => line.level === 50);
    expect(error).toMatchObject({ msg: 'unexpected error', context: reply.headers['x-request-id'] });
    expect(String(error?.error)).toContain('disk on fire');
    expect(JSON.stringify(lines)).not.toContain(secretKey);
    expect(stack.errors).toHaveLength(1);
  });
});
