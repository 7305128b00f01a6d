/**
 * `seclookup sitekeys` through the built CLI, then a new user's path end to end: create a site
 * key, start `seclookup serve` on the same database, solve a puzzle over HTTP, verify the proof
 * from "the site's server" once, and see the second use refused.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

async function post(url: string, json: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('seclookup sitekeys', () => {
  it('create (--json), list, update, revoke; several site keys on one subscription', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const created = await runCliJson<Record<string, unknown>>([
      'sitekeys',
      'create',
      '--domain',
      'Shop.Example.com,example.org',
      '--managed',
      '--json',
      '--db',
      db,
    ]);
    expect(Object.keys(created).sort()).toEqual([
      'created_at',
      'domains',
      'plan',
      'public_key_id',
      'secret_key',
      'secret_key_id',
      'site_key',
      'subscription_id',
    ]);
    expect(created).toMatchObject({
      site_key: expect.stringMatching(/^tf_pub_/),
      secret_key: expect.stringMatching(/^tf_sec_/),
      domains: ['shop.example.com', 'example.org'],
      plan: 'starter',
    });

    const listed = await runCliJson<Record<string, unknown>[]>(['sitekeys', 'list', '--json', '--db', db]);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      site_key: created.site_key,
      status: 'active',
      managed: true,
      domains: ['shop.example.com', 'example.org'],
      ip_allow: [],
    });
    expect(JSON.stringify(listed)).not.toContain(String(created.secret_key));

    const second = await runCli(['sitekeys', 'create', '--subscription', String(listed[0].subscription_id), '--db', db]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`(subscription ${String(listed[0].subscription_id)}) in ${db}.`);
    expect(second.stdout).toContain('No domains yet');

    const updated = await runCli([
      'sitekeys',
      'update',
      String(created.site_key),
      '--domain',
      'example.net',
      '--ip-allow',
      '10.0.0.0/8',
      '--no-managed',
      '--db',
      db,
    ]);
    expect(updated.code).toBe(0);
    const after = (await runCliJson<Record<string, unknown>[]>(['sitekeys', 'list', '--json', '--db', db])).find((k) => k.site_key === created.site_key);
    expect(after).toMatchObject({ domains: ['example.net'], ip_allow: ['10.0.0.0/8'], managed: false });

    expect((await runCli(['sitekeys', 'revoke', String(created.site_key), '--db', db])).code).toBe(0);
    const revoked = (await runCliJson<Record<string, unknown>[]>(['sitekeys', 'list', '--json', '--db', db])).find((k) => k.site_key === created.site_key);
    expect(revoked?.status).toBe('revoked');
    expect((await runCli(['sitekeys', 'rotate-signing-key', '--db', db])).stdout).toMatch(/^New signing key /);
  });

  it('create --json names the subscription, the key ids and the creation time: those list, keys list and --subscription use', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const created = await runCliJson<Record<string, string>>(['sitekeys', 'create', '--domain', 'example.com', '--json', '--db', db]);
    const [listed] = await runCliJson<Record<string, unknown>[]>(['sitekeys', 'list', '--json', '--db', db]);
    expect(created).toMatchObject({
      subscription_id: listed.subscription_id,
      public_key_id: listed.id,
      created_at: listed.created_at,
    });
    const keys = await runCliJson<{ id: string; kind: string; subscription_id: string }[]>(['keys', 'list', '--json', '--db', db]);
    expect(keys.map((k) => [k.kind, k.id, k.subscription_id])).toEqual([
      ['public', created.public_key_id, created.subscription_id],
      ['secret', created.secret_key_id, created.subscription_id],
    ]);
    // The rotation in docs/operators.md: a second site key on the same subscription, from the id printed.
    const rotated = await runCliJson<Record<string, string>>(['sitekeys', 'create', '--subscription', created.subscription_id, '--json', '--db', db]);
    expect(rotated.subscription_id).toBe(created.subscription_id);
    expect(rotated.public_key_id).not.toBe(created.public_key_id);
  });

  it('the risk policy: on by default (block at 60, scaling on), set by create and update, shown by list; bad values exit 2', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const plain = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--json', '--db', db]);
    const custom = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--risk-block-at', '80', '--no-risk-scaling', '--json', '--db', db]);
    const riskOf = async () =>
      Object.fromEntries((await runCliJson<Record<string, unknown>[]>(['sitekeys', 'list', '--json', '--db', db])).map((k) => [k.site_key, k.risk]));
    expect(await riskOf()).toEqual({
      [plain.site_key]: { block_at: 60, scale_difficulty: true },
      [custom.site_key]: { block_at: 80, scale_difficulty: false },
    });
    const table = await runCli(['sitekeys', 'list', '--db', db]);
    expect(table.stdout).toContain('RISK');
    expect(table.stdout).toContain('block at 60, scaling on');

    const updated = await runCli(['sitekeys', 'update', custom.site_key, '--risk-block-at', 'off', '--risk-scaling', '--db', db]);
    expect([updated.code, updated.stdout]).toEqual([0, expect.stringContaining('risk never block, scaling on')]);
    expect((await runCli(['sitekeys', 'update', plain.site_key, '--no-risk-scaling', '--db', db])).code).toBe(0);
    expect(await riskOf()).toEqual({
      [plain.site_key]: { block_at: 60, scale_difficulty: false },
      [custom.site_key]: { block_at: null, scale_difficulty: true },
    });

    for (const bad of ['0', '101', 'high', '6O']) {
      const refused = await runCli(['sitekeys', 'create', '--risk-block-at', bad, '--db', db]);
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('--risk-block-at')]);
    }
    expect((await runCli(['sitekeys', 'update', plain.site_key, '--risk-scaling', '--no-risk-scaling', '--db', db])).code).toBe(2);
  });

  it('refuses bad input with exit 2, and an unknown site key, plan or subscription with exit 1', async () => {
    const db = join(temp.make(), 'seclookup.db');
    expect((await runCli(['sitekeys', 'create', '--domain', 'https://example.com/', '--db', db])).code).toBe(2);
    expect((await runCli(['sitekeys', 'create', '--ip-allow', '10.0.0.1/8', '--db', db])).code).toBe(2);
    expect((await runCli(['sitekeys', 'create', '--plan', 'starter', '--subscription', '1', '--db', db])).code).toBe(2);
    const noPlan = await runCli(['sitekeys', 'create', '--plan', 'gold', '--db', db]);
    expect([noPlan.code, noPlan.stderr]).toEqual([1, expect.stringContaining('unknown plan "gold"')]);
    const notAnId = await runCli(['sitekeys', 'create', '--subscription', 'abc', '--db', db]);
    expect([notAnId.code, notAnId.stderr]).toEqual([2, expect.stringContaining('--subscription takes a subscription id, a number')]);
    const noSub = await runCli(['sitekeys', 'create', '--subscription', '99', '--db', db]);
    expect([noSub.code, noSub.stderr]).toEqual([1, expect.stringContaining('no captcha subscription "99"')]);
    expect((await runCli(['sitekeys', 'update', 'tf_pub_nope', '--managed', '--db', db])).code).toBe(1);
    expect((await runCli(['sitekeys', 'update', 'tf_pub_nope', '--db', db])).code).toBe(2);
    expect((await runCli(['sitekeys', 'revoke', '42', '--db', db])).code).toBe(1);
    expect((await runCli(['sitekeys', 'frobnicate', '--db', db])).code).toBe(2);
  });

  it('refuses a public suffix as a domain (exit 2): each domain allows every site under it; names the list does not hold stay hosts', async () => {
    const db = join(temp.make(), 'seclookup.db');
    for (const suffix of ['com', 'co.uk', 'github.io', 'COM.']) {
      const refused = await runCli(['sitekeys', 'create', '--domain', 'example.com', '--domain', suffix, '--db', db]);
      expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('is a public suffix: it would allow every site under it')]);
    }
    const created = await runCliJson<{ site_key: string; domains: string[] }>([
      'sitekeys',
      'create',
      '--domain',
      'shop.github.io',
      '--domain',
      'localhost',
      '--json',
      '--db',
      db,
    ]);
    expect(created.domains).toEqual(['shop.github.io', 'localhost']);
    const update = await runCli(['sitekeys', 'update', created.site_key, '--domain', 'org', '--db', db]);
    expect([update.code, update.stderr]).toEqual([2, expect.stringContaining('org is a public suffix')]);
  });

  it('revoke and update take the secret key (tf_sec_) of a site key too, and no message ever repeats one', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const leaked = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    const other = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'other.example', '--json', '--db', db]);
    const updated = await runCli(['sitekeys', 'update', leaked.secret_key, '--domain', 'www.shop.example.com', '--db', db]);
    expect([updated.code, updated.stdout]).toEqual([0, expect.stringContaining('domains www.shop.example.com')]);
    const revoked = await runCli(['sitekeys', 'revoke', leaked.secret_key, '--db', db]);
    expect([revoked.code, revoked.stdout]).toEqual([0, expect.stringMatching(/^Revoked site key \d+ and its secret key\.\n$/)]);
    const status = Object.fromEntries(
      (await runCliJson<{ site_key: string; status: string }[]>(['sitekeys', 'list', '--json', '--db', db])).map((k) => [k.site_key, k.status]),
    );
    expect(status).toEqual({ [leaked.site_key]: 'revoked', [other.site_key]: 'active' });

    // A secret key that matches nothing (mistyped, another store's) is never repeated: said as "the secret key given".
    const unknown = `tf_sec_${'A'.repeat(32)}`;
    const outputs = [
      await runCli(['sitekeys', 'revoke', unknown, '--db', db]),
      await runCli(['sitekeys', 'update', unknown, '--managed', '--db', db]),
      await runCli(['sitekeys', 'revoke', other.secret_key, unknown, '--db', db]),
      await runCli(['sitekeys', 'create', '--subscription', unknown, '--db', db]),
      await runCli(['keys', 'revoke', other.secret_key, unknown, '--db', db]),
      // Pasted where a flag goes: the option parser's own message does not repeat it either.
      await runCli(['sitekeys', 'revoke', `--${unknown}`, '--db', db]),
    ];
    expect(outputs.map((result) => result.code)).toEqual([1, 1, 2, 2, 2, 2]);
    expect(outputs[0].stderr).toBe(
      `seclookup: no site key for the secret key given (give the tf_pub_ key, its tf_sec_ key or its id; see \`seclookup sitekeys list --db ${db}\`)\n`,
    );
    expect(outputs[1].stderr).toBe(
      'seclookup: no site key for the secret key given (give the tf_pub_ key, its tf_sec_ key or its id; see seclookup sitekeys list)\n',
    );
    for (const result of outputs) {
      expect(result.stdout + result.stderr).not.toContain('tf_sec_A');
      expect(result.stdout + result.stderr).not.toContain(other.secret_key.slice(7));
    }
    // The other site key was not touched by the refused commands.
    expect((await runCliJson<{ status: string }[]>(['sitekeys', 'list', '--json', '--db', db])).map((k) => k.status)).toEqual(['revoked', 'active']);
  });

  it('--domain that names no hostname (",") is refused (exit 2), as --ip-allow "," is: update must not empty the allowlist', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const key = await runCliJson<{ site_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    for (const args of [
      ['update', key.site_key, '--domain', ','],
      ['update', key.site_key, '--domain', ' , ', '--domain', ','],
      ['create', '--domain', ','],
    ]) {
      const result = await runCli(['sitekeys', ...args, '--db', db]);
      expect([args.join(' '), result.code, result.stderr.split('\n')[0]]).toEqual([
        args.join(' '),
        2,
        expect.stringMatching(/^seclookup: --domain needs at least one hostname \(got ".*"\)$/),
      ]);
    }
    const ipAllow = await runCli(['sitekeys', 'update', key.site_key, '--ip-allow', ',', '--db', db]);
    expect([ipAllow.code, ipAllow.stderr]).toEqual([2, expect.stringContaining('--ip-allow needs at least one network or address (got ",")')]);
    const listed = await runCliJson<{ domains: string[] }[]>(['sitekeys', 'list', '--json', '--db', db]);
    expect(listed.map((k) => k.domains)).toEqual([['shop.example.com']]);
  });

  it('rotate-signing-key on a database that does not exist refuses (exit 1, as sitekeys list does) and creates neither it nor a key file', async () => {
    const missing = join(temp.make(), 'typo-seclookp.db');
    const rotate = await runCli(['sitekeys', 'rotate-signing-key', '--db', missing]);
    const list = await runCli(['sitekeys', 'list', '--db', missing]);
    expect([rotate.code, rotate.stdout]).toEqual([1, '']);
    expect(rotate.stderr).toBe(list.stderr);
    expect(rotate.stderr).toMatch(/^seclookup: no database at .*typo-seclookp\.db; pass --db FILE/);
    expect([existsSync(missing), existsSync(`${missing}.secret`)]).toEqual([false, false]);
  });

  it('a new user: site key from the CLI, a puzzle solved through serve, the proof verified once and refused the second time', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const key = await runCliJson<{ site_key: string; secret_key: string }>(['sitekeys', 'create', '--domain', 'shop.example.com', '--json', '--db', db]);
    const { serve, baseUrl } = await startServe(db);
    const challenge = await fetch(`${baseUrl}/v1/captcha/challenge?sitekey=${key.site_key}&hostname=shop.example.com`).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
    expect(challenge.success).toBe(true);
    const token = `${challenge.challenge}.${solvePow(challenge.params as PowParams)}`;
    const verified = await post(`${baseUrl}/v1/captcha/verify`, { sitekey: key.site_key, hostname: 'shop.example.com', token, action: 'checkout' });
    expect(verified.status).toBe(200);
    const first = await post(`${baseUrl}/v1/captcha/siteverify`, { secret: key.secret_key, response: verified.body.proof, action: 'checkout' });
    expect(first.body).toMatchObject({ success: true, hostname: 'shop.example.com', action: 'checkout', 'error-codes': [] });
    const again = await post(`${baseUrl}/v1/captcha/siteverify`, { secret: key.secret_key, response: verified.body.proof });
    expect(again).toMatchObject({ status: 400, body: { success: false, error_code: 'token_already_used', 'error-codes': ['timeout-or-duplicate'] } });

    // The proof ids are in the database: after a restart, the token is still used up.
    await serve.stop('SIGTERM');
    const restarted = await startServe(db);
    const third = await post(`${restarted.baseUrl}/v1/captcha/siteverify`, { secret: key.secret_key, response: verified.body.proof });
    expect(third.body.error_code).toBe('token_already_used');
    // Neither key nor proof reaches the request log.
    await restarted.serve.stop('SIGTERM');
    const log = restarted.serve.stdoutLines.join('\n') + serve.stdoutLines.join('\n');
    expect(log).toContain('/v1/captcha/siteverify');
    expect(log).not.toContain(key.secret_key);
    expect(log).not.toContain(String(verified.body.proof));
  });
});
