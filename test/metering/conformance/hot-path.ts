/**
 * The meter's hot path (MeterHotPath): consume (rate and quota in one atomic step), batches,
 * refunds and the usage they leave, and leases. Every store must pass it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IssuedKeys } from '../../../src/metering/keys.js';
import type { ConsumeOutcome, ConsumeRequest, Meter } from '../../../src/metering/types.js';
import {
  countOutcomes,
  COUNTING_LEASE_MS,
  FEB,
  MINUTE,
  requestFor as requestOn,
  subscribe as subscribeOn,
  T0,
  type MeterFactory,
  type SubscribeOptions,
} from './common.js';

export function describeMeterHotPathConformance(name: string, makeMeter: MeterFactory): void {
  describe(`Meter conformance, hot path: ${name}`, () => {
    let meter: Meter;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ meter, cleanup } = await makeMeter({ leaseMs: COUNTING_LEASE_MS, now: () => T0 }));
    });
    afterEach(async () => {
      await cleanup();
    });

    const subscribe = (options?: SubscribeOptions) => subscribeOn(meter, options);
    const requestFor = (sub: IssuedKeys, overrides?: Partial<ConsumeRequest>) => requestOn(meter, sub, overrides);

    describe('consume', () => {
      it('admits a call, counts the window and reserves one unit of quota', async () => {
        const sub = await subscribe();
        const outcome = await meter.consume(await requestFor(sub, { now: T0 + 1_234 }));
        expect(outcome).toEqual({
          allowed: true,
          rate: { limit: 120, remaining: 119, resetAt: T0 / 1000 + 60 },
          quota: { limit: 10_000, remaining: 9_999, period: '2025-01' },
          reservation: { subscriptionId: sub.subscriptionId, product: 'useragent', period: '2025-01', day: '2025-01-15', lease: expect.any(String) },
        });
        expect(await meter.quota(sub.subscriptionId, 10_000, T0)).toEqual({ limit: 10_000, remaining: 9_999, period: '2025-01' });
      });

      it('without reserveQuota counts the window but holds no quota', async () => {
        const sub = await subscribe();
        const request = await requestFor(sub, { reserveQuota: false });
        expect(await meter.consume(request)).toEqual({
          allowed: true,
          rate: { limit: 120, remaining: 119, resetAt: T0 / 1000 + 60 },
          quota: { limit: 10_000, remaining: 10_000, period: '2025-01' },
          reservation: null,
        });
        expect((await meter.consume(request)).rate.remaining).toBe(118);
        expect(await meter.quota(sub.subscriptionId, 10_000, T0)).toEqual({ limit: 10_000, remaining: 10_000, period: '2025-01' });
      });

      it('rejects past the per-minute limit, counting nothing, until the next minute', async () => {
        const sub = await subscribe({ plan: 'tiny', limits: { rateLimitPerMinute: 3, monthlyQuota: 100 } });
        const request = await requestFor(sub);
        const admitted = [];
        for (let i = 0; i < 3; i++) admitted.push(await meter.consume({ ...request, now: T0 + i * 10_000 }));
        expect(admitted.map((o) => [o.allowed, o.rate.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
        ]);

        const rejected = await meter.consume({ ...request, now: T0 + 59_999 });
        expect(rejected).toEqual({
          allowed: false,
          reason: 'rate_limit_exceeded',
          rate: { limit: 3, remaining: 0, resetAt: T0 / 1000 + 60 },
          quota: { limit: 100, remaining: 97, period: '2025-01' },
        });

        // The window rolls over exactly at the minute boundary.
        const next = await meter.consume({ ...request, now: T0 + MINUTE });
        expect(next).toMatchObject({ allowed: true, rate: { limit: 3, remaining: 2, resetAt: T0 / 1000 + 120 }, quota: { remaining: 96 } });
      });

      it('keeps one window per key while the subscription shares one quota', async () => {
        const sub = await subscribe({ plan: 'tiny', limits: { rateLimitPerMinute: 2, monthlyQuota: 100 } });
        const secret = await requestFor(sub);
        const pub = { ...secret, keyId: sub.keys[1].id };
        await meter.consume(secret);
        await meter.consume(secret);
        expect(await meter.consume(secret)).toMatchObject({ allowed: false, reason: 'rate_limit_exceeded' });
        expect(await meter.consume(pub)).toMatchObject({ allowed: true, rate: { remaining: 1 }, quota: { remaining: 97 } });
      });

      it('a rate-limited call never consumes quota', async () => {
        const sub = await subscribe({ plan: 'tiny', limits: { rateLimitPerMinute: 5, monthlyQuota: 1_000 } });
        const request = await requestFor(sub);
        const outcomes = [];
        for (let i = 0; i < 50; i++) outcomes.push(await meter.consume(request));
        expect(countOutcomes(outcomes)).toEqual({ allowed: 5, rate_limit_exceeded: 45 });
        expect(await meter.quota(sub.subscriptionId, 1_000, T0)).toEqual({ limit: 1_000, remaining: 995, period: '2025-01' });
      });

      it('rejects past the monthly quota (the call still counts against the window) until the next month', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 2 } });
        const request = await requestFor(sub);
        expect(await meter.consume(request)).toMatchObject({ allowed: true, quota: { remaining: 1 } });
        expect(await meter.consume(request)).toMatchObject({ allowed: true, quota: { remaining: 0 } });
        expect(await meter.consume(request)).toEqual({
          allowed: false,
          reason: 'quota_exceeded',
          rate: { limit: 100, remaining: 97, resetAt: T0 / 1000 + 60 },
          quota: { limit: 2, remaining: 0, period: '2025-01' },
        });
        // Unbilled calls are still admitted when the quota is gone.
        expect(await meter.consume({ ...request, reserveQuota: false })).toMatchObject({ allowed: true, rate: { remaining: 96 }, quota: { remaining: 0 } });

        // Last millisecond of January: still exhausted. First of February: a fresh month.
        expect(await meter.consume({ ...request, now: FEB - 1 })).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
        expect(await meter.consume({ ...request, now: FEB })).toEqual({
          allowed: true,
          rate: { limit: 100, remaining: 99, resetAt: FEB / 1000 + 60 },
          quota: { limit: 2, remaining: 1, period: '2025-02' },
          reservation: { subscriptionId: sub.subscriptionId, product: 'useragent', period: '2025-02', day: '2025-02-01', lease: expect.any(String) },
        });
        expect(await meter.quota(sub.subscriptionId, 2, FEB + 5 * 86_400_000)).toEqual({ limit: 2, remaining: 1, period: '2025-02' });
      });

      it('counts usage on unlimited plans but never rejects on quota', async () => {
        const sub = await subscribe({ plan: 'enterprise' });
        const request = await requestFor(sub);
        expect(request.monthlyQuota).toBeNull();
        let last: ConsumeOutcome | undefined;
        for (let i = 0; i < 25; i++) last = await meter.consume(request);
        expect(last).toEqual({
          allowed: true,
          rate: { limit: 3_000, remaining: 2_975, resetAt: T0 / 1000 + 60 },
          quota: { limit: null, remaining: null, period: '2025-01' },
          reservation: { subscriptionId: sub.subscriptionId, product: 'useragent', period: '2025-01', day: '2025-01-15', lease: expect.any(String) },
        });
        expect(await meter.quota(sub.subscriptionId, null, T0)).toEqual({ limit: null, remaining: null, period: '2025-01' });
        // The count is kept: were the plan capped at 100, 75 would be left.
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toEqual({ limit: 100, remaining: 75, period: '2025-01' });
      });

      it('never moves a window or month back: late calls count against the newer one', async () => {
        const sub = await subscribe({ plan: 'tiny', limits: { rateLimitPerMinute: 2, monthlyQuota: 10 } });
        const request = await requestFor(sub);
        await meter.consume({ ...request, now: FEB + MINUTE });
        await meter.consume({ ...request, now: FEB + MINUTE });
        // Stamped a minute (and a month) earlier, e.g. by a caller whose clock lags.
        expect(await meter.consume({ ...request, now: FEB - 1 })).toEqual({
          allowed: false,
          reason: 'rate_limit_exceeded',
          rate: { limit: 2, remaining: 0, resetAt: FEB / 1000 + 120 },
          quota: { limit: 10, remaining: 8, period: '2025-02' },
        });
        const late = await meter.consume({ ...request, keyId: sub.keys[1].id, now: FEB - 1 });
        expect(late).toMatchObject({ allowed: true, quota: { remaining: 7, period: '2025-02' }, reservation: { period: '2025-02', day: '2025-01-31' } });
      });

      it('quota() reports without consuming', async () => {
        const sub = await subscribe();
        await meter.consume(await requestFor(sub));
        const snapshot = await meter.quota(sub.subscriptionId, 10_000, T0);
        expect(snapshot).toEqual({ limit: 10_000, remaining: 9_999, period: '2025-01' });
        expect(await meter.quota(sub.subscriptionId, 10_000, T0)).toEqual(snapshot);
        expect(await meter.quota(sub.subscriptionId, 10_000, FEB)).toEqual({ limit: 10_000, remaining: 10_000, period: '2025-02' });
        expect(await meter.quota('no-such-subscription', 5, T0)).toEqual({ limit: 5, remaining: 5, period: '2025-01' });
      });

      it('admits exactly the rate limit among 200 concurrent calls', async () => {
        const sub = await subscribe();
        const request = await requestFor(sub);
        expect(request.rateLimitPerMinute).toBe(120);
        const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => meter.consume({ ...request, now: T0 + i })));
        expect(countOutcomes(outcomes)).toEqual({ allowed: 120, rate_limit_exceeded: 80 });
        const remaining = outcomes.filter((o) => o.allowed).map((o) => o.rate.remaining);
        expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
        expect(await meter.quota(sub.subscriptionId, 10_000, T0)).toEqual({ limit: 10_000, remaining: 9_880, period: '2025-01' });
      });

      it('admits exactly the remaining quota among concurrent calls', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 1_000, monthlyQuota: 50 } });
        const request = await requestFor(sub);
        const outcomes = await Promise.all(Array.from({ length: 200 }, () => meter.consume(request)));
        expect(countOutcomes(outcomes)).toEqual({ allowed: 50, quota_exceeded: 150 });
        expect(await meter.quota(sub.subscriptionId, 50, T0)).toEqual({ limit: 50, remaining: 0, period: '2025-01' });
        // All 200 counted against the window.
        expect((await meter.consume({ ...request, reserveQuota: false })).rate.remaining).toBe(1_000 - 201);
      });
    });

    describe('units (batches)', () => {
      it('counts rateUnits against the window and reserves quotaUnits, in one reservation', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 50 } });
        const request = await requestFor(sub);
        const outcome = await meter.consume({ ...request, rateUnits: 10, quotaUnits: 7 });
        expect(outcome).toEqual({
          allowed: true,
          rate: { limit: 100, remaining: 90, resetAt: T0 / 1000 + 60 },
          quota: { limit: 50, remaining: 43, period: '2025-01' },
          reservation: { subscriptionId: sub.subscriptionId, product: 'useragent', period: '2025-01', day: '2025-01-15', units: 7, lease: expect.any(String) },
        });
        expect(await meter.quota(sub.subscriptionId, 50, T0)).toEqual({ limit: 50, remaining: 43, period: '2025-01' });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([7]);
        // Units of 1 are a plain call: no `units` on the reservation.
        expect(await meter.consume({ ...request, rateUnits: 1, quotaUnits: 1 })).toMatchObject({ allowed: true, reservation: { day: '2025-01-15' } });
        const single = await meter.consume(request);
        expect(single.allowed && single.reservation && 'units' in single.reservation).toBe(false);
        // Without reserveQuota only the window counts.
        expect(await meter.consume({ ...request, reserveQuota: false, rateUnits: 5 })).toMatchObject({
          allowed: true,
          rate: { remaining: 83 },
          quota: { remaining: 41 },
          reservation: null,
        });
      });

      it('refuses units that do not all fit in the window whole, counting nothing', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 10, monthlyQuota: 100 } });
        const request = await requestFor(sub);
        expect(await meter.consume({ ...request, rateUnits: 8, quotaUnits: 8 })).toMatchObject({ allowed: true, rate: { remaining: 2 } });
        expect(await meter.consume({ ...request, rateUnits: 3, quotaUnits: 3 })).toEqual({
          allowed: false,
          reason: 'rate_limit_exceeded',
          rate: { limit: 10, remaining: 2, resetAt: T0 / 1000 + 60 },
          quota: { limit: 100, remaining: 92, period: '2025-01' },
        });
        // Exactly what is left fits.
        expect(await meter.consume({ ...request, rateUnits: 2, quotaUnits: 2 })).toMatchObject({
          allowed: true,
          rate: { remaining: 0 },
          quota: { remaining: 90 },
        });
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 90 });
      });

      it('refuses quotaUnits that do not all fit in the month, reserving nothing (the units still count against the window)', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 1_000, monthlyQuota: 60 } });
        const request = await requestFor(sub);
        await meter.consume({ ...request, rateUnits: 10, quotaUnits: 10 });
        expect(await meter.consume({ ...request, rateUnits: 60, quotaUnits: 60 })).toEqual({
          allowed: false,
          reason: 'quota_exceeded',
          rate: { limit: 1_000, remaining: 930, resetAt: T0 / 1000 + 60 },
          quota: { limit: 60, remaining: 50, period: '2025-01' },
        });
        expect(await meter.quota(sub.subscriptionId, 60, T0)).toMatchObject({ remaining: 50 });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([10]);
        expect(await meter.consume({ ...request, rateUnits: 50, quotaUnits: 50 })).toMatchObject({ allowed: true, quota: { remaining: 0 } });
      });

      it('admits whole batches only among concurrent ones: never more than the quota, never a part of one', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 10_000, monthlyQuota: 100 } });
        const request = await requestFor(sub);
        const outcomes = await Promise.all(Array.from({ length: 40 }, () => meter.consume({ ...request, rateUnits: 7, quotaUnits: 7 })));
        // 14 batches of 7 = 98 fit; the 2 units left fit no batch of 7.
        expect(countOutcomes(outcomes)).toEqual({ allowed: 14, quota_exceeded: 26 });
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toEqual({ limit: 100, remaining: 2, period: '2025-01' });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([98]);
      });

      it("refund gives back k of a batch's units with { ...reservation, units: k } and ends the lease: the rest stay billed", async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 1_000, monthlyQuota: 100 } });
        const request = await requestFor(sub);
        const batch = await meter.consume({ ...request, rateUnits: 20, quotaUnits: 20 });
        if (!batch.allowed || !batch.reservation) throw new Error('expected a reservation');
        await meter.refund({ ...batch.reservation, units: 3 });
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 83 });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([17]);
        // The lease ended: refunding it again, whole or in part, gives nothing more back.
        await meter.refund(batch.reservation);
        await meter.refund({ ...batch.reservation, units: 20 });
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 83 });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([17]);
        // A refund never gives back more than its lease holds.
        const small = await meter.consume({ ...request, rateUnits: 5, quotaUnits: 5 });
        if (!small.allowed || !small.reservation) throw new Error('expected a reservation');
        await meter.refund({ ...small.reservation, units: 50 });
        expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 83 });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([17]);
      });

      it('a partial refund of a batch billed yesterday comes off that day', async () => {
        const sub = await subscribe();
        const DAY = 86_400_000;
        const batch = await meter.consume(await requestFor(sub, { now: T0, rateUnits: 6, quotaUnits: 6 }));
        await meter.consume(await requestFor(sub, { now: T0 + DAY, rateUnits: 4, quotaUnits: 4 }));
        if (!batch.allowed || !batch.reservation) throw new Error('expected a reservation');
        await meter.refund({ ...batch.reservation, units: 2 });
        const day = (d: string, lookups: number) => ({ subscriptionId: sub.subscriptionId, product: 'useragent', day: d, lookups });
        expect(await meter.usage()).toEqual([day('2025-01-15', 4), day('2025-01-16', 4)]);
        expect(await meter.quota(sub.subscriptionId, 10_000, T0 + DAY)).toMatchObject({ remaining: 10_000 - 8 });
      });
    });

    describe('refund and usage', () => {
      it('refund gives a reserved unit back once, and only to its own month', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 2 } });
        const request = await requestFor(sub);
        const first = await meter.consume(request);
        const second = await meter.consume(request);
        expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
        if (!first.allowed || !first.reservation) throw new Error('expected a reservation');
        // The refused call is not in usage.
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([2]);

        await meter.refund(first.reservation);
        expect(await meter.quota(sub.subscriptionId, 2, T0)).toEqual({ limit: 2, remaining: 1, period: '2025-01' });
        expect((await meter.usage()).map((row) => row.lookups)).toEqual([1]);
        expect(await meter.consume(request)).toMatchObject({ allowed: true, quota: { remaining: 0 } });

        // A lease is refunded once: refunding it again gives nothing more back.
        for (let i = 0; i < 5; i++) await meter.refund(first.reservation);
        expect(await meter.quota(sub.subscriptionId, 2, T0)).toEqual({ limit: 2, remaining: 0, period: '2025-01' });

        // A January refund after February started leaves February alone.
        await meter.consume({ ...request, now: FEB });
        if (!second.allowed || !second.reservation) throw new Error('expected a reservation');
        await meter.refund(second.reservation);
        expect(await meter.quota(sub.subscriptionId, 2, FEB)).toEqual({ limit: 2, remaining: 1, period: '2025-02' });
      });

      it('a refund after midnight comes off the day it was billed on, and a late clock bills its own day', async () => {
        const sub = await subscribe();
        const DAY = 86_400_000;
        const first = await meter.consume(await requestFor(sub, { now: T0 }));
        await meter.consume(await requestFor(sub, { now: T0 + DAY }));
        await meter.consume(await requestFor(sub, { now: T0 + DAY }));
        if (!first.allowed || !first.reservation) throw new Error('expected a reservation');
        await meter.refund(first.reservation);
        const day = (d: string, lookups: number) => ({ subscriptionId: sub.subscriptionId, product: 'useragent', day: d, lookups });
        expect(await meter.usage()).toEqual([day('2025-01-15', 0), day('2025-01-16', 2)]);

        // A caller whose clock is still on the 15th.
        await meter.consume(await requestFor(sub, { now: T0 + 1_000 }));
        await meter.consume(await requestFor(sub, { now: T0 + DAY + 1_000 }));
        expect(await meter.usage()).toEqual([day('2025-01-15', 1), day('2025-01-16', 3)]);
        expect(await meter.quota(sub.subscriptionId, 10_000, T0 + DAY)).toMatchObject({ remaining: 10_000 - 4 });
      });

      it('usage records billed lookups per subscription, product and day, minus refunds', async () => {
        const a = await subscribe();
        const b = await subscribe({ product: 'tls' });
        const days = [T0, T0 + 1_000, T0 + 86_400_000, FEB + 3_600_000];
        for (const now of days) expect(await meter.consume(await requestFor(a, { now }))).toMatchObject({ allowed: true });
        expect(await meter.consume(await requestFor(b, { now: T0 }))).toMatchObject({ allowed: true });
        // Not reserving (status routes): not billed.
        await meter.consume(await requestFor(b, { now: T0 + 1_500, reserveQuota: false }));
        // Reserved then refunded: not billed.
        const refunded = await meter.consume(await requestFor(b, { now: T0 + 2_000 }));
        if (refunded.allowed && refunded.reservation) await meter.refund(refunded.reservation);

        const january = [
          { subscriptionId: a.subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 2 },
          { subscriptionId: b.subscriptionId, product: 'tls', day: '2025-01-15', lookups: 1 },
          { subscriptionId: a.subscriptionId, product: 'useragent', day: '2025-01-16', lookups: 1 },
        ];
        const february = [{ subscriptionId: a.subscriptionId, product: 'useragent', day: '2025-02-01', lookups: 1 }];
        expect(await meter.usage()).toEqual([...january, ...february]);
        expect(await meter.usage('2025-01')).toEqual(january);
        expect(await meter.usage('2025-02')).toEqual(february);
        expect(await meter.usage('2025-03')).toEqual([]);
        await expect(meter.usage('2025-1')).rejects.toThrow(TypeError);
      });
    });

    describe('leases (a reservation is billed once committed, given back when its lease expires)', () => {
      const LEASE = 60_000;
      let clock = T0;

      beforeEach(async () => {
        await cleanup();
        clock = T0;
        ({ meter, cleanup } = await makeMeter({ leaseMs: LEASE, now: () => clock }));
      });

      async function reserve(sub: IssuedKeys, overrides: Partial<ConsumeRequest> = {}) {
        const outcome = await meter.consume(await requestFor(sub, overrides));
        if (!outcome.allowed || !outcome.reservation) throw new Error('expected a reservation');
        return outcome.reservation;
      }
      const lookups = async () => (await meter.usage()).map((row) => row.lookups);

      it("a reservation neither committed nor refunded goes back at its lease's end, not before", async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 10 } });
        for (let i = 0; i < 3; i++) await reserve(sub);
        expect(await meter.quota(sub.subscriptionId, 10, T0 + LEASE - 1)).toMatchObject({ remaining: 7 });
        clock = T0 + LEASE - 1;
        expect(await lookups()).toEqual([3]);
        expect(await meter.quota(sub.subscriptionId, 10, T0 + LEASE)).toMatchObject({ remaining: 10 });
        clock = T0 + LEASE;
        expect(await lookups()).toEqual([0]);
      });

      it('a committed reservation stays billed after its lease time; committing or refunding it again changes nothing', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 10 } });
        const kept = await reserve(sub);
        await reserve(sub); // never committed
        await meter.commit(kept);
        await meter.commit(kept);
        await meter.refund(kept);
        clock = T0 + 2 * LEASE;
        expect(await meter.quota(sub.subscriptionId, 10, clock)).toMatchObject({ remaining: 9 });
        expect(await lookups()).toEqual([1]);
      });

      it("usage() gives expired leases back by the store's clock, with no other call", async () => {
        const sub = await subscribe();
        await meter.commit(await reserve(sub));
        await reserve(sub, { quotaUnits: 4, rateUnits: 4 });
        clock = T0 + LEASE;
        expect(await lookups()).toEqual([1]);
      });

      it('a consume gives expired leases back before deciding: a full month admits again', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 2 } });
        await reserve(sub);
        await reserve(sub);
        expect(await meter.consume(await requestFor(sub, { now: T0 + 1_000 }))).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
        expect(await meter.consume(await requestFor(sub, { now: T0 + LEASE }))).toMatchObject({ allowed: true, quota: { remaining: 1 } });
      });

      it('an expired, refunded or committed lease is never given back twice', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 10 } });
        const expired = await reserve(sub);
        const refunded = await reserve(sub);
        await meter.refund(refunded);
        // The expired one goes back once; then a live reservation holds one unit.
        const live = await reserve(sub, { now: T0 + LEASE });
        expect(await meter.quota(sub.subscriptionId, 10, T0 + LEASE)).toMatchObject({ remaining: 9 });
        await meter.refund(expired);
        await meter.refund(refunded);
        await meter.commit(expired);
        expect(await meter.quota(sub.subscriptionId, 10, T0 + LEASE)).toMatchObject({ remaining: 9 });
        await meter.commit(live);
        clock = T0 + 3 * LEASE;
        expect(await meter.quota(sub.subscriptionId, 10, clock)).toMatchObject({ remaining: 9 });
        expect(await lookups()).toEqual([1]);
      });

      it('a reservation refunded and committed right after its lease was given back changes nothing', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 10 } });
        const late = await reserve(sub);
        // A lease later, the next consume gives `late` back before deciding. (The SQLite meter's
        // remembered lease names have their own case in sqlite-allowances.test.ts.)
        const live = await reserve(sub, { now: T0 + LEASE });
        await meter.refund(late);
        await meter.commit(late);
        expect(await meter.quota(sub.subscriptionId, 10, T0 + LEASE)).toMatchObject({ remaining: 9 });
        await meter.commit(live);
        clock = T0 + LEASE;
        expect(await lookups()).toEqual([1]);
        expect(await meter.quota(sub.subscriptionId, 10, clock)).toMatchObject({ remaining: 9 });
      });

      it('after a crash with 1,500 lookups in flight, one quota call gives every expired lease back', async () => {
        const sub = await subscribe({ plan: 'crashed', limits: { rateLimitPerMinute: 10_000, monthlyQuota: 2_000 } });
        for (let i = 0; i < 1_500; i++) await reserve(sub);
        expect(await meter.quota(sub.subscriptionId, 2_000, T0 + LEASE - 1)).toMatchObject({ remaining: 500 });
        // Redis gave back at most 1,000 a call (found by a reviewer): 1,500 remaining, then 2,000.
        expect(await meter.quota(sub.subscriptionId, 2_000, T0 + LEASE)).toMatchObject({ remaining: 2_000 });
        clock = T0 + LEASE;
        expect(await lookups()).toEqual([0]);
      });

      it('a lease that expires in the next month gives back to its own month only', async () => {
        const sub = await subscribe({ plan: 'small', limits: { rateLimitPerMinute: 100, monthlyQuota: 10 } });
        await reserve(sub, { now: FEB - 1_000 });
        await meter.commit(await reserve(sub, { now: FEB + LEASE }));
        expect(await meter.quota(sub.subscriptionId, 10, FEB + LEASE)).toEqual({ limit: 10, remaining: 9, period: '2025-02' });
        clock = FEB + LEASE;
        expect(await meter.usage()).toEqual([
          { subscriptionId: sub.subscriptionId, product: 'useragent', day: '2025-01-31', lookups: 0 },
          { subscriptionId: sub.subscriptionId, product: 'useragent', day: '2025-02-01', lookups: 1 },
        ]);
      });
    });
  });
}
