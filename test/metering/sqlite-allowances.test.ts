/**
 * The SQLite meter's allowances (src/metering/sqlite/allowances.ts): a busy key on a big plan
 * is answered from memory, with the same figures as the exact path, and nothing is lost,
 * billed twice or admitted over a limit, in one process, two, or after a kill -9.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isPromise } from '../../src/lib/outcome.js';
import { generateKey, hashKey, issueKeys, visiblePrefix } from '../../src/metering/keys.js';
import type { ConsumeOutcome, ConsumeRequest, Meter, Reservation } from '../../src/metering/types.js';
import { T0 } from './conformance/index.js';
import { requestFor, sqliteMeterFile } from './sqlite-fixture.js';

const run = promisify(execFile);
/** The built package's SQLite meter, as another process of an app imports it (plain node: no TypeScript loader to start). */
const MODULE = 'seclookup/sqlite';
const BIG = { slug: 'big', product: '*' as const, rateLimitPerMinute: 100_000, monthlyQuota: 1_000_000 };

describe('SQLite meter allowances', () => {
  const meterFile = sqliteMeterFile('seclookup-allowance-');
  const { open } = meterFile;

  async function keyOn(meter: Meter, plan: typeof BIG): Promise<{ request: ConsumeRequest; subscriptionId: string }> {
    await meter.setPlan(plan);
    const sub = await issueKeys(meter, { product: 'useragent', plan: plan.slug });
    const request = await requestFor(meter, sub.secretKey);
    return { request, subscriptionId: sub.subscriptionId };
  }

  /** `count` consumes one after another: the outcomes, and how many were answered without a promise. */
  async function consumeInTurn(meter: Meter, request: ConsumeRequest, count: number): Promise<{ outcomes: ConsumeOutcome[]; fromMemory: number }> {
    const outcomes: ConsumeOutcome[] = [];
    let fromMemory = 0;
    for (let i = 0; i < count; i++) {
      const answer = meter.consume(request);
      if (!isPromise(answer)) fromMemory++;
      outcomes.push(await answer);
    }
    return { outcomes, fromMemory };
  }

  /**
   * Batches until one is spent from memory (an allowance): blocks double while batches find them
   * too small, so within a few batches one is. The reservations of those written, and that one.
   */
  async function batchesUntilOneFromMemory(meter: Meter, batch: ConsumeRequest): Promise<{ reservations: Reservation[]; fromMemory?: Reservation }> {
    const reservations: Reservation[] = [];
    for (let i = 0; i < 8; i++) {
      const answer = meter.consume(batch);
      const outcome = await answer;
      if (!outcome.allowed) throw new Error('refused');
      if (!isPromise(answer)) return { reservations, fromMemory: outcome.reservation! };
      reservations.push(outcome.reservation!);
    }
    return { reservations };
  }

  /** The file as another process sees it: the month's used units and the lease rows. */
  function fileView(subscriptionId: string) {
    const file = new Database(meterFile.path, { readonly: true });
    try {
      return {
        used: file.prepare("SELECT count FROM live_counters WHERE subscription_id = ? AND counter = 'quota'").pluck().get(subscriptionId) as number,
        leases: file.prepare('SELECT lease, units FROM leases WHERE subscription_id = ?').all(subscriptionId) as { lease: string; units: number }[],
      };
    } finally {
      file.close();
    }
  }

  it('answers a busy key from memory with the figures of the exact path; usage counts only the answers, refunds go back into the allowance', async () => {
    const meter = open();
    const { request, subscriptionId } = await keyOn(meter, BIG);
    const { outcomes, fromMemory } = await consumeInTurn(meter, request, 300);

    // Most calls needed no transaction; the limits count down by one per call, as if exact.
    expect(fromMemory).toBeGreaterThan(250);
    expect(outcomes.map((o) => o.rate.remaining)).toEqual(outcomes.map((_, i) => BIG.rateLimitPerMinute - i - 1));
    expect(outcomes.map((o) => o.quota.remaining)).toEqual(outcomes.map((_, i) => BIG.monthlyQuota - i - 1));
    const reservations = outcomes.map((o) => (o.allowed ? o.reservation! : null));
    expect(reservations.every(Boolean)).toBe(true);

    // The file counts the unspent block as used (never more admitted than the limit), held by a lease row.
    const during = fileView(subscriptionId);
    expect(during.used).toBeGreaterThan(300);
    expect(during.leases.reduce((sum, row) => sum + row.units, 0)).toBe(during.used);

    // 10 lookups fail: their units go back into the allowance, and the next calls spend them.
    for (const reservation of reservations.slice(290)) await meter.refund(reservation!);
    const next = await meter.consume(request);
    expect(next).toMatchObject({ allowed: true, quota: { remaining: BIG.monthlyQuota - 291 }, rate: { remaining: BIG.rateLimitPerMinute - 301 } });
    for (const reservation of [...reservations.slice(0, 290), (next as { reservation: Reservation }).reservation]) await meter.commit(reservation!);

    // Given back on reading: exact figures, and no lease row left.
    expect(await meter.usage('2025-01')).toEqual([{ subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 291 }]);
    expect(await meter.quota(subscriptionId, BIG.monthlyQuota, T0)).toMatchObject({ remaining: BIG.monthlyQuota - 291 });
    expect(fileView(subscriptionId)).toEqual({ used: 291, leases: [] });
  });

  it('a batch spent from an allowance and given back in part: those units go back into it, the rest are billed', async () => {
    const meter = open();
    const { request, subscriptionId } = await keyOn(meter, BIG);
    const batch = { ...request, rateUnits: 100, quotaUnits: 100 };
    const { reservations, fromMemory } = await batchesUntilOneFromMemory(meter, batch);
    expect(fromMemory).toMatchObject({ units: 100 });
    await meter.refund({ ...fromMemory!, units: 30 });
    // The 30 are back: the next batch sees them as left.
    const next = await meter.consume(batch);
    const billed = reservations.length * 100 + 70;
    expect(next).toMatchObject({ allowed: true, quota: { remaining: BIG.monthlyQuota - billed - 100 } });
    await meter.refund((next as { reservation: Reservation }).reservation);
    for (const reservation of reservations) await meter.commit(reservation);
    expect(await meter.usage('2025-01')).toEqual([{ subscriptionId, product: 'useragent', day: '2025-01-15', lookups: billed }]);
    expect(fileView(subscriptionId)).toEqual({ used: billed, leases: [] });
  });

  it('a batch spent from an allowance and given back in part after the allowance ended: the rest are billed, in usage too', async () => {
    const meter = open();
    const { request, subscriptionId } = await keyOn(meter, BIG);
    const batch = { ...request, rateUnits: 100, quotaUnits: 100 };
    const { reservations, fromMemory } = await batchesUntilOneFromMemory(meter, batch);
    expect(fromMemory).toMatchObject({ units: 100 });
    // The allowance ends before the batch's slow inputs fail (reading the quota ends it; so do idling and another call spending it out).
    await meter.quota(subscriptionId, BIG.monthlyQuota, T0);
    await meter.refund({ ...fromMemory!, units: 30 });
    for (const reservation of reservations) await meter.commit(reservation);
    const billed = reservations.length * 100 + 70;
    expect(await meter.quota(subscriptionId, BIG.monthlyQuota, T0)).toMatchObject({ remaining: BIG.monthlyQuota - billed });
    expect(await meter.usage('2025-01')).toEqual([{ subscriptionId, product: 'useragent', day: '2025-01-15', lookups: billed }]);
    expect(fileView(subscriptionId)).toEqual({ used: billed, leases: [] });
  });

  it('gives the unspent rate back when the allowance ends, so the window counts exactly the calls made (status routes: rate only)', async () => {
    const meter = open();
    const { request, subscriptionId } = await keyOn(meter, BIG);
    const status = { ...request, reserveQuota: false };
    const { outcomes, fromMemory } = await consumeInTurn(meter, status, 100);
    expect(fromMemory).toBeGreaterThan(80);
    expect(outcomes.at(-1)).toMatchObject({ allowed: true, rate: { remaining: BIG.rateLimitPerMinute - 100 }, reservation: null });
    await meter.close();
    const file = new Database(meterFile.path, { readonly: true });
    try {
      expect(file.prepare('SELECT counter, count FROM live_counters WHERE subscription_id = ?').all(subscriptionId)).toEqual([
        { counter: `rate:${request.keyId}`, count: 100 },
      ]);
    } finally {
      file.close();
    }
  });

  it('keeps small plans exact, call by call: an allowance only while 1,024 or more is left', async () => {
    const meter = open();
    const small = await keyOn(meter, { ...BIG, slug: 'small', rateLimitPerMinute: 1_000 });
    const calls = await consumeInTurn(meter, small.request, 100);
    expect(calls.fromMemory).toBe(0);
    expect(calls.outcomes.at(-1)!.rate.remaining).toBe(900);

    const edge = await keyOn(meter, { ...BIG, slug: 'edge', rateLimitPerMinute: 1_100 });
    const first = await consumeInTurn(meter, edge.request, 150);
    expect(first.fromMemory).toBeGreaterThan(0);
    // Below 1,024 left, no new block: once the last one is spent, every call is exact.
    const exact = await consumeInTurn(meter, edge.request, 20);
    expect(exact.fromMemory).toBe(0);
    expect(exact.outcomes.at(-1)!.rate.remaining).toBe(1_100 - 170);
  });

  /** A second secret key of the subscription (captcha's site keys share one quota like this): its consume request. */
  async function secondKey(meter: Meter, subscriptionId: string): Promise<ConsumeRequest> {
    const key = generateKey('useragent', 'secret');
    await meter.addKeys(subscriptionId, [{ kind: 'secret', hash: hashKey(key), prefix: visiblePrefix(key) }]);
    return requestFor(meter, key);
  }

  it("two keys of one subscription, each with an allowance: every answer reports the month's quota after both keys' lookups", async () => {
    const meter = open();
    const { request: a, subscriptionId } = await keyOn(meter, BIG);
    const b = await secondKey(meter, subscriptionId);
    const remaining: (number | null)[] = [];
    let fromMemory = 0;
    for (let i = 0; i < 150; i++) {
      for (const request of [a, b]) {
        const answer = meter.consume(request);
        if (!isPromise(answer)) fromMemory++;
        remaining.push((await answer).quota.remaining);
      }
    }
    expect(fromMemory).toBeGreaterThan(250);
    // As the exact path (and the memory store) counts: one less per lookup, whichever key made it.
    expect(remaining).toEqual(remaining.map((_, i) => BIG.monthlyQuota - i - 1));
    expect(await meter.quota(subscriptionId, BIG.monthlyQuota, T0)).toMatchObject({ remaining: BIG.monthlyQuota - 300 });
  });

  it("a key is not refused for quota that another key's allowance holds unspent: the month is used up exactly", async () => {
    const meter = open();
    const plan = { ...BIG, slug: 'month', monthlyQuota: 1_100 };
    const { request: a, subscriptionId } = await keyOn(meter, plan);
    const b = await secondKey(meter, subscriptionId);
    // Key a takes a block it does not spend; key b then uses the month up.
    expect(await meter.consume(a)).toMatchObject({ allowed: true, quota: { remaining: 1_099 } });
    let admitted = 1;
    let last: ConsumeOutcome | undefined;
    for (let i = 0; i < 1_200; i++) {
      last = await meter.consume(b);
      if (!last.allowed) break;
      admitted++;
      expect(last.quota.remaining).toBe(1_100 - admitted);
    }
    expect(admitted).toBe(1_100);
    expect(last).toMatchObject({ allowed: false, reason: 'quota_exceeded', quota: { remaining: 0 } });
    expect(await meter.consume(a)).toMatchObject({ allowed: false, reason: 'quota_exceeded', quota: { remaining: 0 } });
    expect(await meter.quota(subscriptionId, plan.monthlyQuota, T0)).toMatchObject({ remaining: 0 });
  });

  it('a plan changed under a live allowance: the next call is decided on the new plan, with the allowance given back first', async () => {
    const meter = open();
    const { request } = await keyOn(meter, BIG);
    await consumeInTurn(meter, request, 40);
    const lower = { ...request, rateLimitPerMinute: 50 };
    const outcome = meter.consume(lower);
    expect(isPromise(outcome)).toBe(true);
    expect(await outcome).toMatchObject({ allowed: true, rate: { limit: 50, remaining: 50 - 41 } });
  });

  it('an allowance whose lease ran out (a stalled process) ends with its row: nothing is given back twice, and its key is then decided exactly', async () => {
    const LEASE = 10_000;
    const meter = open({ leaseMs: LEASE });
    const { request, subscriptionId } = await keyOn(meter, BIG);
    const { outcomes } = await consumeInTurn(meter, request, 40);
    for (const outcome of outcomes.slice(0, 30)) if (outcome.allowed) await meter.commit(outcome.reservation!);
    // Another key's call 20 s on (same minute) gives every expired lease back: the 10 uncommitted
    // units and the unspent ones, once each.
    const other = await keyOn(meter, { ...BIG, slug: 'other' });
    await meter.consume({ ...other.request, now: T0 + 2 * LEASE });
    // A call of the first key stamped earlier (a request that waited) no longer spends from the ended allowance.
    const late = meter.consume({ ...request, now: T0 + 1_000 });
    expect(isPromise(late)).toBe(true);
    expect(await late).toMatchObject({ allowed: true, quota: { remaining: BIG.monthlyQuota - 31 }, rate: { remaining: BIG.rateLimitPerMinute - 41 } });
    await meter.commit(((await late) as { reservation: Reservation }).reservation);
    expect((await meter.usage('2025-01')).find((row) => row.subscriptionId === subscriptionId)).toMatchObject({ lookups: 31 });
    expect(fileView(subscriptionId)).toEqual({ used: 31, leases: [] });
  });

  it('a unit spent from an allowance and answered only after its lease ran out is not billed', async () => {
    const LEASE = 10_000;
    const meter = open({ leaseMs: LEASE });
    const { request, subscriptionId } = await keyOn(meter, BIG);
    // Each lookup answered at once, as the API does, but the last one.
    for (let i = 0; i < 39; i++) {
      const outcome = await meter.consume(request);
      if (outcome.allowed) await meter.commit(outcome.reservation!);
    }
    const last = meter.consume(request);
    expect(isPromise(last)).toBe(false);
    const { reservation } = (await last) as { reservation: Reservation };
    // Reading the quota after the lease gives the expired row back, the last unit with it. Nothing
    // made a lease name since, so the meter still remembers that unit's: it must not count it.
    expect(await meter.quota(subscriptionId, BIG.monthlyQuota, T0 + 2 * LEASE)).toMatchObject({ remaining: BIG.monthlyQuota - 39 });
    await meter.commit(reservation);
    expect((await meter.usage('2025-01')).find((row) => row.subscriptionId === subscriptionId)).toMatchObject({ lookups: 39 });
    expect(fileView(subscriptionId)).toEqual({ used: 39, leases: [] });
  });

  it('two processes on one big limit: never more than the limit, and exactly the limit when both keep asking', async () => {
    const meter = open();
    const quota = 4_000;
    const { request, subscriptionId } = await keyOn(meter, { ...BIG, slug: 'shared', rateLimitPerMinute: 1_000_000, monthlyQuota: quota });
    await meter.close();
    // Each child sends 3,000 calls in bursts of 20; it reports how many were allowed and how many came from memory.
    const child = `
      const { createSqliteMeter } = await import(${JSON.stringify(MODULE)});
      const meter = createSqliteMeter(process.env.METER_DB);
      const request = JSON.parse(process.env.METER_REQUEST);
      while (Date.now() < Number(process.env.START_AT)) await new Promise((r) => setTimeout(r, 1));
      let allowed = 0, fromMemory = 0;
      for (let burst = 0; burst < 150; burst++) {
        const answers = Array.from({ length: 20 }, () => meter.consume(request));
        fromMemory += answers.filter((a) => typeof a.then !== 'function').length;
        allowed += (await Promise.all(answers)).filter((o) => o.allowed).length;
        await new Promise((r) => setTimeout(r, 1));
      }
      await meter.close();
      console.log(JSON.stringify({ allowed, fromMemory }));
    `;
    const env = { ...process.env, METER_DB: meterFile.path, METER_REQUEST: JSON.stringify(request), START_AT: String(Date.now() + 3_000) };
    const results = await Promise.all([1, 2].map(async () => JSON.parse((await run(process.execPath, ['--input-type=module', '-e', child], { env })).stdout)));
    expect(results.every((r) => r.fromMemory > 100)).toBe(true);
    expect(results[0].allowed + results[1].allowed).toBe(quota);
    // Every admitted call still holds its unit (none was committed); the unspent blocks went back at close.
    expect(fileView(subscriptionId).used).toBe(quota);
  });

  it('kill -9 with an allowance held: at the lease end its unspent units and unwritten answers go back, and usage holds only the answers written', async () => {
    const LEASE = 60_000;
    const meter = open();
    const { request, subscriptionId } = await keyOn(meter, BIG);
    await meter.close();
    // The child answers 100 calls: it commits 60 and waits for them to be written (their write is
    // due within COMMIT_DELAY_MS, a timer that fires before the wait's), then commits 20 more and
    // kills itself in the same turn, before their write is due. (Killed from here instead, a
    // loaded machine let the child write those 20 first.)
    const child = `
      const { createSqliteMeter } = await import(${JSON.stringify(MODULE)});
      const meter = createSqliteMeter(process.env.METER_DB, { leaseMs: ${LEASE} });
      const request = JSON.parse(process.env.METER_REQUEST);
      const reservations = [];
      for (let i = 0; i < 100; i++) reservations.push((await meter.consume(request)).reservation);
      for (const r of reservations.slice(0, 60)) await meter.commit(r);
      await new Promise((r) => setTimeout(r, 200));
      for (const r of reservations.slice(60, 80)) await meter.commit(r);
      process.kill(process.pid, 'SIGKILL');
    `;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', child], {
      env: { ...process.env, METER_DB: meterFile.path, METER_REQUEST: JSON.stringify(request) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const [, signal] = await new Promise<[number | null, string | null]>((done) => proc.once('exit', (code, sig) => done([code, sig])));
    expect(signal).toBe('SIGKILL');

    // Until the lease ends, the child's block and its 40 unwritten units stay reserved.
    expect(fileView(subscriptionId).used).toBeGreaterThanOrEqual(100);
    const other = open({ now: () => T0 + LEASE });
    expect(await other.quota(subscriptionId, BIG.monthlyQuota, T0 + LEASE)).toMatchObject({ remaining: BIG.monthlyQuota - 60 });
    expect(await other.usage('2025-01')).toEqual([{ subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 60 }]);
    expect(fileView(subscriptionId)).toEqual({ used: 60, leases: [] });
  });
});
