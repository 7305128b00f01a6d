import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { hashKey, issueKeys } from '../../src/metering/keys.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { ConsumeOutcome } from '../../src/metering/types.js';
import { describeMeterConformance, T0 } from './conformance/index.js';
import { requestFor, sqliteMeterFile } from './sqlite-fixture.js';

const run = promisify(execFile);

describeMeterConformance('sqlite', async (options) => {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-meter-'));
  const meter = createSqliteMeter(join(dir, 'meter.db'), options);
  return {
    meter,
    cleanup: async () => {
      await meter.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** Resolves after the current event-loop turn, as a request arriving later would. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Resolves in a later millisecond than it was called in: the key cache looks for other connections' commits once per millisecond. */
const nextMillisecond = async () => {
  const start = Date.now();
  while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('createSqliteMeter', () => {
  const meterFile = sqliteMeterFile('seclookup-meter-');
  const { open } = meterFile;

  function allowedCount(outcomes: ConsumeOutcome[]): number {
    return outcomes.filter((o) => o.allowed).length;
  }

  it('keeps keys, plans, counters, usage and settings across close and reopen', async () => {
    const first = open();
    await first.setPlan({ slug: 'team', product: '*', rateLimitPerMinute: 5, monthlyQuota: 100 });
    const sub = await issueKeys(first, { product: 'geoip', plan: 'team', ipAllow: ['192.0.2.0/24'] });
    const request = await requestFor(first, sub.secretKey);
    for (let i = 0; i < 3; i++) expect(await first.consume(request)).toMatchObject({ allowed: true });
    await first.revokeKey(sub.keys[1].id);
    await first.setSetting('first-start', 'done');
    const keys = await first.listKeys();
    await first.close();

    const second = open();
    expect(await second.listKeys()).toEqual(keys);
    expect(await second.resolveKey(hashKey(sub.secretKey))).toMatchObject({
      status: 'active',
      ipAllow: ['192.0.2.0/24'],
      plan: { slug: 'team', rateLimitPerMinute: 5, monthlyQuota: 100 },
    });
    expect(await second.resolveKey(hashKey(sub.publicKey))).toMatchObject({ status: 'revoked' });
    expect(await second.getSetting('first-start')).toBe('done');
    expect(await second.quota(sub.subscriptionId, 100, T0)).toEqual({ limit: 100, remaining: 97, period: '2025-01' });
    expect(await second.usage('2025-01')).toEqual([{ subscriptionId: sub.subscriptionId, product: 'geoip', day: '2025-01-15', lookups: 3 }]);
    // The rate window survived too: 3 of 5 used.
    expect(await second.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 1 } });
  });

  it('commits writes still queued when close is called', async () => {
    const meter = open();
    const sub = await issueKeys(meter, { product: 'useragent' });
    const request = await requestFor(meter, sub.secretKey);
    const pending = [meter.consume(request), meter.consume(request)];
    await meter.close();
    expect(allowedCount(await Promise.all(pending))).toBe(2);
    expect(await open().quota(sub.subscriptionId, 10_000, T0)).toMatchObject({ remaining: 9_998 });
  });

  it('a failing call in a group of concurrent writes rejects alone', async () => {
    const meter = open();
    const sub = await issueKeys(meter, { product: 'useragent' });
    const request = await requestFor(meter, sub.secretKey);
    // SQLite cannot bind an object as a subscription id, so this call throws inside the group.
    const bad = { ...request, subscriptionId: { not: 'an id' } as unknown as string };
    const results = await Promise.allSettled([meter.consume(request), meter.consume(bad), meter.consume(request)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.rate.remaining : null))).toEqual([119, null, 118]);
    expect(await meter.quota(sub.subscriptionId, 10_000, T0)).toMatchObject({ remaining: 9_998 });
  });

  it('seeds the plan table only when it is empty', async () => {
    const custom = [{ slug: 'solo', product: '*' as const, rateLimitPerMinute: 5, monthlyQuota: 50 }];
    const first = open({ plans: custom });
    expect(await first.listPlans()).toEqual(custom);
    await first.close();
    // Reopening with other plans keeps the stored table.
    expect(await open().listPlans()).toEqual(custom);
  });

  it('two meters on one file (CLI and serve) see each other’s keys, revocations and counts', async () => {
    const cli = open();
    const serve = open();
    const sub = await issueKeys(cli, { product: 'useragent' });
    expect(await serve.resolveKey(hashKey(sub.secretKey))).toMatchObject({ id: sub.keys[0].id, status: 'active' });

    await cli.setPlan({ slug: 'starter', product: 'useragent', rateLimitPerMinute: 10, monthlyQuota: 1_000 });
    // Another connection's changes are seen by requests from the next millisecond on.
    await nextMillisecond();
    const request = await requestFor(serve, sub.secretKey);
    expect(request.rateLimitPerMinute).toBe(10);

    // Alternating and concurrent calls from both share one window.
    const outcomes: ConsumeOutcome[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await (i % 2 ? cli : serve).consume(request));
    outcomes.push(...(await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? cli : serve).consume(request)))));
    expect(allowedCount(outcomes)).toBe(10);
    expect(await cli.quota(sub.subscriptionId, 1_000, T0)).toEqual({ limit: 1_000, remaining: 990, period: '2025-01' });

    await cli.revokeKey(hashKey(sub.secretKey));
    // Seen by the requests of the next millisecond.
    await nextMillisecond();
    expect(await serve.resolveKey(hashKey(sub.secretKey))).toMatchObject({ status: 'revoked' });
    expect((await serve.listKeys()).map((k) => k.status)).toEqual(['revoked', 'active']);
  });

  it('two meters on one file: a subscription the CLI moves to another plan applies in serve from the next millisecond, its allowance included', async () => {
    const cli = open();
    const serve = open();
    await cli.setPlan({ slug: 'big', product: '*', rateLimitPerMinute: 100_000, monthlyQuota: 1_000_000 });
    await cli.setPlan({ slug: 'small', product: '*', rateLimitPerMinute: 5, monthlyQuota: 1_000 });
    const sub = await issueKeys(cli, { product: 'useragent', plan: 'big' });
    const big = await requestFor(serve, sub.secretKey);
    // On the big plan serve takes an allowance: most of these are answered from its memory.
    for (let i = 0; i < 3; i++) expect(await serve.consume(big)).toMatchObject({ allowed: true });

    await cli.updateSubscription(sub.subscriptionId, { plan: 'small', ipAllow: ['10.0.0.0/8'] });
    await nextMillisecond();
    expect(await serve.resolveKey(hashKey(sub.secretKey))).toMatchObject({
      ipAllow: ['10.0.0.0/8'],
      plan: { slug: 'small', rateLimitPerMinute: 5, monthlyQuota: 1_000 },
    });
    // The allowance is not spent under the new limits: its unspent part goes back, and the 3 hits
    // of this minute count against 5.
    const small = await requestFor(serve, sub.secretKey);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await serve.consume(small));
    expect(outcomes.map((o) => (o.allowed ? o.rate.remaining : o.reason))).toEqual([1, 0, 'rate_limit_exceeded']);
    expect(await cli.quota(sub.subscriptionId, 1_000, T0)).toEqual({ limit: 1_000, remaining: 995, period: '2025-01' });
  });

  it('admits exactly the limit when two processes consume the same key at once', async () => {
    const meter = open();
    await meter.setPlan({ slug: 'shared', product: '*', rateLimitPerMinute: 1_500, monthlyQuota: 10_000 });
    const sub = await issueKeys(meter, { product: 'useragent', plan: 'shared' });
    const request = await requestFor(meter, sub.secretKey);
    await meter.close();

    // Each child waits for a common start time, then sends 1,000 calls in bursts of 20 spread
    // over tens of milliseconds, so the two processes' transactions interleave.
    const child = `
      const { createSqliteMeter } = await import('seclookup/sqlite');
      const meter = createSqliteMeter(process.env.METER_DB);
      const request = JSON.parse(process.env.METER_REQUEST);
      while (Date.now() < Number(process.env.START_AT)) await new Promise((r) => setTimeout(r, 1));
      let allowed = 0;
      for (let burst = 0; burst < 50; burst++) {
        const outcomes = await Promise.all(Array.from({ length: 20 }, () => meter.consume(request)));
        allowed += outcomes.filter((o) => o.allowed).length;
        await new Promise((r) => setTimeout(r, 1));
      }
      await meter.close();
      console.log(JSON.stringify({ allowed }));
    `;
    const env = { ...process.env, METER_DB: meterFile.path, METER_REQUEST: JSON.stringify(request), START_AT: String(Date.now() + 3_000) };
    const children = [1, 2].map(() => run(process.execPath, ['--input-type=module', '-e', child], { env, cwd: process.cwd() }));
    const allowed = (await Promise.all(children)).map(({ stdout }) => (JSON.parse(stdout) as { allowed: number }).allowed);

    expect(allowed[0] + allowed[1]).toBe(1_500);
    expect(await open().quota(sub.subscriptionId, 10_000, T0)).toMatchObject({ remaining: 10_000 - 1_500 });
  });

  it("a group's reservations share one lease row; commits and refunds settle it, and a crash gives back exactly what was not committed", async () => {
    const LEASE = 60_000;
    const meter = open({ leaseMs: LEASE });
    const sub = await issueKeys(meter, { product: 'useragent' });
    const request = await requestFor(meter, sub.secretKey, { monthlyQuota: 100 });
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => meter.consume(request)));
    const reservations = outcomes.map((o) => (o.allowed ? o.reservation! : null));
    expect(reservations.every(Boolean)).toBe(true);
    const file = new Database(meterFile.path, { readonly: true });
    const leaseRows = () => file.prepare('SELECT units FROM leases WHERE subscription_id = ?').pluck().all(sub.subscriptionId);
    try {
      // One row for the whole group, not one per reservation.
      expect(leaseRows()).toEqual([50]);
      // 30 answered (committed, no promise needed), 5 refunded; each settled twice to show it counts once.
      for (const reservation of reservations.slice(0, 30)) {
        await meter.commit(reservation!);
        await meter.commit(reservation!);
      }
      for (const reservation of reservations.slice(30, 35)) {
        await meter.refund(reservation!);
        await meter.refund(reservation!);
        await meter.commit(reservation!);
      }
      await nextTurn();
      expect(leaseRows()).toEqual([15]);
      expect(await meter.quota(sub.subscriptionId, 100, T0)).toMatchObject({ remaining: 55 });
      // The process dies (kill -9: its memory is gone); another one on the file gives the 15 unsettled units back at the lease's end.
      const other = open({ leaseMs: LEASE, now: () => T0 + LEASE });
      expect(await other.quota(sub.subscriptionId, 100, T0 + LEASE - 1)).toMatchObject({ remaining: 55 });
      expect(await other.quota(sub.subscriptionId, 100, T0 + LEASE)).toMatchObject({ remaining: 70 });
      expect(leaseRows()).toEqual([]);
      expect(await other.usage('2025-01')).toEqual([{ subscriptionId: sub.subscriptionId, product: 'useragent', day: '2025-01-15', lookups: 30 }]);
      // The first process's late settlements of the expired row give nothing more back.
      for (const reservation of reservations.slice(35)) await meter.refund(reservation!);
      expect(await meter.quota(sub.subscriptionId, 100, T0 + LEASE)).toMatchObject({ remaining: 70 });
    } finally {
      file.close();
    }
  });

  it('declares answersWithinTurn and keeps it: a consume settles in the flush at the end of its turn, so the API needs no deadline on it', async () => {
    const meter = open();
    const sub = await issueKeys(meter, { product: 'useragent' });
    const request = await requestFor(meter, sub.secretKey);
    expect(meter.answersWithinTurn).toBe(true);
    let settled = false;
    void Promise.resolve(meter.consume(request)).then(() => (settled = true));
    await nextTurn();
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it('counters kept in memory between groups are read again after another connection wrote them', async () => {
    const meter = open();
    const sub = await issueKeys(meter, { product: 'useragent' });
    const request = await requestFor(meter, sub.secretKey, { monthlyQuota: 100 });
    expect(await meter.consume(request)).toMatchObject({ allowed: true, quota: { remaining: 99 } });
    // Another process (here a raw connection) changes the month's count under the running meter.
    const file = new Database(meterFile.path);
    file.prepare("UPDATE live_counters SET count = 99 WHERE subscription_id = ? AND counter = 'quota'").run(sub.subscriptionId);
    file.close();
    expect(await meter.consume(request)).toMatchObject({ allowed: true, quota: { remaining: 0 } });
    expect(await meter.consume(request)).toMatchObject({ allowed: false, reason: 'quota_exceeded' });
  });

  it('upgrades a schema 1 database in place, keeping keys, windows, quotas and usage', async () => {
    const v1 = new Database(meterFile.path);
    v1.exec(`
      CREATE TABLE plans (slug TEXT NOT NULL, product TEXT NOT NULL, rate_limit_per_minute INTEGER NOT NULL, monthly_quota INTEGER, PRIMARY KEY (slug, product)) WITHOUT ROWID;
      CREATE TABLE subscriptions (id INTEGER PRIMARY KEY, product TEXT NOT NULL, plan TEXT NOT NULL, ip_allow TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE keys (id INTEGER PRIMARY KEY, subscription_id INTEGER NOT NULL REFERENCES subscriptions (id), kind TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE rate_windows (key_id TEXT PRIMARY KEY, window_index INTEGER NOT NULL, hits INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE quota_usage (subscription_id TEXT PRIMARY KEY, period TEXT NOT NULL, used INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE usage (subscription_id TEXT NOT NULL, product TEXT NOT NULL, day TEXT NOT NULL, lookups INTEGER NOT NULL, PRIMARY KEY (subscription_id, product, day)) WITHOUT ROWID;
      CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO plans VALUES ('starter', 'useragent', 120, 10000);
      INSERT INTO subscriptions VALUES (1, 'useragent', 'starter', '[]', '2025-01-01T00:00:00.000Z');
      INSERT INTO keys VALUES (1, 1, 'secret', '${hashKey('ua_sec_upgraded')}', 'ua_sec_upgrad', 'active', '2025-01-01T00:00:00.000Z');
      INSERT INTO rate_windows VALUES ('1', ${Math.floor(T0 / 60_000)}, 7);
      INSERT INTO quota_usage VALUES ('1', '2025-01', 40);
      INSERT INTO usage VALUES ('1', 'useragent', '2025-01-14', 39), ('1', 'useragent', '2025-01-15', 1);
      PRAGMA user_version = 1;
    `);
    v1.close();

    const meter = open();
    const request = await requestFor(meter, 'ua_sec_upgraded');
    expect(await meter.quota('1', 10_000, T0)).toEqual({ limit: 10_000, remaining: 10_000 - 40, period: '2025-01' });
    // The minute's 7 hits carry over, as do the month's 40 lookups.
    expect(await meter.consume(request)).toMatchObject({ allowed: true, rate: { remaining: 120 - 8 }, quota: { remaining: 10_000 - 41 } });
    expect(await meter.usage()).toEqual([
      { subscriptionId: '1', product: 'useragent', day: '2025-01-14', lookups: 39 },
      { subscriptionId: '1', product: 'useragent', day: '2025-01-15', lookups: 2 },
    ]);
  });

  it('uses WAL journaling and records its schema version', async () => {
    await open().close();
    const db = new Database(meterFile.path, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(3);
    } finally {
      db.close();
    }
  });

  it('never writes a plaintext key to disk, only its hash', async () => {
    const meter = open();
    const sub = await issueKeys(meter, { product: 'useragent' });
    await meter.consume(await requestFor(meter, sub.secretKey));

    const onDisk = () =>
      ['', '-wal', '-shm']
        .map((suffix) => meterFile.path + suffix)
        .filter(existsSync)
        .map((file) => readFileSync(file).toString('latin1'))
        .join('');
    const check = (bytes: string) => {
      for (const key of [sub.secretKey, sub.publicKey]) {
        expect(bytes).not.toContain(key);
        expect(bytes).toContain(hashKey(key));
      }
    };
    check(onDisk());
    await meter.close();
    // After close the WAL is checkpointed into the main file.
    check(readFileSync(meterFile.path).toString('latin1'));
  });

  it('rejects calls after close instead of hanging', async () => {
    const meter = open();
    await meter.close();
    await expect(meter.listKeys()).rejects.toThrow(/closed/);
    await expect(
      meter.consume({ keyId: '1', subscriptionId: '1', product: 'useragent', rateLimitPerMinute: 1, monthlyQuota: 1, reserveQuota: true, now: T0 }),
    ).rejects.toThrow(/closed/);
  });

  it('throws a clear error at construction when the file cannot be used', () => {
    expect(() => createSqliteMeter(join(meterFile.dir, 'missing-dir', 'meter.db'))).toThrow(/cannot open metering database ".*missing-dir.*"/);

    writeFileSync(meterFile.path, 'this is not a database, just some text long enough to look like a header');
    expect(() => createSqliteMeter(meterFile.path)).toThrow(/cannot open metering database ".*": it is not an SQLite database$/);
  });

  it('refuses a database from a newer schema version', () => {
    const db = new Database(meterFile.path);
    db.pragma('user_version = 99');
    db.close();
    expect(() => createSqliteMeter(meterFile.path)).toThrow(/schema version 99 is newer/);
  });

  it('rejects an invalid plan table at construction', () => {
    expect(() => createSqliteMeter(meterFile.path, { plans: [{ slug: 'x', product: '*', rateLimitPerMinute: -1, monthlyQuota: null }] })).toThrow(TypeError);
  });
});
