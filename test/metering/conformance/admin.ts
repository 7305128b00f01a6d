/**
 * The meter's administration role (MeterAdmin): plans, subscriptions and keys, as operators and
 * the CLI use them. Every store must pass it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../../src/metering/keys.js';
import type { KeyInfo, Meter } from '../../../src/metering/types.js';
import type { ProductId } from '../../../src/products/catalog.js';
import { configError, COUNTING_LEASE_MS, requestFor, subscribe as subscribeOn, T0, type MeterFactory, type SubscribeOptions } from './common.js';

export function describeMeterAdminConformance(name: string, makeMeter: MeterFactory): void {
  describe(`Meter conformance, administration: ${name}`, () => {
    let meter: Meter;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ meter, cleanup } = await makeMeter({ leaseMs: COUNTING_LEASE_MS, now: () => T0 }));
    });
    afterEach(async () => {
      await cleanup();
    });

    const subscribe = (options?: SubscribeOptions) => subscribeOn(meter, options);

    describe('plans', () => {
      it('starts with the default plan table, sorted by slug then product with "*" first', async () => {
        expect(await meter.listPlans()).toEqual([
          { slug: 'enterprise', product: '*', rateLimitPerMinute: 3_000, monthlyQuota: null },
          { slug: 'starter', product: '*', rateLimitPerMinute: 120, monthlyQuota: 10_000 },
          { slug: 'starter', product: 'captcha', rateLimitPerMinute: 60, monthlyQuota: 10_000 },
          { slug: 'starter', product: 'domainrep', rateLimitPerMinute: 60, monthlyQuota: 5_000 },
          { slug: 'starter', product: 'pwbreach', rateLimitPerMinute: 60, monthlyQuota: 10_000 },
          { slug: 'starter', product: 'tls', rateLimitPerMinute: 60, monthlyQuota: 5_000 },
        ]);
      });

      it('setPlan inserts a new row and replaces the row with the same slug and product', async () => {
        await meter.setPlan({ slug: 'pro', product: 'geoip', rateLimitPerMinute: 600, monthlyQuota: 100_000 });
        await meter.setPlan({ slug: 'starter', product: 'tls', rateLimitPerMinute: 90, monthlyQuota: null });
        const plans = await meter.listPlans();
        expect(plans.filter((p) => p.slug !== 'starter' || p.product === 'tls')).toEqual([
          { slug: 'enterprise', product: '*', rateLimitPerMinute: 3_000, monthlyQuota: null },
          { slug: 'pro', product: 'geoip', rateLimitPerMinute: 600, monthlyQuota: 100_000 },
          { slug: 'starter', product: 'tls', rateLimitPerMinute: 90, monthlyQuota: null },
        ]);
        expect(plans).toHaveLength(7);
      });

      it('setPlan rejects invalid plans and leaves the table unchanged', async () => {
        const before = await meter.listPlans();
        await expect(meter.setPlan({ slug: 'Bad Slug', product: '*', rateLimitPerMinute: 1, monthlyQuota: 1 })).rejects.toThrow(TypeError);
        await expect(meter.setPlan({ slug: 'zero', product: '*', rateLimitPerMinute: 0, monthlyQuota: 1 })).rejects.toThrow(/rate limit/);
        await expect(meter.setPlan({ slug: 'neg', product: '*', rateLimitPerMinute: 1, monthlyQuota: -1 })).rejects.toThrow(/monthly quota/);
        await expect(meter.setPlan({ slug: 'odd', product: 'nope' as ProductId, rateLimitPerMinute: 1, monthlyQuota: 1 })).rejects.toThrow(/product/);
        expect(await meter.listPlans()).toEqual(before);
      });
    });

    describe('subscriptions and keys', () => {
      it('createSubscription stores active keys and returns their listing', async () => {
        const before = Date.now();
        const created = await meter.createSubscription({
          product: 'geoip',
          plan: 'starter',
          ipAllow: [],
          keys: [
            { kind: 'secret', hash: hashKey('secret-1'), prefix: 'geo_sec_aaaaaa' },
            { kind: 'public', hash: hashKey('public-1'), prefix: 'geo_pub_bbbbbb' },
          ],
        });
        const after = Date.now();
        expect(typeof created.subscriptionId).toBe('string');
        expect(created.keys.map(({ createdAt, id, ...rest }) => rest)).toEqual([
          {
            subscriptionId: created.subscriptionId,
            product: 'geoip',
            kind: 'secret',
            status: 'active',
            prefix: 'geo_sec_aaaaaa',
            plan: 'starter',
            ipAllow: [],
          },
          {
            subscriptionId: created.subscriptionId,
            product: 'geoip',
            kind: 'public',
            status: 'active',
            prefix: 'geo_pub_bbbbbb',
            plan: 'starter',
            ipAllow: [],
          },
        ]);
        const [secret, pub] = created.keys;
        expect(typeof secret.id).toBe('string');
        expect(secret.id).not.toBe(pub.id);
        for (const key of created.keys) {
          expect(new Date(key.createdAt).toISOString()).toBe(key.createdAt);
          expect(Date.parse(key.createdAt)).toBeGreaterThanOrEqual(before);
          expect(Date.parse(key.createdAt)).toBeLessThanOrEqual(after);
        }
      });

      it('addKeys adds keys to an existing subscription: they resolve to it and share its quota', async () => {
        const created = await meter.createSubscription({
          product: 'captcha',
          plan: 'starter',
          ipAllow: [],
          keys: [{ kind: 'public', hash: hashKey('first-pub'), prefix: 'tf_pub_aaaaaa' }],
        });
        const added = await meter.addKeys(created.subscriptionId, [
          { kind: 'secret', hash: hashKey('second-sec'), prefix: 'tf_sec_bbbbbb' },
          { kind: 'public', hash: hashKey('second-pub'), prefix: 'tf_pub_cccccc' },
        ]);
        expect(added.map((k) => [k.subscriptionId, k.kind, k.product, k.status, k.prefix])).toEqual([
          [created.subscriptionId, 'secret', 'captcha', 'active', 'tf_sec_bbbbbb'],
          [created.subscriptionId, 'public', 'captcha', 'active', 'tf_pub_cccccc'],
        ]);
        const resolved = await meter.resolveKey(hashKey('second-pub'));
        expect(resolved).toMatchObject({ id: added[1].id, subscriptionId: created.subscriptionId, kind: 'public', status: 'active' });
        expect((await meter.listKeys()).filter((k) => k.subscriptionId === created.subscriptionId)).toHaveLength(3);
        // Unknown subscription, duplicate hash, bad hash: refused, nothing stored.
        await expect(meter.addKeys('999999', [{ kind: 'public', hash: hashKey('x'), prefix: 'tf_pub_x' }])).rejects.toThrow(/no subscription/);
        await expect(meter.addKeys(created.subscriptionId, [{ kind: 'public', hash: hashKey('first-pub'), prefix: 'tf_pub_a' }])).rejects.toThrow(
          /already exists/,
        );
        await expect(meter.addKeys(created.subscriptionId, [{ kind: 'public', hash: 'nothex', prefix: 'tf_pub_a' }])).rejects.toThrow(/SHA-256/);
        expect(await meter.resolveKey(hashKey('x'))).toBeNull();
      });

      it('normalises the IP allowlist, for every key of the subscription', async () => {
        const sub = await subscribe({ ipAllow: ['10.0.0.0/8', '2001:DB8::1', '::ffff:192.0.2.1', ' 198.51.100.0/24 '] });
        const expected = ['10.0.0.0/8', '2001:db8::1/128', '192.0.2.1/32', '198.51.100.0/24'];
        expect(sub.keys.map((k) => k.ipAllow)).toEqual([expected, expected]);
        expect((await meter.resolveKey(hashKey(sub.publicKey)))?.ipAllow).toEqual(expected);
        expect((await meter.listKeys()).map((k) => k.ipAllow)).toEqual([expected, expected]);
      });

      it('rejects an invalid CIDR with a TypeError and stores nothing', async () => {
        await expect(subscribe({ ipAllow: ['10.0.0.0/8', '10.0.0.0/33'] })).rejects.toThrow(configError('not a valid CIDR: "10.0.0.0/33"'));
        await expect(subscribe({ ipAllow: ['not-an-ip'] })).rejects.toThrow(TypeError);
        expect(await meter.listKeys()).toEqual([]);
      });

      it('rejects a CIDR with host bits set, naming the network, and stores nothing', async () => {
        // 10.0.0.1/8 would match all of 10.0.0.0/8: a typo more often than a wish.
        await expect(subscribe({ ipAllow: ['192.0.2.0/24', '10.0.0.1/8'] })).rejects.toThrow(
          configError('"10.0.0.1/8" has host bits set after the /8 prefix; did you mean the network 10.0.0.0/8, or the single address 10.0.0.1?'),
        );
        await expect(subscribe({ ipAllow: ['2001:db8::1/32'] })).rejects.toThrow(TypeError);
        expect(await meter.listKeys()).toEqual([]);
      });

      it('rejects a plan that does not resolve for the product', async () => {
        await expect(subscribe({ plan: 'gold' })).rejects.toThrow(configError('unknown plan "gold" for product useragent'));
        // A product-only plan resolves for that product and no other.
        await meter.setPlan({ slug: 'tls-only', product: 'tls', rateLimitPerMinute: 10, monthlyQuota: 100 });
        await expect(subscribe({ plan: 'tls-only', product: 'geoip' })).rejects.toThrow(configError('unknown plan "tls-only" for product geoip'));
        const tls = await subscribe({ plan: 'tls-only', product: 'tls' });
        expect(tls.keys.map((k) => k.plan)).toEqual(['tls-only', 'tls-only']);
        expect(await meter.listKeys()).toHaveLength(2);
      });

      it('rejects an unknown product and a key hash that is already stored', async () => {
        const key = { kind: 'secret' as const, hash: hashKey('dup'), prefix: 'ua_sec_dupdup' };
        await expect(meter.createSubscription({ product: 'nope' as ProductId, plan: 'starter', ipAllow: [], keys: [key] })).rejects.toThrow(TypeError);
        await meter.createSubscription({ product: 'useragent', plan: 'starter', ipAllow: [], keys: [key] });
        await expect(meter.createSubscription({ product: 'useragent', plan: 'starter', ipAllow: [], keys: [key] })).rejects.toThrow(/already exists/);
        expect(await meter.listKeys()).toHaveLength(1);
      });

      it('resolveKey returns the key with its plan resolved for its product', async () => {
        const ua = await subscribe({ ipAllow: ['192.0.2.0/24'] });
        const tls = await subscribe({ product: 'tls' });
        expect(await meter.resolveKey(hashKey(ua.secretKey))).toEqual({
          id: ua.keys[0].id,
          subscriptionId: ua.subscriptionId,
          product: 'useragent',
          kind: 'secret',
          status: 'active',
          ipAllow: ['192.0.2.0/24'],
          plan: { slug: 'starter', rateLimitPerMinute: 120, monthlyQuota: 10_000 },
        });
        expect(await meter.resolveKey(hashKey(ua.publicKey))).toMatchObject({ id: ua.keys[1].id, kind: 'public' });
        // tls has its own starter row.
        expect((await meter.resolveKey(hashKey(tls.secretKey)))?.plan).toEqual({ slug: 'starter', rateLimitPerMinute: 60, monthlyQuota: 5_000 });
        expect(await meter.resolveKey(hashKey('never issued'))).toBeNull();
      });

      it('plan changes take effect immediately for existing keys', async () => {
        const sub = await subscribe({ plan: 'team', limits: { rateLimitPerMinute: 50, monthlyQuota: 500 } });
        await meter.setPlan({ slug: 'team', product: '*', rateLimitPerMinute: 7, monthlyQuota: null });
        expect((await meter.resolveKey(hashKey(sub.secretKey)))?.plan).toEqual({ slug: 'team', rateLimitPerMinute: 7, monthlyQuota: null });
        // A product row added later wins over the '*' row.
        await meter.setPlan({ slug: 'team', product: 'useragent', rateLimitPerMinute: 9, monthlyQuota: 90 });
        expect((await meter.resolveKey(hashKey(sub.secretKey)))?.plan).toEqual({ slug: 'team', rateLimitPerMinute: 9, monthlyQuota: 90 });
      });

      it('updateSubscription moves a subscription to another plan in place: both keys keep working on the new plan', async () => {
        const sub = await subscribe();
        const other = await subscribe();
        const updated = await meter.updateSubscription(sub.subscriptionId, { plan: 'enterprise' });
        expect(updated).toEqual(sub.keys.map((key) => ({ ...key, plan: 'enterprise' })));
        for (const key of [sub.secretKey, sub.publicKey]) {
          expect(await meter.resolveKey(hashKey(key))).toMatchObject({
            subscriptionId: sub.subscriptionId,
            status: 'active',
            plan: { slug: 'enterprise', rateLimitPerMinute: 3_000, monthlyQuota: null },
          });
        }
        expect((await meter.listKeys()).map((k) => [k.subscriptionId, k.plan])).toEqual([
          [sub.subscriptionId, 'enterprise'],
          [sub.subscriptionId, 'enterprise'],
          [other.subscriptionId, 'starter'],
          [other.subscriptionId, 'starter'],
        ]);
        // A product row of the new slug wins over its '*' row, as at creation.
        await meter.setPlan({ slug: 'pro', product: '*', rateLimitPerMinute: 500, monthlyQuota: 50_000 });
        await meter.setPlan({ slug: 'pro', product: 'useragent', rateLimitPerMinute: 600, monthlyQuota: 60_000 });
        await meter.updateSubscription(sub.subscriptionId, { plan: 'pro' });
        expect((await meter.resolveKey(hashKey(sub.secretKey)))?.plan).toEqual({ slug: 'pro', rateLimitPerMinute: 600, monthlyQuota: 60_000 });
      });

      it('updateSubscription replaces the IP allowlist of every key of the subscription, normalised; [] allows any address', async () => {
        const sub = await subscribe({ ipAllow: ['192.0.2.0/24'] });
        const updated = await meter.updateSubscription(sub.subscriptionId, { ipAllow: ['10.0.0.0/8', '2001:DB8::1'] });
        expect(updated.map((k) => [k.id, k.plan, k.ipAllow])).toEqual([
          [sub.keys[0].id, 'starter', ['10.0.0.0/8', '2001:db8::1/128']],
          [sub.keys[1].id, 'starter', ['10.0.0.0/8', '2001:db8::1/128']],
        ]);
        expect((await meter.resolveKey(hashKey(sub.publicKey)))?.ipAllow).toEqual(['10.0.0.0/8', '2001:db8::1/128']);
        await meter.updateSubscription(sub.subscriptionId, { ipAllow: [] });
        expect((await meter.resolveKey(hashKey(sub.secretKey)))?.ipAllow).toEqual([]);
        // Both at once.
        expect(await meter.updateSubscription(sub.subscriptionId, { plan: 'enterprise', ipAllow: ['203.0.113.7'] })).toEqual(
          sub.keys.map((key) => ({ ...key, plan: 'enterprise', ipAllow: ['203.0.113.7/32'] })),
        );
      });

      it("updateSubscription keeps usage, this month's quota count and the rate window: the new limits count from what is used", async () => {
        await meter.setPlan({ slug: 'small', product: '*', rateLimitPerMinute: 100, monthlyQuota: 5 });
        await meter.setPlan({ slug: 'big', product: '*', rateLimitPerMinute: 4, monthlyQuota: 1_000 });
        const sub = await subscribe({ plan: 'small' });
        for (let i = 0; i < 3; i++) {
          const outcome = await meter.consume(await requestFor(meter, sub));
          if (!outcome.allowed || !outcome.reservation) throw new Error('refused');
          await meter.commit(outcome.reservation);
        }
        await meter.updateSubscription(sub.subscriptionId, { plan: 'big' });
        const request = await requestFor(meter, sub);
        expect([request.rateLimitPerMinute, request.monthlyQuota]).toEqual([4, 1_000]);
        expect(await meter.quota(sub.subscriptionId, 1_000, T0)).toEqual({ limit: 1_000, remaining: 997, period: '2025-01' });
        // The 3 hits of this minute count against the new rate limit of 4: one more fits.
        const fourth = await meter.consume(request);
        expect(fourth).toMatchObject({ allowed: true, rate: { limit: 4, remaining: 0 }, quota: { limit: 1_000, remaining: 996 } });
        if (fourth.allowed && fourth.reservation) await meter.commit(fourth.reservation);
        expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'rate_limit_exceeded' });
        // Back to the small plan: 4 of its 5 are used this month.
        await meter.updateSubscription(sub.subscriptionId, { plan: 'small' });
        const small = await requestFor(meter, sub, { now: T0 + 60_000 });
        expect(await meter.consume(small)).toMatchObject({ allowed: true, quota: { limit: 5, remaining: 0 } });
        expect(await meter.consume(small)).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
        expect(await meter.usage('2025-01')).toEqual([{ subscriptionId: sub.subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 5 }]);
      });

      it('updateSubscription refuses an unknown subscription, a plan that does not resolve for the product and an invalid CIDR, changing nothing', async () => {
        await meter.setPlan({ slug: 'tls-only', product: 'tls', rateLimitPerMinute: 10, monthlyQuota: 100 });
        const sub = await subscribe({ ipAllow: ['192.0.2.0/24'] });
        const before = await meter.listKeys();
        await expect(meter.updateSubscription('999999', { plan: 'enterprise' })).rejects.toThrow(configError('no subscription "999999"'));
        await expect(meter.updateSubscription('', { plan: 'enterprise' })).rejects.toThrow(configError('no subscription ""'));
        await expect(meter.updateSubscription(sub.subscriptionId, { plan: 'gold' })).rejects.toThrow(configError('unknown plan "gold" for product useragent'));
        await expect(meter.updateSubscription(sub.subscriptionId, { plan: 'tls-only' })).rejects.toThrow(
          configError('unknown plan "tls-only" for product useragent'),
        );
        // A bad CIDR refuses the whole change, the valid plan beside it included.
        await expect(meter.updateSubscription(sub.subscriptionId, { plan: 'enterprise', ipAllow: ['10.0.0.1/8'] })).rejects.toThrow(TypeError);
        await expect(meter.updateSubscription(sub.subscriptionId, { ipAllow: ['not-an-ip'] })).rejects.toThrow(TypeError);
        // A misspelled field (a JavaScript caller's, or one built from a request) and an empty change are
        // refused: either would have reported success and left the allowlist as it was (a reviewer's find).
        await expect(meter.updateSubscription(sub.subscriptionId, { ipallow: ['10.0.0.0/8'] } as never)).rejects.toThrow(
          configError('changes.ipallow is not an option (its options: plan, ipAllow)'),
        );
        await expect(meter.updateSubscription(sub.subscriptionId, {})).rejects.toThrow(configError('changes must name plan or ipAllow (nothing to change)'));
        expect(await meter.listKeys()).toEqual(before);
        expect(await meter.resolveKey(hashKey(sub.secretKey))).toMatchObject({ ipAllow: ['192.0.2.0/24'], plan: { slug: 'starter' } });
      });

      it('updateSubscription changes a subscription whose key is revoked, and keeps it revoked', async () => {
        const sub = await subscribe();
        await meter.revokeKey(sub.keys[0].id);
        const updated = await meter.updateSubscription(sub.subscriptionId, { plan: 'enterprise' });
        expect(updated.map((k) => [k.kind, k.status, k.plan])).toEqual([
          ['secret', 'revoked', 'enterprise'],
          ['public', 'active', 'enterprise'],
        ]);
        expect(await meter.resolveKey(hashKey(sub.secretKey))).toMatchObject({ status: 'revoked', plan: { slug: 'enterprise' } });
      });

      it('listKeys returns every key, oldest first, without hashes', async () => {
        const a = await subscribe();
        const b = await subscribe({ product: 'tls', plan: 'enterprise' });
        const keys = await meter.listKeys();
        expect(keys).toEqual([...a.keys, ...b.keys]);
        expect(keys.map((k) => `${k.product}/${k.kind}/${k.plan}`)).toEqual([
          'useragent/secret/starter',
          'useragent/public/starter',
          'tls/secret/enterprise',
          'tls/public/enterprise',
        ]);
        expect(JSON.stringify(keys)).not.toContain(hashKey(a.secretKey));
      });

      it('revokeKey by id or hash marks only that key revoked, idempotently', async () => {
        const sub = await subscribe();
        const [secret, pub] = sub.keys;

        const revoked = await meter.revokeKey(secret.id);
        expect(revoked).toEqual({ ...secret, status: 'revoked' });
        expect(await meter.resolveKey(hashKey(sub.secretKey))).toMatchObject({ id: secret.id, status: 'revoked' });
        expect(await meter.resolveKey(hashKey(sub.publicKey))).toMatchObject({ id: pub.id, status: 'active' });

        // Again, by hash this time: same answer.
        expect(await meter.revokeKey(hashKey(sub.secretKey))).toEqual({ ...secret, status: 'revoked' });
        expect(await meter.revokeKey(hashKey(sub.publicKey))).toEqual({ ...pub, status: 'revoked' });
        expect((await meter.listKeys()).map((k: KeyInfo) => k.status)).toEqual(['revoked', 'revoked']);

        expect(await meter.revokeKey('999999')).toBeNull();
        expect(await meter.revokeKey(hashKey('never issued'))).toBeNull();
        expect(await meter.revokeKey('')).toBeNull();
      });
    });
  });
}
