/**
 * Commits of the Redis meter not yet sent, per subscription. A commit only ends a lease (its
 * units are already counted), so it need not cost a round trip of its own: the next script
 * call on the same subscription (consume, refund, quota, usage) carries the subscription's
 * pending leases and ends them first, in the same EVALSHA; what no call carried within
 * `delayMs` goes out in one call (a script that ZREMs them) for every subscription on a single
 * Redis, or one per subscription on a Cluster (a script stays in one slot). Under load a request
 * then costs one round trip (its consume) instead of two.
 *
 * What this keeps: a pending lease is ended in Redis within `delayMs` (kept well below the
 * lease time) or by the next call on its subscription, whichever comes first, so a committed
 * reservation is never given back; `close()` sends what is pending before the connection
 * closes. What it costs: a `kill -9` also loses the commits of its last `delayMs`, whose
 * answers then go back when their lease expires (under-billed, never over-billed).
 */

/** Leases carried by one script call at most; the rest wait for the next call or the flush. */
export const MAX_CARRIED = 100;
/** Leases in one flush call at most. */
const MAX_PER_FLUSH = 1_000;

export class PendingCommits {
  private pending = new Map<string, string[]>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  /**
   * @param delayMs longest wait before a pending commit is sent on its own
   * @param flush ends `leases` of one subscription in Redis (one call); never rejects
   */
  constructor(
    private readonly delayMs: number,
    private readonly flush: (subscriptionId: string, leases: string[]) => Promise<void>,
    /** Ends the leases of several subscriptions in one call (a single Redis; not a Cluster). */
    private readonly flushMany?: (batch: [subscriptionId: string, leases: string[]][]) => Promise<void>,
  ) {}

  add(subscriptionId: string, lease: string): void {
    const leases = this.pending.get(subscriptionId);
    if (leases) leases.push(lease);
    else this.pending.set(subscriptionId, [lease]);
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flushAll();
      }, this.delayMs);
      // The connection keeps a serving process alive; close() sends what is left.
      this.timer.unref?.();
    }
  }

  /** The subscription's pending leases (at most MAX_CARRIED), handed to a script call that ends them. */
  take(subscriptionId: string): string[] {
    const leases = this.pending.get(subscriptionId);
    if (leases === undefined) return NONE;
    if (leases.length <= MAX_CARRIED) {
      this.pending.delete(subscriptionId);
      return leases;
    }
    return leases.splice(0, MAX_CARRIED);
  }

  /** Leases a failed call carried: pending again (ending a lease twice does nothing). */
  putBack(subscriptionId: string, leases: readonly string[]): void {
    for (const lease of leases) this.add(subscriptionId, lease);
  }

  /** Send every pending commit now; resolves when all are answered. */
  async flushAll(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const all = this.pending;
    if (all.size === 0) return;
    this.pending = new Map();
    const chunks: [string, string[]][] = [];
    for (const [subscriptionId, leases] of all) {
      for (let i = 0; i < leases.length; i += MAX_PER_FLUSH) chunks.push([subscriptionId, leases.slice(i, i + MAX_PER_FLUSH)]);
    }
    const sends: Promise<void>[] = [];
    if (this.flushMany) {
      // As few calls as fit MAX_PER_FLUSH leases each: one per flush at ordinary rates.
      let batch: [string, string[]][] = [];
      let size = 0;
      for (const chunk of chunks) {
        if (size + chunk[1].length > MAX_PER_FLUSH && batch.length > 0) {
          sends.push(this.flushMany(batch));
          batch = [];
          size = 0;
        }
        batch.push(chunk);
        size += chunk[1].length;
      }
      if (batch.length > 0) sends.push(this.flushMany(batch));
    } else {
      for (const [subscriptionId, leases] of chunks) sends.push(this.flush(subscriptionId, leases));
    }
    await Promise.all(sends);
  }
}

const NONE: string[] = [];
