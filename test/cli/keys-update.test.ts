/**
 * `seclookup keys update`: a key's subscription moved to another plan, or given another IP
 * allowlist, in place (both keys of the pair, every site key of a captcha subscription), on a
 * --db file and on Redis; what it says, and what it refuses with exit 2 or 1, changing nothing.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/metering/keys.js';
import { DEFAULT_KEY_CACHE_MS } from '../../src/metering/redis/index.js';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import { startRedisServer, type RedisServer } from '../servers/redis-server.js';
import { createTempDirs, runCli, runCliJson } from './harness.js';

interface CreatedJson {
  secret_key: string;
  public_key: string;
  subscription_id: string;
  secret_key_id: string;
  public_key_id: string;
}

interface ListedKey {
  id: string;
  subscription_id: string;
  product: string;
  kind: 'secret' | 'public';
  plan: string;
  status: 'active' | 'revoked';
  ip_allow: string[];
}

const temp = createTempDirs();
let db: string;

beforeEach(() => {
  db = join(temp.make(), 'keys.db');
});
afterAll(() => temp.cleanup());

const createPair = (...extra: string[]) => runCliJson<CreatedJson>(['keys', 'create', '--product', 'useragent', '--json', ...extra, '--db', db]);
const listKeys = () => runCliJson<ListedKey[]>(['keys', 'list', '--json', '--db', db]);
const planAndAllowlist = async () => (await listKeys()).map((k) => [k.id, k.plan, k.ip_allow]);

describe('seclookup keys update', () => {
  it('--plan moves the pair to another plan, by full key or by id, and says both keys carry it', async () => {
    const pair = await createPair();
    const other = await createPair();
    const byKey = await runCli(['keys', 'update', pair.public_key, '--plan', 'enterprise', '--db', db]);
    expect(byKey).toEqual({
      code: 0,
      stdout:
        `Updated subscription ${pair.subscription_id} (useragent: secret key ${pair.secret_key_id}, public key ${pair.public_key_id}): plan starter -> enterprise.\n` +
        "It applies to every key listed, which stay the same; usage and this month's quota count are kept. Running servers apply it at once.\n",
      stderr: '',
    });
    expect(await planAndAllowlist()).toEqual([
      [pair.secret_key_id, 'enterprise', []],
      [pair.public_key_id, 'enterprise', []],
      [other.secret_key_id, 'starter', []],
      [other.public_key_id, 'starter', []],
    ]);

    const byId = await runCli(['keys', 'update', pair.secret_key_id, '--plan', 'enterprise', '--db', db]);
    expect(byId.stdout).toContain(': plan enterprise (as before).\n');
    expect(byId.stdout).not.toContain(pair.secret_key);
  });

  it('--ip-allow replaces the allowlist, normalised; --no-ip-allow drops it; --json prints the subscription before and after', async () => {
    const pair = await createPair('--ip-allow', '192.0.2.0/24');
    const narrowed = await runCli(['keys', 'update', pair.secret_key, '--ip-allow', '10.0.0.0/8, 2001:DB8::1', '--ip-allow', '203.0.113.7', '--db', db]);
    expect(narrowed.stdout.split('\n')[0]).toBe(
      `Updated subscription ${pair.subscription_id} (useragent: secret key ${pair.secret_key_id}, public key ${pair.public_key_id}): IP allowlist 192.0.2.0/24 -> 10.0.0.0/8,2001:db8::1/128,203.0.113.7/32.`,
    );
    const allowlist = ['10.0.0.0/8', '2001:db8::1/128', '203.0.113.7/32'];
    expect(await planAndAllowlist()).toEqual([
      [pair.secret_key_id, 'starter', allowlist],
      [pair.public_key_id, 'starter', allowlist],
    ]);

    const opened = await runCliJson<Record<string, unknown>>([
      'keys',
      'update',
      pair.public_key_id,
      '--no-ip-allow',
      '--plan',
      'enterprise',
      '--json',
      '--db',
      db,
    ]);
    expect(opened).toEqual({
      subscription_id: pair.subscription_id,
      product: 'useragent',
      plan: 'enterprise',
      ip_allow: [],
      before: { plan: 'starter', ip_allow: allowlist },
      keys: (await listKeys()).map((key) => ({ ...key, created_at: expect.any(String), prefix: expect.any(String) })),
    });
    expect(await planAndAllowlist()).toEqual([
      [pair.secret_key_id, 'enterprise', []],
      [pair.public_key_id, 'enterprise', []],
    ]);
  });

  it('a server on the file applies the change from its next request on, as a revocation', async () => {
    const pair = await createPair();
    // The meter serve keeps open: it has the key (and its plan) in its cache.
    const serve = createSqliteMeter(db);
    try {
      expect(await serve.resolveKey(hashKey(pair.secret_key))).toMatchObject({ ipAllow: [], plan: { slug: 'starter' } });
      expect((await runCli(['keys', 'update', pair.secret_key_id, '--plan', 'enterprise', '--ip-allow', '10.0.0.0/8', '--db', db])).code).toBe(0);
      // The cache looks for other connections' commits once per millisecond.
      const start = Date.now();
      while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 1));
      expect(await serve.resolveKey(hashKey(pair.secret_key))).toMatchObject({
        status: 'active',
        ipAllow: ['10.0.0.0/8'],
        plan: { slug: 'enterprise', rateLimitPerMinute: 3_000, monthlyQuota: null },
      });
    } finally {
      await serve.close();
    }
  });

  it('a revoked key names its subscription too: the change applies, the key stays revoked', async () => {
    const pair = await createPair();
    await runCli(['keys', 'revoke', pair.secret_key_id, '--db', db]);
    const result = await runCli(['keys', 'update', pair.secret_key, '--plan', 'enterprise', '--db', db]);
    expect(result.stdout.split('\n')[0]).toBe(
      `Updated subscription ${pair.subscription_id} (useragent: secret key ${pair.secret_key_id} (revoked), public key ${pair.public_key_id}): plan starter -> enterprise.`,
    );
    expect((await listKeys()).map((k) => [k.status, k.plan])).toEqual([
      ['revoked', 'enterprise'],
      ['active', 'enterprise'],
    ]);
  });

  it.each([
    [[], 'nothing to change: give --plan, --ip-allow or --no-ip-allow'],
    [['--ip-allow', '10.0.0.0/8', '--no-ip-allow'], 'give --ip-allow or --no-ip-allow, not both'],
    [['--ip-allow', ','], '--ip-allow needs at least one network or address (got ",")'],
    [['--ip-allow', '10.0.0.1/8'], '--ip-allow: "10.0.0.1/8" has host bits set after the /8 prefix'],
    [['--ip-allow', 'nonsense'], '--ip-allow: "nonsense" is not an IP address or CIDR'],
    [['--plan'], 'option --plan needs a value'],
  ])('%j exits 2 with the hint to keys --help, changing nothing', async (flags, message) => {
    const pair = await createPair();
    const before = await listKeys();
    const result = await runCli(['keys', 'update', pair.secret_key_id, ...flags, '--db', db]);
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toContain(`seclookup: ${message}`);
    expect(result.stderr).toContain('Run `seclookup keys --help` for usage.');
    expect(await listKeys()).toEqual(before);
  });

  it('exits 2 without a KEY', async () => {
    const result = await runCli(['keys', 'update', '--plan', 'enterprise', '--db', db]);
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toContain('missing KEY');
  });

  it('exits 1 for an unknown plan (naming the plans there are) and for a key that does not exist, changing nothing', async () => {
    const pair = await createPair();
    const before = await listKeys();
    const unknownPlan = await runCli(['keys', 'update', pair.secret_key, '--plan', 'gold', '--db', db]);
    expect(unknownPlan).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'seclookup: unknown plan "gold" for useragent; plans for it: enterprise, starter (see `seclookup plans list`, create one with `seclookup plans set`)\n',
    });
    const noId = await runCli(['keys', 'update', '99999', '--plan', 'enterprise', '--db', db]);
    // The hint names the store given (a bare `keys list` would read ./seclookup.db).
    expect([noId.code, noId.stderr]).toEqual([1, `seclookup: no key with id 99999 (see \`seclookup keys list --db ${db}\`)\n`]);
    const noKey = await runCli(['keys', 'update', 'ua_sec_doesnotexistdoesnotexistdoesnot', '--plan', 'enterprise', '--db', db]);
    expect([noKey.code, noKey.stderr]).toEqual([1, `seclookup: no key matches; pass the full key, or its id from \`seclookup keys list --db ${db}\`\n`]);
    expect(await listKeys()).toEqual(before);
  });

  it("a captcha key takes --plan for its whole subscription (every site key); its IP allowlist is its site key's (exit 2)", async () => {
    const first = await runCliJson<Record<string, string>>(['sitekeys', 'create', '--domain', 'example.com', '--json', '--db', db]);
    const second = await runCliJson<Record<string, string>>(['sitekeys', 'create', '--subscription', first.subscription_id, '--json', '--db', db]);
    const moved = await runCli(['keys', 'update', first.site_key, '--plan', 'enterprise', '--db', db]);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(
      `(captcha: public key ${first.public_key_id}, secret key ${first.secret_key_id}, public key ${second.public_key_id}, secret key ${second.secret_key_id}): plan starter -> enterprise.`,
    );
    expect((await listKeys()).map((k) => [k.product, k.plan])).toEqual(Array.from({ length: 4 }, () => ['captcha', 'enterprise']));

    const refused = await runCli(['keys', 'update', first.public_key_id, '--ip-allow', '10.0.0.0/8', '--db', db]);
    expect([refused.code, refused.stdout]).toEqual([2, '']);
    expect(refused.stderr).toContain(
      "seclookup: a captcha key's IP allowlist is its site key's: use `seclookup sitekeys update KEY --ip-allow CIDR,...` (or --no-ip-allow); keys update takes --plan for it\n",
    );
    expect((await listKeys()).every((k) => k.ip_allow.length === 0)).toBe(true);
  });

  it('the help describes update, and a missing subcommand names it', async () => {
    const help = (await runCli(['keys', '--help'])).stdout;
    // The usage line wraps at 100 columns (help-width.test.ts).
    expect(help.replace(/\s+/g, ' ')).toContain(
      'seclookup keys update KEY|ID [--plan SLUG] [--ip-allow CIDR,... | --no-ip-allow] [--json] [--db FILE | --redis URL]',
    );
    expect(help.replace(/\s+/g, ' ')).toContain('the change applies to the subscription, so to both keys of the pair');
    expect((await runCli(['keys'])).stderr).toContain("missing subcommand: create, list or revoke a key, or update its subscription's plan or IP allowlist");
  });
});

describe('seclookup keys update --redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('changes the subscription in Redis and says servers apply it within the key cache time', async () => {
    const url = redis.url();
    const pair = await runCliJson<CreatedJson>(['keys', 'create', '--product', 'tls', '--json', '--redis', url]);
    const result = await runCli(['keys', 'update', pair.public_key, '--plan', 'enterprise', '--ip-allow', '198.51.100.0/24', '--redis', url]);
    expect(result.stdout).toBe(
      `Updated subscription ${pair.subscription_id} (tls: secret key ${pair.secret_key_id}, public key ${pair.public_key_id}): plan starter -> enterprise; IP allowlist any -> 198.51.100.0/24.\n` +
        `It applies to every key listed, which stay the same; usage and this month's quota count are kept. Running servers apply it within ${DEFAULT_KEY_CACHE_MS / 1000} s (each server on this Redis keeps a key and its plan in memory that long).\n`,
    );
    const listed = await runCliJson<ListedKey[]>(['keys', 'list', '--json', '--redis', url]);
    expect(listed.map((k) => [k.id, k.plan, k.ip_allow])).toEqual([
      [pair.secret_key_id, 'enterprise', ['198.51.100.0/24']],
      [pair.public_key_id, 'enterprise', ['198.51.100.0/24']],
    ]);
  });
});
