/**
 * A Meter on Redis, shared by every seclookup instance that points at the same Redis: keys,
 * plans, settings, rate windows, monthly quotas and usage all live there, so limits hold
 * across instances. The rules are the other stores' (src/metering/store-logic.ts); the
 * atomic step is one Lua script per call (scripts.ts beside this file).
 *
 * Key layout (prefix `seclookup:` by default). Admin records share the hash tag `{admin}`,
 * one subscription's counters the tag `{sub:<id>}`, so every script touches one Cluster slot:
 *
 *   {admin}:plans      hash  `<slug>|<product>` -> plan row (JSON)
 *   {admin}:subs       hash  subscription id -> { product, plan, ipAllow, createdAt }
 *   {admin}:keys       hash  key id -> { subscriptionId, kind, prefix, createdAt }
 *   {admin}:hashes     hash  SHA-256 of the key (hex) -> key id; the key itself is never stored
 *   {admin}:revoked    set   revoked key ids
 *   {admin}:seq        hash  last subscription and key id
 *   {admin}:settings   hash  name -> value
 *   {sub:<id>}:rate:<key id>  hash  w (minute index), n (hits)       expires after its minute
 *   {sub:<id>}:quota          hash  p (YYYYMM), n (reserved)         expires after its month
 *   {sub:<id>}:usage          hash  `<YYYY-MM-DD>|<product>` -> billed lookups, expires
 *                                   `usageRetentionDays` after the last one
 *   {sub:<id>}:leases         zset  `<id>|<units>|<YYYYMM>|<day>|<product>` by expiry (ms):
 *                                   reservations not yet committed or refunded
 *
 * A commit costs no round trip of its own: the next script call on its subscription carries it,
 * or a settle call within `commitDelayMs` (commits.ts).
 */
import { randomBytes } from 'node:crypto';
import { SeclookupError, invalidOption } from '../../errors.js';
import { quotaPeriod, quotaPeriodResetAt, rateWindow, usageDay } from '../../lib/calendar.js';
import { DEFAULT_PLANS, resolvePlan } from '../plans.js';
import {
  assertStorablePlan,
  assertValidPeriod,
  checkLeaseMs,
  compareIds,
  DEFAULT_LEASE_MS,
  comparePlans,
  compareUsageRows,
  decideConsume,
  duplicateKeyError,
  looksLikeKeyHash,
  looksLikeStoredId,
  noSubscriptionError,
  snapshotQuota,
  validateNewKeys,
  validateSubscription,
  validateSubscriptionChanges,
  type QuotaEntry,
  type RateEntry,
} from '../store-logic.js';
import type { ProductId } from '../../products/catalog.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  CreatedSubscription,
  KeyInfo,
  KeyKind,
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
import {
  closeConnection,
  loadScripts,
  openConnection,
  runScript,
  toStoreError,
  whenReady,
  type LuaScript,
  type RedisClient,
  type RedisConnectionOptions,
} from './client.js';
import { PendingCommits } from './commits.js';
import { ADD_KEYS, CONSUME, METER_SCRIPTS, RECLAIM, REFUND, RESOLVE, REVOKE, SEED_PLANS, SETTLE_LEASES, SETTLE_MANY, UPDATE_SUBSCRIPTION } from './scripts.js';

export interface RedisMeterOptions extends RedisConnectionOptions {
  /** Prefix of every Redis key of the meter (several deployments can share one Redis). @default 'seclookup:' */
  prefix?: string;
  /** The plan table seeded into a Redis that holds none. @default DEFAULT_PLANS */
  plans?: readonly Plan[];
  /**
   * How long a resolved key (and its plan) is answered from this process's memory, in ms. A key
   * revoked or a plan changed on another instance takes effect here within this bound; 0 asks
   * Redis on every request (one more round trip each). Changes made through this meter take
   * effect here at once.
   * @default 1000
   */
  keyCacheMs?: number;
  /** Days a subscription's usage history is kept after its last billed lookup. @default 400 */
  usageRetentionDays?: number;
  /**
   * How long a reservation is held before it is given back unless committed, in ms: what an
   * instance killed in the middle of lookups leaves billed, for at most this long. Longer than
   * any lookup takes. @default 60000
   */
  leaseMs?: number;
  /**
   * Longest wait before a commit that no other call on its subscription carried is sent on its
   * own (one script call for all of them on a single Redis, one per subscription on a Cluster), in ms; less than `leaseMs`. Commits ride on
   * the next consume of their subscription (or refund, quota, usage) in the same script call,
   * so a busy subscription's requests cost one round trip each. A `kill -9` loses the commits
   * of its last `commitDelayMs` (those answers go unbilled once their leases expire; never
   * over-billed); `close()` sends them. A commit that fails is sent again after a back-off
   * until it lands or its lease has run out. @default 5
   */
  commitDelayMs?: number;
  /** Clock of `usage()`, which gives expired leases back first (the other calls take `now`), and of a failing commit's retries. @default Date.now */
  now?: () => number;
}

export const DEFAULT_KEY_CACHE_MS = 1_000;
export const DEFAULT_USAGE_RETENTION_DAYS = 400;
export const DEFAULT_COMMIT_DELAY_MS = 5;

/** Times `updateSubscription` reads a record again when another change landed in between, before it gives up. */
const UPDATE_ATTEMPTS = 5;

/** Resolved keys kept at most (unknown hashes included); the cache is emptied when full. */
const KEY_CACHE_SIZE = 10_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** A rate window lives one minute past its end, a quota month one day past its end: room for clock skew between instances. */
const RATE_TTL_SLACK_MS = MINUTE_MS;
const QUOTA_TTL_SLACK_MS = DAY_MS;
/** The leases of a subscription live this long past the last lease's own expiry. */
const LEASES_TTL_SLACK_MS = MINUTE_MS;
/** The expiry a refunded quota key gets if it had lost its own. */
const QUOTA_FALLBACK_TTL_MS = 32 * DAY_MS;

/** What consume's script answers: the counters before the call, then its verdict. */
type ConsumeReply = [string | null, string | null, string | null, string | null, number];
const VERDICT_ADMITTED = 1;
const VERDICT_RATE_LIMITED = 2;
const VERDICT_OVER_QUOTA = 3;

interface SubscriptionRecord {
  product: ProductId;
  plan: string;
  ipAllow: string[];
  createdAt: string;
}

interface KeyRecord {
  subscriptionId: string;
  kind: KeyKind;
  prefix: string;
  createdAt: string;
}

/**
 * Open a Meter on Redis from a `redis://host:port/db` URL (its own connection, closed by
 * `close()`) or an ioredis client (shared; `close()` leaves it open). Returns at once; the
 * first call waits for the connection (at most the command timeout), loads the scripts and
 * seeds `options.plans` into a Redis that holds no plans; so does the first call after every
 * reconnection.
 *
 * Hot path: `resolveKey` answers from memory for `keyCacheMs`, and `consume` is one EVALSHA,
 * so a request costs one round trip. Every Redis failure rejects with store_failed; the
 * connection reconnects by itself, and the same meter works again once Redis is back.
 *
 * @example
 * const meter = createRedisMeter('redis://127.0.0.1:6379/0');
 * const api = createApi({ meter, onMeterError: 'deny' });
 */
export function createRedisMeter(urlOrClient: string | RedisClient, options: RedisMeterOptions = {}): Meter {
  const prefix = options.prefix ?? 'seclookup:';
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) throw invalidOption('the Redis key prefix must be a string without { or }');
  const seedPlans = options.plans ?? DEFAULT_PLANS;
  seedPlans.forEach(assertStorablePlan);
  const keyCacheMs = options.keyCacheMs ?? DEFAULT_KEY_CACHE_MS;
  if (!Number.isSafeInteger(keyCacheMs) || keyCacheMs < 0)
    throw invalidOption(`keyCacheMs must be a whole number of milliseconds, 0 or more (got ${String(keyCacheMs)})`);
  const retentionDays = options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS;
  if (!Number.isSafeInteger(retentionDays) || retentionDays < 1)
    throw invalidOption(`usageRetentionDays must be a positive whole number (got ${String(retentionDays)})`);
  const usageTtlMs = retentionDays * DAY_MS;
  const leaseMs = checkLeaseMs(options.leaseMs ?? DEFAULT_LEASE_MS);
  const commitDelayMs = options.commitDelayMs ?? DEFAULT_COMMIT_DELAY_MS;
  if (!Number.isSafeInteger(commitDelayMs) || commitDelayMs < 0 || commitDelayMs >= leaseMs)
    throw invalidOption(`commitDelayMs must be a whole number of milliseconds, 0 or more and less than leaseMs (got ${String(commitDelayMs)})`);
  const clock = options.now ?? Date.now;
  // Lease ids: this meter's random tag and a counter, unique among every instance on the Redis.
  const leaseTag = randomBytes(6).toString('base64url');
  let lastLease = 0;

  const connection = openConnection(urlOrClient, options);
  const { client } = connection;
  const admin = {
    plans: `${prefix}{admin}:plans`,
    subs: `${prefix}{admin}:subs`,
    keys: `${prefix}{admin}:keys`,
    hashes: `${prefix}{admin}:hashes`,
    revoked: `${prefix}{admin}:revoked`,
    seq: `${prefix}{admin}:seq`,
    settings: `${prefix}{admin}:settings`,
  };
  const subscriptionTag = (subscriptionId: string) => `${prefix}{sub:${subscriptionId}}`;
  const keyCache = new ResolvedKeyCache(keyCacheMs);
  let closed = false;
  let initialised = false;
  let initialising: Promise<void> | null = null;
  // After a reconnection, the next call loads the scripts again (a restarted Redis lost them;
  // EVAL on NOSCRIPT covers the calls already on their way) and seeds the plans if Redis came
  // back empty.
  const onReconnect = () => {
    if (!initialised) return;
    initialised = false;
    initialising = null;
  };
  client.on('ready', onReconnect);

  /** Connect, load the scripts and seed the plans: once per meter, retried after a failure. */
  function init(): Promise<void> {
    initialising ??= (async () => {
      await whenReady(connection);
      await loadScripts(client, METER_SCRIPTS);
      await runScript(
        client,
        SEED_PLANS,
        [admin.plans],
        seedPlans.flatMap((plan) => [planField(plan.slug, plan.product), planRow(plan)]),
      );
      initialised = true;
    })().catch((error: unknown) => {
      initialising = null;
      throw toStoreError(error, 'connect', connection.commandTimeoutMs);
    });
    return initialising;
  }

  /** Run `work` on Redis: rejects with store_failed when closed, and turns Redis failures into store_failed. */
  async function redis<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (closed) throw closedError();
    return redisEvenClosing(what, work);
  }

  /** `redis` for what close() still sends (the pending commits). */
  async function redisEvenClosing<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (!initialised) await init();
    else if (client.status !== 'ready')
      await whenReady(connection).catch((error: unknown) => Promise.reject(toStoreError(error, what, connection.commandTimeoutMs)));
    try {
      return await work();
    } catch (error) {
      throw toStoreError(error, what, connection.commandTimeoutMs);
    }
  }

  const script = (s: LuaScript, keys: string[], args: (string | number)[]) => runScript(client, s, keys, args);

  const isCluster = (client as { isCluster?: boolean }).isCluster === true;
  const commits = new PendingCommits({
    delayMs: commitDelayMs,
    giveUpAfterMs: leaseMs,
    flush: (subscriptionId, leases) => redisEvenClosing('commit', () => script(SETTLE_LEASES, [`${subscriptionTag(subscriptionId)}:leases`], leases)),
    // A single Redis takes every subscription's commits in one call; a Cluster one slot per script.
    flushMany: isCluster
      ? undefined
      : (batch) =>
          redisEvenClosing('commit', () =>
            script(
              SETTLE_MANY,
              batch.map(([subscriptionId]) => `${subscriptionTag(subscriptionId)}:leases`),
              batch.flatMap(([, leases]) => [leases.length, ...leases]),
            ),
          ),
    // Sent again after a back-off; only what is still failing when its lease runs out (or at close) is dropped, to expire unbilled.
    onError: (error, dropped) => {
      const failure = toStoreError(error, 'commit', connection.commandTimeoutMs);
      const said =
        dropped > 0 ? new SeclookupError('store_failed', `${failure.message} (${dropped} commit(s) dropped: their leases run out unbilled)`) : failure;
      options.onError?.(said);
    },
    now: clock,
  });

  /** Run a script call that carries the subscription's pending commits; on failure they are pending again. */
  function carrying(subscriptionId: string, send: (carried: string[]) => Promise<unknown>): Promise<unknown> {
    const carried = commits.take(subscriptionId);
    if (carried.length === 0) return send(carried);
    return send(carried).catch((error: unknown) => {
      commits.putBack(subscriptionId, carried);
      throw error;
    });
  }

  async function plansWithSlug(slug: string): Promise<Plan[]> {
    const rows = await redis('read plans', () => client.hgetall(admin.plans));
    return Object.values(rows)
      .map(parsePlan)
      .filter((plan) => plan.slug === slug);
  }

  /** Store keys for a new subscription (`sub`) or an existing one (`existingId`). */
  async function storeKeys(
    sub: SubscriptionRecord | null,
    existingId: string,
    keys: readonly NewKey[],
    createdAt: string,
  ): Promise<{ subscriptionId: string; keys: KeyInfo[] }> {
    const args: string[] = [sub ? JSON.stringify(sub) : '', existingId];
    for (const key of keys) {
      const record = JSON.stringify({ kind: key.kind, prefix: key.prefix, createdAt });
      args.push(key.hash, record.slice(1));
    }
    const reply = (await redis('store keys', () => script(ADD_KEYS, [admin.hashes, admin.keys, admin.subs, admin.seq], args))) as string[];
    keyCache.clear();
    if (reply[0] === 'no_subscription') throw invalidOption(`no subscription ${JSON.stringify(existingId)}`);
    if (reply[0] === 'duplicate') throw duplicateKeyError();
    if (reply[0] !== 'ok') throw new SeclookupError('store_failed', 'redis store keys: unexpected reply');
    const [, subscriptionId, subJson, ...ids] = reply;
    const record = parseRecord<SubscriptionRecord>(subJson);
    return {
      subscriptionId,
      keys: keys.map((key, i) => toKeyInfo(ids[i], { subscriptionId, kind: key.kind, prefix: key.prefix, createdAt }, record, false)),
    };
  }

  async function fetchKey(hash: string): Promise<ResolvedKey | null> {
    const reply = (await redis('resolve key', () => script(RESOLVE, [admin.hashes, admin.keys, admin.subs, admin.plans, admin.revoked], [hash]))) as
      | [string, string, string, string | null, string | null, number]
      | null;
    if (!reply) return null;
    const [id, keyJson, subJson, productRow, anyRow, revoked] = reply;
    const key = parseRecord<KeyRecord>(keyJson);
    const sub = parseRecord<SubscriptionRecord>(subJson);
    const rows = [productRow, anyRow].filter((row): row is string => row !== null).map(parsePlan);
    return {
      id,
      subscriptionId: key.subscriptionId,
      product: sub.product,
      kind: key.kind,
      status: revoked === 1 ? 'revoked' : 'active',
      ipAllow: sub.ipAllow,
      plan: resolvePlan(rows, sub.plan, sub.product),
    };
  }

  /** The consume script's call: the key's window, the subscription's month and usage, and the rule's numbers. */
  function sendConsume(request: ConsumeRequest, leaseId: string): Promise<unknown> {
    return carrying(request.subscriptionId, (carried) => sendConsumeCarrying(request, leaseId, carried));
  }

  function sendConsumeCarrying(request: ConsumeRequest, leaseId: string, carried: string[]): Promise<unknown> {
    const calendar = calendarOf(request.now);
    const window = rateWindow(request.now);
    const tag = subscriptionTag(request.subscriptionId);
    return script(
      CONSUME,
      [`${tag}:rate:${request.keyId}`, `${tag}:quota`, `${tag}:usage`, `${tag}:leases`],
      [
        window,
        request.rateLimitPerMinute,
        (window + 1) * MINUTE_MS - request.now + RATE_TTL_SLACK_MS,
        request.reserveQuota ? '1' : '0',
        calendar.periodNumber,
        request.monthlyQuota ?? -1,
        calendar.monthEnd - request.now + QUOTA_TTL_SLACK_MS,
        usageField(calendar.day, request.product),
        usageTtlMs,
        request.rateUnits ?? 1,
        request.quotaUnits ?? 1,
        request.now,
        request.now + leaseMs,
        leaseId,
        leaseMs + LEASES_TTL_SLACK_MS,
        ...carried,
      ],
    );
  }

  /**
   * The outcome is the shared rule applied to the counters the script saw, so it is the memory
   * and SQLite stores' answer to the letter; the script applied the same rule to decide.
   */
  function consumeOutcome(request: ConsumeRequest, leaseId: string, reply: unknown): ConsumeOutcome {
    const [storedWindow, storedHits, storedPeriod, storedUsed, verdict] = reply as ConsumeReply;
    const rate: RateEntry | undefined = storedWindow === null ? undefined : { window: Number(storedWindow), hits: Number(storedHits ?? 0) };
    const quota: QuotaEntry | undefined = storedPeriod === null ? undefined : { period: periodText(Number(storedPeriod)), used: Number(storedUsed ?? 0) };
    const { outcome } = decideConsume(request, rate, quota);
    // The lease as the script named it: the same month and usage field decideConsume chose.
    if (outcome.allowed && outcome.reservation) {
      const { reservation } = outcome;
      reservation.lease = `${leaseId}|${reservation.units ?? 1}|${periodNumber(reservation.period)}|${usageField(reservation.day, reservation.product)}`;
    }
    const expected = outcome.allowed ? VERDICT_ADMITTED : outcome.reason === 'rate_limit_exceeded' ? VERDICT_RATE_LIMITED : VERDICT_OVER_QUOTA;
    if (verdict !== expected) throw new SeclookupError('store_failed', 'redis consume: the script and the metering rules disagree');
    return outcome;
  }

  /** Give back the subscription's leases expired by `now`; answers its quota month as [YYYYMM, used]. */
  function reclaim(subscriptionId: string, now: number): Promise<unknown> {
    const tag = subscriptionTag(subscriptionId);
    return carrying(subscriptionId, (carried) =>
      script(RECLAIM, [`${tag}:quota`, `${tag}:usage`, `${tag}:leases`], [now, QUOTA_FALLBACK_TTL_MS, usageTtlMs, ...carried]),
    );
  }

  const consumeFailed = (error: unknown) => Promise.reject(toStoreError(error, 'consume', connection.commandTimeoutMs));

  async function revokeOnce(idOrHash: string): Promise<KeyInfo | null> {
    const byHash = looksLikeKeyHash(idOrHash);
    if (!byHash && !/^[1-9]\d*$/.test(idOrHash)) return null;
    const reply = (await redis('revoke key', () =>
      script(REVOKE, [admin.hashes, admin.keys, admin.subs, admin.revoked], byHash ? ['', idOrHash] : [idOrHash, '']),
    )) as [string, string, string | null] | null;
    keyCache.clear();
    if (!reply) return null;
    const [id, keyJson, subJson] = reply;
    if (subJson === null) throw new SeclookupError('store_failed', 'redis revoke key: the key has no subscription record');
    return toKeyInfo(id, parseRecord<KeyRecord>(keyJson), parseRecord<SubscriptionRecord>(subJson), true);
  }

  /** Every key, oldest first, read in one transaction (keys, subscriptions and revocations agree). */
  async function allKeys(): Promise<KeyInfo[]> {
    const replies = await redis('list keys', async () => {
      const results = await client.multi().hgetall(admin.keys).hgetall(admin.subs).smembers(admin.revoked).exec();
      if (!results) throw new Error('transaction aborted');
      for (const [error] of results) if (error) throw error;
      return results.map(([, value]) => value) as [Record<string, string>, Record<string, string>, string[]];
    });
    const [keys, subs, revokedIds] = replies;
    const revoked = new Set(revokedIds);
    return Object.entries(keys)
      .sort(([a], [b]) => compareIds(a, b))
      .map(([id, json]) => {
        const key = parseRecord<KeyRecord>(json);
        const sub = subs[key.subscriptionId];
        if (sub === undefined) throw new SeclookupError('store_failed', 'redis list keys: a key has no subscription record');
        return toKeyInfo(id, key, parseRecord<SubscriptionRecord>(sub), revoked.has(id));
      });
  }

  /**
   * Read the subscription, check the changes against it and write it back if nobody changed it
   * meanwhile (UPDATE_SUBSCRIPTION): true once written, false when another change came first.
   */
  async function updateOnce(subscriptionId: string, changes: SubscriptionChanges): Promise<boolean> {
    const read = await redis('read subscription', () => client.hget(admin.subs, subscriptionId));
    if (read === null) throw noSubscriptionError(subscriptionId);
    const sub = parseRecord<SubscriptionRecord>(read);
    // Plans are never deleted, so one that resolves now still does when the script runs.
    const plans = typeof changes?.plan === 'string' ? await plansWithSlug(changes.plan) : [];
    const valid = validateSubscriptionChanges(changes, sub.product, () => plans);
    const updated = JSON.stringify({ ...sub, ...valid });
    const replied = await redis('update subscription', () => script(UPDATE_SUBSCRIPTION, [admin.subs], [subscriptionId, read, updated]));
    if (replied === -1) throw noSubscriptionError(subscriptionId);
    return replied === 1;
  }

  const rejectClosed = () => Promise.reject(closedError());

  return {
    resolveKey(hash: string) {
      if (closed) return rejectClosed();
      const cached = keyCache.get(hash);
      if (cached !== undefined) return cached;
      return keyCache.load(hash, fetchKey);
    },

    consume(request: ConsumeRequest) {
      if (closed) return rejectClosed();
      const leaseId = `${leaseTag}${(++lastLease).toString(36)}`;
      // The hot path: one EVALSHA, no other promise than its own.
      if (initialised && client.status === 'ready')
        return sendConsume(request, leaseId).then((reply) => consumeOutcome(request, leaseId, reply), consumeFailed);
      return redis('consume', () => sendConsume(request, leaseId)).then((reply) => consumeOutcome(request, leaseId, reply));
    },

    async refund(reservation: Reservation): Promise<void> {
      const tag = subscriptionTag(reservation.subscriptionId);
      // Carries the pending commits, so a lease committed here is ended before this refund looks.
      await redis('refund', () =>
        carrying(reservation.subscriptionId, (carried) =>
          script(
            REFUND,
            [`${tag}:quota`, `${tag}:usage`, `${tag}:leases`],
            [reservation.lease, reservation.units ?? 1, QUOTA_FALLBACK_TTL_MS, usageTtlMs, ...carried],
          ),
        ),
      );
    },

    commit(reservation: Reservation) {
      if (closed) return rejectClosed();
      // The units are already counted, only the lease ends: with the next call on the subscription, or soon.
      commits.add(reservation.subscriptionId, reservation.lease);
    },

    async quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState> {
      const [period, used] = (await redis('read quota', () => reclaim(subscriptionId, now))) as [string | null, string | null];
      const stored = period === null ? undefined : { period: periodText(Number(period)), used: Number(used ?? 0) };
      return snapshotQuota(stored, monthlyQuota, now);
    },

    async createSubscription(input: NewSubscription): Promise<CreatedSubscription> {
      if (closed) throw closedError();
      const plans = await plansWithSlug(typeof input.plan === 'string' ? input.plan : '');
      const ipAllow = validateSubscription(input, () => plans);
      const createdAt = new Date().toISOString();
      return storeKeys({ product: input.product, plan: input.plan, ipAllow, createdAt }, '', input.keys, createdAt);
    },

    async addKeys(subscriptionId: string, newKeys: NewKey[]): Promise<KeyInfo[]> {
      if (closed) throw closedError();
      validateNewKeys(newKeys);
      if (typeof subscriptionId !== 'string' || !/^[1-9]\d*$/.test(subscriptionId)) throw invalidOption(`no subscription ${JSON.stringify(subscriptionId)}`);
      return (await storeKeys(null, subscriptionId, newKeys, new Date().toISOString())).keys;
    },

    async listKeys(): Promise<KeyInfo[]> {
      return allKeys();
    },

    async updateSubscription(subscriptionId: string, changes: SubscriptionChanges): Promise<KeyInfo[]> {
      if (closed) throw closedError();
      if (!looksLikeStoredId(subscriptionId)) throw noSubscriptionError(subscriptionId);
      try {
        for (let attempt = 1; !(await updateOnce(subscriptionId, changes)); attempt++) {
          if (attempt === UPDATE_ATTEMPTS)
            throw new SeclookupError('store_failed', `redis update subscription: subscription ${subscriptionId} kept changing; try again`);
        }
      } finally {
        // As revokeKey: at once here; other instances within keyCacheMs, when their entry expires.
        keyCache.clear();
      }
      return (await allKeys()).filter((key) => key.subscriptionId === subscriptionId);
    },

    async revokeKey(idOrHash: string): Promise<KeyInfo | null> {
      if (closed) throw closedError();
      return revokeOnce(String(idOrHash));
    },

    async setPlan(plan: Plan): Promise<void> {
      if (closed) throw closedError();
      assertStorablePlan(plan);
      await redis('save plan', () => client.hset(admin.plans, planField(plan.slug, plan.product), planRow(plan)));
      keyCache.clear();
    },

    async listPlans(): Promise<Plan[]> {
      const rows = await redis('read plans', () => client.hgetall(admin.plans));
      return Object.values(rows).map(parsePlan).sort(comparePlans);
    },

    async usage(period?: string): Promise<UsageRow[]> {
      if (closed) throw closedError();
      if (period !== undefined) assertValidPeriod(period);
      // This instance's answered lookups count at once, not within commitDelayMs.
      await commits.flushAll();
      const now = clock();
      const perSubscription = await redis('read usage', async () => {
        const ids = await client.hkeys(admin.subs);
        return Promise.all(
          ids.map(async (id) => {
            await reclaim(id, now);
            return [id, await client.hgetall(`${subscriptionTag(id)}:usage`)] as const;
          }),
        );
      });
      const rows: UsageRow[] = [];
      for (const [subscriptionId, fields] of perSubscription) {
        for (const [field, lookups] of Object.entries(fields)) {
          const [day, product] = field.split('|') as [string, ProductId];
          if (period === undefined || day.startsWith(`${period}-`)) rows.push({ subscriptionId, product, day, lookups: Number(lookups) });
        }
      }
      return rows.sort(compareUsageRows);
    },

    async getSetting(name: string): Promise<string | null> {
      return redis('read setting', () => client.hget(admin.settings, name));
    },

    async setSettingIfAbsent(name: string, value: string): Promise<string> {
      // HSETNX is atomic; the read after it sees this value or the one stored first.
      return redis('save setting', async () => {
        await client.hsetnx(admin.settings, name, value);
        return (await client.hget(admin.settings, name))!;
      });
    },

    async setSetting(name: string, value: string): Promise<void> {
      await redis('save setting', () => client.hset(admin.settings, name, value));
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      keyCache.clear();
      await commits.close();
      client.off('ready', onReconnect);
      await closeConnection(connection);
    },
  };
}

function closedError(): SeclookupError {
  return new SeclookupError('store_failed', 'meter is closed');
}

/**
 * Resolved keys (and unknown hashes, as null) answered from memory for `ttlMs`. An entry's life
 * starts when its Redis read started, so a change committed in Redis is seen by every read
 * that starts `ttlMs` after it, whatever the reads in flight. Concurrent misses for one hash
 * share one read. `clear()` (this process's own admin writes) also discards reads in flight.
 */
class ResolvedKeyCache {
  private readonly entries = new Map<string, { key: ResolvedKey | null; until: number }>();
  private readonly loading = new Map<string, Promise<ResolvedKey | null>>();
  private generation = 0;

  constructor(private readonly ttlMs: number) {}

  /** The cached answer (null: no such key), or undefined when there is none or it is stale. */
  get(hash: string): ResolvedKey | null | undefined {
    const entry = this.entries.get(hash);
    if (entry === undefined) return undefined;
    if (entry.until > performance.now()) return entry.key;
    this.entries.delete(hash);
    return undefined;
  }

  load(hash: string, fetch: (hash: string) => Promise<ResolvedKey | null>): Promise<ResolvedKey | null> {
    const pending = this.loading.get(hash);
    if (pending) return pending;
    const started = performance.now();
    const generation = this.generation;
    const promise = fetch(hash).then(
      (key) => {
        if (this.loading.get(hash) === promise) this.loading.delete(hash);
        if (this.ttlMs > 0 && generation === this.generation) {
          if (this.entries.size >= KEY_CACHE_SIZE) this.entries.clear();
          this.entries.set(hash, { key, until: started + this.ttlMs });
        }
        return key;
      },
      (error: unknown) => {
        if (this.loading.get(hash) === promise) this.loading.delete(hash);
        throw error;
      },
    );
    this.loading.set(hash, promise);
    return promise;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }
}

/** The day, month and month end of `now`, computed once per UTC day (calendar.ts does the arithmetic). */
interface CalendarDay {
  start: number;
  day: string;
  periodNumber: number;
  monthEnd: number;
}
let calendarCache: CalendarDay | null = null;

function calendarOf(now: number): CalendarDay {
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  if (calendarCache?.start !== start) {
    calendarCache = { start, day: usageDay(now), periodNumber: periodNumber(quotaPeriod(now)), monthEnd: quotaPeriodResetAt(now) * 1000 };
  }
  return calendarCache;
}

/** `YYYY-MM` as the number YYYYMM, which orders months as numbers inside the script. */
function periodNumber(period: string): number {
  return Number(period.slice(0, 4)) * 100 + Number(period.slice(5, 7));
}

function periodText(yyyymm: number): string {
  return `${String(Math.floor(yyyymm / 100)).padStart(4, '0')}-${String(yyyymm % 100).padStart(2, '0')}`;
}

function usageField(day: string, product: ProductId): string {
  return `${day}|${product}`;
}

function planField(slug: string, product: string): string {
  return `${slug}|${product}`;
}

function planRow(plan: Plan): string {
  return JSON.stringify({ slug: plan.slug, product: plan.product, rateLimitPerMinute: plan.rateLimitPerMinute, monthlyQuota: plan.monthlyQuota });
}

function parsePlan(json: string): Plan {
  const row = parseRecord<Plan>(json);
  return { slug: row.slug, product: row.product, rateLimitPerMinute: row.rateLimitPerMinute, monthlyQuota: row.monthlyQuota };
}

function parseRecord<T>(json: string): T {
  try {
    return JSON.parse(json) as T;
  } catch {
    throw new SeclookupError('store_failed', 'redis holds a metering record that is not JSON');
  }
}

function toKeyInfo(id: string, key: KeyRecord, sub: SubscriptionRecord, revoked: boolean): KeyInfo {
  return {
    id,
    subscriptionId: key.subscriptionId,
    product: sub.product,
    kind: key.kind,
    status: revoked ? 'revoked' : 'active',
    prefix: key.prefix,
    plan: sub.plan,
    ipAllow: [...sub.ipAllow],
    createdAt: key.createdAt,
  };
}
