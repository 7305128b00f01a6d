/** The single-use store in this process's memory: the default of one instance, and tests. */
import { SeclookupError } from '../../errors.js';
import { checkSingleUseId, type SingleUseStore } from '../single-use.js';

/** Consumed ids held in this process: for one instance, or tests. Expired entries are swept as new ones arrive. */
export function createMemorySingleUseStore(): SingleUseStore {
  const used = new Map<string, number>();
  let closed = false;
  let nextSweep = 0;
  return {
    consume(id, expiresAt, now) {
      if (closed) throw new SeclookupError('store_failed', 'the single-use store is closed');
      checkSingleUseId(id, expiresAt);
      // Sweep at most once a second: O(entries), amortised over the inserts of that second.
      if (now >= nextSweep) {
        for (const [key, until] of used) if (until <= now) used.delete(key);
        nextSweep = now + 1_000;
      }
      const until = used.get(id);
      if (until !== undefined && until > now) return false;
      used.set(id, expiresAt);
      return true;
    },
    isUsed(id, now) {
      if (closed) throw new SeclookupError('store_failed', 'the single-use store is closed');
      checkSingleUseId(id);
      const until = used.get(id);
      return until !== undefined && until > now;
    },
    async close() {
      closed = true;
      used.clear();
    },
  };
}
