/**
 * A Meter on one SQLite file (better-sqlite3), shared safely by several processes on one host,
 * e.g. the CLI issuing keys while `serve` answers requests. This is the only module that loads
 * better-sqlite3, and it is published on its own subpath (`seclookup/sqlite`).
 */
import Database from 'better-sqlite3';
import { DEFAULT_PLANS, resolvePlan } from './plans.js';
import {
  assertStorablePlan,
  assertValidPeriod,
  comparePlans,
  compareUsageRows,
  decideConsume,
  duplicateKeyError,
  looksLikeKeyHash,
  refundEntry,
  snapshotQuota,
  usageAfter,
  usageRowId,
  validateSubscription,
  type QuotaEntry,
  type RateEntry,
} from './store-logic.js';
import type { ProductId } from '../products/catalog.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  CreatedSubscription,
  KeyInfo,
  KeyKind,
  KeyStatus,
  Meter,
  NewSubscription,
  Plan,
  QuotaState,
  Reservation,
  ResolvedKey,
  UsageRow,
} from './types.js';

export type { Meter } from './types.js';

export interface SqliteMeterOptions {
  /** The plan table seeded into a database whose plans table is empty. @default DEFAULT_PLANS */
  plans?: readonly Plan[];
}

/** Bumped with every schema change; `migrate` brings older files up to it. */
const SCHEMA_VERSION = 1;

/** How long a call waits for another process's write lock before failing. */
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
  const db = openDatabase(path, seedPlans);
  const sql = prepareStatements(db);

  function ensureOpen(): void {
    if (!db.open) throw new Error(`metering database "${path}" is closed`);
  }

  function plansFor(slug: string): Plan[] {
    return sql.plansBySlug.all(slug);
  }

  const counters = createCounterRows(sql);
  const writes = new GroupCommit(db, counters);
  const resolvedKeys = createResolvedKeyCache(db);

  function consumeOnce(request: ConsumeRequest): ConsumeOutcome {
    const decision = decideConsume(request, counters.rates.get(request.keyId), counters.quotas.get(request.subscriptionId));
    if (decision.rate) counters.rates.set(request.keyId, decision.rate);
    if (decision.quota) counters.quotas.set(request.subscriptionId, decision.quota);
    const reservation = decision.outcome.allowed ? decision.outcome.reservation : null;
    if (reservation) addUsage(reservation, 1);
    return decision.outcome;
  }

  function refundOnce(reservation: Reservation): void {
    const stored = counters.quotas.get(reservation.subscriptionId);
    const refunded = refundEntry(stored, reservation.period);
    if (refunded && refunded !== stored) counters.quotas.set(reservation.subscriptionId, refunded);
    addUsage(reservation, -1);
  }

  function addUsage(reservation: Reservation, delta: 1 | -1): void {
    const id = usageRowId(reservation);
    const row = usageAfter(counters.usage.get(id), reservation, delta);
    if (row) counters.usage.set(id, row);
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

  const revokeOnce = db.transaction((idOrHash: string): KeyInfo | null => {
    const row = looksLikeKeyHash(idOrHash) ? sql.keyByHash.get(idOrHash) : /^[1-9]\d*$/.test(idOrHash) ? sql.keyById.get(idOrHash) : undefined;
    if (!row) return null;
    sql.revoke.run(row.id);
    return toKeyInfo({ ...row, status: 'revoked' });
  });

  return {
    async resolveKey(hash: string): Promise<ResolvedKey | null> {
      ensureOpen();
      const cached = resolvedKeys.get(hash);
      if (cached) return cached;
      const row = sql.keyByHash.get(hash);
      if (!row) return null;
      const info = toKeyInfo(row);
      const plan = resolvePlan(plansFor(info.plan), info.plan, info.product);
      const key: ResolvedKey = { id: info.id, subscriptionId: info.subscriptionId, product: info.product, kind: info.kind, status: info.status, ipAllow: info.ipAllow, plan };
      resolvedKeys.set(hash, key);
      return key;
    },

    async consume(request: ConsumeRequest): Promise<ConsumeOutcome> {
      ensureOpen();
      return writes.enqueue(() => consumeOnce(request));
    },

    async refund(reservation: Reservation): Promise<void> {
      ensureOpen();
      await writes.enqueue(() => refundOnce(reservation));
    },

    async quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState> {
      ensureOpen();
      return snapshotQuota(sql.quotaBySubscription.get(subscriptionId), monthlyQuota, now);
    },

    async createSubscription(input: NewSubscription): Promise<CreatedSubscription> {
      ensureOpen();
      return createSubscriptionOnce.immediate(input);
    },

    async listKeys(): Promise<KeyInfo[]> {
      ensureOpen();
      return sql.allKeys.all().map(toKeyInfo);
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
      const rows = period === undefined ? sql.allUsage.all() : sql.usageInPeriod.all(period);
      return rows.sort(compareUsageRows);
    },

    async getSetting(name: string): Promise<string | null> {
      ensureOpen();
      return sql.setting.get(name) ?? null;
    },

    async setSetting(name: string, value: string): Promise<void> {
      ensureOpen();
      sql.saveSetting.run(name, value);
    },

    async close(): Promise<void> {
      if (!db.open) return;
      writes.flush();
      db.close();
    },
  };
}

/** Resolved keys kept at most; only keys that exist are cached, so this bounds nothing real. */
const RESOLVED_KEY_CACHE_SIZE = 10_000;

/**
 * Resolved keys (with their plan) kept in memory between requests. SQLite's `data_version`
 * changes whenever another connection commits, so a key revoked or a plan changed by the CLI
 * in another process is seen by every request that starts after that commit; this process's
 * own admin writes clear the cache directly. The version is read once per event-loop turn:
 * under load, a read per request cost as much as the metering transaction itself.
 */
function createResolvedKeyCache(db: Database.Database) {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const keys = new Map<string, ResolvedKey>();
  let seenVersion = dataVersion.get();
  let checkedThisTurn = false;

  function dropIfChangedElsewhere(): void {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(() => (checkedThisTurn = false));
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

/**
 * The counter rows (rate windows, quota months, daily usage) as one group transaction reads
 * and changes them: each row is read at most once and written back once, at the end of the
 * transaction, however many calls of the group touch it. A busy key's burst therefore costs
 * a handful of statements instead of five per call, with the same result as running the
 * calls one after another (the transaction holds the write lock throughout).
 */
function createCounterRows(sql: Statements) {
  const rates = new RowCache<RateEntry>((keyId) => sql.rateByKey.get(keyId), (keyId, rate) => sql.saveRate.run(keyId, rate.window, rate.hits));
  const quotas = new RowCache<QuotaEntry>(
    (subscriptionId) => sql.quotaBySubscription.get(subscriptionId),
    (subscriptionId, quota) => sql.saveQuota.run(subscriptionId, quota.period, quota.used),
  );
  const usage = new RowCache<UsageRow>(
    (id) => {
      const [subscriptionId, product, day] = id.split('\u0000');
      const lookups = sql.usageLookups.get(subscriptionId, product, day);
      return lookups === undefined ? undefined : { subscriptionId, product: product as ProductId, day, lookups };
    },
    (_id, row) => sql.saveUsage.run(row.subscriptionId, row.product, row.day, row.lookups),
  );
  const all = [rates, quotas, usage];
  return {
    rates,
    quotas,
    usage,
    /** Write every changed row; call inside the transaction, after its calls. */
    writeBack: () => all.forEach((rows) => rows.writeBack()),
    /** Forget everything read or changed: the transaction was rolled back. */
    discard: () => all.forEach((rows) => rows.discard()),
  };
}

type CounterRows = ReturnType<typeof createCounterRows>;

/** One table's rows, read through on first use and written back when changed. */
class RowCache<Row> {
  private readonly rows = new Map<string, Row | undefined>();
  private readonly changed = new Set<string>();

  constructor(
    private readonly load: (id: string) => Row | undefined,
    private readonly save: (id: string, row: Row) => unknown,
  ) {}

  get(id: string): Row | undefined {
    if (this.rows.has(id)) return this.rows.get(id);
    const row = this.load(id);
    this.rows.set(id, row);
    return row;
  }

  set(id: string, row: Row): void {
    this.rows.set(id, row);
    this.changed.add(id);
  }

  writeBack(): void {
    for (const id of this.changed) this.save(id, this.rows.get(id)!);
    this.discard();
  }

  discard(): void {
    this.rows.clear();
    this.changed.clear();
  }
}

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes per transaction at most, so one burst cannot hold the write lock for long. */
const MAX_GROUP = 512;

/** Thrown inside a group's transaction to roll it back when one of its writes failed. */
class WriteFailed extends Error {}

/**
 * Group commit for the hot writes (consume, refund). A WAL commit costs several
 * system calls (locks, frame writes), which caps one transaction per call at a few tens of
 * thousands per second. Calls made in the same event-loop turn are instead queued and run at
 * `setImmediate` in ONE `BEGIN IMMEDIATE` transaction, so:
 * - another process cannot interleave: IMMEDIATE holds the write lock for the whole group,
 *   and the lock is taken and released within one synchronous flush;
 * - no promise resolves before its write is committed (same durability as a call alone);
 * - each call stays atomic and isolated: if one write throws, the group is rolled back and
 *   its calls are re-run one transaction each, so only the failing call rejects.
 */
class GroupCommit {
  private queue: QueuedWrite[] = [];
  private readonly runGroup: Database.Transaction<(group: QueuedWrite[]) => unknown[]>;
  private readonly runOne: Database.Transaction<(write: QueuedWrite) => unknown>;

  constructor(
    db: Database.Database,
    private readonly counters: CounterRows,
  ) {
    this.runOne = db.transaction((write: QueuedWrite) => {
      const value = write.run();
      counters.writeBack();
      return value;
    });
    this.runGroup = db.transaction((group: QueuedWrite[]) => {
      const values = group.map((write) => {
        try {
          return write.run();
        } catch (error) {
          throw new WriteFailed('a grouped write failed', { cause: error });
        }
      });
      try {
        counters.writeBack();
      } catch (error) {
        throw new WriteFailed('writing a group\'s counters failed', { cause: error });
      }
      return values;
    });
  }

  enqueue<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Run and commit every queued write now. Never throws: failures reject their callers. */
  flush(): void {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      let values: unknown[];
      try {
        values = this.runGroup.immediate(group);
      } catch (error) {
        this.counters.discard();
        if (error instanceof WriteFailed) this.runAlone(group);
        // Otherwise BEGIN or COMMIT failed (busy timeout, I/O error): nothing was kept.
        else for (const write of group) write.reject(error);
        continue;
      }
      group.forEach((write, i) => write.resolve(values[i]));
    }
  }

  /** The slow path after a failed write: one transaction per call. */
  private runAlone(group: QueuedWrite[]): void {
    for (const write of group) {
      try {
        write.resolve(this.runOne.immediate(write));
      } catch (error) {
        this.counters.discard();
        write.reject(error);
      }
    }
  }
}

/** Open the file, set the pragmas, create or upgrade the schema and seed plans. */
function openDatabase(path: string, seedPlans: readonly Plan[]): Database.Database {
  let db: Database.Database | undefined;
  try {
    // `timeout` is SQLite's busy_timeout: wait for another process's lock instead of failing.
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL loses at most the last commits on power loss, never integrity.
    db.pragma('synchronous = NORMAL');
    migrate(db, seedPlans);
    return db;
  } catch (error) {
    if (db?.open) db.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open metering database "${path}": ${reason}`, { cause: error });
  }
}

/** Create or upgrade the schema in one write transaction, so concurrent first starts agree. */
function migrate(db: Database.Database, seedPlans: readonly Plan[]): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Error(`schema version ${version} is newer than this seclookup supports (${SCHEMA_VERSION})`);
    }
    if (version < 1) db.exec(SCHEMA_V1);
    if (version < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
    const planCount = db.prepare('SELECT count(*) FROM plans').pluck().get() as number;
    if (planCount === 0) {
      const insert = db.prepare('INSERT INTO plans (slug, product, rate_limit_per_minute, monthly_quota) VALUES (?, ?, ?, ?)');
      for (const plan of seedPlans) insert.run(plan.slug, plan.product, plan.rateLimitPerMinute, plan.monthlyQuota);
    }
  }).immediate();
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
    keyIdByHash: db.prepare<[string], number>('SELECT id FROM keys WHERE hash = ?').pluck(),
    keyByHash: db.prepare<[string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.hash = ?`),
    keyById: db.prepare<[number | bigint | string], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = ?`),
    allKeys: db.prepare<[], KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} ORDER BY k.id`),
    revoke: db.prepare<[number]>(`UPDATE keys SET status = 'revoked' WHERE id = ?`),

    rateByKey: db.prepare<[string], RateEntry>('SELECT window_index AS "window", hits FROM rate_windows WHERE key_id = ?'),
    saveRate: db.prepare<[string, number, number]>(
      `INSERT INTO rate_windows (key_id, window_index, hits) VALUES (?, ?, ?)
       ON CONFLICT (key_id) DO UPDATE SET window_index = excluded.window_index, hits = excluded.hits`,
    ),
    quotaBySubscription: db.prepare<[string], QuotaEntry>('SELECT period, used FROM quota_usage WHERE subscription_id = ?'),
    saveQuota: db.prepare<[string, string, number]>(
      `INSERT INTO quota_usage (subscription_id, period, used) VALUES (?, ?, ?)
       ON CONFLICT (subscription_id) DO UPDATE SET period = excluded.period, used = excluded.used`,
    ),
    usageLookups: db.prepare<[string, string, string], number>('SELECT lookups FROM usage WHERE subscription_id = ? AND product = ? AND day = ?').pluck(),
    saveUsage: db.prepare<[string, string, string, number]>(
      `INSERT INTO usage (subscription_id, product, day, lookups) VALUES (?, ?, ?, ?)
       ON CONFLICT (subscription_id, product, day) DO UPDATE SET lookups = excluded.lookups`,
    ),
    allUsage: db.prepare<[], UsageRow>('SELECT subscription_id AS subscriptionId, product, day, lookups FROM usage'),
    usageInPeriod: db.prepare<[string], UsageRow>('SELECT subscription_id AS subscriptionId, product, day, lookups FROM usage WHERE substr(day, 1, 7) = ?'),

    setting: db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck(),
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
