import type { MaybePromise } from '../lib/outcome.js';
import type { ProductId } from '../products/catalog.js';

/**
 * A plan's limits for one product, or for every product when `product` is `'*'`.
 * A product-specific row wins over the `'*'` row of the same slug.
 */
export interface Plan {
  slug: string;
  product: ProductId | '*';
  rateLimitPerMinute: number;
  /** Lookups per UTC calendar month; `null` means unlimited. */
  monthlyQuota: number | null;
}

/** The limits that apply to one key, resolved from its subscription's plan. */
export interface ResolvedPlan {
  slug: string;
  rateLimitPerMinute: number;
  monthlyQuota: number | null;
}

export type KeyKind = 'secret' | 'public';
export type KeyStatus = 'active' | 'revoked';

/** What the API needs to know about a presented key. Never holds the plaintext. */
export interface ResolvedKey {
  id: string;
  subscriptionId: string;
  product: ProductId;
  kind: KeyKind;
  status: KeyStatus;
  /** CIDRs (IPv4 and IPv6) the caller must come from; empty means any address. */
  ipAllow: string[];
  /** `null` when the subscription's plan no longer exists: the key is then inactive. */
  plan: ResolvedPlan | null;
}

/** A key as listed by operators: the visible prefix only, never the secret. */
export interface KeyInfo {
  id: string;
  subscriptionId: string;
  product: ProductId;
  kind: KeyKind;
  status: KeyStatus;
  /** First characters of the key, e.g. `ua_sec_3kT9`, enough to recognise it. */
  prefix: string;
  plan: string;
  ipAllow: string[];
  createdAt: string;
}

/** A key to store: only its SHA-256 hash and visible prefix reach the store. */
export interface NewKey {
  kind: KeyKind;
  hash: string;
  prefix: string;
}

export interface NewSubscription {
  product: ProductId;
  plan: string;
  /**
   * Networks (`10.0.0.0/8`) or bare addresses; stored normalised. A CIDR with host bits set
   * (`10.0.0.1/8`) is refused with a TypeError, like text that is no CIDR.
   */
  ipAllow: string[];
  keys: NewKey[];
}

/**
 * What `updateSubscription` changes; a field left out stays as it is. The subscription's usage,
 * its quota counted so far this month and its keys' rate windows are kept: the new limits count
 * from what is already used.
 */
export interface SubscriptionChanges {
  /** A plan slug that resolves for the subscription's product (see `resolvePlan`). */
  plan?: string;
  /**
   * The new IP allowlist of every key of the subscription (it is the subscription's, shared by
   * its keys); `[]`: any address. Checked and normalised as NewSubscription's.
   */
  ipAllow?: string[];
}

export interface CreatedSubscription {
  subscriptionId: string;
  keys: KeyInfo[];
}

export interface ConsumeRequest {
  keyId: string;
  subscriptionId: string;
  product: ProductId;
  rateLimitPerMinute: number;
  monthlyQuota: number | null;
  /**
   * Reserve one lookup of monthly quota and record it in usage; false for status and other
   * unbilled routes. A reservation is billed unless it is refunded.
   */
  reserveQuota: boolean;
  /** Milliseconds since the epoch. */
  now: number;
  /**
   * Requests this call counts against the rate window, all or none: a batch of N inputs is N
   * (`POST /v1/<product>/batch`). The call is rate limited, counting nothing, when they do not
   * all fit in what is left of the window. @default 1
   */
  rateUnits?: number;
  /**
   * Quota units reserved (with `reserveQuota`), all or none: refused as over quota when they do
   * not all fit in what is left of the month. @default 1
   */
  quotaUnits?: number;
}

export interface RateState {
  limit: number;
  remaining: number;
  /** Unix time (seconds) when the current one-minute window ends. */
  resetAt: number;
}

export interface QuotaState {
  /** `null` when unlimited. */
  limit: number | null;
  /** `null` when unlimited. */
  remaining: number | null;
  /** UTC calendar month, `YYYY-MM`. */
  period: string;
}

/**
 * One lookup's quota unit (or a batch's units) and usage record, held as a lease: billed once
 * `commit` confirms it, given back by `refund`, and given back by the store on its own when
 * neither came within the store's `leaseMs` (the process that held it crashed).
 */
export interface Reservation {
  subscriptionId: string;
  product: ProductId;
  period: string;
  /** UTC day, `YYYY-MM-DD`, for usage records. */
  day: string;
  /**
   * Quota units it holds: set only when more than one (a batch). `refund` gives back this
   * many, so `{ ...reservation, units: k }` gives back k of them. @default 1
   */
  units?: number;
  /** The store's name for the lease that holds the units (opaque; set by `consume`). */
  lease: string;
}

export type ConsumeOutcome =
  | { allowed: true; rate: RateState; quota: QuotaState; reservation: Reservation | null }
  | { allowed: false; reason: 'rate_limit_exceeded' | 'quota_exceeded'; rate: RateState; quota: QuotaState };

export interface UsageRow {
  subscriptionId: string;
  product: ProductId;
  day: string;
  lookups: number;
}

/**
 * The meter's hot path, what the API's gate calls on every request: resolve the key, consume
 * (rate and quota in one step), commit or refund the reservation. Implementations must make
 * `consume` atomic: the rate check, the rate increment, the quota reservation and its usage
 * record happen as one step, so concurrent calls never over-admit and a rate-limited call never
 * holds quota. A lookup that fails is refunded; one that succeeds needs one commit.
 */
export interface MeterHotPath {
  /**
   * Find a key by its SHA-256 hash (lowercase hex). Revoked keys are returned with their status.
   * A store that answers from memory may answer synchronously (and throw synchronously): the
   * API then spends no promise on it, and needs no deadline, since a synchronous call cannot hang.
   */
  resolveKey(hash: string): MaybePromise<ResolvedKey | null>;

  /**
   * Atomically check and count the key's rate window and, if asked, reserve one quota unit and
   * record it in usage (`rateUnits` and `quotaUnits` of each, all or none, for a batch). May
   * answer synchronously, as `resolveKey`.
   */
  consume(request: ConsumeRequest): MaybePromise<ConsumeOutcome>;
  /**
   * True when every promise of `consume` settles by the end of the event-loop turn after the
   * call (a store that works synchronously, grouping a turn's calls, as SQLite does): such a
   * store cannot hang, so the API puts no deadline on its calls. @default false
   */
  readonly answersWithinTurn?: boolean;
  /**
   * The lookup failed or is not billed: give the reserved unit(s) (`reservation.units`, default 1)
   * back and take them out of usage (never below zero), and end the lease. What the lease held
   * beyond them stays billed, so a batch refunds its failed inputs with
   * `{ ...reservation, units: k }` and that commits the rest. Refunding a lease that ended
   * (committed, refunded or expired) does nothing.
   */
  refund(reservation: Reservation): Promise<void>;
  /**
   * The answer reached its client: the units the lease still holds stay billed for good and the
   * lease ends. Until then they are reserved (counted in quota and usage) but given back at the
   * first `consume`, `quota` or `usage` call after the lease expired (`leaseMs` after the
   * consume's `now`). Committing an ended lease does nothing. May answer synchronously.
   */
  commit(reservation: Reservation): MaybePromise<void>;
  /** Quota left for a subscription in the month of `now`, without consuming anything; expired leases are given back first. */
  quota(subscriptionId: string, monthlyQuota: number | null, now: number): Promise<QuotaState>;
}

/** The meter's administration, what operators and the CLI use: subscriptions, keys, plans, usage reports. */
export interface MeterAdmin {
  createSubscription(input: NewSubscription): Promise<CreatedSubscription>;
  /**
   * More keys for an existing subscription (captcha: several site keys sharing one quota).
   * Throws a TypeError (code invalid_option) when the subscription does not exist.
   */
  addKeys(subscriptionId: string, keys: NewKey[]): Promise<KeyInfo[]>;
  listKeys(): Promise<KeyInfo[]>;
  /**
   * Move a subscription to another plan and/or replace its IP allowlist, in place: its keys stay
   * valid, its usage and this month's quota count are kept. Returns every key of the
   * subscription, oldest first, as changed. Throws a TypeError (code invalid_option) when the
   * subscription does not exist, the plan does not resolve for its product or a CIDR is invalid;
   * nothing is changed then.
   */
  updateSubscription(subscriptionId: string, changes: SubscriptionChanges): Promise<KeyInfo[]>;
  /** Revoke by key id or by the key's hash. Returns the revoked key, or null when none matched. */
  revokeKey(idOrHash: string): Promise<KeyInfo | null>;

  /** Create or replace one plan row. */
  setPlan(plan: Plan): Promise<void>;
  listPlans(): Promise<Plan[]>;

  /** Billed lookups per subscription, product and UTC day, optionally for one month (`YYYY-MM`); expired leases are given back first. */
  usage(period?: string): Promise<UsageRow[]>;
}

/** A small persistent key/value area beside the meter (captcha keeps its signing keys and site key settings there). */
export interface SettingsStore {
  /** A small persistent key/value area for operator state (for example "first start done"). */
  getSetting(name: string): Promise<string | null>;
  setSetting(name: string, value: string): Promise<void>;
  /**
   * Store `value` under `name` only when nothing is stored there yet, atomically across every
   * process on the store; resolves with the value stored afterwards (the one given, or the one
   * that was there). Two instances racing to create one thing (captcha's signing key) agree.
   */
  setSettingIfAbsent(name: string, value: string): Promise<string>;
}

/**
 * Keys, plans, rate windows, monthly quotas, usage and settings, behind an async interface so
 * that a shared store (Redis) can implement it: the three roles in one object, as every store
 * (memory, SQLite, Redis) is. Code that needs one role takes only that role's type.
 */
export interface Meter extends MeterHotPath, MeterAdmin, SettingsStore {
  close(): Promise<void>;
}
