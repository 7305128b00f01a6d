/**
 * `seclookup usage`: the billed lookups per subscription and product of a month, read from the
 * store serve bills in. Lookups are billed here through the API on a SQLite file (a refused one
 * is not billed), then the CLI reads that file.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaPeriod, usageDay } from '../../src/lib/calendar.js';
import { createRedisMeter } from '../../src/metering/redis/index.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createApiStack, FROZEN_NOW } from '../api/harness.js';
import { startRedisServer } from '../servers/redis-server.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
const MONTH = quotaPeriod(FROZEN_NOW);
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
let db: string;
let subscriptions: { useragent: string; webhookip: string };

beforeAll(async () => {
  db = join(temp.make(), 'seclookup.db');
  const stack = await createApiStack({ meter: createSqliteMeter(db) });
  const useragent = await stack.keys('useragent');
  const webhookip = await stack.keys('webhookip');
  for (let i = 0; i < 3; i++) expect((await stack.call(`/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`, { key: useragent.secretKey })).status).toBe(200);
  // Refused before the lookup: not billed.
  expect((await stack.call('/v1/useragent/lookup?ua=', { key: useragent.secretKey })).status).toBe(400);
  expect((await stack.call('/v1/webhookip/lookup?ip=140.82.112.5', { key: webhookip.secretKey })).status).toBe(200);
  await stack.meter.close();
  subscriptions = { useragent: useragent.subscriptionId, webhookip: webhookip.subscriptionId };
});
afterAll(() => temp.cleanup());

describe('seclookup usage', () => {
  it('sums the billed lookups of the month per subscription and product (--json)', async () => {
    const rows = await runCliJson<Record<string, unknown>[]>(['usage', '--month', MONTH, '--json', '--db', db]);
    expect(rows).toEqual([
      { subscription_id: subscriptions.useragent, product: 'useragent', month: MONTH, lookups: 3 },
      { subscription_id: subscriptions.webhookip, product: 'webhookip', month: MONTH, lookups: 1 },
    ]);
    // This month by default.
    expect(await runCliJson(['usage', '--json', '--db', db])).toEqual(rows);
  });

  it('gives a row per day with --daily, and a table without --json', async () => {
    const daily = await runCliJson<Record<string, unknown>[]>(['usage', '--month', MONTH, '--daily', '--json', '--db', db]);
    expect(daily).toEqual([
      { subscription_id: subscriptions.useragent, product: 'useragent', day: usageDay(FROZEN_NOW), lookups: 3 },
      { subscription_id: subscriptions.webhookip, product: 'webhookip', day: usageDay(FROZEN_NOW), lookups: 1 },
    ]);
    const table = await runCli(['usage', '--month', MONTH, '--db', db]);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^SUBSCRIPTION\s+PRODUCT\s+MONTH\s+LOOKUPS$/);
    expect(table.stdout).toMatch(new RegExp(`\\n${subscriptions.useragent}\\s+useragent\\s+${MONTH}\\s+3\\n`));
  });

  it('says when a month has none; refuses a bad month or two stores (exit 2) and a database that does not exist (exit 1)', async () => {
    const none = await runCli(['usage', '--month', '2001-02', '--db', db]);
    expect([none.code, none.stdout]).toEqual([0, 'No billed lookups in 2001-02.\n']);
    for (const month of ['2026-13', '2026-1', 'november']) {
      const bad = await runCli(['usage', '--month', month, '--db', db]);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--month must be a month as YYYY-MM')]);
    }
    expect((await runCli(['usage', '--db', db, '--redis', 'redis://127.0.0.1:1/0'])).code).toBe(2);
    const missing = await runCli(['usage', '--db', join(temp.make(), 'nope.db')]);
    expect(missing.code).toBe(1);
  });

  it('reads the usage serve --redis counts, with --redis URL or $SECLOOKUP_REDIS; a Redis that does not answer is exit 1', async () => {
    const redis = await startRedisServer();
    try {
      const url = redis.url(2);
      const stack = await createApiStack({ meter: createRedisMeter(url) });
      const keys = await stack.keys('useragent');
      for (let i = 0; i < 2; i++) expect((await stack.call(`/v1/useragent/lookup?ua=${encodeURIComponent(UA)}`, { key: keys.secretKey })).status).toBe(200);
      expect((await stack.call('/v1/useragent/lookup?ua=', { key: keys.secretKey })).status).toBe(400);
      await stack.meter.close();
      const rows = [{ subscription_id: keys.subscriptionId, product: 'useragent', month: MONTH, lookups: 2 }];
      expect(await runCliJson(['usage', '--month', MONTH, '--json', '--redis', url])).toEqual(rows);
      expect(await runCliJson(['usage', '--month', MONTH, '--json'], { env: { SECLOOKUP_REDIS: url } })).toEqual(rows);
      // Another database of that Redis holds no usage.
      expect(await runCli(['usage', '--month', MONTH, '--redis', redis.url(3)])).toMatchObject({ code: 0, stdout: `No billed lookups in ${MONTH}.\n` });
    } finally {
      await redis.close();
    }
    const gone = await runCli(['usage', '--month', MONTH, '--redis', 'redis://127.0.0.1:1/0']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/redis/i);
  });

  it('is listed in the overview and has its own help', async () => {
    expect((await runCli(['--help'])).stdout).toMatch(/\n {2}usage\s+billed lookups per subscription and product/);
    const help = await runCli(['usage', '--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('--month YYYY-MM')]);
  });
});
