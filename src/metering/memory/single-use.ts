/** The single-use store in this process's memory: the default of one instance, and tests. */
import { SeclookupError } from '../../errors.js';
import { checkSingleUseId, type SingleUseStore } from '../single-use.js';

/** Consumed ids held in this process: for one instance, or tests. Expired entries are swept as new ones arrive. */
export function createMemorySingleUseStore(): SingleUseStore {
  const used = new Map<string, number>();
  /** The owner of each owned entry (most have none); dropped with its entry. */
  const owners = new Map<string, string>();
  let closed = false;
  let nextSweep = 0;
  return {
    consume(id, expiresAt, now, owner) {
      if (closed) throw new SeclookupError('store_failed', 'the single-use store is closed');
      checkSingleUseId(id, expiresAt, owner);
      // Sweep at most once a second: O(entries), amortised over the inserts of that second.
      if (now >= nextSweep) {
        for (const [key, until] of used) {
          if (until > now) continue;
          used.delete(key);
          owners.delete(key);
        }
        nextSweep = now + 1_000;
      }
      const until = used.get(id);
      if (until !== undefined && until > now) return owner !== undefined && owners.get(id) === owner;
      used.set(id, expiresAt);
      if (owner === undefined) owners.delete(id);
      else owners.set(id, owner);
      return true;
    },
    async close() {
      closed = true;
      used.clear();
      owners.clear();
    },
  };
}
