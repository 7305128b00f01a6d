/**
 * A Meter on one SQLite file (better-sqlite3), shared safely by several processes on one host,
 * e.g. the CLI issuing keys while `serve` answers requests. This is the only module that loads
 * better-sqlite3, and it is published on its own subpath (`seclookup/sqlite`).
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { SeclookupError, invalidOption } from '../../errors.js';
import { DEFAULT_PLANS, resolvePlan } from '../plans.js';
import { openSeclookupDatabase } from '../../lib/sqlite-file.js';
import { LeaseBook } from './leases.js';
import { isBusy, WriteLockWait } from './lock-wait.js';
import {
  ALLOWANCE_IDLE_MS,
  AllowanceBook,
  COMMIT_DELAY_MS,
  blockSize,
  canSpend,
  isAllowanceLease,
  nextUtcDay,
  ranOut,
  spend,
  type Allowance,
} from './allowances.js';
import { rateWindow, rateWindowResetAt, usageDay } from '../../lib/calendar.js';
import {
  answerNow,
  assertStorablePlan,
  checkLeaseMs,
  DEFAULT_LEASE_MS,
  assertValidPeriod,
  comparePlans,
  compareUsageRows,
  decideConsume,
  duplicateKeyError,
  looksLikeKeyHash,
  looksLikeStoredId,
  noSubscriptionError,
  refundEntry,
  snapshotQuota,
  validateNewKeys,
  validateSubscription,
  validateSubscriptionChanges,
} from '../store-logic.js';
import type { ProductId } from '../../products/catalog.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  CreatedSubscription,
  KeyInfo,
  KeyKind,
  KeyStatus,
  Meter,
  NewKey,
  NewSubscription,
  Plan,
  QuotaState,
  Reservation,
  ResolvedKey,
  SubscriptionChanges,
  UsageRow,
} from '../types.js';

export type { Meter, MeterAdmin, MeterHotPath, SettingsStore } from '../types.js';

export interface SqliteMeterOptions {
  /** The plan table seeded into a database whose plans table is empty. @default DEFAULT_PLANS */
  plans?: readonly Plan[];
  /**
   * How long a reservation is held before it is given back unless committed, in ms: what a
   * `kill -9` in the middle of lookups leaves billed, for at most this long. @default 60000
   */
  leaseMs?: number;
  /** Clock of `usage()`, which gives expired leases back first (the other calls take `now`). @default Date.now */
  now?: () => number;
  /**
   * How long a write waits for another process's write lock before it fails (`store_failed`),
   * in ms. Metered calls wait from a timer, so the process answers everything else meanwhile.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Check the whole file (SQLite's quick_check) before using it, so a damaged page (a disk
   * error, a byte overwritten) is refused at open instead of failing every request that reads
   * it. Reads every page once: for a long-running server's start, not a short command's.
   * @default false
   */
  verify?: boolean;
}

/** Bumped with every schema change; `migrate` brings older files up to it. */
const SCHEMA_VERSION = 3;

/** How long a call waits for another process's write lock before failing, unless told. */
const BUSY_TIMEOUT_MS = 5_000;

// Counters are keyed by the ids callers pass (strings), so they stay one row per key or
// subscription and need no join on the hot path.
const SCHEMA_V1 = `
  CREATE TABLE IF NOT EXISTS plans (
    slug TEXT NOT NULL,
    product TEXT NOT NULL,
    rate_limit_per_minute INTEGER NOT NULL,
    monthly_quota INTEGER,
    PRIMARY KEY (slug, product)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS subscriptions (
    id INTEGER PRIMARY KEY,
    product TEXT NOT NULL,
    plan TEXT NOT NULL,
    ip_allow TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS keys (
    id INTEGER PRIMARY KEY,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions (id),
    kind TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS rate_windows (
    key_id TEXT PRIMARY KEY,
    window_index INTEGER NOT NULL,
    hits INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS quota_usage (
    subscription_id TEXT PRIMARY KEY,
    period TEXT NOT NULL,
    used INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS usage (
    subscription_id TEXT NOT NULL,
    product TEXT NOT NULL,
    day TEXT NOT NULL,
    lookups INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, product, day)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
`;

// v2: every counter one consume changes (its key's rate window, its subscription's quota month
// and today's usage) is a row of one table clustered by subscription, so a group commit
// writes one B-tree page instead of one per table (each WAL page frame is two writes).
// A counter is a count within a period: the rate window index, the YYYY-MM quota month or
// the YYYY-MM-DD usage day. Finished usage days move into `usage`, which keeps history.
const SCHEMA_V1_TO_V2 = `
  CREATE TABLE live_counters (
    subscription_id TEXT NOT NULL,
    counter TEXT NOT NULL,
    period TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, counter)
  ) WITHOUT ROWID;
  INSERT INTO live_counters (subscription_id, counter, period, count)
    SELECT subscription_id, 'quota', period, used FROM quota_usage;
  INSERT INTO live_counters (subscription_id, counter, period, count)
    SELECT CAST(k.subscription_id AS TEXT), 'rate:' || r.key_id, CAST(r.window_index AS TEXT), r.hits
    FROM rate_windows r JOIN keys k ON CAST(k.id AS TEXT) = r.key_id;
  DROP TABLE rate_windows;
  DROP TABLE quota_usage;
`;

// v3: reservations not yet committed, as leases. A lease's name starts with its expiry, so
// the reservation carries the whole primary key and the expired ones are one range.
const SCHEMA_V2_TO_V3 = `
  CREATE TABLE leases (
    subscription_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    lease TEXT NOT NULL,
    units INTEGER NOT NULL,
    product TEXT NOT NULL,
    period TEXT NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (subscription_id, expires_at, lease)
  ) WITHOUT ROWID;
`;

/** The live counters' names: one quota per subscription, a rate window per key, today's usage per product. */
const QUOTA_COUNTER = 'quota';
const rateCounter = (keyId: string) => `rate:${keyId}`;
const USAGE_COUNTER_PREFIX = 'usage:';
const usageCounter = (product: ProductId) => USAGE_COUNTER_PREFIX + product;

const PLAN_COLUMNS = 'slug, product, rate_limit_per_minute AS rateLimitPerMinute, monthly_quota AS monthlyQuota';
const KEY_COLUMNS = `k.id, k.subscription_id AS subscriptionId, s.product, k.kind, k.status, k.prefix, s.plan,
  s.ip_allow AS ipAllow, k.created_at AS createdAt`;
const KEY_FROM = 'keys k JOIN subscriptions s ON s.id = k.subscription_id';

interface KeyRow {
  id: number;
  subscriptionId: number;
  product: ProductId;
  kind: KeyKind;
  status: KeyStatus;
  prefix: string;
  plan: string;
  /** JSON array of normalised CIDRs. */
  ipAllow: string;
  createdAt: string;
}

/**
 * Open (creating if absent) a SQLite metering database at `path`: WAL journal, synchronous
 * NORMAL and a 5 s busy timeout, so several processes can share it. A new database is seeded
 * with `options.plans` (default DEFAULT_PLANS); an existing one keeps its plans. Throws at once
 * when the file cannot be opened or is not a metering database.
 *
 * `consume` and `refund` calls made in the same event-loop turn share one transaction
 * (see GroupCommit); each promise resolves once its write is committed, so await a call
 * before relying on its effect. `close()` commits whatever is still queued.
 */
export function createSqliteMeter(path: string, options: SqliteMeterOptions = {}): Meter {
  const seedPlans = options.plans ?? DEFAULT_PLANS;
  seedPlans.forEach(assertStorablePlan);
  const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    throw invalidOption(`busyTimeoutMs must be a whole number of milliseconds, 0 or more (got ${String(busyTimeoutMs)})`);
  const db = openDatabase(path, seedPlans, busyTimeoutMs, options.verify ?? false);
  const sql = prepareStatements(db);
  const leaseMs = checkLeaseMs(options.leaseMs ?? DEFAULT_LEASE_MS);
  const clock = options.now ?? Date.now;
  // Lease names: expiry, then this meter's random tag and a counter, unique among every process on the file.
  const leaseTag = randomBytes(6).toString('base64url');

  function ensureOpen(): void {
    if (!db.open) throw new SeclookupError('store_failed', `metering database "${path}" is closed`);
  }

  function plansFor(slug: string): Plan[] {
    return sql.plansBySlug.all(slug);
  }

  const counters = new LiveCounters(sql);
  const leases = new LeaseBook(sql, leaseTag);
  const allowances = new AllowanceBook();
  const writes = new GroupCommit(
    db,
    counters,
    leases,
    {
      begin: () => allowances.begin(countUsage),
      committed: () => allowances.committed(),
      rolledBack: () => allowances.rolledBack(),
      hasChanges: () => allowances.hasUnwritten,
    },
    new WriteLockWait(db, `metering database "${path}"`, busyTimeoutMs),
  );
  const resolvedKeys = createResolvedKeyCache(db);
  const split = (from: string, units: number) => leases.split(from, units);
  const stillInFile = (subscriptionId: string, expiresAt: number, lease: string) => sql.leaseExists.get(subscriptionId, expiresAt, lease) !== undefined;
  // Gives back allowances left unspent by keys gone quiet (started by the first allowance).
  let idleSweep: NodeJS.Timeout | undefined;

  function consumeOnce(request: ConsumeRequest): ConsumeOutcome {
    // The group's earlier calls may have taken an allowance this call can spend from.
    const taken = allowances.takenNow(request.keyId);
    if (taken !== undefined && canSpend(taken, request)) return spend(taken, request, split);
    const held = taken ?? allowances.find(request.keyId);
    reclaimExpired(request.now);
    // Give back what it holds first, so the exact decision sees the file's counts.
    if (held !== undefined) endAllowance(held);
    // The subscription's other keys' allowances too, when what they hold unspent would refuse this call.
    if (request.reserveQuota && request.monthlyQuota !== null) endWhenShort(request, request.monthlyQuota);
    const outcome = decideOnce(request);
    if (outcome.allowed) takeAllowance(request, outcome, held !== undefined && ranOut(held, request) ? held : undefined);
    shareMonth(request.subscriptionId, outcome.quota);
    return outcome;
  }

  /** End the subscription's allowances when the month's count with their unspent units leaves too little for `request`. */
  function endWhenShort(request: ConsumeRequest, monthlyQuota: number): void {
    const quota = counters.get(request.subscriptionId, QUOTA_COUNTER);
    if (quota === undefined || quota.count + (request.quotaUnits ?? 1) <= monthlyQuota) return;
    for (const allowance of allowances.ofSubscription(request.subscriptionId, quota.period)) endAllowance(allowance);
  }

  /**
   * After an exact decision: the month's used units as this process sees them are the file's
   * count less what its allowances of the subscription hold unspent (units not used by any
   * lookup). The outcome reports that figure, and the allowances answer from it from now on.
   */
  function shareMonth(subscriptionId: string, quota: QuotaState): void {
    const siblings = allowances.ofSubscription(subscriptionId, quota.period);
    if (siblings.length === 0) return;
    const stored = counters.get(subscriptionId, QUOTA_COUNTER);
    let used = stored?.period === quota.period ? stored.count : 0;
    for (const allowance of siblings) used -= allowance.quotaLeft;
    for (const allowance of siblings) allowance.month.used = used;
    if (quota.limit !== null) quota.remaining = Math.max(0, quota.limit - used);
  }

  /** Units of the month no longer used (given back): the subscription's allowances count them off too. */
  function usedLess(subscriptionId: string, period: string, units: number): void {
    const siblings = allowances.ofSubscription(subscriptionId, period);
    if (siblings.length > 0) siblings[0].month.used = Math.max(0, siblings[0].month.used - units);
  }

  /** The exact consume: counters read and changed in this transaction, a reservation in a lease row. */
  function decideOnce(request: ConsumeRequest): ConsumeOutcome {
    const { subscriptionId } = request;
    const rate = counters.get(subscriptionId, rateCounter(request.keyId));
    const quota = counters.get(subscriptionId, QUOTA_COUNTER);
    const decision = decideConsume(request, rate && { window: Number(rate.period), hits: rate.count }, quota && { period: quota.period, used: quota.count });
    if (decision.rate) counters.set(subscriptionId, rateCounter(request.keyId), { period: String(decision.rate.window), count: decision.rate.hits });
    if (decision.quota) counters.set(subscriptionId, QUOTA_COUNTER, { period: decision.quota.period, count: decision.quota.used });
    const reservation = decision.outcome.allowed ? decision.outcome.reservation : null;
    if (reservation) {
      const units = reservation.units ?? 1;
      countUsage(reservation, units);
      // The group's reservations alike share one lease row (see leases.ts).
      reservation.lease = leases.reserve(subscriptionId, reservation.product, reservation.period, reservation.day, request.now + leaseMs, units);
    }
    return decision.outcome;
  }

  /**
   * After an allowed exact consume, take a block for the key's next requests (see
   * allowances.ts), counted in the file now: rate hits always, quota units when the request
   * reserves quota. Only in the current window, day and month.
   */
  function takeAllowance(request: ConsumeRequest, outcome: Extract<ConsumeOutcome, { allowed: true }>, spentOut: Allowance | undefined): void {
    const size = blockSize(outcome, request.reserveQuota, spentOut);
    if (size === 0) return;
    const { subscriptionId, keyId, product, now } = request;
    const window = rateWindow(now);
    const day = usageDay(now);
    const period = day.slice(0, 7);
    if (outcome.rate.resetAt !== rateWindowResetAt(now) || outcome.quota.period !== period) return;
    const rateName = rateCounter(keyId);
    const rate = counters.get(subscriptionId, rateName)!;
    counters.set(subscriptionId, rateName, { period: rate.period, count: rate.count + size });
    const quota = counters.get(subscriptionId, QUOTA_COUNTER);
    const used = quota?.period === period ? quota.count : 0;
    // One count of the month for every allowance of the subscription (shareMonth sets it).
    const month = allowances.ofSubscription(subscriptionId, period)[0]?.month ?? { used };
    let unspentLease: string | null = null;
    if (request.reserveQuota) {
      counters.set(subscriptionId, QUOTA_COUNTER, { period, count: used + size });
      unspentLease = leases.reserve(subscriptionId, product, period, day, now + leaseMs, size, true);
    }
    allowances.take({
      keyId,
      subscriptionId,
      product,
      rateLimit: request.rateLimitPerMinute,
      monthlyQuota: request.monthlyQuota,
      window,
      resetAt: rateWindowResetAt(now),
      period,
      day,
      validUntil: Math.min((window + 1) * 60_000, nextUtcDay(now), now + Math.floor(leaseMs / 2)),
      size,
      rateLeft: size,
      hits: rate.count,
      quotaLeft: request.reserveQuota ? size : 0,
      month,
      unspentLease,
      lastSpentAt: now,
    });
    idleSweep ??= setInterval(endIdleAllowances, ALLOWANCE_IDLE_MS).unref();
  }

  /** Inside a transaction: give back an allowance's unspent rate hits (same window only) and quota units. */
  function endAllowance(allowance: Allowance): void {
    if (!allowances.end(allowance)) return;
    if (allowance.unspentLease !== null) {
      const unspent = leases.settle(allowance.unspentLease, stillInFile);
      if (unspent) giveBack(allowance, unspent, { inUsage: false, unspent: true });
    }
    if (allowance.rateLeft > 0) {
      const rateName = rateCounter(allowance.keyId);
      const rate = counters.get(allowance.subscriptionId, rateName);
      if (rate?.period === String(allowance.window))
        counters.set(allowance.subscriptionId, rateName, { period: rate.period, count: Math.max(0, rate.count - allowance.rateLeft) });
    }
  }

  function endAllowances(): void {
    for (const allowance of allowances.all()) endAllowance(allowance);
  }

  function endIdleAllowances(): void {
    const quietSince = clock() - ALLOWANCE_IDLE_MS;
    const idle = allowances.all().filter((allowance) => allowance.lastSpentAt <= quietSince);
    if (idle.length > 0 && db.open)
      writes
        .enqueue(() => {
          for (const allowance of idle) if (allowances.isActive(allowance)) endAllowance(allowance);
        })
        .catch(() => {
          // The store failed: the allowances stay, and go back with their lease at worst.
        });
    if (allowances.size === 0 && idle.length === 0) {
      clearInterval(idleSweep);
      idleSweep = undefined;
    }
  }

  /**
   * Give `units` of a reservation back to its month's quota (if still the stored month) and,
   * for units that were in usage (all but an allowance's), its day's usage. `unspent`: an
   * allowance's units no lookup used, which the allowances' count of the month never held.
   */
  function giveBack(
    reservation: Pick<Reservation, 'subscriptionId' | 'product' | 'period' | 'day'>,
    units: number,
    { inUsage = true, unspent = false }: { inUsage?: boolean; unspent?: boolean } = {},
  ): void {
    const quota = counters.get(reservation.subscriptionId, QUOTA_COUNTER);
    const refunded = refundEntry(quota && { period: quota.period, used: quota.count }, reservation.period, units);
    if (refunded && refunded.used !== quota?.count) {
      counters.set(reservation.subscriptionId, QUOTA_COUNTER, { period: refunded.period, count: refunded.used });
      // An allowance's unspent units were never used: only units a lookup held leave the allowances' count.
      if (!unspent) usedLess(reservation.subscriptionId, refunded.period, quota!.count - refunded.used);
    }
    if (inUsage) countUsage(reservation, -units);
  }

  /**
   * Give back every lease (of any subscription, any process) that expired by `now`. Checked
   * once per group and clock: a group's later calls with no later `now` skip it. With none
   * expired, the cost is one look at the few open lease rows.
   */
  function reclaimExpired(now: number): void {
    if (!counters.firstCheckAt(now)) return;
    if (sql.anyLeaseExpired.get(now) === undefined) return;
    for (const subscriptionId of sql.subscriptionsWithExpiredLeases.all(now)) reclaim(subscriptionId, now);
  }

  /** Give back the subscription's leases that expired by `now`. */
  function reclaim(subscriptionId: string, now: number): void {
    const expired = sql.expiredLeases.all(subscriptionId, now);
    if (expired.length === 0) return;
    for (const row of expired) {
      // One of this meter's allowances whose lease ran out (a stalled process): it ends first.
      const allowance = allowances.ofLease(row.lease);
      if (allowance) endAllowance(allowance);
      // This meter's own rows: memory has the commits not written yet.
      const units = leases.heldBy(row.lease) ?? row.units;
      leases.expired(row.lease);
      if (units > 0) giveBack({ subscriptionId, ...row }, units, { inUsage: !isAllowanceLease(row.lease) });
    }
    sql.deleteExpiredLeases.run(subscriptionId, now);
  }

  function refundOnce(reservation: Reservation): void {
    // A refund gives units back, so it checks the row is still there (a commit need not: it gives nothing back).
    const held = leases.settle(reservation.lease, stillInFile);
    if (held === undefined) return; // committed, refunded or expired already
    const back = Math.min(reservation.units ?? 1, held);
    const fromAllowance = isAllowanceLease(reservation.lease);
    giveBack(reservation, back, { inUsage: !fromAllowance });
    // Units spent from an allowance join usage when answered, and a batch's units not given back
    // are answered now: counted in this transaction (the allowance that would have written them is gone).
    if (fromAllowance && held > back) countUsage(reservation, held - back);
  }

  /** Add `delta` billed lookups (negative: refunded) to the reservation's day; a day never goes below zero. */
  function countUsage(reservation: Pick<Reservation, 'subscriptionId' | 'product' | 'day'>, delta: number): void {
    const { subscriptionId, product, day } = reservation;
    const name = usageCounter(product);
    const today = counters.get(subscriptionId, name);
    if (today?.period === day) {
      counters.set(subscriptionId, name, { period: day, count: Math.max(0, today.count + delta) });
    } else if (delta > 0 && (!today || today.period < day)) {
      // A new day: the finished one joins the history.
      if (today) sql.addUsage.run(subscriptionId, product, today.period, today.count);
      counters.set(subscriptionId, name, { period: day, count: delta });
    } else if (delta > 0) {
      // A day already closed (a caller whose clock is behind ours) is counted in the history.
      sql.addUsage.run(subscriptionId, product, day, delta);
    } else {
      // A refund of a closed day (the lookup straddled midnight).
      sql.subtractUsage.run(-delta, subscriptionId, product, day);
    }
  }

  const createSubscriptionOnce = db.transaction((input: NewSubscription): CreatedSubscription => {
    const ipAllow = validateSubscription(input, plansFor);
    if (input.keys.some((k) => sql.keyIdByHash.get(k.hash) !== undefined)) throw duplicateKeyError();
    const createdAt = new Date().toISOString();
    const subscriptionId = sql.insertSubscription.run(input.product, input.plan, JSON.stringify(ipAllow), createdAt).lastInsertRowid;
    const keys = input.keys.map((k) => {
      const keyId = sql.insertKey.run(subscriptionId, k.kind, k.hash, k.prefix, createdAt).lastInsertRowid;
      return toKeyInfo(sql.keyById.get(keyId)!);
    });
    return { subscriptionId: String(subscriptionId), keys };
  });

  const addKeysOnce = db.transaction((subscriptionId: string, newKeys: NewKey[]): KeyInfo[] => {
    validateNewKeys(newKeys);
    if (!/^[1-9]\d*$/.test(subscriptionId) || sql.subscriptionExists.get(subscriptionId) === undefined)
      throw invalidOption(`no subscription ${JSON.stringify(subscriptionId)}`);
    if (newKeys.some((k) => sql.keyIdByHash.get(k.hash) !== undefined)) throw duplicateKeyError();
    const createdAt = new Date().toISOString();
    return newKeys.map((k) => toKeyInfo(sql.keyById.get(sql.insertKey.run(Number(subscriptionId), k.kind, k.hash, k.prefix, createdAt).lastInsertRowid)!));
  });

  const updateSubscriptionOnce = db.transaction((subscriptionId: string, changes: SubscriptionChanges): KeyInfo[] => {
    const sub = looksLikeStoredId(subscriptionId) ? sql.subscriptionById.get(subscriptionId) : undefined;
    if (!sub) throw noSubscriptionError(subscriptionId);
    const valid = validateSubscriptionChanges(changes, sub.product, plansFor);
    const ipAllow = valid.ipAllow !== undefined ? JSON.stringify(valid.ipAllow) : sub.ipAllow;
    sql.updateSubscription.run(valid.plan ?? sub.plan, ipAllow, subscriptionId);
    return sql.keysOfSubscription.all(subscriptionId).map(toKeyInfo);
  });

  const revokeOnce = db.transaction((idOrHash: string): KeyInfo | null => {
    const row = looksLikeKeyHash(idOrHash) ? sql.keyByHash.get(idOrHash) : /^[1-9]\d*$/.test(idOrHash) ? sql.keyById.get(idOrHash) : undefined;
    if (!row) return null;
    sql.revoke.run(row.id);
    return toKeyInfo({ ...row, status: 'revoked' });
  });

  return {
    // Synchronous, as better-sqlite3 is (see Meter.resolveKey); usually a map lookup.
    resolveKey: (hash: string) =>
      answerNow((): ResolvedKey | null => {
        ensureOpen();
        const cached = resolvedKeys.get(hash);
        if (cached) return cached;
        const row = sql.keyByHash.get(hash);
        if (!row) return null;
        const info = toKeyInfo(row);
        const plan = resolvePlan(plansFor(info.plan), info.plan, info.product);
        const key: ResolvedKey = {
          id: info.id,
          subscriptionId: info.subscriptionId,
          product: info.product,
          kind: info.kind,
          status: info.status,
          ipAllow: info.ipAllow,
          plan,
        };
        resolvedKeys.set(hash, key);
        return key;
      }),

    // From the key's allowance when it has one (no promise, no statement); else the group's
    // promise itself, with no async wrapper: one promise per call.
    consume(request: ConsumeRequest): ConsumeOutcome | Promise<ConsumeOutcome> {
      if (!db.open) return Promise.reject(new SeclookupError('store_failed', `metering database "${path}" is closed`));
      const held = allowances.find(request.keyId);
      if (held !== undefined && canSpend(held, request)) return spend(held, request, split);
      return writes.enqueue(() => consumeOnce(request));
    },

    // Every write runs synchronously in the flush at the end of the turn it was made in.
    answersWithinTurn: true,

    async refund(reservation: Reservation): Promise<void> {
      ensureOpen();
      // Units spent from a live allowance go back into it (still reserved, nothing to write); of
      // a batch given back in part, the rest is answered and joins usage like a commit.
      const allowance = allowances.ofLease(reservation.lease);
      const back = reservation.units ?? 1;
      const held = allowance?.unspentLease ? leases.join(reservation.lease, allowance.unspentLease, back) : undefined;
      if (allowance && held !== undefined) {
        const moved = Math.min(back, held);
        allowance.quotaLeft += moved;
        allowance.month.used -= moved;
        if (held > moved) {
          allowances.answered(reservation, held - moved);
          writes.scheduleWithin(COMMIT_DELAY_MS);
        }
        return;
      }
      await writes.enqueue(() => refundOnce(reservation));
    },

    // Settled in memory, written by the next group (see leases.ts): no promise, no statement.
    // An answer spent from an allowance joins usage then too, within COMMIT_DELAY_MS.
    commit: (reservation: Reservation) =>
      answerNow((): void => {
        ensureOpen();
        const units = leases.settle(reservation.lease);
        if (units === undefined) return;
        if (!leases.isAllowanceMember(reservation.lease)) return writes.schedule();
        allowances.answered(reservation, units);
        writes.scheduleWithin(COMMIT_DELAY_MS);
      }),

    // Allowances are given back first, so the figures read are exact.
    async quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState> {
      ensureOpen();
      return writes.enqueue(() => {
        endAllowances();
        reclaimExpired(now);
        const quota = counters.get(subscriptionId, QUOTA_COUNTER);
        return snapshotQuota(quota && { period: quota.period, used: quota.count }, monthlyQuota, now);
      });
    },

    async createSubscription(input: NewSubscription): Promise<CreatedSubscription> {
      ensureOpen();
      return createSubscriptionOnce.immediate(input);
    },

    async addKeys(subscriptionId: string, newKeys: NewKey[]): Promise<KeyInfo[]> {
      ensureOpen();
      return addKeysOnce.immediate(subscriptionId, newKeys);
    },

    async listKeys(): Promise<KeyInfo[]> {
      ensureOpen();
      return sql.allKeys.all().map(toKeyInfo);
    },

    async updateSubscription(subscriptionId: string, changes: SubscriptionChanges): Promise<KeyInfo[]> {
      ensureOpen();
      // As revokeKey: this process's cache now, other processes' at their next request (data_version).
      resolvedKeys.clear();
      return updateSubscriptionOnce.immediate(subscriptionId, changes);
    },

    async revokeKey(idOrHash: string): Promise<KeyInfo | null> {
      ensureOpen();
      resolvedKeys.clear();
      return revokeOnce.immediate(idOrHash);
    },

    async setPlan(plan: Plan): Promise<void> {
      ensureOpen();
      assertStorablePlan(plan);
      resolvedKeys.clear();
      sql.savePlan.run(plan.slug, plan.product, plan.rateLimitPerMinute, plan.monthlyQuota);
    },

    async listPlans(): Promise<Plan[]> {
      ensureOpen();
      return sql.allPlans.all().sort(comparePlans);
    },

    async usage(period?: string): Promise<UsageRow[]> {
      ensureOpen();
      if (period !== undefined) assertValidPeriod(period);
      const now = clock();
      await writes.enqueue(() => {
        endAllowances();
        reclaimExpired(now);
      });
      const rows = sql.usageInPeriod.all(period ?? null, period ?? null);
      return rows.sort(compareUsageRows);
    },

    async getSetting(name: string): Promise<string | null> {
      ensureOpen();
      return sql.setting.get(name) ?? null;
    },

    async setSettingIfAbsent(name: string, value: string): Promise<string> {
      ensureOpen();
      // One statement: the insert is a no-op when another process stored the name first.
      sql.insertSettingIfAbsent.run(name, value);
      return sql.setting.get(name)!;
    },

    async setSetting(name: string, value: string): Promise<void> {
      ensureOpen();
      sql.saveSetting.run(name, value);
    },

    async close(): Promise<void> {
      if (!db.open) return;
      clearInterval(idleSweep);
      if (allowances.size > 0) writes.enqueue(endAllowances).catch(() => {});
      writes.flush(true);
      db.close();
    },
  };
}

/** Resolved keys kept at most; only keys that exist are cached, so this bounds nothing real. */
const RESOLVED_KEY_CACHE_SIZE = 10_000;

/**
 * Resolved keys (with their plan) kept in memory between requests. SQLite's `data_version`
 * changes whenever another connection commits, so a key revoked or a plan changed by the CLI
 * in another process is seen by every request that starts in a later millisecond than that
 * commit; this process's own admin writes clear the cache directly. The version is read at most
 * once per millisecond of real time (never the meter's injected clock, which a test may hold
 * still): the read costs about 2 µs (it opens a read transaction on the WAL), as much as the
 * rest of a request's key and meter work, and under load a millisecond serves dozens of requests.
 */
function createResolvedKeyCache(db: Database.Database) {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const keys = new Map<string, ResolvedKey>();
  let seenVersion = dataVersion.get();
  let checkedAt = Date.now();

  function dropIfChangedElsewhere(): void {
    const now = Date.now();
    if (now === checkedAt) return;
    checkedAt = now;
    const version = dataVersion.get();
    if (version !== seenVersion) {
      keys.clear();
      seenVersion = version;
    }
  }

  return {
    get(hash: string): ResolvedKey | undefined {
      dropIfChangedElsewhere();
      return keys.get(hash);
    },
    set(hash: string, key: ResolvedKey): void {
      if (keys.size >= RESOLVED_KEY_CACHE_SIZE) keys.clear();
      keys.set(hash, key);
    },
    clear(): void {
      keys.clear();
    },
  };
}

/** A count within its period (see SCHEMA_V1_TO_V2). */
interface Counter {
  period: string;
  count: number;
}

/** Counter rows kept in memory between transactions at most (a row per key and subscription in use). */
const KEPT_COUNTERS_MAX = 100_000;

/**
 * The live counters as one group transaction reads and changes them: each row is read at most
 * once and written back once, at the end of the transaction, however many calls of the group
 * touch it. A busy key's burst therefore costs a few statements instead of several per call,
 * with the same result as running the calls one after another (the transaction holds the
 * write lock throughout).
 *
 * The rows stay in memory after the transaction commits: the next one reads them again only
 * if another connection committed in between (SQLite's `data_version`, read under the write
 * lock at the start of each transaction), so a process alone on its file reads no counter.
 */
class LiveCounters {
  private readonly rows = new Map<string, { subscriptionId: string; counter: string; value: Counter | undefined }>();
  private seenVersion: unknown;
  private readonly changed = new Set<string>();
  /** The latest `now` this transaction gave expired leases back by. */
  private expiredCheckedUpTo = Number.NEGATIVE_INFINITY;

  constructor(private readonly sql: Statements) {}

  /** A transaction begins (holding the write lock): forget the rows if another connection wrote since. */
  begin(): void {
    const version = this.sql.dataVersion.get();
    if (version !== this.seenVersion || this.rows.size > KEPT_COUNTERS_MAX) this.rows.clear();
    this.seenVersion = version;
  }

  /** True unless this transaction already gave expired leases back by a `now` as late: then there is nothing more to give back. */
  firstCheckAt(now: number): boolean {
    if (now <= this.expiredCheckedUpTo) return false;
    this.expiredCheckedUpTo = now;
    return true;
  }

  get(subscriptionId: string, counter: string): Counter | undefined {
    const id = `${subscriptionId}\u0000${counter}`;
    let row = this.rows.get(id);
    if (!row) this.rows.set(id, (row = { subscriptionId, counter, value: this.sql.liveCounter.get(subscriptionId, counter) }));
    return row.value;
  }

  set(subscriptionId: string, counter: string, value: Counter): void {
    const id = `${subscriptionId}\u0000${counter}`;
    this.rows.set(id, { subscriptionId, counter, value });
    this.changed.add(id);
  }

  /** Write every changed row; call inside the transaction, after its calls. */
  writeBack(): void {
    for (const id of this.changed) {
      const { subscriptionId, counter, value } = this.rows.get(id)!;
      this.sql.saveLiveCounter.run(subscriptionId, counter, value!.period, value!.count);
    }
    this.changed.clear();
    this.expiredCheckedUpTo = Number.NEGATIVE_INFINITY;
  }

  /** Forget everything read or changed: the transaction was rolled back (or may have been). */
  discard(): void {
    this.rows.clear();
    this.changed.clear();
    this.expiredCheckedUpTo = Number.NEGATIVE_INFINITY;
  }
}

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes per transaction at most, so one burst cannot hold the write lock for long. */
const MAX_GROUP = 512;

/** Thrown inside a group's transaction to roll it back when one of its writes failed: its callers are re-run alone. */
class WriteFailed extends SeclookupError {
  constructor(message: string, options: { cause: unknown }) {
    super('store_failed', message, options);
  }
}

/**
 * Group commit for the hot writes (consume, refund). A WAL commit costs several
 * system calls (locks, frame writes), which caps one transaction per call at a few tens of
 * thousands per second. Calls made in the same event-loop turn are instead queued and run at
 * `setImmediate` in ONE `BEGIN IMMEDIATE` transaction, so:
 * - another process cannot interleave: IMMEDIATE holds the write lock for the whole group,
 *   and the lock is taken and released within one synchronous flush;
 * - no promise resolves before its write is committed (same durability as a call alone);
 * - each call stays atomic and isolated: if one write throws, the group is rolled back and
 *   its calls are re-run one transaction each, so only the failing call rejects;
 * - a write lock held by another process is waited for from a timer, not in SQLite's busy
 *   handler, which would stop this process's event loop meanwhile (lock-wait.ts).
 */
/** What else a group transaction writes (the allowances' book), told when it begins and ends. */
interface GroupHooks {
  begin(): void;
  committed(): void;
  rolledBack(): void;
  hasChanges(): boolean;
}

class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  private delayed: NodeJS.Timeout | undefined;
  private readonly runGroup: Database.Transaction<(group: QueuedWrite[]) => unknown[]>;
  private readonly runOne: Database.Transaction<(write: QueuedWrite) => unknown>;

  constructor(
    db: Database.Database,
    private readonly counters: LiveCounters,
    private readonly leases: LeaseBook,
    private readonly hooks: GroupHooks,
    private readonly lock: WriteLockWait,
  ) {
    this.runOne = db.transaction((write: QueuedWrite) => {
      counters.begin();
      leases.begin();
      hooks.begin();
      const value = write.run();
      counters.writeBack();
      leases.write();
      return value;
    });
    this.runGroup = db.transaction((group: QueuedWrite[]) => {
      counters.begin();
      leases.begin();
      hooks.begin();
      const values = group.map((write) => {
        try {
          return write.run();
        } catch (error) {
          throw new WriteFailed('a grouped write failed', { cause: error });
        }
      });
      try {
        counters.writeBack();
        leases.write();
      } catch (error) {
        throw new WriteFailed("writing a group's counters failed", { cause: error });
      }
      return values;
    });
  }

  enqueue<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** A flush at the end of this event-loop turn (for queued writes, or lease rows a commit changed). */
  schedule(): void {
    if (this.scheduled || this.lock.waiting) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** A flush within `ms` (commits of allowance units: written with others, not each turn). */
  scheduleWithin(ms: number): void {
    if (this.scheduled || this.delayed || this.lock.waiting) return;
    this.delayed = setTimeout(() => this.flush(), ms);
  }

  /**
   * Run and commit every queued write now, and the lease rows commits changed. Never throws:
   * failures reject their callers. While another process holds the write lock, the writes stay
   * queued and this runs again from a timer; `close` passes `waitHere` to wait in SQLite instead.
   */
  flush(waitHere = false): void {
    this.scheduled = false;
    clearTimeout(this.delayed);
    this.delayed = undefined;
    if (waitHere) this.lock.cancel();
    const run = (group: QueuedWrite[]) => this.runGroup.immediate(group);
    // Commits alone (no queued write) still get their rows written, in a group of nothing.
    while (this.queue.length > 0 || this.leases.hasChanges || this.hooks.hasChanges()) {
      const group = this.queue.splice(0, MAX_GROUP);
      let values: unknown[];
      try {
        values = waitHere ? run(group) : this.lock.withoutBusyWait(() => run(group));
        this.lock.succeeded();
        this.leases.committed();
        this.hooks.committed();
      } catch (error) {
        this.counters.discard();
        this.leases.rolledBack();
        this.hooks.rolledBack();
        if (error instanceof WriteFailed && group.length > 0) this.runAlone(group);
        else if (!waitHere && isBusy(error) && this.lock.retryLater(() => this.flush())) {
          // Held elsewhere: the group waits at the head of the queue, and so do the lease rows.
          this.queue.unshift(...group);
          return;
        } else {
          // BEGIN or COMMIT failed (an I/O error, or the lock held for the whole busy timeout):
          // nothing was kept. Everything queued fails alike: the next group would meet the same.
          const failure = isBusy(error) ? this.lock.timedOut(error) : error;
          for (const write of group.concat(this.queue.splice(0))) write.reject(failure);
          // Lease rows left to write wait for the next flush, rather than spinning here.
          return;
        }
        continue;
      }
      group.forEach((write, i) => write.resolve(values[i]));
    }
  }

  /** The slow path after a failed write: one transaction per call. */
  private runAlone(group: QueuedWrite[]): void {
    for (const write of group) {
      try {
        const value = this.runOne.immediate(write);
        this.leases.committed();
        this.hooks.committed();
        write.resolve(value);
      } catch (error) {
        this.counters.discard();
        this.leases.rolledBack();
        this.hooks.rolledBack();
        write.reject(error);
      }
    }
  }
}

/** Open the file, set the pragmas, create or upgrade the schema and seed plans. */
function openDatabase(path: string, seedPlans: readonly Plan[], busyTimeoutMs: number, verify: boolean): Database.Database {
  // `timeout` is SQLite's busy_timeout: wait for another process's lock instead of failing.
  const db = openSeclookupDatabase(path, 'metering database', { timeout: busyTimeoutMs });
  try {
    // Before anything is written to it: a damaged file is not to be changed further.
    if (verify) checkIntact(db, path);
    // In WAL mode NORMAL loses at most the last commits on power loss, never integrity.
    db.pragma('synchronous = NORMAL');
    migrate(db, seedPlans);
    return db;
  } catch (error) {
    if (db.open) db.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new SeclookupError('store_failed', `cannot open metering database "${path}": ${reason}`, { cause: error });
  }
}

/**
 * Throw when SQLite's quick_check finds the file damaged: a page of the key index or the counters
 * overwritten would otherwise leave a server that starts, lists its keys and fails every lookup.
 */
function checkIntact(db: Database.Database, path: string): void {
  const found = db.pragma('quick_check(3)', { simple: false }) as { quick_check: string }[];
  const problems = found.map((row) => row.quick_check).filter((line) => line !== 'ok');
  if (problems.length === 0) return;
  // As SQLite's own SQLITE_CORRUPT, so callers say it as they say a malformed page met later.
  throw new Database.SqliteError(
    `the file is damaged (SQLite's quick_check: ${problems.join('; ').replace(/\s+/g, ' ')}); restore it from a backup, or salvage what SQLite can read with: sqlite3 ${path} .recover | sqlite3 NEW.db`,
    'SQLITE_CORRUPT',
  );
}

/**
 * Create or upgrade the schema in one write transaction, so concurrent first starts agree. A file
 * already current (the schema version, and plans seeded) is only read: opening it must not wait
 * for another connection's write lock (the sqlite3 shell in a transaction, a long write), which
 * a command that only reads (`keys list`) never needs. Only work to do takes the lock, and is
 * decided again inside it, where another process may have done it meanwhile.
 */
function migrate(db: Database.Database, seedPlans: readonly Plan[]): void {
  if (!migrationNeeded(db)) return;
  db.transaction(() => {
    const version = schemaVersion(db);
    if (version < 1) db.exec(SCHEMA_V1);
    if (version < 2) db.exec(SCHEMA_V1_TO_V2);
    if (version < 3) db.exec(SCHEMA_V2_TO_V3);
    if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
    if (plansMissing(db)) {
      const insert = db.prepare('INSERT INTO plans (slug, product, rate_limit_per_minute, monthly_quota) VALUES (?, ?, ?, ?)');
      for (const plan of seedPlans) insert.run(plan.slug, plan.product, plan.rateLimitPerMinute, plan.monthlyQuota);
    }
  }).immediate();
}

/** True when the schema is older than this version's or the plan table is empty: `migrate` has work to do. */
function migrationNeeded(db: Database.Database): boolean {
  return schemaVersion(db) < SCHEMA_VERSION || plansMissing(db);
}

/** The file's schema version; a newer one than this seclookup knows is refused. */
function schemaVersion(db: Database.Database): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new SeclookupError(
      'store_failed',
      `schema version ${version} is newer than this seclookup supports (${SCHEMA_VERSION}): a newer seclookup wrote it; run that version (or newer) on it`,
    );
  }
  return version;
}

/** No plan yet (read once the schema is current): the seed plans are to be written. */
function plansMissing(db: Database.Database): boolean {
  return (db.prepare('SELECT count(*) FROM plans').pluck().get() as number) === 0;
}

type Statements = ReturnType<typeof prepareStatements>;

/** Every statement the meter runs, prepared once. */
function prepareStatements(db: Database.Database) {
  return {
    plansBySlug: db.prepare<[string], Plan>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE slug = ?`),
    allPlans: db.prepare<[], Plan>(`SELECT ${PLAN_COLUMNS} FROM plans`),
    savePlan: db.prepare<[string, string, number, number | null]>(
      `INSERT INTO plans (slug, product, rate_limit_per_minute, monthly_quota) VALUES (?, ?, ?, ?)
       ON CONFLICT (slug, product) DO UPDATE SET rate_limit_per_minute = excluded.rate_limit_per_minute, monthly_quota = excluded.monthly_quota`,
    ),

    insertSubscription: db.prepare<[string, string, string, string]>('INSERT INTO subscriptions (product, plan, ip_allow, created_at) VALUES (?, ?, ?, ?)'),
    insertKey: db.prepare<[number | bigint, string, string, string, string]>(
      `INSERT INTO keys (subscription_id, kind, hash, prefix, status, created_at) VALUES (?, ?, ?, ?, 'active', ?)`,
    ),
    subscriptionExists: db.prepare<[string], number>('SELECT 1 FROM subscriptions WHERE id = ?').pluck(),
    subscriptionById: db.prepare<[string], { product: ProductId; plan: string; ipAllow: string }>(
      'SELECT product, plan, ip_allow AS ipAllow FROM subscriptions WHERE id = ?',
    ),
    updateSubscription: db.prepare<[string, string, string]>('UPDATE subscriptions SET plan = ?, ip_allow = ? WHERE id = ?'),
    keysOfSubscription: db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.subscription_id = ? ORDER BY k.id`),
    keyIdByHash: db.prepare<[string], number>('SELECT id FROM keys WHERE hash = ?').pluck(),
    keyByHash: db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.hash = ?`),
    keyById: db.prepare<[number | bigint | string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = ?`),
    allKeys: db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ORDER BY k.id`),
    revoke: db.prepare<[number]>(`UPDATE keys SET status = 'revoked' WHERE id = ?`),

    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    liveCounter: db.prepare<[string, string], Counter>('SELECT period, count FROM live_counters WHERE subscription_id = ? AND counter = ?'),
    saveLiveCounter: db.prepare<[string, string, string, number]>(
      `INSERT INTO live_counters (subscription_id, counter, period, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (subscription_id, counter) DO UPDATE SET period = excluded.period, count = excluded.count`,
    ),

    insertLease: db.prepare<[string, number, string, number, string, string, string]>(
      'INSERT INTO leases (subscription_id, expires_at, lease, units, product, period, day) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    leaseExists: db.prepare<[string, number, string], number>('SELECT 1 FROM leases WHERE subscription_id = ? AND expires_at = ? AND lease = ?').pluck(),
    setLeaseUnits: db.prepare<[number, string, number, string]>('UPDATE leases SET units = ? WHERE subscription_id = ? AND expires_at = ? AND lease = ?'),
    deleteLease: db.prepare<[string, number, string]>('DELETE FROM leases WHERE subscription_id = ? AND expires_at = ? AND lease = ?'),
    expiredLeases: db.prepare<[string, number], { lease: string; units: number; product: ProductId; period: string; day: string }>(
      'SELECT lease, units, product, period, day FROM leases WHERE subscription_id = ? AND expires_at <= ?',
    ),
    deleteExpiredLeases: db.prepare<[string, number]>('DELETE FROM leases WHERE subscription_id = ? AND expires_at <= ?'),
    anyLeaseExpired: db.prepare<[number], number>('SELECT 1 FROM leases WHERE expires_at <= ? LIMIT 1').pluck(),
    subscriptionsWithExpiredLeases: db.prepare<[number], string>('SELECT DISTINCT subscription_id FROM leases WHERE expires_at <= ?').pluck(),

    addUsage: db.prepare<[string, string, string, number]>(
      `INSERT INTO usage (subscription_id, product, day, lookups) VALUES (?, ?, ?, ?)
       ON CONFLICT (subscription_id, product, day) DO UPDATE SET lookups = lookups + excluded.lookups`,
    ),
    subtractUsage: db.prepare<[number, string, string, string]>(
      'UPDATE usage SET lookups = max(0, lookups - ?) WHERE subscription_id = ? AND product = ? AND day = ? AND lookups > 0',
    ),
    // History plus each subscription's live day; a day present in both (only right after an
    // upgrade from schema 1, whose history already holds today) is summed.
    usageInPeriod: db.prepare<[string | null, string | null], UsageRow>(
      `SELECT subscription_id AS subscriptionId, product, day, SUM(lookups) AS lookups FROM (
         SELECT subscription_id, product, day, lookups FROM usage
         UNION ALL
         SELECT subscription_id, substr(counter, ${USAGE_COUNTER_PREFIX.length + 1}), period, count
         FROM live_counters WHERE counter LIKE '${USAGE_COUNTER_PREFIX}%'
       ) WHERE ? IS NULL OR substr(day, 1, 7) = ?
       GROUP BY subscription_id, product, day`,
    ),

    setting: db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck(),
    insertSettingIfAbsent: db.prepare<[string, string]>('INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)'),
    saveSetting: db.prepare<[string, string]>('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
  };
}

function toKeyInfo(row: KeyRow): KeyInfo {
  return {
    id: String(row.id),
    subscriptionId: String(row.subscriptionId),
    product: row.product,
    kind: row.kind,
    status: row.status,
    prefix: row.prefix,
    plan: row.plan,
    ipAllow: JSON.parse(row.ipAllow) as string[],
    createdAt: row.createdAt,
  };
}
