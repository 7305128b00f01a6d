/**
 * What `seclookup serve` and the commands guarantee about secrets at rest, through the built
 * CLI: the database, its -wal and -shm and the operator key file are 0600; a copy of the .db
 * without its key file signs no captcha proof; another application's database is refused
 * untouched; `keys create --product captcha` points to `sitekeys create`.
 */
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

async function challengeStatus(baseUrl: string, siteKey: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/v1/captcha/challenge?sitekey=${siteKey}&hostname=shop.example.com`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('secrets at rest under seclookup serve', () => {
  it('the database, its -wal and -shm, and the key file beside it are 0600; the signing key is stored wrapped, the site-key secret only hashed', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const site = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    const { serve, baseUrl } = await startServe(db);
    expect((await challengeStatus(baseUrl, site.site_key)).status).toBe(200);
    expect(serve.stderr).not.toContain('signing key');
    for (const file of [db, `${db}-wal`, `${db}-shm`, `${db}.secret`]) expect([file, modeOf(file)]).toEqual([file, '600']);
    expect(readFileSync(`${db}.secret`, 'utf8').trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const reader = new Database(db, { readonly: true });
    const stored = reader.prepare("SELECT value FROM settings WHERE name = 'captcha.signing_keys'").pluck().get() as string;
    reader.close();
    expect(JSON.parse(stored)[0]).toEqual({ kid: expect.any(String), wrapped: expect.any(String), created_at: expect.any(Number) });
    const onDisk = Buffer.concat([db, `${db}-wal`].map((file) => readFileSync(file)));
    expect(onDisk.includes(site.secret_key)).toBe(false);
    expect(onDisk.includes(site.site_key.slice(7))).toBe(true); // the probe reads the files: the public key is kept in the clear
    await serve.stop('SIGTERM');

    // A copy of the .db alone (no key file) signs nothing: a new key file beside it cannot unwrap the key.
    const elsewhere = join(temp.make(), 'copy.db');
    copyFileSync(db, elsewhere);
    const copy = await startServe(elsewhere);
    // Said at start, before "listening", rather than found at the first challenge.
    const [warnings] = copy.serve.stderr.split('seclookup listening on');
    expect(warnings).toContain(
      'seclookup: warning: the captcha signing key in the store was wrapped with another operator secret (or altered): give this instance the same secret as the others, or make a new key under this one with `seclookup sitekeys rotate-signing-key`; until then challenges and proofs answer 500 server_error\n',
    );
    expect(await challengeStatus(copy.baseUrl, site.site_key)).toMatchObject({ status: 500, body: { error_code: 'server_error' } });
    await copy.serve.waitFor(() => copy.serve.logLines().some((line) => String(line.error).includes('wrapped with another operator secret')));
    await copy.serve.stop('SIGTERM');
    // With the original's secret (--secret-file, or SECLOOKUP_SECRET_FILE) it works.
    const restored = await startServe(elsewhere, { env: { SECLOOKUP_SECRET_FILE: `${db}.secret` } });
    expect((await challengeStatus(restored.baseUrl, site.site_key)).status).toBe(200);
    expect(restored.serve.stderr).not.toContain('signing key');
  });

  it('sitekeys rotate-signing-key with a new secret takes over; serve with the old one then refuses to sign', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const site = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--db', db])).code).toBe(0);
    writeFileSync(join(dir, 'new.secret'), 'a-brand-new-operator-secret-0123456789abcdef\n', { mode: 0o600 });
    const rotated = await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', join(dir, 'new.secret'), '--db', db]);
    expect([rotated.code, rotated.stdout]).toEqual([0, expect.stringContaining('Dropped 1 signing key this operator secret cannot unwrap')]);
    const withNew = await startServe(db, { args: ['--secret-file', join(dir, 'new.secret')] });
    expect((await challengeStatus(withNew.baseUrl, site.site_key)).status).toBe(200);
    await withNew.serve.stop('SIGTERM');
    const withOld = await startServe(db);
    expect((await challengeStatus(withOld.baseUrl, site.site_key)).status).toBe(500);
  });

  it('a missing or short operator secret stops serve at start (exit 2), naming the setting', async () => {
    const dir = temp.make();
    const missing = await runCli(['serve', '--port', '0', '--db', join(dir, 'a.db'), '--secret-file', join(dir, 'nope')]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining(`--secret-file ${join(dir, 'nope')}: no such file`)]);
    const short = await runCli(['serve', '--port', '0', '--db', join(dir, 'a.db')], { env: { SECLOOKUP_SECRET: 'hunter2' } });
    expect([short.code, short.stderr]).toEqual([2, expect.stringContaining('SECLOOKUP_SECRET: the operator secret must be at least 32 bytes')]);
  });

  it("refuses another application's database: exit 1 naming the file, which keeps its tables and mode", async () => {
    const path = join(temp.make(), 'app.db');
    const app = new Database(path);
    app.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)');
    app.close();
    chmodSync(path, 0o644);
    for (const args of [
      ['serve', '--port', '0'],
      ['keys', 'create', '--product', 'useragent'],
      ['sitekeys', 'list'],
    ]) {
      const result = await runCli([...args, '--db', path]);
      expect([args[0], result.code, result.stderr]).toEqual([
        args[0],
        1,
        expect.stringContaining(`"${path}" is another application's SQLite database (tables: orders)`),
      ]);
    }
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual(['orders']);
    after.close();
    expect(modeOf(path)).toBe('644');
    expect(existsSync(`${path}.secret`)).toBe(false);
  });

  it('keys create --product captcha refuses (exit 2) and points to sitekeys create, creating nothing', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const result = await runCli(['keys', 'create', '--product', 'captcha', '--db', db]);
    expect([result.code, result.stderr]).toEqual([2, expect.stringContaining('seclookup sitekeys create --domain')]);
    expect(existsSync(db)).toBe(false);
  });
});
