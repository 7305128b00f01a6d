/**
 * The SQLite meter's allowances on a real `seclookup serve` under load: 32 keep-alive clients
 * on one key of a big plan (so its calls are answered from an allowance), a quarter of the
 * calls invalid (counted against the rate, never billed), then SIGTERM or kill -9 in the middle.
 * A clean stop bills exactly the answers; a kill bills no more than the answers, and once the
 * leases have run out the month's count equals the usage: nothing held for ever, nothing
 * counted twice.
 */
import { Agent } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { DEFAULT_LEASE_MS } from '../../src/metering/store-logic.js';
import { createTempDirs } from './harness.js';
import { getStatus, running, ServeProcess } from './serve-process.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const CLIENTS = 32;
/** Answers before the signal: enough for several allowances to be taken, spent and committed. */
const BEFORE_SIGNAL = 1_500;

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

describe('allowances under load on a real serve', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)('a busy key on a big plan, %s mid-burst: never billed more than answered, nothing lost', async (signal) => {
    const db = join(temp.make(), 'serve.db');
    const setup = createSqliteMeter(db);
    await setup.setPlan({ slug: 'big', product: '*', rateLimitPerMinute: 1_000_000, monthlyQuota: null });
    const { secretKey, subscriptionId } = await issueKeys(setup, { product: 'useragent', plan: 'big' });
    await setup.close();

    const { serve, baseUrl } = await ServeProcess.start(db);
    const url = `${baseUrl}/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`;
    // Every fourth request is invalid (an empty User-Agent): counted against the rate, never billed.
    const invalidUrl = `${baseUrl}/v1/useragent/lookup?ua=`;
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    let answered = 0;
    let refused = 0;
    let unexpected = 0;
    let stopped = false;
    const client = async (n: number) => {
      for (let i = n; !stopped; i++) {
        const invalid = i % 4 === 0;
        const status = await getStatus(invalid ? invalidUrl : url, secretKey, agent);
        if (status === 'cut' || status === 503) continue;
        if (!invalid && status === 200) answered++;
        else if (invalid && status === 400) refused++;
        else unexpected++;
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
    while (answered < BEFORE_SIGNAL) await sleep(5);
    serve.kill(signal);
    await serve.exited;
    running.delete(serve);
    stopped = true;
    await Promise.all(clients);
    agent.destroy();
    expect(unexpected).toBe(0);

    // Read as another process would, once every lease has run out after a kill.
    const readAt = Date.now() + (signal === 'SIGKILL' ? DEFAULT_LEASE_MS : 0);
    const reader = createSqliteMeter(db, { now: () => readAt });
    const usage = (await reader.usage()).filter((row) => row.subscriptionId === subscriptionId).reduce((sum, row) => sum + row.lookups, 0);
    await reader.close();
    const file = new Database(db, { readonly: true });
    const used = file.prepare("SELECT count FROM live_counters WHERE subscription_id = ? AND counter = 'quota'").pluck().get(subscriptionId) as number;
    const leases = file.prepare('SELECT count(*) FROM leases WHERE subscription_id = ?').pluck().get(subscriptionId) as number;
    file.close();

    expect(answered).toBeGreaterThanOrEqual(BEFORE_SIGNAL);
    expect(refused).toBeGreaterThan(0);
    expect(leases).toBe(0);
    expect(used).toBe(usage);
    if (signal === 'SIGTERM') expect(usage).toBe(answered);
    // A kill loses the last few milliseconds of answers (unbilled), and a connection may lose an
    // answer already billed in flight: at most one per connection.
    else expect(usage).toBeLessThanOrEqual(answered + CLIENTS);
    expect(usage).toBeGreaterThan(0);
  });
});
