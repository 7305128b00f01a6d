/**
 * The meter's settings store (SettingsStore), where captcha keeps its signing keys and site key
 * settings, and the lifecycle of the whole store (every role refuses after close). Every store
 * must pass it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKey, type IssuedKeys } from '../../../src/metering/keys.js';
import type { ConsumeRequest, Meter } from '../../../src/metering/types.js';
import { COUNTING_LEASE_MS, requestFor as requestOn, subscribe as subscribeOn, T0, type MeterFactory, type SubscribeOptions } from './common.js';

export function describeSettingsStoreConformance(name: string, makeMeter: MeterFactory): void {
  describe(`Meter conformance, settings store: ${name}`, () => {
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

    describe('settings and lifecycle', () => {
      it('stores settings by name', async () => {
        expect(await meter.getSetting('first-start')).toBeNull();
        await meter.setSetting('first-start', 'done');
        await meter.setSetting('other', '');
        expect(await meter.getSetting('first-start')).toBe('done');
        await meter.setSetting('first-start', 'again');
        expect(await meter.getSetting('first-start')).toBe('again');
        expect(await meter.getSetting('other')).toBe('');
      });

      it('setSettingIfAbsent stores only the first value; racing callers all get the one stored', async () => {
        const answers = await Promise.all(['a', 'b', 'c', 'd'].map((v) => meter.setSettingIfAbsent('ring', v)));
        expect(new Set(answers).size).toBe(1);
        expect(await meter.getSetting('ring')).toBe(answers[0]);
        await meter.setSetting('ring', 'replaced');
        expect(await meter.setSettingIfAbsent('ring', 'ignored')).toBe('replaced');
      });

      it('rejects every call after close', async () => {
        const sub = await subscribe();
        const request = await requestFor(sub);
        await meter.close();
        await meter.close(); // closing twice is harmless
        const reservation = { subscriptionId: sub.subscriptionId, product: 'useragent' as const, period: '2025-01', day: '2025-01-15', lease: '1' };
        const calls: unknown[] = [
          meter.resolveKey(hashKey(sub.secretKey)),
          meter.consume(request),
          meter.refund(reservation),
          Promise.resolve().then(() => meter.commit(reservation)),
          meter.quota(sub.subscriptionId, 10, T0),
          meter.createSubscription({ product: 'useragent', plan: 'starter', ipAllow: [], keys: [] }),
          meter.listKeys(),
          meter.revokeKey(sub.keys[0].id),
          meter.setPlan({ slug: 'x', product: '*', rateLimitPerMinute: 1, monthlyQuota: 1 }),
          meter.listPlans(),
          meter.usage(),
          meter.getSetting('a'),
          meter.setSetting('a', 'b'),
          meter.setSettingIfAbsent('a', 'b'),
        ];
        const results = await Promise.allSettled(calls);
        expect(results.map((r) => r.status)).toEqual(calls.map(() => 'rejected'));
        for (const r of results) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      });
    });
  });
}
