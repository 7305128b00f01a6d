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
 * closes. A flush that fails (Redis restarting, a Cluster master failing over) is sent again,
 * after a back-off, until it succeeds or its leases have run out: dropped, the answers it ends
 * would go unbilled and their units back to the quota. What it costs: a `kill -9` also loses
 * the commits of its last `delayMs`, whose answers then go back when their lease expires
 * (under-billed, never over-billed).
 */

/** Leases carried by one script call at most; the rest wait for the next call or the flush. */
export const MAX_CARRIED = 100;
/** Leases in one flush call at most. */
const MAX_PER_FLUSH = 1_000;

/** The first wait before a failed flush is sent again; it doubles on each failure, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;

export interface PendingCommitsOptions {
  /** Longest wait before a pending commit is sent on its own. */
  delayMs: number;
  /** How long a lease lives: a commit still failing this long after its first failure is dropped (the lease has run out). */
  giveUpAfterMs: number;
  /** Ends `leases` of one subscription in Redis (one call). */
  flush: (subscriptionId: string, leases: string[]) => Promise<unknown>;
  /** Ends the leases of several subscriptions in one call (a single Redis; not a Cluster). */
  flushMany?: (batch: [subscriptionId: string, leases: string[]][]) => Promise<unknown>;
  /** Told of each failed flush (it is sent again) and of commits dropped. */
  onError: (error: unknown, dropped: number) => void;
  now?: () => number;
}

export class PendingCommits {
  private pending = new Map<string, string[]>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Lease -> when its first flush failed, for the leases sent again. */
  private readonly failedSince = new Map<string, number>();
  private retryDelayMs = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: PendingCommitsOptions) {
    this.now = options.now ?? Date.now;
  }

  add(subscriptionId: string, lease: string): void {
    const leases = this.pending.get(subscriptionId);
    if (leases) leases.push(lease);
    else this.pending.set(subscriptionId, [lease]);
    this.arm(this.retryDelayMs || this.options.delayMs);
  }

  /** The subscription's pending leases (at most MAX_CARRIED), handed to a script call that ends them. */
  take(subscriptionId: string): string[] {
    const leases = this.pending.get(subscriptionId);
    if (leases === undefined) return NONE;
    let taken = leases;
    if (leases.length <= MAX_CARRIED) this.pending.delete(subscriptionId);
    else taken = leases.splice(0, MAX_CARRIED);
    // A retried lease carried by a call: its retry is over (a call that fails puts it back, counting afresh).
    if (this.failedSince.size > 0) for (const lease of taken) this.failedSince.delete(lease);
    return taken;
  }

  /** Leases a failed call carried: pending again (ending a lease twice does nothing). */
  putBack(subscriptionId: string, leases: readonly string[]): void {
    for (const lease of leases) this.add(subscriptionId, lease);
  }

  /** Send every pending commit once more, with no retry after: the connection is going away. */
  close(): Promise<void> {
    this.closed = true;
    return this.flushAll();
  }

  /** Send every pending commit now; resolves when all are answered. A failed flush is pending again and sent after a back-off. */
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
    const batches: [string, string[]][][] = [];
    if (this.options.flushMany) {
      // As few calls as fit MAX_PER_FLUSH leases each: one per flush at ordinary rates.
      let batch: [string, string[]][] = [];
      let size = 0;
      for (const chunk of chunks) {
        if (size + chunk[1].length > MAX_PER_FLUSH && batch.length > 0) {
          batches.push(batch);
          batch = [];
          size = 0;
        }
        batch.push(chunk);
        size += chunk[1].length;
      }
      if (batch.length > 0) batches.push(batch);
    } else {
      for (const chunk of chunks) batches.push([chunk]);
    }
    await Promise.all(batches.map((batch) => this.send(batch)));
  }

  private async send(batch: [string, string[]][]): Promise<void> {
    const { flush, flushMany } = this.options;
    try {
      await (flushMany ? flushMany(batch) : flush(batch[0][0], batch[0][1]));
    } catch (error) {
      this.failed(batch, error);
      return;
    }
    this.retryDelayMs = 0;
    if (this.failedSince.size > 0) for (const [, leases] of batch) for (const lease of leases) this.failedSince.delete(lease);
  }

  private failed(batch: [string, string[]][], error: unknown): void {
    const now = this.now();
    let dropped = 0;
    for (const [subscriptionId, leases] of batch) {
      for (const lease of leases) {
        const since = this.failedSince.get(lease) ?? now;
        if (this.closed || now - since >= this.options.giveUpAfterMs) {
          this.failedSince.delete(lease);
          dropped++;
          continue;
        }
        this.failedSince.set(lease, since);
        const pending = this.pending.get(subscriptionId);
        if (pending) pending.push(lease);
        else this.pending.set(subscriptionId, [lease]);
      }
    }
    this.retryDelayMs = Math.min(Math.max(this.retryDelayMs * 2, RETRY_FIRST_MS), RETRY_MAX_MS);
    if (this.pending.size > 0) this.arm(this.retryDelayMs);
    this.options.onError(error, dropped);
  }

  private arm(delayMs: number): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flushAll();
    }, delayMs);
    // The connection keeps a serving process alive; close() sends what is left.
    this.timer.unref?.();
  }
}

const NONE: string[] = [];
