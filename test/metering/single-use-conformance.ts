/**
 * The conformance suite every single-use store passes unchanged (memory and sqlite now; Redis
 * later): first consume wins, a second loses while live, expiry frees the id, racing consumers
 * have exactly one winner, nothing live is ever dropped.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SingleUseStore } from '../../src/metering/single-use.js';

export function describeSingleUseStore(
  name: string,
  open: () => Promise<SingleUseStore> | SingleUseStore,
  openSecond?: () => Promise<SingleUseStore> | SingleUseStore,
) {
  describe(`single-use store conformance: ${name}`, () => {
    let store: SingleUseStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });
    const NOW = 1_800_000_000_000;

    it('the first consume of an id wins, every later one loses while it is live', async () => {
      expect(await store.consume('proof-a', NOW + 300_000, NOW)).toBe(true);
      expect(await store.consume('proof-a', NOW + 300_000, NOW + 1)).toBe(false);
      expect(await store.consume('proof-a', NOW + 900_000, NOW + 299_999)).toBe(false);
      expect(await store.consume('proof-b', NOW + 300_000, NOW)).toBe(true);
    });

    it('an expired entry frees its id (a token past its expiry is refused by its signature anyway)', async () => {
      expect(await store.consume('nonce-1', NOW + 1_000, NOW)).toBe(true);
      expect(await store.consume('nonce-1', NOW + 5_000, NOW + 1_000)).toBe(true);
      expect(await store.consume('nonce-1', NOW + 5_000, NOW + 4_999)).toBe(false);
    });

    it('100 parallel consumers of one id: exactly one wins', async () => {
      const results = await Promise.all(Array.from({ length: 100 }, () => store.consume('race', NOW + 60_000, NOW)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('never drops a live entry, however many arrive after it', async () => {
      expect(await store.consume('kept', NOW + 3_600_000, NOW)).toBe(true);
      for (let i = 0; i < 20_000; i++) await store.consume(`filler-${i}`, NOW + 3_600_000, NOW + 2_000);
      expect(await store.consume('kept', NOW + 3_600_000, NOW + 3_000)).toBe(false);
    });

    it('a claim with an owner wins again for that owner while live, never for another or none', async () => {
      const owner = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
      expect(await store.consume('owned', NOW + 1_000, NOW, owner)).toBe(true);
      expect(await store.consume('owned', NOW + 1_000, NOW + 10, owner)).toBe(true);
      expect(await store.consume('owned', NOW + 1_000, NOW + 10, '9b2a0a4e-3c1d-4e7f-8a6b-5d4c3b2a1f00')).toBe(false);
      expect(await store.consume('owned', NOW + 1_000, NOW + 10)).toBe(false);
      // Expired: free for anyone, and the old owner counts for nothing.
      expect(await store.consume('owned', NOW + 5_000, NOW + 1_000)).toBe(true);
      expect(await store.consume('owned', NOW + 5_000, NOW + 1_001, owner)).toBe(false);
      // Claimed without an owner: no owner's retry wins it.
      expect(await store.consume('plain', NOW + 1_000, NOW)).toBe(true);
      expect(await store.consume('plain', NOW + 1_000, NOW, owner)).toBe(false);
      expect(() => store.consume('x', NOW + 1, NOW, 'o'.repeat(129))).toThrow(/owner must be 1 to 128/);
    });

    it('racing claims with two owners: every claim of one owner wins, every claim of the other loses', async () => {
      const claims = Array.from({ length: 40 }, (_, i) => ({ owner: i % 2 ? 'owner-b' : 'owner-a' }));
      const results = await Promise.all(claims.map(({ owner }) => store.consume('contested', NOW + 60_000, NOW, owner)));
      const winners = new Set(claims.filter((_, i) => results[i]).map(({ owner }) => owner));
      expect(winners.size).toBe(1);
      expect(results.filter(Boolean)).toHaveLength(20);
    });

    it('refuses ids that are empty or too long, and answers store_failed once closed', async () => {
      expect(() => store.consume('', NOW + 1, NOW)).toThrow(/1 to 128/);
      expect(() => store.consume('x'.repeat(129), NOW + 1, NOW)).toThrow(/1 to 128/);
      await store.close();
      let failure: unknown;
      try {
        await store.consume('late', NOW + 1, NOW);
      } catch (error) {
        failure = error;
      }
      expect(failure).toMatchObject({ code: 'store_failed' });
    });

    if (openSecond) {
      it('two handles on one store (two processes on one database): one winner', async () => {
        const other = await openSecond();
        try {
          const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? other : store).consume('shared', NOW + 60_000, NOW)));
          expect(results.filter(Boolean)).toHaveLength(1);
          expect(await store.consume('shared', NOW + 60_000, NOW + 1)).toBe(false);
          expect(await other.consume('shared', NOW + 60_000, NOW + 1)).toBe(false);
          // An owner's retry on the other handle (another instance) while the first claim is in flight.
          const owned = await Promise.all([store.consume('owned', NOW + 60_000, NOW, 'k'), other.consume('owned', NOW + 60_000, NOW, 'k')]);
          expect(owned).toEqual([true, true]);
          expect(await other.consume('owned', NOW + 60_000, NOW, 'j')).toBe(false);
        } finally {
          await other.close();
        }
      });
    }
  });
}
