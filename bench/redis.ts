/**
 * The Redis meter on loopback against the SQLite meter: consume (rate + quota reservation + usage
 * record) per second, one call at a time and many in flight, as ratios; and the Redis round trips
 * a request costs on the hot path (resolveKey from memory + consume), counted on the client and
 * checked on the server. Starts its own redis-server (test/servers/redis-server.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { absoluteRow, measureAsync, ratioRow, type BenchRow } from './harness.js';
import { benchRequests } from './metering.js';
import { hashKey } from '../src/metering/keys.js';
import { createSqliteMeter } from '../src/metering/sqlite/meter.js';
import type { ConsumeRequest, Meter } from '../src/metering/types.js';
import { createRedisMeter, redisClientOptions } from '../src/metering/redis/index.js';
import { startRedisServer } from '../test/servers/redis-server.js';

const SUITE = 'redis';
/** Distinct keys the calls rotate over, each with its own subscription (as bench/metering.ts). */
const KEYS = 64;
const DURATION_MS = 1_000;
/** Rounds per case; the best is kept, as the machine is shared and noisy. */
const ROUNDS = 2;
/** Requests timed for the round-trip count. */
const HOT_PATH_CALLS = 2_000;

export async function run(): Promise<BenchRow[]> {
  const server = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-bench-'));
  const client = new Redis(server.url(), redisClientOptions());
  client.on('error', () => undefined);
  const sent = countCommands(client);
  const redis = createRedisMeter(client, { keyCacheMs: 60_000 });
  const sqlite = createSqliteMeter(join(dir, 'meter.db'));
  try {
    const redisRequests = await benchRequests(redis);
    const sqliteRequests = await benchRequests(sqlite);
    const rows: BenchRow[] = [];
    for (const inFlight of [1, 64, 256]) {
      const redisOps = await measureConsume(redis, redisRequests, inFlight);
      const sqliteOps = await measureConsume(sqlite, sqliteRequests, inFlight);
      const label = inFlight === 1 ? 'one call at a time' : `${inFlight} in flight over ${KEYS} keys (pipelined)`;
      rows.push(
        ratioRow(
          {
            suite: SUITE,
            case: `redis meter consume, ${label}`,
            baseline: 'sqlite meter, same load',
            opsPerSec: redisOps,
            baselineOpsPerSec: sqliteOps,
            target: '(info)',
          },
          0,
        ),
      );
    }
    rows.push(...(await roundTrips(redis, sent, server.command)));
    return rows;
  } finally {
    await redis.close();
    client.disconnect();
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

/** consume per second with `inFlight` calls in flight at once (1: each awaited before the next). */
async function measureConsume(meter: Meter, requests: ConsumeRequest[], inFlight: number): Promise<number> {
  const consume = (i: number) => Promise.resolve(meter.consume(requests[i % KEYS]));
  let best = 0;
  for (let round = 0; round < ROUNDS; round++) {
    if (inFlight === 1) {
      best = Math.max(best, await measureAsync(consume, { durationMs: DURATION_MS, batch: 100, warmupBatches: 10 }));
    } else {
      const burst = (b: number) => Promise.all(Array.from({ length: inFlight }, (_, k) => consume(b * inFlight + k)));
      best = Math.max(best, inFlight * (await measureAsync(burst, { durationMs: DURATION_MS, batch: 5, warmupBatches: 10 })));
    }
  }
  return best;
}

/**
 * Round trips per request on the hot path: commands the client sent per (resolveKey + consume
 * + commit of the answer), and, from the server's INFO commandstats, EVALSHA calls per request
 * and the commands the script runs inside Redis per consume (the ZREM of the commits it carries
 * included). The last request's commit is still pending when the count ends (1 in HOT_PATH_CALLS).
 */
async function roundTrips(meter: Meter, sent: { count: number }, command: (...args: string[]) => Promise<string>): Promise<BenchRow[]> {
  const hash = hashKey('bench-key-0');
  const key = await meter.resolveKey(hash);
  if (!key?.plan) throw new Error('bench key missing');
  const request: ConsumeRequest = {
    keyId: key.id,
    subscriptionId: key.subscriptionId,
    product: key.product,
    rateLimitPerMinute: key.plan.rateLimitPerMinute,
    monthlyQuota: key.plan.monthlyQuota,
    reserveQuota: true,
    now: Date.now(),
  };
  const stats = async () => {
    const info = await command('INFO', 'all');
    const evalsha = Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
    const total = Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
    return { evalsha, total };
  };
  const before = await stats();
  const sentBefore = sent.count;
  for (let i = 0; i < HOT_PATH_CALLS; i++) {
    await meter.resolveKey(hash);
    const outcome = await meter.consume(request);
    // The answer went out: commit, as the API does (not awaited: it is off the answer's path).
    if (outcome.allowed && outcome.reservation) void Promise.resolve(meter.commit(outcome.reservation)).catch(() => undefined);
  }
  const after = await stats();
  const perRequest = (sent.count - sentBefore) / HOT_PATH_CALLS;
  const evalshaPerRequest = (after.evalsha - before.evalsha) / HOT_PATH_CALLS;
  // The INFO call between the two readings is the one command not from the meter.
  const insideScript = (after.total - before.total - 1) / HOT_PATH_CALLS - evalshaPerRequest;
  console.error(
    `redis hot path: ${perRequest} commands sent per request, ${evalshaPerRequest} EVALSHA per request, ${insideScript.toFixed(1)} commands run inside the script per consume`,
  );
  return [
    {
      ...absoluteRow(
        {
          suite: SUITE,
          case: 'redis round trips per request (resolveKey from memory + consume + commit), client count',
          opsPerSec: perRequest,
          target: '<= 1 (goal: one)',
        },
        0,
      ),
      met: perRequest <= 1,
    },
    {
      ...absoluteRow({ suite: SUITE, case: 'redis EVALSHA per request, server count (INFO commandstats)', opsPerSec: evalshaPerRequest, target: '1' }, 0),
      met: evalshaPerRequest === 1,
    },
    absoluteRow(
      { suite: SUITE, case: `redis commands run inside the consume script per call (${insideScript.toFixed(1)})`, opsPerSec: insideScript, target: '(info)' },
      0,
    ),
  ];
}

/** Count the commands a client sends (each is one request on the wire). */
function countCommands(client: Redis): { count: number } {
  const counter = { count: 0 };
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    counter.count++;
    return send(...args);
  }) as Redis['sendCommand'];
  return counter;
}
