/**
 * The Fastify plugin inside an app with options of its own:
 * - `logger`: Fastify logs every request's URL (`incoming request`); a captcha secret key sent
 *   in the query string (`GET /v1/captcha/usage?secret=tf_sec_...`, as the SPEC allows) must
 *   not reach the app's log, while the app's own `req` serializer still shapes the line;
 * - `caseSensitive: false`: Fastify routes `/API/...` to the plugin registered at `/api`, and
 *   the API must then see its own path, not a 404.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { seclookup } from '../../adapters/fastify.js';
import { createApi } from '../../src/api/create-api.js';
import type { RequestLogEvent } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe("Fastify's logger", () => {
  it('never logs a secret key from the query string, and keeps the app serializer', async () => {
    const meter = createMemoryMeter();
    const { secretKey } = await issueKeys(meter, { product: 'captcha', plan: 'starter' });
    const api = createApi({ lookup: createLookup(), meter });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = Fastify({
      logger: {
        stream,
        level: 'info',
        serializers: { req: (request: { method: string; url: string }) => ({ by: 'app', method: request.method, url: request.url }) },
      },
    });
    await app.register(seclookup, { api });
    const base = await listen(app);
    try {
      const statuses: number[] = [];
      for (const query of [`secret=${secretKey}`, `sitekey=x&secret=${secretKey}&a=1`, `%73ecret=${secretKey}`])
        statuses.push((await fetch(`${base}/v1/captcha/usage?${query}`)).status);
      const injected = await app.inject({ method: 'GET', url: `/v1/captcha/usage?secret=${secretKey}` });
      statuses.push(injected.statusCode);
      expect(statuses.every((status) => status !== 404)).toBe(true);
      const incoming = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'incoming request');
      expect(incoming).toHaveLength(4);
      expect(lines.join('')).not.toContain(secretKey);
      expect(incoming.map((line) => line.req)).toEqual([
        { by: 'app', method: 'GET', url: '/v1/captcha/usage?secret=[redacted]' },
        { by: 'app', method: 'GET', url: '/v1/captcha/usage?sitekey=x&secret=[redacted]&a=1' },
        { by: 'app', method: 'GET', url: '/v1/captcha/usage?%73ecret=[redacted]' },
        { by: 'app', method: 'GET', url: '/v1/captcha/usage?secret=[redacted]' },
      ]);
    } finally {
      await app.close();
      await meter.close();
    }
  });
});

describe('Fastify with caseSensitive: false', () => {
  it('serves the API under a prefix written in another case', async () => {
    const meter = createMemoryMeter();
    const { secretKey } = await issueKeys(meter, { product: 'useragent', plan: 'starter' });
    const logged: RequestLogEvent[] = [];
    const api = createApi({ lookup: createLookup(), meter, onResponse: (event) => void logged.push(event) });
    const app = Fastify({ routerOptions: { caseSensitive: false } });
    await app.register(seclookup, { api, prefix: '/api' });
    const base = await listen(app);
    try {
      const response = await fetch(`${base}/API/v1/useragent/status`, { headers: { authorization: `Bearer ${secretKey}` } });
      const body = await response.json();
      expect([response.status, body.product, response.headers.get('x-quota-limit')]).toEqual([200, 'useragent', '10000']);
      expect((await fetch(`${base}/Api/healthz`)).status).toBe(200);
      expect(logged.map((event) => `${event.route} ${event.status}`)).toEqual(['/v1/useragent/status 200', '/healthz 200']);
    } finally {
      await app.close();
      await meter.close();
    }
  });
});
