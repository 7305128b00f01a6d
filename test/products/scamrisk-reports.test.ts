/** One conformance suite over both report stores: memory and SQLite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createMemoryReportStore, createSqliteReportStore, REPORT_CLOCK_SKEW_MS, type ReportStore } from '../../src/products/scamrisk/reports.js';

const dir = mkdtempSync(join(tmpdir(), 'scamrisk-reports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NOW = Date.UTC(2025, 0, 1);
let n = 0;

const stores: [string, () => ReportStore][] = [
  ['memory', () => createMemoryReportStore({ now: () => NOW })],
  ['sqlite', () => createSqliteReportStore(join(dir, `r${n++}.db`), { now: () => NOW })],
];

describe.each(stores)('%s report store', (_name, make) => {
  it('adds, finds newest first, lists with filters, counts', async () => {
    const store = make();
    const a = await store.add({ type: 'email', identifier: 'a@example.com', category: 'phishing', source: 'desk' });
    expect(a).toEqual({
      id: a.id,
      type: 'email',
      identifier: 'a@example.com',
      category: 'phishing',
      source: 'desk',
      verified: false,
      disputed: false,
      note: null,
      reportedAt: NOW,
      disputedAt: null,
    });
    const b = await store.add({
      type: 'email',
      identifier: 'a@example.com',
      category: 'scam',
      source: 'other',
      verified: true,
      note: 'seen twice',
      reportedAt: NOW + 1000,
    });
    await store.add({ type: 'phone', identifier: '+14155550100', category: 'fraud', source: 'desk' });
    expect((await store.find('email', 'a@example.com')).map((r) => r.id)).toEqual([b.id, a.id]);
    expect(await store.find('email', 'b@example.com')).toEqual([]);
    expect(await store.find('phone', 'a@example.com')).toEqual([]);
    expect((await store.list({ type: 'phone' })).length).toBe(1);
    expect((await store.list({ limit: 2 })).length).toBe(2);
    expect(await store.count()).toBe(3);
    await store.close();
  });

  it('disputes and undisputes; an unknown id is null', async () => {
    const store = make();
    const a = await store.add({ type: 'domain', identifier: 'evil.example', category: 'malware', source: 'x' });
    expect(await store.dispute(a.id, true, NOW + 5)).toMatchObject({ id: a.id, disputed: true, disputedAt: NOW + 5 });
    expect((await store.find('domain', 'evil.example'))[0].disputed).toBe(true);
    expect(await store.dispute(a.id, false, NOW + 6)).toMatchObject({ disputed: false, disputedAt: NOW + 6 });
    expect(await store.dispute(9999, true, NOW)).toBeNull();
    await store.close();
  });

  it('refuses bad reports and fails once closed', async () => {
    const store = make();
    await expect(async () => store.add({ type: 'email', identifier: 'a@example.com', category: 'nope' as never, source: 'x' })).rejects.toThrow(TypeError);
    await expect(async () => store.add({ type: 'email', identifier: 'a@example.com', category: 'scam', source: ' ' })).rejects.toThrow(TypeError);
    await store.close();
    await expect(async () => store.find('email', 'a@example.com')).rejects.toThrow(expect.objectContaining({ code: 'store_failed' }));
  });

  it('refuses a time more than 5 minutes ahead of its clock (it would never decay), a non-boolean verified, an unknown type', async () => {
    const store = make();
    const report = { type: 'domain' as const, identifier: 'evil.example', category: 'scam' as const, source: 'x' };
    expect((await store.add({ ...report, reportedAt: NOW + REPORT_CLOCK_SKEW_MS })).reportedAt).toBe(NOW + REPORT_CLOCK_SKEW_MS);
    await expect(async () => store.add({ ...report, reportedAt: NOW + REPORT_CLOCK_SKEW_MS + 1 })).rejects.toThrow(/^reportedAt is in the future/);
    await expect(async () => store.add({ ...report, reportedAt: -1 })).rejects.toThrow(TypeError);
    await expect(async () => store.add({ ...report, verified: 'yes' as never })).rejects.toThrow('verified must be true or false');
    await expect(async () => store.add({ ...report, type: 'fax' as never })).rejects.toThrow(/^type must be one of/);
    expect(await store.count()).toBe(1);
    await store.close();
  });

  it('addMany stores every report or, when one is refused, none', async () => {
    const store = make();
    const report = { type: 'domain' as const, identifier: 'evil.example', category: 'scam' as const, source: 'x' };
    await expect(async () => store.addMany!([report, { ...report, note: 'n'.repeat(501) }])).rejects.toThrow('note must be at most 500 characters');
    expect(await store.count()).toBe(0);
    const added = await store.addMany!([report, { ...report, identifier: 'other.example' }]);
    expect(added.map((r) => r.identifier)).toEqual(['evil.example', 'other.example']);
    expect(await store.count()).toBe(2);
    expect((await store.find('domain', 'other.example')).length).toBe(1);
    await store.close();
  });
});

describe('the SQLite store read-only', () => {
  it('lists a file it opens for reading only, writes nothing, and reads a file without the report table as empty', async () => {
    const path = join(dir, 'read-only.db');
    const writer = createSqliteReportStore(path, { now: () => NOW });
    await writer.add({ type: 'username', identifier: 'alice', category: 'spam', source: 'x' });
    await writer.close();
    const reader = createSqliteReportStore(path, { readOnly: true });
    expect((await reader.list()).map((r) => r.identifier)).toEqual(['alice']);
    expect((await reader.find('username', 'alice')).length).toBe(1);
    await expect(async () => reader.add({ type: 'username', identifier: 'bob', category: 'spam', source: 'x' })).rejects.toThrow(/open for reading only/);
    await reader.close();

    const other = join(dir, 'meter-only.db');
    await createSqliteMeter(other).close(); // keys and plans, no reports yet
    const empty = createSqliteReportStore(other, { readOnly: true });
    expect(await empty.list()).toEqual([]);
    expect(await empty.count()).toBe(0);
    await empty.close();
    const tables = new Database(other, { readonly: true }).prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).not.toContain('scamrisk_reports');
  });
});

it('the SQLite store keeps reports across reopening', async () => {
  const path = join(dir, 'reopen.db');
  const first = createSqliteReportStore(path);
  await first.add({ type: 'username', identifier: 'alice', category: 'spam', source: 'x' });
  await first.close();
  const second = createSqliteReportStore(path);
  expect((await second.find('username', 'alice')).length).toBe(1);
  await second.close();
});

it('the SQLite store files reports made under an old platform name (twitter:) under the current one (x:) when it opens', async () => {
  const path = join(dir, 'aliases.db');
  const first = createSqliteReportStore(path);
  for (const identifier of ['twitter:alice', 'twitterfan', 'telegram:bob', 'x:carol'])
    await first.add({ type: 'username', identifier, category: 'scam', source: 'desk' });
  await first.add({ type: 'address', identifier: 'twitter:1 main st', category: 'scam', source: 'desk' });
  await first.close();
  // As a database written before normalization versions (scamrisk-normalization.test.ts has more).
  const old = new Database(path);
  old.exec('DROP TABLE scamrisk_reports_meta');
  old.close();
  const second = createSqliteReportStore(path);
  expect((await second.list()).map((r) => `${r.type} ${r.identifier}`).sort()).toEqual([
    'address twitter:1 main st',
    'username telegram:bob',
    'username twitterfan',
    'username x:alice',
    'username x:carol',
  ]);
  expect(await second.find('username', 'twitter:alice')).toEqual([]);
  expect((await second.find('username', 'x:alice')).length).toBe(1);
  await second.close();
});
