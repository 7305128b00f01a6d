/**
 * Allowances of the SQLite meter: a busy key takes a block of its per-minute rate and of its
 * subscription's monthly quota in one write, then spends it from memory, so most of its
 * requests cost no transaction at all. Taking a block counts it in the file at once (the rate
 * window's hits and the month's used units), so a limit is never exceeded across processes:
 * another process sees the whole block as used until it is spent or given back.
 *
 * What each unit of the block is, in the file and in memory:
 * - unspent: counted in the rate window and the month, held by the allowance's lease row
 *   (member `unspentLease`), not in usage. Given back when the allowance ends (spent out,
 *   its window, day or half its lease over, a plan change, idle, `usage`/`quota`/`close`).
 * - spent, lookup running: a member of the same lease row, as any reservation.
 * - committed (answered): the row loses the unit and the day's usage gains it, both written by
 *   the next group transaction (at most COMMIT_DELAY_MS later), so usage counts only answers.
 *
 * After a `kill -9`, the row expires (leaseMs) and its units go back to the month, as with any
 * lease; they were never in usage, so nothing more is taken back. What this costs: the answers
 * of the last COMMIT_DELAY_MS not yet written go unbilled (never billed twice), and unspent
 * rate hits stay counted until their minute ends (the key may be refused early, not late).
 *
 * Small plans stay exact request by request: a block is taken only while both limits have at
 * least MIN_REMAINING left, and then at most 1/SHARE of what is left, so processes sharing a
 * key never leave each other short by more than a small part of the limit.
 */
import type { ProductId } from '../../products/catalog.js';
import type { ConsumeOutcome, ConsumeRequest, Reservation } from '../types.js';

/** A block is taken only while both limits have this much left after the request. */
export const ALLOWANCE_MIN_REMAINING = 1024;
/** At most this fraction (1/SHARE) of what a limit has left goes into one block. */
const ALLOWANCE_SHARE = 16;
/** The first block of a key; each block spent out makes the next one twice as big, up to the maximum. */
const FIRST_BLOCK = 16;
/**
 * The largest block. At 40,000 requests a second it means about 40 block transactions a second;
 * 256 meant about 156, some 0.3-0.4 µs a request. What one process holds stays bounded by
 * ALLOWANCE_SHARE of what is left as well.
 */
const MAX_BLOCK = 1024;
/** An allowance not spent from for this long is given back, so other processes can use it. */
export const ALLOWANCE_IDLE_MS = 250;
/** How long a commit of a spent unit waits to be written with others (the usage a crash can lose). */
export const COMMIT_DELAY_MS = 10;

/** Lease rows of allowances end in `a` (a reservation's row ends in a digit): their units are not in usage. */
export const ALLOWANCE_ROW_MARK = 'a';

/** True for a reservation (`row/member`) or row of an allowance. */
export function isAllowanceLease(lease: string): boolean {
  const slash = lease.lastIndexOf('/');
  return lease.charCodeAt((slash < 0 ? lease.length : slash) - 1) === ALLOWANCE_ROW_MARK_CODE;
}

const ALLOWANCE_ROW_MARK_CODE = ALLOWANCE_ROW_MARK.charCodeAt(0);

/** A subscription's used units in one month: the file's count less the units this process's allowances hold unspent. */
export interface MonthCount {
  used: number;
}

export interface Allowance {
  /** The key whose rate window it counts in, the subscription and product it serves. */
  readonly keyId: string;
  readonly subscriptionId: string;
  readonly product: ProductId;
  /** The plan it was taken under: a request under other limits does not spend it. */
  readonly rateLimit: number;
  readonly monthlyQuota: number | null;
  readonly window: number;
  /** When the window ends, in Unix seconds (the rate header). */
  readonly resetAt: number;
  readonly period: string;
  readonly day: string;
  /** The first `now` at which it may no longer be spent: its window, day or half its lease is over. */
  readonly validUntil: number;
  readonly size: number;
  /** Rate hits taken and not spent, and the window's hits as this process sees them (spent ones only). */
  rateLeft: number;
  hits: number;
  /** Quota units taken and not spent. */
  quotaLeft: number;
  /**
   * The month's used units as this process sees them: shared by every allowance of the
   * subscription in this process (its keys share one quota), so each answers with the figure
   * the exact path would give after the others' spends too.
   */
  readonly month: MonthCount;
  /** The lease member holding the unspent quota units; null when the block took no quota (status routes). */
  readonly unspentLease: string | null;
  lastSpentAt: number;
}

/** True when `request` can be answered from `allowance` alone. */
export function canSpend(allowance: Allowance, request: ConsumeRequest): boolean {
  return (
    request.now < allowance.validUntil &&
    request.subscriptionId === allowance.subscriptionId &&
    request.product === allowance.product &&
    request.rateLimitPerMinute === allowance.rateLimit &&
    request.monthlyQuota === allowance.monthlyQuota &&
    allowance.rateLeft >= (request.rateUnits ?? 1) &&
    (!request.reserveQuota || (allowance.unspentLease !== null && allowance.quotaLeft >= (request.quotaUnits ?? 1)))
  );
}

/** True when the allowance was too small for `request` (rather than out of date): the next block is bigger. */
export function ranOut(allowance: Allowance, request: ConsumeRequest): boolean {
  return allowance.rateLeft < (request.rateUnits ?? 1) || (request.reserveQuota && allowance.quotaLeft < (request.quotaUnits ?? 1));
}

/**
 * Spend `request` from the allowance (after `canSpend`): the outcome the exact path would give
 * a process alone on the file. `split` moves the reserved units to a new lease member and
 * names it.
 */
export function spend(allowance: Allowance, request: ConsumeRequest, split: (from: string, units: number) => string): ConsumeOutcome {
  const rateUnits = request.rateUnits ?? 1;
  allowance.rateLeft -= rateUnits;
  allowance.hits += rateUnits;
  allowance.lastSpentAt = request.now;
  const rate = {
    limit: allowance.rateLimit,
    remaining: Math.max(0, allowance.rateLimit - allowance.hits),
    resetAt: allowance.resetAt,
  };
  if (!request.reserveQuota) return { allowed: true, rate, quota: quotaOf(allowance), reservation: null };
  const quotaUnits = request.quotaUnits ?? 1;
  allowance.quotaLeft -= quotaUnits;
  allowance.month.used += quotaUnits;
  const reservation: Reservation = {
    subscriptionId: allowance.subscriptionId,
    product: allowance.product,
    period: allowance.period,
    day: allowance.day,
    lease: split(allowance.unspentLease!, quotaUnits),
  };
  if (quotaUnits !== 1) reservation.units = quotaUnits;
  return { allowed: true, rate, quota: quotaOf(allowance), reservation };
}

function quotaOf(allowance: Allowance) {
  const { monthlyQuota, period } = allowance;
  const { used } = allowance.month;
  return monthlyQuota === null ? { limit: null, remaining: null, period } : { limit: monthlyQuota, remaining: Math.max(0, monthlyQuota - used), period };
}

/**
 * The block to take after an allowed exact consume (0: none): only while both limits keep
 * MIN_REMAINING, at most 1/SHARE of what is left, twice the last block when this request found
 * that one spent out (`spentOut`).
 */
export function blockSize(outcome: Extract<ConsumeOutcome, { allowed: true }>, reserveQuota: boolean, spentOut: Allowance | undefined): number {
  const rateLeft = outcome.rate.remaining;
  const quotaLeft = reserveQuota ? (outcome.quota.remaining ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
  if (rateLeft < ALLOWANCE_MIN_REMAINING || quotaLeft < ALLOWANCE_MIN_REMAINING) return 0;
  const wanted = spentOut ? Math.min(MAX_BLOCK, spentOut.size * 2) : FIRST_BLOCK;
  return Math.min(wanted, Math.floor(rateLeft / ALLOWANCE_SHARE), Math.floor(quotaLeft / ALLOWANCE_SHARE));
}

/** The first ms of the next UTC day after `now`. */
export function nextUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/**
 * The allowances of one meter, and the usage of answers spent from them not yet written. Inside
 * a group transaction, allowances taken or ended take effect only once it commits.
 */
export class AllowanceBook {
  /** By the key whose rate window they count in (a key belongs to one subscription and product). */
  private readonly active = new Map<string, Allowance>();
  /** Active allowances by the lease row of their unspent units (a refund finds its way back). */
  private readonly byRow = new Map<string, Allowance>();
  private readonly taken = new Map<string, Allowance>();
  private readonly ended = new Set<Allowance>();
  /** Answered units not yet in usage, by subscription, then product and day. */
  private readonly unwritten = new Map<string, UnwrittenUsage[]>();
  private inTransaction = false;

  get size(): number {
    return this.active.size;
  }

  /** The allowance of the key with id `key`: one taken by the running transaction first, else the active one. */
  find(key: string): Allowance | undefined {
    return this.takenNow(key) ?? this.activeOf(key);
  }

  /**
   * The allowance the running transaction took for `key`: the only one a call inside a
   * transaction spends from, as a rollback forgets it whole.
   */
  takenNow(key: string): Allowance | undefined {
    const taken = this.inTransaction ? this.taken.get(key) : undefined;
    return taken !== undefined && !this.ended.has(taken) ? taken : undefined;
  }

  private activeOf(key: string): Allowance | undefined {
    const active = this.active.get(key);
    return active !== undefined && !this.ended.has(active) ? active : undefined;
  }

  /** The active allowance whose unspent units are in `lease`'s row (`row/member`, or the row's own name). */
  ofLease(lease: string): Allowance | undefined {
    const allowance = this.byRow.get(lease.includes('/') ? rowOf(lease) : lease);
    return allowance !== undefined && !this.ended.has(allowance) ? allowance : undefined;
  }

  /** Every active allowance (not ended by the running transaction). */
  all(): Allowance[] {
    return [...this.active.values()].filter((allowance) => !this.ended.has(allowance));
  }

  /** The allowances of a subscription in `period` a call may spend from: active or taken by the running transaction, not ended. */
  ofSubscription(subscriptionId: string, period: string): Allowance[] {
    const found: Allowance[] = [];
    for (const [key, active] of this.active) {
      const allowance = this.find(key);
      if (allowance !== undefined && allowance === active && allowance.subscriptionId === subscriptionId && allowance.period === period) found.push(allowance);
    }
    if (this.inTransaction)
      for (const [key, taken] of this.taken)
        if (!this.ended.has(taken) && this.active.get(key) !== taken && taken.subscriptionId === subscriptionId && taken.period === period) found.push(taken);
    return found;
  }

  isActive(allowance: Allowance): boolean {
    return this.active.get(allowance.keyId) === allowance && !this.ended.has(allowance);
  }

  /** Inside a transaction: a new allowance. */
  take(allowance: Allowance): void {
    this.taken.set(allowance.keyId, allowance);
  }

  /** Inside a transaction: an allowance given back. False when it was already. */
  end(allowance: Allowance): boolean {
    if (this.ended.has(allowance)) return false;
    this.ended.add(allowance);
    return true;
  }

  /** An answer spent from an allowance: its units join usage at the next transaction. */
  answered(reservation: Omit<UnwrittenUsage, 'units'>, units: number): void {
    const { subscriptionId, product, day } = reservation;
    let entries = this.unwritten.get(subscriptionId);
    if (entries === undefined) this.unwritten.set(subscriptionId, (entries = []));
    for (const entry of entries) {
      if (entry.product === product && entry.day === day) {
        entry.units += units;
        return;
      }
    }
    entries.push({ subscriptionId, product, day, units });
  }

  get hasUnwritten(): boolean {
    return this.unwritten.size > 0;
  }

  /** A transaction begins: it writes the answered usage (`count`); kept until it commits. */
  begin(count: (entry: { subscriptionId: string; product: ProductId; day: string }, units: number) => void): void {
    this.inTransaction = true;
    for (const entries of this.unwritten.values()) for (const entry of entries) count(entry, entry.units);
  }

  committed(): void {
    for (const allowance of this.ended) {
      if (this.active.get(allowance.keyId) === allowance) this.active.delete(allowance.keyId);
      if (allowance.unspentLease !== null) this.byRow.delete(rowOf(allowance.unspentLease));
    }
    for (const [key, allowance] of this.taken) {
      if (this.ended.has(allowance)) continue;
      this.active.set(key, allowance);
      if (allowance.unspentLease !== null) this.byRow.set(rowOf(allowance.unspentLease), allowance);
    }
    this.unwritten.clear();
    this.rolledBack();
  }

  rolledBack(): void {
    this.taken.clear();
    this.ended.clear();
    this.inTransaction = false;
  }
}

interface UnwrittenUsage {
  subscriptionId: string;
  product: ProductId;
  day: string;
  units: number;
}

function rowOf(lease: string): string {
  return lease.slice(0, lease.lastIndexOf('/'));
}
