import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';

interface CreatedJson {
  secret_key: string;
  public_key: string;
  product: string;
  plan: string;
  subscription_id: string;
  ip_allow: string[];
  secret_key_id: string;
  public_key_id: string;
}

interface ListedKey {
  id: string;
  subscription_id: string;
  product: string;
  kind: 'secret' | 'public';
  prefix: string;
  plan: string;
  status: 'active' | 'revoked';
  ip_allow: string[];
  created_at: string;
}

interface ListedPlan {
  slug: string;
  product: string;
  rate_limit_per_minute: number;
  monthly_quota: number | null;
}

const temp = createTempDirs();
let db: string;

beforeAll(() => {
  db = join(temp.make(), 'keys.db');
});
afterAll(() => temp.cleanup());

describe('seclookup keys create', () => {
  it.each([
    ['useragent', 'ua_sec_', 'ua_pub_'],
    ['scamrisk', 'sa_sec_', 'sa_pub_'],
    ['geoip', 'geo_sec_', 'geo_pub_'],
    ['webhookip', 'wk_sec_', 'wk_pub_'],
  ])('--json prints one object with a %s key pair (%s / %s)', async (product, secretPrefix, publicPrefix) => {
    const created = await runCliJson<CreatedJson>(['keys', 'create', '--product', product, '--json', '--db', db]);
    expect(created).toMatchObject({ product, plan: 'starter', ip_allow: [] });
    expect(created.secret_key).toMatch(new RegExp(`^${secretPrefix}[A-Za-z0-9_-]{32}$`));
    expect(created.public_key).toMatch(new RegExp(`^${publicPrefix}[A-Za-z0-9_-]{32}$`));
    expect(created.subscription_id).toMatch(/^\d+$/);
    expect(created.secret_key_id).not.toBe(created.public_key_id);
  });

  it('ties the keys to the plan and IP allowlist given, normalising the CIDRs', async () => {
    const created = await runCliJson<CreatedJson>([
      'keys',
      'create',
      '--product',
      'tls',
      '--plan',
      'enterprise',
      '--ip-allow',
      '203.0.113.0/24, 2001:DB8::/32',
      '--ip-allow',
      '198.51.100.7',
      '--json',
      '--db',
      db,
    ]);
    expect(created).toMatchObject({ product: 'tls', plan: 'enterprise', ip_allow: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7/32'] });
  });

  it('refuses a CIDR with host bits set with exit 2, naming the network form, and stores nothing', async () => {
    const database = join(temp.make(), 'keys.db');
    await runCliJson(['keys', 'create', '--product', 'useragent', '--json', '--db', database]);
    for (const [value, network, address] of [
      ['10.0.0.1/8', '10.0.0.0/8', '10.0.0.1'],
      ['203.0.113.0/24,2001:DB8::1/32', '2001:db8::/32', '2001:db8::1'],
    ]) {
      const result = await runCli(['keys', 'create', '--product', 'useragent', '--ip-allow', value, '--db', database]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('has host bits set after the');
      expect(result.stderr).toContain(`did you mean the network ${network}, or the single address ${address}?`);
      expect(result.stderr).toContain('seclookup keys --help');
      expect(result.stdout).toBe('');
    }
    // Only the pair created before: nothing from the refused commands.
    expect(await runCliJson<ListedKey[]>(['keys', 'list', '--json', '--db', database])).toHaveLength(2);
  });

  it('takes a bare address as one host, and a full-length prefix as written', async () => {
    const created = await runCliJson<CreatedJson>([
      'keys',
      'create',
      '--product',
      'useragent',
      '--ip-allow',
      '203.0.113.7,2001:db8::7,198.51.100.9/32,0.0.0.0/0',
      '--json',
      '--db',
      db,
    ]);
    const expected = ['203.0.113.7/32', '2001:db8::7/128', '198.51.100.9/32', '0.0.0.0/0'];
    expect(created.ip_allow).toEqual(expected);
    const listed = (await runCliJson<ListedKey[]>(['keys', 'list', '--json', '--db', db])).filter((k) => k.subscription_id === created.subscription_id);
    expect(listed.map((k) => k.ip_allow)).toEqual([expected, expected]);
  });

  it('prints the keys with a shown-only-once note in the default human output', async () => {
    const result = await runCli(['keys', 'create', '--product', 'emailval', '--db', db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Created an emailval key pair on plan "starter"/);
    expect(result.stdout).toMatch(/secret key\s+ev_sec_[A-Za-z0-9_-]{32}/);
    expect(result.stdout).toMatch(/public key\s+ev_pub_[A-Za-z0-9_-]{32}/);
    expect(result.stdout).toContain('shown only this once');
  });

  it('rejects an unknown plan with exit 1 and names the plans there are', async () => {
    const result = await runCli(['keys', 'create', '--product', 'useragent', '--plan', 'gold', '--db', db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown plan "gold" for useragent');
    expect(result.stderr).toContain('starter');
    expect(result.stdout).toBe('');
  });

  it.each([
    [['--product', 'nosuch'], 'unknown product "nosuch"'],
    [['--product', 'useragent', '--ip-allow', '10.0.0.0/33'], '--ip-allow: "10.0.0.0/33" is not an IP address or CIDR'],
    [['--product', 'useragent', '--ip-allow', 'example.com'], '--ip-allow: "example.com" is not an IP address or CIDR'],
    [[], 'missing --product'],
    [['--product'], 'option --product needs a value'],
  ])('rejects %j with exit 2 and a clear message', async (args, message) => {
    const result = await runCli(['keys', 'create', ...args, '--db', db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('seclookup keys --help');
  });
});

describe('seclookup keys list and revoke', () => {
  it('lists every key with its prefix but never a full key', async () => {
    const created = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'pwbreach', '--json', '--db', db]);
    const table = await runCli(['keys', 'list', '--db', db]);
    const json = await runCli(['keys', 'list', '--json', '--db', db]);
    for (const output of [table.stdout, json.stdout]) {
      expect(output).not.toContain(created.secret_key);
      expect(output).not.toContain(created.public_key);
    }
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+PRODUCT\s+KIND\s+PREFIX\s+PLAN\s+STATUS\s+IP ALLOW\s+CREATED$/);
    expect(table.stdout).toContain(created.secret_key.slice(0, 'pb_sec_'.length + 6) + '...');

    const keys = JSON.parse(json.stdout) as ListedKey[];
    const secret = keys.find((k) => k.id === created.secret_key_id);
    expect(secret).toMatchObject({
      product: 'pwbreach',
      kind: 'secret',
      plan: 'starter',
      status: 'active',
      ip_allow: [],
      subscription_id: created.subscription_id,
    });
    expect(created.secret_key.startsWith(secret!.prefix)).toBe(true);
    expect(secret!.prefix.length).toBeLessThan(created.secret_key.length - 20);
    expect(Number.isNaN(Date.parse(secret!.created_at))).toBe(false);
  });

  it('revokes by full key and by id; the other key of the pair stays active', async () => {
    const pair1 = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'whois', '--json', '--db', db]);
    const pair2 = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'whois', '--json', '--db', db]);

    const byKey = await runCli(['keys', 'revoke', pair1.secret_key, '--db', db]);
    expect(byKey.code).toBe(0);
    expect(byKey.stdout).toContain(`Revoked key ${pair1.secret_key_id}`);
    expect(byKey.stdout).not.toContain(pair1.secret_key);

    const byId = await runCli(['keys', 'revoke', pair2.public_key_id, '--db', db]);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toContain(`Revoked key ${pair2.public_key_id}`);

    const status = new Map((await runCliJson<ListedKey[]>(['keys', 'list', '--json', '--db', db])).map((k) => [k.id, k.status]));
    expect(status.get(pair1.secret_key_id)).toBe('revoked');
    expect(status.get(pair1.public_key_id)).toBe('active');
    expect(status.get(pair2.public_key_id)).toBe('revoked');
    expect(status.get(pair2.secret_key_id)).toBe('active');

    const again = await runCli(['keys', 'revoke', pair1.secret_key_id, '--db', db]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already revoked');
  });

  it('exits 1 when no key matches', async () => {
    const byKey = await runCli(['keys', 'revoke', 'ua_sec_doesnotexistdoesnotexistdoesnot', '--db', db]);
    expect(byKey.code).toBe(1);
    expect(byKey.stderr).toContain('no key matches');
    const byId = await runCli(['keys', 'revoke', '99999', '--db', db]);
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain('no key with id 99999');
  });

  it('exits 2 without a KEY and 1 for a database that does not exist', async () => {
    const missing = await runCli(['keys', 'revoke', '--db', db]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing KEY');
    const noDb = await runCli(['keys', 'list', '--db', join(temp.make(), 'typo.db')]);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toContain('no database at');
  });

  it('uses $SECLOOKUP_DB when --db is not given', async () => {
    const envDb = join(temp.make(), 'env.db');
    await runCliJson(['keys', 'create', '--product', 'asn', '--json'], { env: { SECLOOKUP_DB: envDb } });
    const keys = await runCliJson<ListedKey[]>(['keys', 'list', '--json', '--db', envDb]);
    expect(keys.map((k) => k.product)).toEqual(['asn', 'asn']);
  });
});

describe('seclookup plans', () => {
  async function plans(database: string): Promise<ListedPlan[]> {
    return runCliJson<ListedPlan[]>(['plans', 'list', '--json', '--db', database]);
  }

  /** A new database with the default plans and no keys, as `serve` or `keys create` leaves one: `plans set` changes an existing one only. */
  async function newDatabase(): Promise<string> {
    const path = join(temp.make(), 'plans.db');
    await createSqliteMeter(path).close();
    return path;
  }

  it('set refuses a database that does not exist (exit 1, as keys list does) and creates nothing', async () => {
    const missing = join(temp.make(), 'typo-seclookp.db');
    const set = await runCli(['plans', 'set', 'gold', '--all-products', '--rate-limit', '5', '--monthly-quota', '5', '--db', missing]);
    const list = await runCli(['keys', 'list', '--db', missing]);
    expect([set.code, set.stdout]).toEqual([1, '']);
    expect(set.stderr).toBe(list.stderr);
    expect(set.stderr).toBe(
      `seclookup: no database at ${missing}; pass --db FILE (or set SECLOOKUP_DB), or create one with \`seclookup serve\` or \`seclookup keys create\`\n`,
    );
    expect(existsSync(missing)).toBe(false);
  });

  it('refuses an empty file (touch, a truncated copy) as no database, and leaves it empty', async () => {
    const empty = join(temp.make(), 'empty.db');
    writeFileSync(empty, '');
    for (const argv of [['keys', 'list'], ['plans', 'list'], ['usage'], ['plans', 'set', 'gold', '--all-products', '--rate-limit', '5']]) {
      const run = await runCli([...argv, '--db', empty]);
      expect([argv.join(' '), run.code, run.stdout]).toEqual([argv.join(' '), 1, '']);
      expect(run.stderr).toBe(
        `seclookup: ${empty} is an empty file, not a seclookup database; pass --db FILE (or set SECLOOKUP_DB), or create one with \`seclookup serve\` or \`seclookup keys create\`\n`,
      );
    }
    expect(statSync(empty).size).toBe(0);
    // keys create makes its database there, as it makes one where no file is.
    expect((await runCli(['keys', 'create', '--product', 'useragent', '--db', empty])).code).toBe(0);
    expect((await runCli(['keys', 'list', '--db', empty])).code).toBe(0);
  });

  it('lists the default plans of a new database', async () => {
    const fresh = join(temp.make(), 'plans.db');
    await runCliJson(['keys', 'create', '--product', 'useragent', '--json', '--db', fresh]);
    const rows = await plans(fresh);
    expect(rows).toContainEqual({ slug: 'starter', product: '*', rate_limit_per_minute: 120, monthly_quota: 10_000 });
    expect(rows).toContainEqual({ slug: 'enterprise', product: '*', rate_limit_per_minute: 3000, monthly_quota: null });
    const table = await runCli(['plans', 'list', '--db', fresh]);
    expect(table.stdout).toMatch(/^PLAN\s+PRODUCT\s+RATE\/MIN\s+MONTHLY QUOTA$/m);
    expect(table.stdout).toMatch(/^enterprise\s+\*\s+3000\s+unlimited$/m);
  });

  it('with --all-products creates a new plan as a * row, with unlimited quota, usable by keys create', async () => {
    const database = await newDatabase();
    const set = await runCli(['plans', 'set', 'pro', '--all-products', '--rate-limit', '600', '--monthly-quota', 'unlimited', '--db', database]);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('Created plan "pro" for every product');
    expect((await plans(database)).filter((p) => p.slug === 'pro')).toEqual([{ slug: 'pro', product: '*', rate_limit_per_minute: 600, monthly_quota: null }]);
    const created = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'dnsbl', '--plan', 'pro', '--json', '--db', database]);
    expect(created.plan).toBe('pro');
  });

  it('refuses to change a plan without --product or --all-products, and changes nothing', async () => {
    const database = join(temp.make(), 'plans.db');
    await runCliJson(['keys', 'create', '--product', 'useragent', '--json', '--db', database]);
    const before = await plans(database);
    for (const args of [
      ['starter', '--monthly-quota', '20000'],
      ['pro', '--rate-limit', '600', '--monthly-quota', '100'],
    ]) {
      const result = await runCli(['plans', 'set', ...args, '--db', database]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('say which products to change');
      expect(result.stderr).toContain('--product PRODUCT (comma-separated or repeated) for those products only');
      expect(result.stderr).toContain('--all-products for every product');
      expect(result.stderr).toContain('seclookup plans --help');
      expect(result.stdout).toBe('');
    }
    expect(await plans(database)).toEqual(before);
  });

  it('with --all-products changes only the given limit on every row of the slug, product rows included', async () => {
    const database = await newDatabase();
    const set = await runCli(['plans', 'set', 'starter', '--all-products', '--monthly-quota', '20000', '--db', database]);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain(`Updated plan "starter" for every product in ${database}:`);
    const rows = await plans(database);
    // Every starter row gets the quota; rate limits keep their per-product values.
    expect(rows.filter((p) => p.slug === 'starter')).toEqual([
      { slug: 'starter', product: '*', rate_limit_per_minute: 120, monthly_quota: 20_000 },
      { slug: 'starter', product: 'captcha', rate_limit_per_minute: 60, monthly_quota: 20_000 },
      { slug: 'starter', product: 'domainrep', rate_limit_per_minute: 60, monthly_quota: 20_000 },
      { slug: 'starter', product: 'pwbreach', rate_limit_per_minute: 60, monthly_quota: 20_000 },
      { slug: 'starter', product: 'tls', rate_limit_per_minute: 60, monthly_quota: 20_000 },
    ]);
    expect(rows.filter((p) => p.slug !== 'starter')).toEqual([{ slug: 'enterprise', product: '*', rate_limit_per_minute: 3000, monthly_quota: null }]);
  });

  it('with --all-products on a plan that has only product rows adds its * row, which needs both limits', async () => {
    const database = await newDatabase();
    expect((await runCli(['plans', 'set', 'beta', '--product', 'tls', '--rate-limit', '5', '--monthly-quota', '50', '--db', database])).code).toBe(0);

    const oneLimit = await runCli(['plans', 'set', 'beta', '--all-products', '--rate-limit', '10', '--db', database]);
    expect(oneLimit.code).toBe(2);
    expect(oneLimit.stderr).toContain(`plan "beta" has no '*' row (it has rows for tls): give both --rate-limit and --monthly-quota`);
    const otherProduct = await runCli(['plans', 'set', 'beta', '--product', 'geoip', '--rate-limit', '10', '--db', database]);
    expect(otherProduct.code).toBe(2);
    expect(otherProduct.stderr).toContain(`plan "beta" has no '*' row and no geoip row (it has rows for tls): give both`);
    expect((await plans(database)).filter((p) => p.slug === 'beta')).toEqual([{ slug: 'beta', product: 'tls', rate_limit_per_minute: 5, monthly_quota: 50 }]);

    expect((await runCli(['plans', 'set', 'beta', '--all-products', '--rate-limit', '10', '--monthly-quota', '100', '--db', database])).code).toBe(0);
    expect((await plans(database)).filter((p) => p.slug === 'beta')).toEqual([
      { slug: 'beta', product: '*', rate_limit_per_minute: 10, monthly_quota: 100 },
      { slug: 'beta', product: 'tls', rate_limit_per_minute: 10, monthly_quota: 100 },
    ]);
  });

  it('with --product takes several products, comma-separated or repeated, and leaves the others alone', async () => {
    const database = await newDatabase();
    const set = await runCli([
      'plans',
      'set',
      'starter',
      '--product',
      'tls, geoip',
      '--product',
      'asn',
      '--product',
      'tls',
      '--monthly-quota',
      '20000',
      '--db',
      database,
    ]);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain(`Updated plan "starter" for tls, geoip, asn in ${database}:`);
    expect((await plans(database)).filter((p) => p.slug === 'starter')).toEqual([
      { slug: 'starter', product: '*', rate_limit_per_minute: 120, monthly_quota: 10_000 },
      // New rows take the rate limit from the * row; tls keeps its own.
      { slug: 'starter', product: 'asn', rate_limit_per_minute: 120, monthly_quota: 20_000 },
      { slug: 'starter', product: 'captcha', rate_limit_per_minute: 60, monthly_quota: 10_000 },
      { slug: 'starter', product: 'domainrep', rate_limit_per_minute: 60, monthly_quota: 5_000 },
      { slug: 'starter', product: 'geoip', rate_limit_per_minute: 120, monthly_quota: 20_000 },
      { slug: 'starter', product: 'pwbreach', rate_limit_per_minute: 60, monthly_quota: 10_000 },
      { slug: 'starter', product: 'tls', rate_limit_per_minute: 60, monthly_quota: 20_000 },
    ]);
  });

  it('with --product creates or changes only that product row', async () => {
    const database = await newDatabase();
    await runCli(['plans', 'set', 'enterprise', '--product', 'geoip', '--monthly-quota', '250000', '--db', database]);
    await runCli(['plans', 'set', 'starter', '--product', 'tls', '--rate-limit', '5', '--db', database]);
    const rows = await plans(database);
    // New row: the missing rate limit comes from the plan's * row.
    expect(rows).toContainEqual({ slug: 'enterprise', product: 'geoip', rate_limit_per_minute: 3000, monthly_quota: 250_000 });
    expect(rows).toContainEqual({ slug: 'enterprise', product: '*', rate_limit_per_minute: 3000, monthly_quota: null });
    expect(rows).toContainEqual({ slug: 'starter', product: 'tls', rate_limit_per_minute: 5, monthly_quota: 5_000 });
    expect(rows).toContainEqual({ slug: 'starter', product: '*', rate_limit_per_minute: 120, monthly_quota: 10_000 });
  });

  it.each([
    [['set', 'pro', '--rate-limit', 'abc', '--monthly-quota', '10'], '--rate-limit must be a whole number >= 1 (got "abc")'],
    [['set', 'pro', '--rate-limit', '0', '--monthly-quota', '10'], '--rate-limit must be a whole number >= 1 (got "0")'],
    [['set', 'pro', '--rate-limit', '10', '--monthly-quota', '-5'], 'option --monthly-quota needs a value'],
    [['set', 'pro', '--rate-limit', '10', '--monthly-quota', 'lots'], '--monthly-quota must be a whole number >= 0 or "unlimited"'],
    [['set', 'brand-new', '--all-products', '--rate-limit', '10'], 'plan "brand-new" does not exist yet: give both --rate-limit and --monthly-quota'],
    [['set', 'brand-new', '--product', 'tls', '--monthly-quota', '10'], 'plan "brand-new" does not exist yet: give both --rate-limit and --monthly-quota'],
    [['set', 'starter', '--product', 'tls', '--all-products', '--rate-limit', '10'], 'give --product or --all-products, not both'],
    [['set', 'starter', '--product', 'tls,', '--rate-limit', '10'], 'unknown product ""'],
    [['set', 'pro'], 'nothing to set'],
    [['set', 'Bad Slug', '--rate-limit', '1', '--monthly-quota', '1'], 'plan slug must be'],
    [['set', 'pro', '--rate-limit', '1', '--monthly-quota', '1', '--product', 'nosuch'], 'unknown product "nosuch"'],
    [['set'], 'missing SLUG'],
    [['remove', 'pro'], 'unknown subcommand "remove"'],
  ])('plans %j exits 2 with a clear message', async (args, message) => {
    const result = await runCli(['plans', ...args, '--db', await newDatabase()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
