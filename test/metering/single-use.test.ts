import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemorySingleUseStore } from '../../src/metering/memory/single-use.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { describeSingleUseStore } from './single-use-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'seclookup-single-use-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
// The real clock: the store purges rows expired by it when it opens.
const NOW = Date.now();
let current = '';

describeSingleUseStore('memory', () => createMemorySingleUseStore());
describeSingleUseStore(
  'sqlite',
  () => createSqliteSingleUseStore((current = join(dir, `tokens-${++n}.db`))),
  () => createSqliteSingleUseStore(current),
);

describe('sqlite single-use store: group commit', () => {
  it('writes the claims of one turn in one transaction at its end, and answers each only once it is committed', async () => {
    const file = join(dir, 'grouped.db');
    const store = createSqliteSingleUseStore(file);
    const reader = new Database(file, { readonly: true });
    const rows = () => (reader.prepare('SELECT id FROM single_use ORDER BY id').all() as { id: string }[]).map((row) => row.id);
    const versions: unknown[] = [];
    const version = () => versions.push(reader.pragma('data_version', { simple: true }));
    try {
      version();
      const claims = [store.consume('a', NOW + 60_000, NOW), store.consume('b', NOW + 60_000, NOW), store.consume('a', NOW + 60_000, NOW)];
      // Nothing is written during the turn the claims were made in.
      expect(rows()).toEqual([]);
      expect(await Promise.all(claims)).toEqual([true, true, false]);
      expect(rows()).toEqual(['a', 'b']);
      version();
      // One commit by the other connection for the three claims.
      expect(Number(versions[1]) - Number(versions[0])).toBe(1);
    } finally {
      reader.close();
      await store.close();
    }
  });

  it('close writes the claims already made before the file closes', async () => {
    const file = join(dir, 'closing.db');
    const store = createSqliteSingleUseStore(file);
    const claim = store.consume('last', NOW + 60_000, NOW);
    await store.close();
    expect(await claim).toBe(true);
    const again = createSqliteSingleUseStore(file);
    try {
      expect(await again.consume('last', NOW + 60_000, NOW + 1)).toBe(false);
    } finally {
      await again.close();
    }
  });

  it('a file written before claims had owners gets the column; its claims stay used', async () => {
    const file = join(dir, 'before-owners.db');
    const old = new Database(file);
    old.exec('CREATE TABLE single_use (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID');
    old.prepare('INSERT INTO single_use (id, expires_at) VALUES (?, ?)').run('spent', NOW + 60_000);
    old.close();
    // Two processes upgrading it at once: both open.
    const [first, second] = [createSqliteSingleUseStore(file), createSqliteSingleUseStore(file)];
    try {
      expect(await first.consume('spent', NOW + 60_000, NOW, 'some-owner')).toBe(false);
      expect(await second.consume('fresh', NOW + 60_000, NOW, 'k')).toBe(true);
      expect(await first.consume('fresh', NOW + 60_000, NOW, 'k')).toBe(true);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe('seclookup/sqlite, the built subpath', () => {
  it('exports the SQLite single-use store beside the meter, for processes that mount the API on one file', async () => {
    const entry = (await import(new URL('../../dist/sqlite.js', import.meta.url).href)) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual(['createSqliteMeter', 'createSqliteSingleUseStore']);
    const file = join(dir, 'subpath.db');
    const store = (entry.createSqliteSingleUseStore as typeof createSqliteSingleUseStore)(file);
    try {
      expect(await store.consume('once', NOW + 60_000, NOW)).toBe(true);
      expect(await store.consume('once', NOW + 60_000, NOW)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
