/**
 * What only a shared Redis meter has to prove, on a real redis-server: exact limits across two
 * meters (two connections, as two instances), one script round trip per request, expiries on
 * every counter, NOSCRIPT recovery, revocation reaching another instance within its bound, and
 * an outage that fails fast and heals by itself.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashKey, issueKeys, type IssuedKeys } from '../../src/metering/keys.js';
import type { ConsumeOutcome, Meter } from '../../src/metering/types.js';
import { createRedisMeter, redisClientOptions, type RedisMeterOptions } from '../../src/metering/redis/index.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { requestFor } from '../metering/conformance/index.js';

let server: RedisServer;
/** A plain connection for looking at what the meters wrote. */
let inspect: Redis;
const opened: Meter[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  inspect = new Redis(server.url(), { ...redisClientOptions(), enableOfflineQueue: true });
  inspect.on('error', () => undefined); // it reconnects through the outage tests
});
afterAll(async () => {
  inspect?.disconnect();
  await server?.close();
});
beforeEach(async () => {
  await server.start();
  await server.flush();
});
afterEach(async () => {
  server.resume();
  await Promise.all(opened.splice(0).map((meter) => meter.close()));
});

function open(options?: RedisMeterOptions): Meter {
  // usage() gives back leases expired by its clock: the calls' clock (T0) here.
  const meter = createRedisMeter(server.url(), { now: () => T0, ...options });
  opened.push(meter);
  return meter;
}

/** 2025-01-15T12:00:00Z: a clock far in the past, as the conformance suite uses. */
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

async function subscribe(meter: Meter, limits?: { rateLimitPerMinute: number; monthlyQuota: number | null }): Promise<IssuedKeys> {
  const plan = limits ? 'custom' : 'starter';
  if (limits) await meter.setPlan({ slug: plan, product: '*', ...limits });
  return issueKeys(meter, { product: 'useragent', plan });
}

function count(outcomes: ConsumeOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const label = o.allowed ? 'allowed' : o.reason;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/** Calls of one command since the server started, from INFO commandstats. */
async function commandCalls(name: string): Promise<number> {
  const stats = await inspect.info('commandstats');
  return Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

async function eventually<T>(attempt: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

describe('createRedisMeter: two instances on one Redis', () => {
  it('400 concurrent calls split over two meters against 120/minute: exactly 120 admitted', async () => {
    const [a, b] = [open(), open()];
    const sub = await subscribe(a);
    const request = await requestFor(b, sub);
    expect(request.rateLimitPerMinute).toBe(120);
    const outcomes = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).consume({ ...request, now: T0 + i })));
    expect(count(outcomes)).toEqual({ allowed: 120, rate_limit_exceeded: 280 });
    const remaining = outcomes.filter((o) => o.allowed).map((o) => o.rate.remaining);
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(await a.quota(sub.subscriptionId, 10_000, T0)).toEqual({ limit: 10_000, remaining: 9_880, period: '2025-01' });
  });

  it('a monthly quota of 50 across two meters: exactly 50 reserved, and usage says 50', async () => {
    const [a, b] = [open(), open()];
    const sub = await subscribe(a, { rateLimitPerMinute: 1_000, monthlyQuota: 50 });
    const request = await requestFor(a, sub);
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).consume(request)));
    expect(count(outcomes)).toEqual({ allowed: 50, quota_exceeded: 150 });
    expect(await b.quota(sub.subscriptionId, 50, T0)).toEqual({ limit: 50, remaining: 0, period: '2025-01' });
    expect(await a.usage('2025-01')).toEqual([{ subscriptionId: sub.subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 50 }]);
  });

  it('a key revoked on one instance is refused by the other within keyCacheMs (measured)', async () => {
    const [a, b] = [open(), open()];
    const sub = await subscribe(a);
    const hash = hashKey(sub.secretKey);
    expect(await b.resolveKey(hash)).toMatchObject({ status: 'active' });
    const revokedAt = performance.now();
    await a.revokeKey(sub.keys[0].id);
    expect(await a.resolveKey(hash)).toMatchObject({ status: 'revoked' }); // at once where it was revoked
    // b answers from memory until its entry is 1 s old, then reads Redis.
    let seenAfter = 0;
    for (;;) {
      const key = await b.resolveKey(hash);
      seenAfter = performance.now() - revokedAt;
      if (key?.status === 'revoked') break;
      expect(seenAfter).toBeLessThan(2_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    console.info(`revocation seen by the other instance after ${Math.round(seenAfter)} ms (bound: keyCacheMs = 1000 ms)`);
    expect(seenAfter).toBeLessThanOrEqual(1_000 + 100);
  });

  it('a plan changed on one instance applies on the other within keyCacheMs; keyCacheMs 0 sees it at once', async () => {
    const [a, b, uncached] = [open(), open({ keyCacheMs: 200 }), open({ keyCacheMs: 0 })];
    const sub = await subscribe(a, { rateLimitPerMinute: 10, monthlyQuota: 100 });
    const hash = hashKey(sub.secretKey);
    expect((await b.resolveKey(hash))?.plan?.rateLimitPerMinute).toBe(10);
    await a.setPlan({ slug: 'custom', product: '*', rateLimitPerMinute: 20, monthlyQuota: 100 });
    expect((await uncached.resolveKey(hash))?.plan?.rateLimitPerMinute).toBe(20);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await b.resolveKey(hash))?.plan?.rateLimitPerMinute).toBe(20);
  });
});

describe('createRedisMeter: a subscription updated on one instance', () => {
  it('applies on the other within keyCacheMs (polled), at once where it was made and with keyCacheMs 0', async () => {
    const [a, b, uncached] = [open(), open({ keyCacheMs: 200 }), open({ keyCacheMs: 0 })];
    const sub = await subscribe(a, { rateLimitPerMinute: 10, monthlyQuota: 100 });
    const hash = hashKey(sub.publicKey);
    expect(await b.resolveKey(hash)).toMatchObject({ ipAllow: [], plan: { slug: 'custom' } });
    await a.updateSubscription(sub.subscriptionId, { plan: 'enterprise', ipAllow: ['10.0.0.0/8'] });
    const changed = { ipAllow: ['10.0.0.0/8'], plan: { slug: 'enterprise', rateLimitPerMinute: 3_000, monthlyQuota: null } };
    expect(await a.resolveKey(hash)).toMatchObject(changed);
    expect(await uncached.resolveKey(hash)).toMatchObject(changed);
    // b reads Redis again once its entry is keyCacheMs old, as after a revocation.
    await eventually(async () => expect(await b.resolveKey(hash)).toMatchObject(changed), 2_000);
  });

  it('two instances changing one subscription at once both land: the plan of one, the allowlist of the other', async () => {
    const [a, b] = [open(), open()];
    const sub = await subscribe(a);
    await Promise.all([
      a.updateSubscription(sub.subscriptionId, { plan: 'enterprise' }),
      b.updateSubscription(sub.subscriptionId, { ipAllow: ['192.0.2.0/24'] }),
    ]);
    expect((await a.listKeys()).map((k) => [k.plan, k.ipAllow])).toEqual([
      ['enterprise', ['192.0.2.0/24']],
      ['enterprise', ['192.0.2.0/24']],
    ]);
    // The record keeps the fields no change named.
    expect(JSON.parse((await inspect.hget('seclookup:{admin}:subs', sub.subscriptionId))!)).toEqual({
      product: 'useragent',
      plan: 'enterprise',
      ipAllow: ['192.0.2.0/24'],
      createdAt: sub.keys[0].createdAt,
    });
  });
});

describe('createRedisMeter: the hot path', () => {
  /** A client that counts the commands it sends (each one round trip; a script call counts once). */
  function countingClient(): { client: Redis; sent: () => number } {
    const client = new Redis(server.url(), redisClientOptions());
    client.on('error', () => undefined);
    let sent = 0;
    const send = client.sendCommand.bind(client);
    client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
      sent++;
      return send(...args);
    }) as Redis['sendCommand'];
    return { client, sent: () => sent };
  }

  it('one round trip per request: resolveKey from memory, consume one EVALSHA that also carries the commits of earlier answers', async () => {
    const { client, sent } = countingClient();
    // A commit delay longer than the test: every commit rides on the next consume, or on close().
    const meter = createRedisMeter(client, { keyCacheMs: 60_000, commitDelayMs: 30_000 });
    try {
      const sub = await subscribe(meter);
      const hash = hashKey(sub.secretKey);
      const request = await requestFor(meter, sub, { reserveQuota: false, now: Date.now() });
      await meter.consume(request);
      const [sentBefore, evalshaBefore, zremBefore] = [sent(), await commandCalls('evalsha'), await commandCalls('zrem')];
      for (let i = 0; i < 100; i++) {
        const key = await meter.resolveKey(hash);
        expect(key?.status).toBe('active');
        const outcome = await meter.consume({ ...request, reserveQuota: i % 2 === 1 });
        // A billed lookup's answer commits its lease: no command of its own.
        if (outcome.allowed && outcome.reservation) expect(meter.commit(outcome.reservation)).toBeUndefined();
      }
      expect(sent() - sentBefore).toBe(100);
      expect((await commandCalls('evalsha')) - evalshaBefore).toBe(100);
      // 49 commits ended inside the consumes that carried them (one ZREM each, inside the script);
      // the last one is still pending, and close() sends it.
      expect((await commandCalls('zrem')) - zremBefore).toBe(49);
      const leases = `seclookup:{sub:${sub.subscriptionId}}:leases`;
      expect(await inspect.zcard(leases)).toBe(1);
      await meter.close();
      expect(sent() - sentBefore).toBe(101);
      expect(await inspect.zcard(leases)).toBe(0);
      expect(await meter.quota(sub.subscriptionId, 10_000, Date.now()).catch((error: Error) => error.message)).toBe('meter is closed');
    } finally {
      await meter.close();
      expect(client.status).toBe('ready'); // a client it was given stays open
      client.disconnect();
    }
  });

  it('commits no call carried go out within commitDelayMs, in one script call for every subscription (a single Redis)', async () => {
    const { client, sent } = countingClient();
    const meter = createRedisMeter(client, { keyCacheMs: 60_000, commitDelayMs: 20 });
    try {
      const [one, two] = [await subscribe(meter), await subscribe(meter)];
      const reservations = [];
      for (const sub of [one, one, one, two, two]) {
        const outcome = await meter.consume(await requestFor(meter, sub, { now: Date.now() }));
        if (!outcome.allowed || !outcome.reservation) throw new Error('expected a reservation');
        reservations.push(outcome.reservation);
      }
      const [sentBefore, evalshaBefore, zremBefore] = [sent(), await commandCalls('evalsha'), await commandCalls('zrem')];
      // Carried by nothing: no more calls on either subscription.
      for (const reservation of reservations) meter.commit(reservation);
      await eventually(async () => {
        expect(await inspect.zcard(`seclookup:{sub:${one.subscriptionId}}:leases`)).toBe(0);
        expect(await inspect.zcard(`seclookup:{sub:${two.subscriptionId}}:leases`)).toBe(0);
      }, 5_000);
      expect(sent() - sentBefore).toBe(1);
      expect((await commandCalls('evalsha')) - evalshaBefore).toBe(1);
      expect((await commandCalls('zrem')) - zremBefore).toBe(2); // one per subscription, inside that script
    } finally {
      await meter.close();
      client.disconnect();
    }
  });

  it('a committed lease is not given back after leaseMs, an uncommitted one is: seen by another instance, whether the commit rode on a consume or on close()', async () => {
    const LEASE = 60_000;
    const a = open({ leaseMs: LEASE, commitDelayMs: 30_000 });
    const sub = await subscribe(a, { rateLimitPerMinute: 100, monthlyQuota: 10 });
    const reserve = async (now: number) => {
      const outcome = await a.consume(await requestFor(a, sub, { now }));
      if (!outcome.allowed || !outcome.reservation) throw new Error('expected a reservation');
      return outcome.reservation;
    };
    const committed = await reserve(T0);
    await reserve(T0); // never committed: a crashed lookup
    a.commit(committed);
    // The commit rides on this consume (a status-like call that reserves nothing).
    await a.consume(await requestFor(a, sub, { now: T0 + 1, reserveQuota: false }));
    const later = await reserve(T0 + 2);
    a.commit(later); // pending until close()
    await a.close();
    // Another instance, a lease time on: the two committed units stay billed, the other went back.
    const b = open({ leaseMs: LEASE, now: () => T0 + 2 + LEASE });
    expect(await b.quota(sub.subscriptionId, 10, T0 + 2 + LEASE)).toMatchObject({ remaining: 8 });
    expect((await b.usage()).map((row) => row.lookups)).toEqual([2]);
  });

  it('a commit whose flush fails (Redis hung, a master failing over) is sent again once Redis answers: the answer stays billed', async () => {
    const LEASE = 60_000;
    const errors: Error[] = [];
    const a = open({ leaseMs: LEASE, commitDelayMs: 20, commandTimeoutMs: 200, onError: (error) => errors.push(error) });
    const sub = await subscribe(a, { rateLimitPerMinute: 100, monthlyQuota: 10 });
    const outcome = await a.consume(await requestFor(a, sub, { now: T0 }));
    if (!outcome.allowed || !outcome.reservation) throw new Error('expected a reservation');
    const leases = `seclookup:{sub:${sub.subscriptionId}}:leases`;
    expect(await inspect.zcard(leases)).toBe(1);
    server.pause();
    a.commit(outcome.reservation); // its flush, 20 ms on, times out
    await eventually(async () => expect(errors.length).toBeGreaterThanOrEqual(2), 5_000); // failed, and failed again
    server.resume();
    await eventually(async () => expect(await inspect.zcard(leases)).toBe(0), 5_000);
    expect(errors[0]).toMatchObject({ code: 'store_failed', message: 'redis commit: timed out after 200 ms' });
    // Another instance, a lease time on: the answered lookup is billed, its unit not given back.
    const b = open({ leaseMs: LEASE, now: () => T0 + LEASE + 1 });
    expect(await b.quota(sub.subscriptionId, 10, T0 + LEASE + 1)).toMatchObject({ remaining: 9 });
    expect((await b.usage()).map((row) => row.lookups)).toEqual([1]);
  });

  it('a commit still failing when its lease has run out is dropped, and said so; close() with Redis hung drops what it cannot send', async () => {
    const LEASE = 60_000;
    let now = T0;
    const errors: Error[] = [];
    const a = open({ leaseMs: LEASE, commitDelayMs: 20, commandTimeoutMs: 150, now: () => now, onError: (error) => errors.push(error) });
    const sub = await subscribe(a, { rateLimitPerMinute: 100, monthlyQuota: 10 });
    const reserve = async () => {
      const outcome = await a.consume(await requestFor(a, sub, { now: T0 }));
      if (!outcome.allowed || !outcome.reservation) throw new Error('expected a reservation');
      return outcome.reservation;
    };
    const [first, second] = [await reserve(), await reserve()];
    server.pause();
    a.commit(first);
    await eventually(async () => expect(errors.length).toBeGreaterThanOrEqual(1), 5_000);
    now += LEASE; // the lease has run out: Redis gives the unit back whatever the commit does
    await eventually(async () => expect(errors.at(-1)?.message).toContain('1 commit(s) dropped'), 5_000);
    const reported = errors.length;
    a.commit(second);
    await a.close(); // one more try, then dropped: nothing is left to retry on a closed meter
    expect(errors.length).toBe(reported + 1);
    expect(errors.at(-1)?.message).toContain('1 commit(s) dropped');
    // No retry after: once Redis runs again (and the calls that timed out in its queue run too), nothing more is sent or said.
    server.resume();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(errors.length).toBe(reported + 1);
  });

  it('every counter a consume touched expires (PTTL > 0); admin records do not', async () => {
    const meter = open();
    const sub = await subscribe(meter, { rateLimitPerMinute: 2, monthlyQuota: 1 });
    const request = await requestFor(meter, sub);
    const first = await meter.consume(request);
    expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
    expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'rate_limit_exceeded' });
    if (!first.allowed || !first.reservation) throw new Error('expected a reservation');
    await meter.refund(first.reservation);

    const counters = await inspect.keys('seclookup:{sub:*');
    expect(counters.sort()).toEqual([
      `seclookup:{sub:${sub.subscriptionId}}:quota`,
      `seclookup:{sub:${sub.subscriptionId}}:rate:${request.keyId}`,
      `seclookup:{sub:${sub.subscriptionId}}:usage`,
    ]);
    const ttl = Object.fromEntries(await Promise.all(counters.map(async (key) => [key.replace(/^.*\}:/, ''), await inspect.pttl(key)] as const)));
    // Relative durations: the minute's end plus one minute; the month's end (Jan 31) plus a day; 400 days.
    expect(ttl[`rate:${request.keyId}`]).toBeGreaterThan(60_000);
    expect(ttl[`rate:${request.keyId}`]).toBeLessThanOrEqual(120_000);
    expect(ttl.quota).toBeGreaterThan(16 * 86_400_000);
    expect(ttl.quota).toBeLessThanOrEqual(17.5 * 86_400_000);
    expect(ttl.usage).toBeGreaterThan(399 * 86_400_000);

    for (const key of await inspect.keys('seclookup:{admin}:*')) expect(await inspect.pttl(key)).toBe(-1);
  });

  it('a counter that lost its expiry gets one again on the next call, even a refused one', async () => {
    const meter = open();
    const sub = await subscribe(meter, { rateLimitPerMinute: 1, monthlyQuota: 10 });
    const request = await requestFor(meter, sub);
    await meter.consume(request);
    const rateKey = `seclookup:{sub:${sub.subscriptionId}}:rate:${request.keyId}`;
    await inspect.persist(rateKey);
    expect(await inspect.pttl(rateKey)).toBe(-1);
    expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'rate_limit_exceeded' });
    expect(await inspect.pttl(rateKey)).toBeGreaterThan(0);
  });

  it('NOSCRIPT: after SCRIPT FLUSH the next consume runs by EVAL, counts exactly, and EVALSHA works again', async () => {
    const meter = open();
    const sub = await subscribe(meter, { rateLimitPerMinute: 5, monthlyQuota: 100 });
    const request = await requestFor(meter, sub);
    expect(await meter.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 4 } });
    await inspect.script('FLUSH');
    const evalBefore = await commandCalls('eval');
    expect(await meter.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 3 }, quota: { remaining: 98 } });
    expect((await commandCalls('eval')) - evalBefore).toBe(1);
    const evalshaBefore = await commandCalls('evalsha');
    expect(await meter.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 2 } });
    expect((await commandCalls('evalsha')) - evalshaBefore).toBe(1);
    expect((await commandCalls('eval')) - evalBefore).toBe(1);
  });
});

describe('createRedisMeter: Redis failures', () => {
  it('Redis stopped mid-load: calls fail with store_failed quickly, nothing hangs; after a restart the same meter counts exactly', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const meter = open({ maxReconnectDelayMs: 100, keyCacheMs: 60_000 });
      const sub = await subscribe(meter, { rateLimitPerMinute: 120, monthlyQuota: null });
      const hash = hashKey(sub.secretKey);
      const request = await requestFor(meter, sub, { reserveQuota: false });

      let running = true;
      const durations: number[] = [];
      const failures: unknown[] = [];
      let admitted = 0;
      const worker = async () => {
        while (running) {
          const started = performance.now();
          try {
            if ((await meter.consume({ ...request, rateLimitPerMinute: 1_000_000 })).allowed) admitted++;
          } catch (error) {
            failures.push(error);
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          durations.push(performance.now() - started);
        }
      };
      const workers = Array.from({ length: 20 }, worker);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(admitted).toBeGreaterThan(0);
      await server.stop();
      await new Promise((resolve) => setTimeout(resolve, 600));
      running = false;
      await Promise.all(workers);

      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures)
        expect(failure).toMatchObject({
          name: 'SeclookupError',
          code: 'store_failed',
          // Down (the server reset the connection, then refused the next ones), said with the socket
          // error once there is one: which one depends on the moment (a write meeting the closed
          // socket is EPIPE on a loaded machine).
          message: expect.stringMatching(/^redis consume: redis is unreachable \((the connection is down|E[A-Z]+)(; reconnecting)?\)$/),
        });
      expect(Math.max(...durations)).toBeLessThan(3_000);
      // Admin calls fail the same way, and no message carries the key's hash.
      const failed = await Promise.allSettled([
        meter.resolveKey(hashKey('not cached')),
        meter.listKeys(),
        meter.refund({ subscriptionId: sub.subscriptionId, product: 'useragent', period: '2025-01', day: '2025-01-15', lease: '1' }),
      ]);
      for (const result of failed) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason as Error;
        expect(reason).toMatchObject({ code: 'store_failed' });
        expect(reason.message).not.toContain(hashKey('not cached'));
      }
      expect(meter.resolveKey(hash)).toMatchObject({ status: 'active' }); // still answered from memory

      // Back, empty (no persistence): the same meter reconnects by itself and counts exactly.
      await server.start();
      await eventually(() => Promise.resolve(meter.consume({ ...request, subscriptionId: 'probe' })), 5_000);
      const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => meter.consume({ ...request, now: T0 + 7 * 86_400_000 + i })));
      expect(count(outcomes)).toEqual({ allowed: 120, rate_limit_exceeded: 80 });
      // The plans were seeded again into the empty Redis.
      expect((await meter.listPlans()).map((p) => p.slug)).toContain('starter');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a hung Redis (SIGSTOP): calls fail with store_failed after the command timeout, and work again once it runs', async () => {
    const meter = open({ commandTimeoutMs: 300 });
    const sub = await subscribe(meter, { rateLimitPerMinute: 100, monthlyQuota: null });
    const request = await requestFor(meter, sub);
    await meter.consume(request);
    server.pause();
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => meter.consume(request)));
    const elapsed = performance.now() - started;
    for (const result of results)
      expect(result).toMatchObject({ status: 'rejected', reason: { code: 'store_failed', message: 'redis consume: timed out after 300 ms' } });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
    server.resume();
    expect(await eventually(() => Promise.resolve(meter.consume(request)), 3_000)).toMatchObject({ allowed: true });
  });

  it('failure messages never carry the URL password or a key', async () => {
    const meter = open();
    await meter.close();
    const unreachable = createRedisMeter('redis://:s3cret-pass@127.0.0.1:1/0', { commandTimeoutMs: 200, maxReconnectDelayMs: 50 });
    try {
      const hash = hashKey('ua_sec_secret');
      const results = await Promise.allSettled([unreachable.resolveKey(hash), unreachable.listPlans(), unreachable.getSetting('x')]);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason as Error;
        expect(reason).toMatchObject({ code: 'store_failed' });
        expect(reason.message).not.toMatch(/s3cret|ua_sec|127\.0\.0\.1/);
        expect(reason.message).not.toContain(hash);
        expect(reason.cause).toBeUndefined();
        // Why, without where: the socket's error code.
        expect(reason.message).toMatch(/redis is unreachable \((ECONNREFUSED|the connection is down); reconnecting\)$/);
      }
    } finally {
      await unreachable.close();
    }
    // A name that resolves to nothing says so, not only "unreachable".
    const nowhere = createRedisMeter('redis://no-such-host.invalid:6379/0', { commandTimeoutMs: 2_000, maxReconnectDelayMs: 50 });
    try {
      await expect(nowhere.listPlans()).rejects.toMatchObject({
        code: 'store_failed',
        message: expect.stringMatching(/^redis connect: redis is unreachable \((ENOTFOUND|EAI_AGAIN); reconnecting\)$/),
      });
    } finally {
      await nowhere.close();
    }
    expect(() => createRedisMeter('http://:s3cret@host/0')).toThrow(
      expect.objectContaining({ code: 'invalid_option', message: expect.not.stringContaining('s3cret') }),
    );
  });
});
