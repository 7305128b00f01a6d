/**
 * The meter's administration role (MeterAdmin): plans, subscriptions and keys, as operators and
 * the CLI use them. Every store must pass it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../../src/metering/keys.js';
import type { KeyInfo, Meter } from '../../../src/metering/types.js';
import type { ProductId } from '../../../src/products/catalog.js';
import { configError, COUNTING_LEASE_MS, subscribe as subscribeOn, T0, type MeterFactory, type SubscribeOptions } from './common.js';

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
