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

    it('isUsed tells a live consumed id from a free or expired one, and claims nothing', async () => {
      const isUsed = store.isUsed!.bind(store);
      expect(await isUsed('seen', NOW)).toBe(false);
      // Asking did not claim it: the first consume still wins.
      expect(await store.consume('seen', NOW + 1_000, NOW)).toBe(true);
      expect(await isUsed('seen', NOW)).toBe(true);
      expect(await isUsed('seen', NOW + 999)).toBe(true);
      expect(await isUsed('seen', NOW + 1_000)).toBe(false);
      expect(await isUsed('other', NOW)).toBe(false);
      expect(() => isUsed('x'.repeat(129), NOW)).toThrow(/1 to 128/);
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
          expect(await other.isUsed!('shared', NOW + 1)).toBe(true);
          expect(await other.isUsed!('never-claimed', NOW + 1)).toBe(false);
        } finally {
          await other.close();
        }
      });
    }
  });
}
