/**
 * What `seclookup serve` and the commands guarantee about secrets at rest, through the built
 * CLI: the database, its -wal and -shm and the operator key file are 0600; a copy of the .db
 * without its key file signs no captcha proof (and gets no new key file); a rotation never
 * drops the signing key the servers use unless forced; key-file problems are said in one line
 * (exit 1); another application's database is refused untouched; `keys create --product
 * captcha` points to `sitekeys create`.
 */
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTempDirs, runCli, runCliJson, runCliProcess } from './harness.js';
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
    // The key file it made is said once, on stderr, naming it.
    expect(serve.stderr.split('\n').filter((line) => line.includes('operator secret file'))).toEqual([
      `seclookup: created the operator secret file ${db}.secret (0600): keep it, and back it up, with the database`,
    ]);
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

    // A copy of the .db alone (no key file) signs nothing, and gets no new key file (one that
    // could never unwrap its keys): serve stops, naming the file and what to pass.
    const elsewhere = join(temp.make(), 'copy.db');
    copyFileSync(db, elsewhere);
    const alone = await runCli(['serve', '--port', '0', '--db', elsewhere]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain(
      `seclookup: the database ${elsewhere} holds captcha signing keys wrapped under an operator secret, but its key file ${elsewhere}.secret does not exist: pass the secret the server uses (--secret-file FILE, or SECLOOKUP_SECRET)`,
    );
    expect(alone.stderr).not.toContain('created the operator secret file');
    expect(existsSync(`${elsewhere}.secret`)).toBe(false);
    // With another secret, it warns at start and signs nothing.
    const otherSecret = join(temp.make(), 'other.secret');
    writeFileSync(otherSecret, 'another-operator-secret-0123456789abcdef0123\n', { mode: 0o600 });
    const copy = await startServe(elsewhere, { args: ['--secret-file', otherSecret] });
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

  it('sitekeys rotate-signing-key with a new secret is refused unless --force, which takes over; serve with the old one then refuses to sign', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const site = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--db', db])).code).toBe(0);
    writeFileSync(join(dir, 'new.secret'), 'a-brand-new-operator-secret-0123456789abcdef\n', { mode: 0o600 });
    const stored = () => {
      const reader = new Database(db, { readonly: true });
      const value = reader.prepare("SELECT value FROM settings WHERE name = 'captcha.signing_keys'").pluck().get() as string;
      reader.close();
      return value;
    };
    const before = stored();
    // A secret that cannot unwrap the current key would drop it, and captcha with it, on every server still using it.
    const refused = await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', join(dir, 'new.secret'), '--db', db]);
    expect([refused.code, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toBe(
      `seclookup: the current captcha signing key in ${db} does not unwrap under the operator secret of ${join(dir, 'new.secret')}: rotating would drop it and break captcha on every server still using it. Pass the secret the server uses (--secret-file FILE, or SECLOOKUP_SECRET), or --force to drop it (to move to this secret, or when the old one is lost)\n`,
    );
    expect(stored()).toBe(before);
    const rotated = await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', join(dir, 'new.secret'), '--force', '--db', db]);
    expect([rotated.code, rotated.stdout]).toEqual([0, expect.stringContaining('Dropped 1 signing key this operator secret cannot unwrap')]);
    const withNew = await startServe(db, { args: ['--secret-file', join(dir, 'new.secret')] });
    expect((await challengeStatus(withNew.baseUrl, site.site_key)).status).toBe(200);
    await withNew.serve.stop('SIGTERM');
    const withOld = await startServe(db);
    expect((await challengeStatus(withOld.baseUrl, site.site_key)).status).toBe(500);
  });

  it('a missing secret file stops serve at start (exit 1, naming the file and the errno); a short SECLOOKUP_SECRET is a usage error (exit 2)', async () => {
    const dir = temp.make();
    const missing = await runCli(['serve', '--port', '0', '--db', join(dir, 'a.db'), '--secret-file', join(dir, 'nope')]);
    expect([missing.code, missing.stderr]).toEqual([1, `seclookup: cannot read --secret-file ${join(dir, 'nope')}: ENOENT: no such file or directory\n`]);
    const short = await runCli(['serve', '--port', '0', '--db', join(dir, 'a.db')], { env: { SECLOOKUP_SECRET: 'hunter2' } });
    expect([short.code, short.stderr]).toEqual([2, expect.stringContaining('SECLOOKUP_SECRET: the operator secret must be at least 32 bytes')]);
  });

  it('a forgotten --secret-file on rotate-signing-key, for a store whose keys are wrapped, makes no new key file and changes nothing (exit 1)', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    const serverSecret = join(dir, 'server.secret');
    writeFileSync(serverSecret, 'the-secret-the-server-uses-0123456789abcdef\n', { mode: 0o600 });
    await runCliJson(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', serverSecret, '--db', db])).code).toBe(0);
    const reader = () => new Database(db, { readonly: true });
    const read = () => {
      const r = reader();
      const value = r.prepare("SELECT value FROM settings WHERE name = 'captcha.signing_keys'").pluck().get() as string;
      r.close();
      return value;
    };
    const before = read();
    const forgotten = await runCli(['sitekeys', 'rotate-signing-key', '--db', db]);
    expect([forgotten.code, forgotten.stdout]).toEqual([1, '']);
    expect(forgotten.stderr).toBe(
      `seclookup: the database ${db} holds captcha signing keys wrapped under an operator secret, but its key file ${db}.secret does not exist: pass the secret the server uses (--secret-file FILE, or SECLOOKUP_SECRET); no new key file is made, as a new secret could not unwrap them (if that secret is lost: write a new one with \`openssl rand -base64 32 > FILE\`, then run \`seclookup sitekeys rotate-signing-key --secret-file FILE --force\`)\n`,
    );
    expect(existsSync(`${db}.secret`)).toBe(false);
    expect(read()).toBe(before);
    // The same secret from the environment works.
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--db', db], { env: { SECLOOKUP_SECRET_FILE: serverSecret } })).code).toBe(0);
  });

  it('a command that makes the key file says so in one line naming it; a key file of this user others may read is made 0600', async () => {
    const db = join(temp.make(), 'seclookup.db');
    await runCliJson(['sitekeys', 'create', '--json', '--db', db]);
    const first = await runCli(['sitekeys', 'rotate-signing-key', '--db', db]);
    expect([first.code, first.stderr]).toEqual([
      0,
      `seclookup: created the operator secret file ${db}.secret (0600): keep it, and back it up, with the database\n`,
    ]);
    chmodSync(`${db}.secret`, 0o644);
    const again = await runCli(['sitekeys', 'rotate-signing-key', '--db', db]);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(modeOf(`${db}.secret`)).toBe('600');
    // A --secret-file of this user's too.
    const given = join(temp.make(), 'given.secret');
    writeFileSync(given, 'an-operator-secret-given-by-flag-0123456789ab\n', { mode: 0o666 });
    chmodSync(given, 0o666);
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', given, '--force', '--db', db])).code).toBe(0);
    expect(modeOf(given)).toBe('600');
  });

  it('a default key file that is a symbolic link is refused, its target untouched; a linked --secret-file is read, warned about, never chmod-ed (found by a reviewer)', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    await runCliJson(['keys', 'create', '--product', 'asn', '--json', '--db', db]);
    // Text someone else knows, at a mode the old check would have "tightened" through the link.
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'text whoever planted the link knows, long enough to pass as a secret\n');
    chmodSync(victim, 0o644);
    symlinkSync(victim, `${db}.secret`);
    const planted = await runCli(['sitekeys', 'rotate-signing-key', '--db', db]);
    expect([planted.code, planted.stderr]).toEqual([
      1,
      `seclookup: the key file ${db}.secret is a symbolic link: the default key file must be a regular file (name a linked secret, such as a mounted one, with --secret-file)\n`,
    ]);
    expect(modeOf(victim)).toBe('644');
    expect((await runCliJson<unknown[]>(['sitekeys', 'list', '--json', '--db', db])).length).toBe(0);

    // Named on purpose (a mounted secret is a link): read, and its target only warned about.
    const mounted = join(dir, 'mounted.secret');
    symlinkSync(victim, mounted);
    const given = await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', mounted, '--db', db]);
    expect([given.code, given.stderr]).toEqual([
      0,
      `seclookup: warning: the operator secret file ${mounted} leads to a file of mode 0644: other users may read it; make that file 0600\n`,
    ]);
    expect(modeOf(victim)).toBe('644');
  });

  it.runIf(process.getuid?.() === 0)(
    "another user's key file that every user may read is used with a warning naming it and its mode, and left as it is",
    async () => {
      const db = join(temp.make(), 'seclookup.db');
      await runCliJson(['sitekeys', 'create', '--json', '--db', db]);
      const given = join(temp.make(), 'provisioned.secret');
      writeFileSync(given, 'a-secret-provisioned-by-another-user-0123456\n');
      chmodSync(given, 0o644);
      chownSync(given, 65534, 65534);
      const result = await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', given, '--db', db]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(
        `seclookup: warning: the operator secret file ${given} has mode 0644 (owner uid 65534, not this user): other users may read it; make it 0600, or 0640 for the service's group\n`,
      );
      expect(modeOf(given)).toBe('644');
      // Group-readable only (0640, the service's group): no warning.
      chmodSync(given, 0o640);
      expect((await runCli(['sitekeys', 'rotate-signing-key', '--secret-file', given, '--db', db])).stderr).toBe('');
    },
  );

  it('key-file problems are said in one line naming the file and the cause (exit 1, no usage hint): truncated, unreadable, not creatable', async () => {
    const dir = temp.make();
    const db = join(dir, 'seclookup.db');
    await runCliJson(['sitekeys', 'create', '--json', '--db', db]);
    writeFileSync(`${db}.secret`, 'cut-short\n', { mode: 0o600 });
    const truncated = await runCli(['serve', '--port', '0', '--db', db]);
    expect([truncated.code, truncated.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      `seclookup: the key file ${db}.secret: the operator secret must be at least 32 bytes (got 9); make one with: openssl rand -base64 32`,
    ]);
    expect(truncated.stderr).not.toContain('--help');

    // Held to file permissions even as root (a child without root's override).
    const held = (args: string[]) => runCliProcess(args, { filePermissionsBind: true });
    writeFileSync(`${db}.secret`, 'an-operator-secret-long-enough-0123456789ab\n');
    chmodSync(`${db}.secret`, 0o000);
    const unreadable = await held(['sitekeys', 'rotate-signing-key', '--db', db]);
    expect([unreadable.code, unreadable.stderr]).toEqual([1, `seclookup: cannot read the key file ${db}.secret: EACCES: permission denied\n`]);

    // A folder this user may not write: the key file cannot be made. The -wal and -shm stay
    // there (a connection holds them open), so the database itself is usable.
    const folder = join(dir, 'ro');
    mkdirSync(folder);
    const inFolder = join(folder, 'seclookup.db');
    await runCliJson(['sitekeys', 'create', '--json', '--db', inFolder]);
    const holder = new Database(inFolder);
    holder.prepare('SELECT count(*) FROM keys').get();
    chmodSync(folder, 0o555);
    try {
      const uncreatable = await held(['sitekeys', 'rotate-signing-key', '--db', inFolder]);
      expect([uncreatable.code, uncreatable.stderr]).toEqual([
        1,
        `seclookup: cannot create the operator secret file ${inFolder}.secret: EACCES: permission denied\n`,
      ]);
    } finally {
      chmodSync(folder, 0o755);
      holder.close();
    }
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
