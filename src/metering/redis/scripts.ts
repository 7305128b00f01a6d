/**
 * The Lua scripts of the Redis stores. Each runs atomically inside Redis, on keys of one hash
 * tag (one Cluster slot): a subscription's counters `{sub:<id>}` or the admin records
 * `{admin}`. No time arithmetic happens here: windows, months, days and expiry durations are
 * computed in TypeScript (src/metering/calendar.ts) and passed in; the scripts compare and count.
 */
import { LuaScript } from './client.js';

/**
 * Give `key` an expiry of at least `ttl` ms (relative, so the caller's clock never matters to
 * Redis): extend-only, so a late caller cannot shorten a newer window's life, and a key whose
 * expiry was lost (PTTL -1) always gets one again.
 */
const EXTEND = `
local function extend(key, ttl)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
local function keepExpiring(key, ttl)
  if redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, ttl) end
end
`;

/**
 * End the leases this meter's answers committed since its last call on the subscription
 * (commits.ts): ARGV[first..] are those leases, removed from `leasesKey` before anything else
 * looks at it, so a committed lease is never taken for an expired or refundable one.
 */
const SETTLE = `
local function settle(leasesKey, first)
  if #ARGV >= first then redis.call('ZREM', leasesKey, unpack(ARGV, first)) end
end
`;

/**
 * Give back `units` of a reservation (refundEntry's rule): of the quota month if it is still the
 * stored month, of the usage day; neither below zero. Expired leases (see LEASES) go back too.
 */
const GIVE_BACK = `
local function giveBack(quotaKey, usageKey, period, field, units, quotaTtl, usageTtl)
  local quota = redis.call('HMGET', quotaKey, 'p', 'n')
  local used = tonumber(quota[2]) or 0
  if tonumber(quota[1]) == tonumber(period) and used > 0 then
    redis.call('HINCRBY', quotaKey, 'n', -math.min(units, used))
    keepExpiring(quotaKey, quotaTtl)
  end
  local lookups = tonumber(redis.call('HGET', usageKey, field))
  if lookups and lookups > 0 then
    redis.call('HINCRBY', usageKey, field, -math.min(units, lookups))
    keepExpiring(usageKey, usageTtl)
  end
end
local function parseLease(lease)
  local units, period, field = string.match(lease, '^[^|]*|(%d+)|(%d+)|(.*)$')
  return tonumber(units), period, field
end
local function reclaim(quotaKey, usageKey, leasesKey, now, quotaTtl, usageTtl)
  -- Every expired lease at once (after a crash, one per lookup that was in flight), summed by
  -- month and day so each counter is written once.
  local expired = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', now)
  if #expired == 0 then return end
  local sums, order = {}, {}
  for _, lease in ipairs(expired) do
    local units, period, field = parseLease(lease)
    local group = period .. '|' .. field
    if not sums[group] then
      sums[group] = {period, field, 0}
      order[#order + 1] = group
    end
    sums[group][3] = sums[group][3] + units
  end
  for _, group in ipairs(order) do
    local sum = sums[group]
    giveBack(quotaKey, usageKey, sum[1], sum[2], sum[3], quotaTtl, usageTtl)
  end
  redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
end
`;

/**
 * One consume: the key's rate window and, if asked, the subscription's quota reservation and
 * its usage record, as one step (decideConsume's rule, src/metering/store-logic.ts), held as a
 * lease. The subscription's expired leases are given back first.
 *
 * KEYS: [1] the key's rate window (hash: w = minute index, n = hits), [2] the subscription's
 * quota month (hash: p = YYYYMM, n = used), [3] the subscription's usage (hash: `<day>|<product>`
 * = lookups), [4] its open leases (sorted set: `<id>|<units>|<YYYYMM>|<day>|<product>` by expiry).
 * ARGV: [1] minute index, [2] rate limit, [3] rate TTL, [4] '1' to reserve quota, [5] month as
 * YYYYMM, [6] monthly quota (-1: unlimited), [7] quota TTL, [8] usage field, [9] usage TTL,
 * [10] rate units and [11] quota units (1 and 1 but for a batch; each fits whole or not at all),
 * [12] the caller's now, [13] the lease's expiry, [14] the lease's id, [15] the leases' TTL,
 * [16..] committed leases to end first (SETTLE).
 * Counters never move back: a window or month older than the stored one counts against the
 * stored one. Returns the counters as they were before the call (after expired leases went
 * back; nil when absent): window, hits, month, used; then 1 admitted, 2 rate limited (nothing
 * counted), 3 over quota (the call counted against the window only).
 */
export const CONSUME = new LuaScript(
  'consume',
  `${EXTEND}${GIVE_BACK}${SETTLE}
settle(KEYS[4], 16)
reclaim(KEYS[2], KEYS[3], KEYS[4], ARGV[12], tonumber(ARGV[7]), tonumber(ARGV[9]))
local rate = redis.call('HMGET', KEYS[1], 'w', 'n')
local quota = redis.call('HMGET', KEYS[2], 'p', 'n')
local storedWindow, storedPeriod = tonumber(rate[1]), tonumber(quota[1])
local window, period = tonumber(ARGV[1]), tonumber(ARGV[5])
if storedWindow and storedWindow > window then window = storedWindow end
if storedPeriod and storedPeriod > period then period = storedPeriod end
local hits, used = 0, 0
if storedWindow == window then hits = tonumber(rate[2]) or 0 end
if storedPeriod == period then used = tonumber(quota[2]) or 0 end
local rateUnits, quotaUnits = tonumber(ARGV[10]), tonumber(ARGV[11])
local result = {rate[1], rate[2], quota[1], quota[2], 2}
if hits + rateUnits > tonumber(ARGV[2]) then
  keepExpiring(KEYS[1], tonumber(ARGV[3]))
  return result
end
redis.call('HSET', KEYS[1], 'w', window, 'n', hits + rateUnits)
extend(KEYS[1], tonumber(ARGV[3]))
result[5] = 1
if ARGV[4] ~= '1' then return result end
local limit = tonumber(ARGV[6])
if limit >= 0 and used + quotaUnits > limit then
  keepExpiring(KEYS[2], tonumber(ARGV[7]))
  result[5] = 3
  return result
end
redis.call('HSET', KEYS[2], 'p', period, 'n', used + quotaUnits)
extend(KEYS[2], tonumber(ARGV[7]))
redis.call('HINCRBY', KEYS[3], ARGV[8], quotaUnits)
extend(KEYS[3], tonumber(ARGV[9]))
redis.call('ZADD', KEYS[4], ARGV[13], ARGV[14] .. '|' .. quotaUnits .. '|' .. period .. '|' .. ARGV[8])
extend(KEYS[4], tonumber(ARGV[15]))
return result
`,
);

/**
 * Give back a reservation's units and end its lease; what the lease held beyond them stays
 * billed. Nothing when the lease already ended (committed, refunded or expired).
 * KEYS: [1] quota, [2] usage, [3] leases. ARGV: [1] the lease, [2] units (1 but for a batch),
 * [3] quota TTL and [4] usage TTL, set only on a key that lost its expiry; [5..] committed
 * leases to end first (SETTLE).
 */
export const REFUND = new LuaScript(
  'refund',
  `${EXTEND}${GIVE_BACK}${SETTLE}
settle(KEYS[3], 5)
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then return 0 end
local held, period, field = parseLease(ARGV[1])
giveBack(KEYS[1], KEYS[2], period, field, math.min(tonumber(ARGV[2]), held), tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1
`,
);

/**
 * Give back the subscription's leases expired by ARGV[1] (the caller's now), then answer its
 * quota month: {YYYYMM, used}. KEYS: [1] quota, [2] usage, [3] leases. ARGV: [2] quota TTL and
 * [3] usage TTL, set only on a key that lost its expiry; [4..] committed leases to end first
 * (SETTLE).
 */
export const RECLAIM = new LuaScript(
  'reclaim',
  `${EXTEND}${GIVE_BACK}${SETTLE}
settle(KEYS[3], 4)
reclaim(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
return redis.call('HMGET', KEYS[1], 'p', 'n')
`,
);

/**
 * End committed leases no other call carried in time (commits.ts). A script rather than a bare
 * ZREM so that every client command of the meter's hot path is an EVALSHA (the benches count
 * round trips by command name). KEYS: [1] leases. ARGV: the leases.
 */
export const SETTLE_LEASES = new LuaScript(
  'settle',
  `${SETTLE}
settle(KEYS[1], 1)
return 0
`,
);

/**
 * SETTLE_LEASES for many subscriptions in one call, on a single Redis only: its keys are in
 * many slots, which a Redis Cluster refuses (there the meter sends SETTLE_LEASES per
 * subscription). KEYS: the subscriptions' lease sets. ARGV: for each key in order, the count of
 * its leases, then those leases.
 */
export const SETTLE_MANY = new LuaScript(
  'settle-many',
  `
local at = 1
for k = 1, #KEYS do
  local count = tonumber(ARGV[at])
  if count > 0 then redis.call('ZREM', KEYS[k], unpack(ARGV, at + 1, at + count)) end
  at = at + 1 + count
end
return 0
`,
);

/**
 * A key by its SHA-256 hash, with its subscription and the two plan rows that can apply to it.
 * KEYS: [1] hashes, [2] keys, [3] subscriptions, [4] plans, [5] revoked. ARGV: [1] hash.
 * Returns nil, or {key id, key record, subscription record, plan row for the product, plan row
 * '*', 1 when revoked}.
 */
export const RESOLVE = new LuaScript(
  'resolve',
  `
local id = redis.call('HGET', KEYS[1], ARGV[1])
if not id then return false end
local key = redis.call('HGET', KEYS[2], id)
if not key then return false end
local sub = redis.call('HGET', KEYS[3], cjson.decode(key).subscriptionId)
if not sub then return false end
local s = cjson.decode(sub)
local rows = redis.call('HMGET', KEYS[4], s.plan .. '|' .. s.product, s.plan .. '|*')
return {id, key, sub, rows[1], rows[2], redis.call('SISMEMBER', KEYS[5], id)}
`,
);

/**
 * Store keys for a new subscription (ARGV[1] its record, ARGV[2] '') or an existing one
 * (ARGV[1] '', ARGV[2] its id), all or nothing. ARGV[3..]: pairs of key hash and key record
 * without its first '{' (the script puts the subscription id first).
 * KEYS: [1] hashes, [2] keys, [3] subscriptions, [4] id sequences.
 * Returns {'no_subscription'}, {'duplicate'}, or {'ok', subscription id, subscription record,
 * key ids...}.
 */
export const ADD_KEYS = new LuaScript(
  'add-keys',
  `
local subId, sub = ARGV[2], ARGV[1]
if subId ~= '' then
  sub = redis.call('HGET', KEYS[3], subId)
  if not sub then return {'no_subscription'} end
end
local count = (#ARGV - 2) / 2
for i = 0, count - 1 do
  if redis.call('HEXISTS', KEYS[1], ARGV[3 + 2 * i]) == 1 then return {'duplicate'} end
end
if subId == '' then
  subId = tostring(redis.call('HINCRBY', KEYS[4], 'subscription', 1))
  redis.call('HSET', KEYS[3], subId, sub)
end
local result = {'ok', subId, sub}
for i = 0, count - 1 do
  local id = tostring(redis.call('HINCRBY', KEYS[4], 'key', 1))
  redis.call('HSET', KEYS[2], id, '{"subscriptionId":"' .. subId .. '",' .. ARGV[4 + 2 * i])
  redis.call('HSET', KEYS[1], ARGV[3 + 2 * i], id)
  result[#result + 1] = id
end
return result
`,
);

/**
 * Revoke one key by id (ARGV[1]) or hash (ARGV[2]; ARGV[1] ''). Idempotent.
 * KEYS: [1] hashes, [2] keys, [3] subscriptions, [4] revoked.
 * Returns nil when no key matched, else {key id, key record, subscription record}.
 */
export const REVOKE = new LuaScript(
  'revoke',
  `
local id = ARGV[1]
if ARGV[2] ~= '' then
  id = redis.call('HGET', KEYS[1], ARGV[2])
  if not id then return false end
end
local key = redis.call('HGET', KEYS[2], id)
if not key then return false end
redis.call('SADD', KEYS[4], id)
return {id, key, redis.call('HGET', KEYS[3], cjson.decode(key).subscriptionId)}
`,
);

/**
 * Replace a subscription's record if it is still the one the caller read and changed (the
 * caller checked the change against it): a change made meanwhile by another operator is never
 * overwritten, the caller reads again instead. KEYS: [1] subscriptions. ARGV: [1] subscription
 * id, [2] the record as read, [3] the new record. Returns 1 replaced, 0 changed meanwhile,
 * -1 no such subscription.
 */
export const UPDATE_SUBSCRIPTION = new LuaScript(
  'update-subscription',
  `
local sub = redis.call('HGET', KEYS[1], ARGV[1])
if not sub then return -1 end
if sub ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`,
);

/** Seed the plan table when Redis holds none. KEYS: [1] plans. ARGV: field, row pairs. */
export const SEED_PLANS = new LuaScript(
  'seed-plans',
  `
if #ARGV == 0 or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`,
);

/**
 * Consume a single-use id: KEYS[1] holds the time (ms) until which it is used. ARGV: [1] that
 * time for this use, [2] the caller's now, [3] the entry's lifetime in ms (expiresAt - now).
 * An entry counts as live by the caller's clock (as in the memory and SQLite stores); Redis's
 * own expiry (PX) only cleans up. Returns 1 when this call used the id, 0 when it was in use.
 */
// KEYS[1] the id; ARGV: expiresAt (ms), now (ms), ttl (ms), owner digits ('' for none). The value
// is the expiry, with the owner as its decimal fraction ('1800000300000.7312...'): still a number
// to a reader that takes it as one (an instance of an older version during an upgrade, which
// then holds it live for under a millisecond longer).
export const CONSUME_ONCE = new LuaScript(
  'consume-once',
  `
local value = redis.call('GET', KEYS[1])
local usedUntil = tonumber(value)
if usedUntil and math.floor(usedUntil) > tonumber(ARGV[2]) then
  if ARGV[4] ~= '' and string.match(value, '%.(%d+)$') == ARGV[4] then return 1 end
  return 0
end
if tonumber(ARGV[3]) > 0 then
  local stored = ARGV[1]
  if ARGV[4] ~= '' then stored = stored .. '.' .. ARGV[4] end
  redis.call('SET', KEYS[1], stored, 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
`,
);

export const METER_SCRIPTS = [CONSUME, REFUND, RECLAIM, SETTLE_LEASES, SETTLE_MANY, RESOLVE, ADD_KEYS, REVOKE, UPDATE_SUBSCRIPTION, SEED_PLANS] as const;
