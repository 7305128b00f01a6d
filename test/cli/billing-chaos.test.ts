/**
 * Billing under chaos, on a real `seclookup serve` over SQLite and over Redis: clients that
 * pipeline or not, mix cached lookups, lookups held by a slow DNS server, batches, POSTs with
 * good and broken JSON, bad keys, bad inputs and bytes Node's parser refuses, and hang up at
 * random times. Whatever they do, every unit billed has its 200 request line and every 200
 * line its unit, no client sees an answer that was not logged, and nothing is a server error.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeys, type IssuedKeys } from '../../src/metering/keys.js';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { parseResponses, rawGet } from '../adapters/raw-http.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { createTempDirs } from './harness.js';
import { running, startServe } from './serve-process.js';

const RUN_MS = 2_500;
const CLIENTS = 16;
const QUOTA = 100_000_000;

const temp = createTempDirs();
let redis: RedisServer;
let slowDns: DnsTestServer;

beforeAll(async () => {
  [redis, slowDns] = await Promise.all([startRedisServer(), startDnsServer({ behaviour: 'slow', delayMs: 120 })]);
});
afterAll(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
  await Promise.all([redis?.close(), slowDns?.close()]);
  temp.cleanup();
});

/** A small seeded generator (mulberry32): the same mix of requests on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Shot {
  bytes: string;
  /** Units a 200 answer to it bills: 0 for the status route. */
  units: number;
}

function requestMix(random: () => number, useragent: string, emailauth: string): () => Shot {
  let n = 0;
  const post = (path: string, key: string, body: string) =>
    `POST ${path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return () => {
    const r = random();
    n++;
    if (r < 0.35) return { bytes: rawGet(`/v1/useragent/lookup?ua=chaos${n % 50}`, useragent), units: 1 };
    if (r < 0.55) return { bytes: rawGet(`/v1/emailauth/lookup?domain=c${n}.example.com`, emailauth), units: 1 };
    if (r < 0.62) return { bytes: post('/v1/useragent/lookup', useragent, JSON.stringify({ ua: `post${n % 7}` })), units: 1 };
    // Two valid inputs of three: two units.
    if (r < 0.68)
      return {
        bytes: post('/v1/emailauth/batch', emailauth, JSON.stringify({ inputs: [`b${n}.example.com`, 'not a domain', `b${n}.example.org`] })),
        units: 2,
      };
    if (r < 0.76) return { bytes: rawGet('/v1/emailauth/lookup?domain=not..valid', emailauth), units: 0 };
    if (r < 0.82) return { bytes: rawGet('/v1/useragent/lookup?ua=x', 'ua_sec_not-a-real-key'), units: 0 };
    if (r < 0.86) return { bytes: post('/v1/useragent/lookup', useragent, '{"ua": '), units: 0 };
    if (r < 0.88) return { bytes: 'GET /v1/useragent/lookup?ua=a\x01b HTTP/1.1\r\nHost: t\r\n\r\n', units: 0 };
    return { bytes: rawGet('/v1/useragent/status', useragent), units: 0 };
  };
}

/** One connection: 1 to 6 requests, pipelined or written one by one, read to the end or hung up on mid-way. */
async function oneConnection(port: number, random: () => number, next: () => Shot, seen: { statuses: number[]; units: number }) {
  const shots = Array.from({ length: 1 + Math.floor(random() * 6) }, next);
  const pipelined = random() < 0.7;
  const hangUpAfterMs = random() < 0.5 ? random() * 300 : 5_000;
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let received = Buffer.alloc(0);
  await new Promise((resolve) => socket.once('connect', resolve));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, hangUpAfterMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponses(received).responses.length >= shots.length) done();
    });
    socket.once('close', done);
    if (pipelined) socket.write(shots.map((shot) => shot.bytes).join(''));
    else for (const shot of shots) socket.write(shot.bytes);
  });
  socket.destroy();
  parseResponses(received).responses.forEach((response, i) => {
    seen.statuses.push(response.status);
    if (response.status === 200) seen.units += shots[i].units;
  });
}

describe.each(['sqlite', 'redis'] as const)('billing under chaos: serve on %s', (store) => {
  it('bills exactly the 200 lines it logs, logs every answer a client got, and answers no 5xx', async () => {
    const db = join(temp.make(), 'chaos.db');
    const url = redis.url(7);
    const openMeter = (): Meter => (store === 'redis' ? createRedisMeter(url) : createSqliteMeter(db));
    const setup = openMeter();
    await setup.setPlan({ slug: 'roomy', product: '*', rateLimitPerMinute: 1_000_000_000, monthlyQuota: QUOTA });
    const keys: Record<'useragent' | 'emailauth', IssuedKeys> = {
      useragent: await issueKeys(setup, { product: 'useragent', plan: 'roomy' }),
      emailauth: await issueKeys(setup, { product: 'emailauth', plan: 'roomy' }),
    };
    await setup.close();

    const storeArgs = store === 'redis' ? ['--redis', url] : [];
    const { serve, baseUrl } = await startServe(db, { args: ['--dns', slowDns.address, ...storeArgs] });
    const port = Number(new URL(baseUrl).port);
    const random = seeded(store === 'redis' ? 2 : 1);
    const next = requestMix(random, keys.useragent.secretKey, keys.emailauth.secretKey);
    const seen = { statuses: [] as number[], units: 0 };
    const stopAt = Date.now() + RUN_MS;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < stopAt) await oneConnection(port, random, next, seen);
      }),
    );
    // Lookups abandoned by a hang-up finish unheard; then the drain settles every refund.
    expect(await serve.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const lines = serve.requestLines();
    const unitsLogged = lines
      .filter((line) => line.status === 200 && line.route !== '/v1/useragent/status')
      .reduce((sum, line) => sum + (String(line.route).endsWith('/batch') ? 2 : 1), 0);
    const meter = openMeter();
    const usage = (await meter.usage()).reduce((sum, row) => sum + row.lookups, 0);
    let quotaUsed = 0;
    for (const issued of Object.values(keys)) quotaUsed += QUOTA - (await meter.quota(issued.subscriptionId, QUOTA, Date.now())).remaining!;
    await meter.close();

    expect(seen.units).toBeGreaterThan(100);
    expect({ usage, quotaUsed }).toEqual({ usage: unitsLogged, quotaUsed: unitsLogged });
    // A client reads only answers that were logged; a hang-up may miss some that were.
    expect(seen.units).toBeLessThanOrEqual(unitsLogged);
    const statuses = new Set(lines.map((line) => line.status));
    expect([...statuses].filter((status) => ![200, 400, 401, 499].includes(status as number))).toEqual([]);
    expect([statuses.has(200), statuses.has(499)]).toEqual([true, true]);
    expect(seen.statuses.filter((status) => status >= 500)).toEqual([]);
  }, 30_000);
});
