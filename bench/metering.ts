/**
 * Metering hot path: rate + quota checks with their usage record (`consume`) per second, for the
 * memory store and the SQLite store on a temp file. The plan never rejects, so every call
 * takes the full path (rate window write, quota reservation, usage record, its lease opened and
 * then committed as the API does).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { absoluteRow, measureAsync, type BenchRow } from './harness.js';
import { hashKey } from '../src/metering/keys.js';
import { createMemoryMeter } from '../src/metering/memory/meter.js';
import { createSqliteMeter } from '../src/metering/sqlite/meter.js';
import type { ConsumeRequest, Meter } from '../src/metering/types.js';

const SUITE = 'metering';
/** Distinct keys the calls rotate over, each with its own subscription. */
const KEYS = 64;
/** Calls in flight at once in the concurrent cases, like a busy server. */
const CONCURRENCY = 64;
const DURATION_MS = 1_000;

/** Every row, memory then SQLite. The target row is SQLite consume under concurrent load. */
export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const memory = createMemoryMeter();
  rows.push(...(await measureStore('memory', memory, null)));
  await memory.close();

  const dir = mkdtempSync(join(tmpdir(), 'seclookup-bench-'));
  const sqlite = createSqliteMeter(join(dir, 'meter.db'));
  try {
    rows.push(...(await measureStore('sqlite', sqlite, 100_000)));
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** Sequential and concurrent consume (each one reserving quota and recording usage, then committed) on one store. */
async function measureStore(store: string, meter: Meter, concurrentTarget: number | null): Promise<BenchRow[]> {
  const requests = await benchRequests(meter);
  // A billed lookup as the API makes it: consume, then commit its lease without waiting for it.
  // The memory store answers synchronously; Promise.resolve keeps one shape for both stores.
  const billed = (request: ConsumeRequest) =>
    Promise.resolve(meter.consume(request)).then((outcome) => {
      if (outcome.allowed && outcome.reservation) void Promise.resolve(meter.commit(outcome.reservation)).catch(() => {});
    });
  const consume = (i: number) => billed(requests[i % KEYS]);

  const sequential = await measureAsync(consume, { durationMs: DURATION_MS });
  const concurrent = await measureConcurrent(consume);
  // One busy key (the HTTP bench's case): its counters are read and written once per group.
  const hotKey = await measureConcurrent(() => billed(requests[0]));
  const concurrentCase = `${store} consume, ${CONCURRENCY} concurrent over ${KEYS} keys`;
  return [
    infoRow(`${store} consume, one call at a time`, sequential),
    concurrentTarget === null
      ? infoRow(concurrentCase, concurrent)
      : absoluteRow(
          { suite: SUITE, case: concurrentCase, opsPerSec: concurrent, target: `>= ${concurrentTarget.toLocaleString('en-US')}/s` },
          concurrentTarget,
        ),
    infoRow(`${store} consume, ${CONCURRENCY} concurrent on one key`, hotKey),
  ];
}

/** Rounds per concurrent measurement; the best is kept, as the machine is shared and noisy. */
const ROUNDS = 2;

/** Ops/s of `fn` with CONCURRENCY calls in flight at once. */
async function measureConcurrent(fn: (i: number) => Promise<unknown>): Promise<number> {
  const burst = (round: number) => Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => fn(round * CONCURRENCY + k)));
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const burstsPerSec = await measureAsync(burst, { durationMs: DURATION_MS, batch: 10, warmupBatches: 20 });
    best = Math.max(best, burstsPerSec * CONCURRENCY);
  }
  return best;
}

/** KEYS subscriptions on a plan that never rejects, and one consume request per key (also the Redis bench's). */
export async function benchRequests(meter: Meter): Promise<ConsumeRequest[]> {
  await meter.setPlan({ slug: 'bench', product: '*', rateLimitPerMinute: 1_000_000_000, monthlyQuota: null });
  const now = Date.now();
  const requests: ConsumeRequest[] = [];
  for (let k = 0; k < KEYS; k++) {
    const created = await meter.createSubscription({
      product: 'useragent',
      plan: 'bench',
      ipAllow: [],
      keys: [{ kind: 'secret', hash: hashKey(`bench-key-${k}`), prefix: 'ua_sec_bench' }],
    });
    const keyId = created.keys[0].id;
    requests.push({
      keyId,
      subscriptionId: created.subscriptionId,
      product: 'useragent',
      rateLimitPerMinute: 1_000_000_000,
      monthlyQuota: null,
      reserveQuota: true,
      now,
    });
  }
  return requests;
}

/** A row reported for context, with no goal of its own. */
function infoRow(caseName: string, opsPerSec: number): BenchRow {
  return absoluteRow({ suite: SUITE, case: caseName, opsPerSec, target: '(info)' }, 0);
}
