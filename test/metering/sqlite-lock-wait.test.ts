/**
 * A write lock held by another connection (another process, the sqlite3 shell) is waited for
 * from a timer (src/metering/sqlite/lock-wait.ts), not in SQLite's busy handler, which sleeps in
 * this thread. The holder here is a second connection in the test's own process: had the meter
 * waited in SQLite, the holder's release (a timer of this process) could not have run until
 * the busy timeout was over, and the writes would have failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { T0 } from './conformance/index.js';
import { requestFor, sqliteMeterFile } from './sqlite-fixture.js';

/** `BEGIN IMMEDIATE` on `path` from a connection of its own: the write lock, until `release`. */
function holdWriteLock(path: string) {
  const holder = new Database(path);
  holder.exec('BEGIN IMMEDIATE');
  return {
    release() {
      holder.exec('COMMIT');
      holder.close();
    },
  };
}

/** Settles `promise` into a readable state, so a test can ask whether it has settled yet. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  const done = promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return { state, done };
}

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sqlite meter: another connection holding the write lock', () => {
  const meterFile = sqliteMeterFile('seclookup-lock-wait-');

  async function exactKey(meter: ReturnType<typeof meterFile.open>) {
    // A small plan: every call is an exact one, written in a group transaction (no allowance).
    await meter.setPlan({ slug: 'small', product: '*', rateLimitPerMinute: 50, monthlyQuota: 100 });
    const sub = await issueKeys(meter, { product: 'geoip', plan: 'small' });
    return { sub, request: await requestFor(meter, sub.secretKey) };
  }

  it('keeps the calls queued while the lock is held, runs this process meanwhile, and writes them once it is released', async () => {
    const meter = meterFile.open();
    const { sub, request } = await exactKey(meter);
    const lock = holdWriteLock(meterFile.path);
    const calls = track(Promise.all([meter.consume(request), meter.consume(request), meter.consume(request)]));

    // Timers of this process run while the calls wait: the thread is not asleep in SQLite.
    let ticks = 0;
    for (let i = 0; i < 5; i++) {
      await later(5);
      ticks++;
    }
    expect(ticks).toBe(5);
    expect(calls.state.settled).toBe(false);
    // More calls while waiting join the queue rather than trying the lock every turn.
    const more = meter.consume(request);

    lock.release();
    await calls.done;
    expect(calls.state.error).toBeUndefined();
    expect(calls.state.value?.map((outcome) => outcome.allowed)).toEqual([true, true, true]);
    expect(await more).toMatchObject({ allowed: true, rate: { remaining: 46 } });
    expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 96 });
  });

  it('fails the calls with store_failed once the lock was held for the whole busy timeout, counting none of them, and writes again after', async () => {
    const meter = meterFile.open({ busyTimeoutMs: 60 });
    const { sub, request } = await exactKey(meter);
    const lock = holdWriteLock(meterFile.path);
    const failed = await Promise.allSettled([meter.consume(request), meter.consume(request)]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({
      code: 'store_failed',
      message: `metering database "${meterFile.path}" is locked by another connection: waited 60 ms for its write lock`,
    });

    lock.release();
    expect(await meter.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 49 } });
    expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 99 });
  });

  it('opens a file whose schema is current without the write lock: keys and plans read while another connection holds it', async () => {
    const first = meterFile.open();
    const { sub } = await exactKey(first);
    await first.close();
    const lock = holdWriteLock(meterFile.path);
    try {
      // No busy wait at all: opening took the lock (BEGIN IMMEDIATE) on every open, and failed "database is locked" here.
      const meter = meterFile.open({ busyTimeoutMs: 0 });
      expect((await meter.listKeys()).map((key) => key.subscriptionId)).toEqual([sub.subscriptionId, sub.subscriptionId]);
      expect((await meter.listPlans()).map((plan) => plan.slug)).toContain('small');
    } finally {
      lock.release();
    }
  });

  it('a file that still needs its plans seeded takes the write lock to seed them: refused while another connection holds it, seeded after', async () => {
    await meterFile.open().close();
    const holder = new Database(meterFile.path);
    holder.exec('DELETE FROM plans');
    holder.exec('BEGIN IMMEDIATE');
    try {
      expect(() => meterFile.open({ busyTimeoutMs: 0 })).toThrow(/database is locked/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await meterFile.open({ busyTimeoutMs: 0 }).listPlans()).toContainEqual(expect.objectContaining({ slug: 'starter', product: '*' }));
  });

  it('rejects a busy timeout that is not a whole number of milliseconds', () => {
    expect(() => meterFile.open({ busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs must be a whole number/);
    expect(() => meterFile.open({ busyTimeoutMs: 1.5 })).toThrow(/busyTimeoutMs must be a whole number/);
  });

  it('close, while calls wait for the lock, writes them at once', async () => {
    const meter = meterFile.open();
    const { sub, request } = await exactKey(meter);
    const lock = holdWriteLock(meterFile.path);
    const call = meter.consume(request);
    await later(10);
    // Released before close: close writes now, not at the retry its timer was due for.
    lock.release();
    await meter.close();
    expect(await call).toMatchObject({ allowed: true });
    expect(await meterFile.open().quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 99 });
  });
});

describe('sqlite single-use store: another connection holding the write lock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-lock-wait-tokens-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the claims queued while the lock is held and writes them once it is released', async () => {
    const file = join(dir, 'tokens.db');
    const store = createSqliteSingleUseStore(file);
    const now = Date.now();
    try {
      const lock = holdWriteLock(file);
      const claims = track(Promise.all([store.consume('a', now + 60_000, now), store.consume('a', now + 60_000, now)]));
      await later(20);
      expect(claims.state.settled).toBe(false);
      lock.release();
      await claims.done;
      expect(claims.state.error).toBeUndefined();
      // The first claim of the id wins, as without the wait.
      expect(claims.state.value).toEqual([true, false]);
      expect(await store.consume('a', now + 60_000, now)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
