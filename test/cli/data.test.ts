import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookRangesDataset } from '../../src/products/webhookip/types.js';
import { viaMirror } from '../../src/lib/source-update.js';
import { respond, startHttpFixture, type FixtureHandler, type HttpFixture } from '../servers/http-fixture.js';
import { createTempDirs, REPO_ROOT, runCli, runCliJson } from './harness.js';

/** A new Stripe webhook IP that only the mirror knows about (public: the updater refuses others). */
const NEW_STRIPE_IP = '3.18.12.99';

const snapshot = JSON.parse(readFileSync(join(REPO_ROOT, 'data/webhookip/ranges.json'), 'utf8')) as WebhookRangesDataset;
const fixture = (name: string) => JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/webhookip', name), 'utf8'));
const cidrsOf = (id: string) => snapshot.providers.find((p) => p.id === id)!.cidrs;
/** The mirror path of an official feed URL: `https://host/path` is served at `/host/path`. */
const pathOf = (url: string) => viaMirror(url, '');

/**
 * Copies of the official feeds (test/fixtures/webhookip, which match the snapshot), changed
 * so that each outcome shows up once: Stripe lists one more IP (updated), sandbox Paddle
 * answers 500 and GitHub never answers, for the --timeout (both failed, previous ranges kept).
 */
function mirrorRoutes(): Record<string, FixtureHandler> {
  const stripe = fixture('stripe-ips_webhooks.json') as { WEBHOOKS: string[] };
  return {
    [pathOf('https://api.github.com/meta')]: respond.hang(),
    [pathOf('https://stripe.com/files/ips/ips_webhooks.json')]: respond.json({ WEBHOOKS: [...stripe.WEBHOOKS, NEW_STRIPE_IP] }),
    [pathOf('https://api.paddle.com/ips')]: respond.json(fixture('paddle-ips.json')),
    [pathOf('https://sandbox-api.paddle.com/ips')]: respond.status(500),
    [pathOf('https://static.intercomcdn.com/intercom-ips/us/intercom-ip-ranges.json')]: respond.json(fixture('intercom-us-ip-ranges.json')),
    [pathOf('https://static.intercomcdn.com/intercom-ips/eu/intercom-ip-ranges.json')]: respond.json(fixture('intercom-eu-ip-ranges.json')),
    [pathOf('https://static.intercomcdn.com/intercom-ips/au/intercom-ip-ranges.json')]: respond.json(fixture('intercom-au-ip-ranges.json')),
    [pathOf('https://ip-ranges.atlassian.com/')]: respond.json(fixture('atlassian-ip-ranges.json')),
    [pathOf('https://docs.svix.com/webhook-ips.json')]: respond.json(fixture('svix-webhook-ips.json')),
  };
}

const temp = createTempDirs();
let mirror: HttpFixture;

beforeAll(async () => {
  mirror = await startHttpFixture(mirrorRoutes());
});
afterAll(async () => {
  await mirror.close();
  temp.cleanup();
});

/** A writable copy of the bundled data folder. */
function copyOfData(): string {
  const dir = temp.make();
  cpSync(join(REPO_ROOT, 'data'), dir, { recursive: true });
  return dir;
}

describe('seclookup data update webhookip', () => {
  it('updates changed providers from the mirror, keeps failed ones, and exits 0', async () => {
    const dataDir = copyOfData();
    const result = await runCli(['data', 'update', 'webhookip', '--data-dir', dataDir, '--mirror', mirror.url, '--timeout', '500']);
    expect(result.code).toBe(0);

    const rangesPath = join(dataDir, 'webhookip', 'ranges.json');
    expect(result.stdout.trim()).toBe(`webhookip: 1 updated, 10 unchanged, 16 kept (no feed), 2 failed; wrote ${rangesPath}`);
    expect(result.stderr).toContain('stripe: 16 ranges (+1 -0)');
    expect(result.stderr).toMatch(/github: failed \(timeout after 500 ms\), kept 6 ranges/);
    expect(result.stderr).toMatch(/paddle-sandbox: failed \(HTTP 500\), kept 6 ranges/);
    expect(result.stderr).toContain('feed failed, previous ranges kept. The dataset is valid.');

    const updated = JSON.parse(readFileSync(rangesPath, 'utf8')) as WebhookRangesDataset;
    expect(updated.providers.find((p) => p.id === 'stripe')!.cidrs).toContain(`${NEW_STRIPE_IP}/32`);
    expect(updated.providers.find((p) => p.id === 'github')!.cidrs).toEqual(cidrsOf('github'));
    expect(updated.providers.find((p) => p.id === 'paddle-sandbox')!.cidrs).toEqual(cidrsOf('paddle-sandbox'));

    // The rewritten dataset loads and answers.
    expect(await runCliJson(['lookup', 'webhookip', NEW_STRIPE_IP, '--data-dir', dataDir])).toEqual({
      ip: NEW_STRIPE_IP,
      matched: true,
      providers: [{ id: 'stripe', name: 'Stripe' }],
    });
  });

  it('exits 1 and leaves the file alone when every feed fails', async () => {
    const dataDir = copyOfData();
    const rangesPath = join(dataDir, 'webhookip', 'ranges.json');
    const before = readFileSync(rangesPath, 'utf8');
    // A mirror that has just been closed: every request is refused.
    const closed = await startHttpFixture();
    await closed.close();
    const result = await runCli(['data', 'update', 'webhookip', '--data-dir', dataDir, '--mirror', closed.url, '--timeout', '2000']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`0 updated, 0 unchanged, 16 kept (no feed), 13 failed; ${rangesPath} not changed`);
    expect(result.stderr).toContain('Every feed failed');
    expect(readFileSync(rangesPath, 'utf8')).toBe(before);
  });

  it('refuses a --timeout of 2^31 ms or more as a usage error, before fetching anything', async () => {
    const dataDir = copyOfData();
    const before = [...mirror.hits.values()].reduce((sum, n) => sum + n, 0);
    for (const timeout of ['2147483648', '99999999999']) {
      const result = await runCli(['data', 'update', 'webhookip', '--data-dir', dataDir, '--mirror', mirror.url, '--timeout', timeout]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--timeout must be a whole number from 1 to 2147483647 (got "${timeout}")`);
    }
    expect([...mirror.hits.values()].reduce((sum, n) => sum + n, 0)).toBe(before);
  });

  it('exits 1 with the reason when the data folder holds no dataset', async () => {
    const result = await runCli(['data', 'update', 'webhookip', '--data-dir', temp.make(), '--mirror', mirror.url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('webhookip update failed, dataset left unchanged');
    expect(result.stderr).toContain('ranges.json');
  });
});
