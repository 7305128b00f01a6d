/**
 * Billing follows answers, on a real `seclookup serve` over SQLite and over Redis: a burst of
 * lookups, some answered, the rest held up by a slow DNS server, then SIGTERM, a client that
 * hangs up, or kill -9. Units billed (quota used and usage) must equal the answers the clients
 * got: at once after a shutdown or a hang-up, and after the lease time after a kill -9.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { DEFAULT_LEASE_MS } from '../../src/metering/store-logic.js';
import type { Meter } from '../../src/metering/types.js';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { openSocket, rawGet } from '../adapters/raw-http.js';
import { createTempDirs, runCliJson } from './harness.js';
import { running, ServeProcess, startServe, type ServeRun } from './serve-process.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
/**
 * The DNS server answers this long after each query: past the drain deadline below, within the
 * resolver's 2 s per attempt, so the held lookups succeed, but only after their clients are gone.
 */
const DNS_DELAY_MS = 1_500;
const DRAIN_MS = '300';
const ANSWERED = 10;
const HELD = 20;

const temp = createTempDirs();
let redis: RedisServer;
let slowDns: DnsTestServer;
let redisDb = 0;

beforeAll(async () => {
  [redis, slowDns] = await Promise.all([startRedisServer(), startDnsServer({ behaviour: 'slow', delayMs: DNS_DELAY_MS })]);
});
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(async () => {
  await Promise.all([redis?.close(), slowDns?.close()]);
  temp.cleanup();
});

type Store = 'sqlite' | 'redis';

interface Instance {
  serve: ServeRun;
  baseUrl: string;
  /** The starter keys of useragent (answered at once) and emailauth (waits for DNS), one subscription each. */
  useragent: string;
  emailauth: string;
  /** Quota units held and usage recorded for both subscriptions, read by a meter whose clock is `now`. */
  billed(now?: number): Promise<{ quotaUsed: number; usage: number }>;
}

/** serve on `store`, in this process unless `inProcess` is false (kill -9 needs a process). */
async function start(store: Store, env: Record<string, string> = {}, inProcess = true): Promise<Instance> {
  const db = join(temp.make(), 'serve.db');
  const url = redis.url(++redisDb);
  const storeArgs = store === 'redis' ? ['--redis', url] : [];
  const { serve, baseUrl } = await (inProcess ? startServe : ServeProcess.start)(db, { args: ['--dns', slowDns.address, ...storeArgs], env });
  const keys = await serve.waitFor(() => (serve.starterKeys().size === 15 ? serve.starterKeys() : null));
  const listed = await runCliJson<{ subscription_id: string; prefix: string }[]>(['keys', 'list', '--json', ...(store === 'redis' ? storeArgs : ['--db', db])]);
  const subscriptionOf = (key: string) => listed.find((k) => key.startsWith(k.prefix))!.subscription_id;
  const useragent = keys.get('useragent')!.secret;
  const emailauth = keys.get('emailauth')!.secret;
  const subscriptions = [subscriptionOf(useragent), subscriptionOf(emailauth)];

  async function billed(now = Date.now()) {
    const meter: Meter = store === 'redis' ? createRedisMeter(url, { now: () => now }) : createSqliteMeter(db, { now: () => now });
    try {
      let quotaUsed = 0;
      for (const id of subscriptions) quotaUsed += 10_000 - (await meter.quota(id, 10_000, now)).remaining!;
      const usage = (await meter.usage()).filter((row) => subscriptions.includes(row.subscriptionId)).reduce((sum, row) => sum + row.lookups, 0);
      return { quotaUsed, usage };
    } finally {
      await meter.close();
    }
  }
  return { serve, baseUrl, useragent, emailauth, billed };
}

/** GET with a key: the status, or 'cut' when the connection ended without an answer. */
function get(url: string, key: string): { done: Promise<number | 'cut'>; hangUp: () => void } {
  const req = request(url, { headers: { authorization: `Bearer ${key}` }, agent: false });
  const done = new Promise<number | 'cut'>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', () => resolve('cut'));
    });
    req.on('error', () => resolve('cut'));
  });
  req.end();
  return { done, hangUp: () => req.destroy() };
}

/** The burst: ANSWERED lookups answered at once, then HELD lookups waiting for DNS, all reserved. */
async function burst(instance: Instance): Promise<Promise<number | 'cut'>[]> {
  const answered = await Promise.all(
    Array.from({ length: ANSWERED }, () => get(`${instance.baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`, instance.useragent).done),
  );
  expect(answered).toEqual(Array.from({ length: ANSWERED }, () => 200));
  const held = Array.from({ length: HELD }, (_, i) => get(`${instance.baseUrl}/v1/emailauth/lookup?domain=held-${i}.example.com`, instance.emailauth).done);
  await eventually(async () => (await instance.billed()).quotaUsed === ANSWERED + HELD, 'every held lookup to reserve its unit');
  return held;
}

async function eventually<T>(probe: () => Promise<T | null | undefined | false>, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe.each<Store>(['sqlite', 'redis'])('billing follows answers: serve on %s', (store) => {
  it('SIGTERM with lookups still waiting at the drain deadline: billed == answered once serve has exited', async () => {
    const instance = await start(store, { SECLOOKUP_SHUTDOWN_DEADLINE_MS: DRAIN_MS });
    const held = await burst(instance);

    instance.serve.kill('SIGTERM');
    expect(await instance.serve.exited).toEqual({ code: 0, signal: null });
    running.delete(instance.serve);
    expect(instance.serve.stderr).toContain(`SIGTERM received: finishing ${HELD} in-flight request(s)`);
    // The held lookups' connections were cut at the deadline, before DNS answered: no answer.
    expect(await Promise.all(held)).toEqual(held.map(() => 'cut'));
    expect(await instance.billed()).toEqual({ quotaUsed: ANSWERED, usage: ANSWERED });
    // Each cut lookup has its line, as a client's leaving: 499, not a 5xx.
    const heldLines = instance.serve.requestLines().filter((line) => line.route === '/v1/emailauth/lookup');
    expect(heldLines.map((line) => [line.status, line.error_code])).toEqual(held.map(() => [499, 'client_closed_request']));
  });

  it('a client that hangs up mid-lookup is not billed, nor is the answer its abandoned lookup makes later', async () => {
    const instance = await start(store);
    const lookup = get(`${instance.baseUrl}/v1/emailauth/lookup?domain=hang-up.example.com`, instance.emailauth);
    await eventually(async () => (await instance.billed()).quotaUsed === 1, 'the reservation');
    lookup.hangUp();
    expect(await lookup.done).toBe('cut');
    await eventually(async () => (await instance.billed()).quotaUsed === 0, 'the refund');
    expect(await instance.billed()).toEqual({ quotaUsed: 0, usage: 0 });
    // Once the abandoned lookup has finished, nothing changes: its late answer is not billed.
    await eventually(async () => instance.serve.requestLines().length === 1 && instance.serve.requestLines()[0], 'the request line');
    // Its DNS answers all sent, and no query after them for a while: the lookup has finished.
    await eventually(async () => {
      const asked = slowDns.total();
      if (slowDns.delayedAnswers() > 0) return false;
      await sleep(DNS_DELAY_MS / 5);
      return slowDns.delayedAnswers() === 0 && slowDns.total() === asked;
    }, 'the abandoned lookup to finish');
    expect(await instance.billed()).toEqual({ quotaUsed: 0, usage: 0 });
    expect(instance.serve.requestLines()[0]).toMatchObject({ route: '/v1/emailauth/lookup', status: 499, error_code: 'client_closed_request' });
  });

  it('a pipelining client that leaves while its first lookup is held is billed for nothing, neither that one nor those behind it', async () => {
    const instance = await start(store);
    const socket = await openSocket(Number(new URL(instance.baseUrl).port));
    socket.on('error', () => {});
    // Five cached lookups behind a held one: their answers could only be written after its answer.
    socket.write(
      rawGet('/v1/emailauth/lookup?domain=pipelined.example.com', instance.emailauth) +
        rawGet(`/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`, instance.useragent).repeat(5),
    );
    await eventually(async () => (await instance.billed()).quotaUsed === 1, 'the held lookup to reserve its unit');
    socket.destroy();
    await eventually(async () => (await instance.billed()).quotaUsed === 0, 'the refund');
    expect(await instance.billed()).toEqual({ quotaUsed: 0, usage: 0 });
    // The five behind it were never handled: no answer made, none billed, none logged.
    await eventually(async () => instance.serve.requestLines().length >= 1, 'the request line');
    expect(instance.serve.requestLines().map((l) => [l.route, l.status])).toEqual([['/v1/emailauth/lookup', 499]]);
  });

  it('kill -9 mid-burst: the held units go back when their lease expires, and billed == answered', async () => {
    const instance = await start(store, {}, false);
    const held = await burst(instance);

    instance.serve.kill('SIGKILL');
    await instance.serve.exited;
    running.delete(instance.serve);
    expect(await Promise.all(held)).toEqual(held.map(() => 'cut'));
    // Until the lease expires the held units are still reserved; a minute on, they are back.
    expect(await instance.billed()).toEqual({ quotaUsed: ANSWERED + HELD, usage: ANSWERED + HELD });
    expect(await instance.billed(Date.now() + DEFAULT_LEASE_MS)).toEqual({ quotaUsed: ANSWERED, usage: ANSWERED });
  });
});
