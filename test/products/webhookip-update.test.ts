/**
 * updateWebhookRanges against a real loopback HTTP server. The fixtures in
 * test/fixtures/webhookip/ are shaped like the official feeds (GitHub meta with all its other
 * keys, Atlassian items with ingress and e-mail ranges, Intercom inbound entries, ...) and
 * carry the values of the bundled snapshot, so an untouched run changes nothing.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createWebhookIpEngine, loadWebhookRanges } from '../../src/products/webhookip/engine.js';
import { viaMirror } from '../../src/lib/source-update.js';
import { updateWebhookRanges, WEBHOOK_FEED_URLS, type WebhookUpdateOptions } from '../../src/products/webhookip/update.js';
import type { WebhookRangesDataset } from '../../src/products/webhookip/types.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/webhookip/${name}`, import.meta.url), 'utf8'));

/** Fixture file for each official URL; the mirror serves it at /host/path. */
const FEED_FILES: Record<string, string> = {
  'https://api.github.com/meta': 'github-meta.json',
  'https://stripe.com/files/ips/ips_webhooks.json': 'stripe-ips_webhooks.json',
  'https://api.paddle.com/ips': 'paddle-ips.json',
  'https://sandbox-api.paddle.com/ips': 'paddle-sandbox-ips.json',
  'https://static.intercomcdn.com/intercom-ips/us/intercom-ip-ranges.json': 'intercom-us-ip-ranges.json',
  'https://static.intercomcdn.com/intercom-ips/eu/intercom-ip-ranges.json': 'intercom-eu-ip-ranges.json',
  'https://static.intercomcdn.com/intercom-ips/au/intercom-ip-ranges.json': 'intercom-au-ip-ranges.json',
  'https://ip-ranges.atlassian.com/': 'atlassian-ip-ranges.json',
  'https://docs.svix.com/webhook-ips.json': 'svix-webhook-ips.json',
};
const pathOf = (url: string) => viaMirror(url, '');
const FEED_PROVIDERS = [
  'github',
  'stripe',
  'paddle',
  'paddle-sandbox',
  'intercom-us',
  'intercom-eu',
  'intercom-au',
  'atlassian',
  'svix-us',
  'svix-eu',
  'svix-au',
  'svix-ca',
  'svix-in',
];

let server: HttpFixture;
let dataDir: string;
let file: string;
let snapshot: WebhookRangesDataset;
let progress: string[];

function serveRecordedFeeds(): void {
  server.routes.clear();
  for (const [url, name] of Object.entries(FEED_FILES)) server.routes.set(pathOf(url), respond.json(fixture(name)));
  server.hits.clear();
}

function update(options: Partial<WebhookUpdateOptions> = {}) {
  return updateWebhookRanges({
    dataDir,
    mirror: server.url,
    timeoutMs: 2000,
    onProgress: (line) => progress.push(line),
    now: () => new Date('2026-12-01T10:00:00Z'),
    ...options,
  });
}

const onFile = (): WebhookRangesDataset => JSON.parse(readFileSync(file, 'utf8'));
const cidrsOf = (data: WebhookRangesDataset, id: string) => data.providers.find((p) => p.id === id)!.cidrs;

beforeAll(async () => {
  server = await startHttpFixture();
});
afterAll(() => server.close());

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'seclookup-update-'));
  mkdirSync(join(dataDir, 'webhookip'));
  file = join(dataDir, 'webhookip', 'ranges.json');
  copyFileSync(join(bundledDataDir(), 'webhookip', 'ranges.json'), file);
  snapshot = onFile();
  progress = [];
  serveRecordedFeeds();
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('updateWebhookRanges: feeds equal to the snapshot', () => {
  it('changes nothing, leaves the file byte for byte, and fetches each URL once', async () => {
    const before = readFileSync(file, 'utf8');
    const report = await update();
    expect(report).toEqual({
      updated: [],
      unchanged: FEED_PROVIDERS,
      kept: snapshot.providers.map((p) => p.id).filter((id) => !FEED_PROVIDERS.includes(id)),
      failed: [],
      path: file,
      changed: false,
    });
    expect(report.kept).toHaveLength(16);
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Nine URLs, each once: the five Svix regions share one document.
    expect(WEBHOOK_FEED_URLS).toHaveLength(9);
    expect(Object.fromEntries(server.hits)).toEqual(Object.fromEntries(WEBHOOK_FEED_URLS.map((url) => [pathOf(url), 1])));
  });

  it('reports one progress line per provider, in dataset order', async () => {
    await update();
    expect(progress).toHaveLength(29);
    expect(progress[0]).toBe('github: 6 ranges (unchanged)');
    expect(progress).toContain('stripe: 15 ranges (unchanged)');
    expect(progress).toContain('atlassian: 14 ranges (unchanged)');
    expect(progress).toContain('postmark: kept (no machine-readable feed)');
    expect(progress).toContain('omise: kept (feed layout not confirmed)');
    expect(progress).toContain('svix-in: 3 ranges (unchanged)');
  });

  it('ignores what is not a webhook range: Atlassian ingress, IPv6 and e-mail egress, Intercom inbound', async () => {
    const atlassian = fixture('atlassian-ip-ranges.json');
    expect(atlassian.items.length).toBeGreaterThan(snapshot.providers.find((p) => p.id === 'atlassian')!.cidrs.length);
    const report = await update();
    expect(report.unchanged).toContain('atlassian');
    expect(report.unchanged).toContain('intercom-us');
  });
});

describe('updateWebhookRanges: a changed feed', () => {
  it('updates that provider only, rewrites the file with a new date and keeps every other field', async () => {
    const stripe = fixture('stripe-ips_webhooks.json');
    stripe.WEBHOOKS.push('3.74.12.1');
    server.routes.set(pathOf('https://stripe.com/files/ips/ips_webhooks.json'), respond.json(stripe));

    const report = await update();
    expect(report.updated).toEqual(['stripe']);
    expect(report.changed).toBe(true);
    expect(report.failed).toEqual([]);
    expect(progress).toContain('stripe: 16 ranges (+1 -0)');

    const after = onFile();
    expect(after.generated).toBe('2026-12-01');
    expect(cidrsOf(after, 'stripe')).toEqual([...cidrsOf(snapshot, 'stripe'), '3.74.12.1/32']);
    const { cidrs: _new, ...stripeRest } = after.providers[1];
    const { cidrs: _old, ...stripeBefore } = snapshot.providers[1];
    expect(stripeRest).toEqual(stripeBefore); // name, source_url, format, notes untouched, same key order
    expect(Object.keys(after.providers[1])).toEqual(Object.keys(snapshot.providers[1]));
    expect(after.providers.filter((p) => p.id !== 'stripe')).toEqual(snapshot.providers.filter((p) => p.id !== 'stripe'));

    // The file is valid and the engine sees the new range.
    const engine = createWebhookIpEngine(loadWebhookRanges(dataDir));
    expect(engine.lookup(engine.prepare('3.74.12.1')).result.providers).toEqual([{ id: 'stripe', name: 'Stripe' }]);
    expect(readdirSync(join(dataDir, 'webhookip'))).toEqual(['ranges.json']); // no temp file left
  });

  it('counts additions and removals, and normalises feed entries', async () => {
    const meta = fixture('github-meta.json');
    meta.hooks = ['192.30.252.0/22', '185.199.108.0/22', '140.82.112.0/20', '2A0A:A440:0000::/29', '2606:50c0::/32', '4.208.26.196/32', '4.208.26.196'];
    server.routes.set(pathOf('https://api.github.com/meta'), respond.json(meta));
    const report = await update();
    expect(report.updated).toEqual(['github']);
    expect(progress[0]).toBe('github: 6 ranges (+1 -1)');
    expect(cidrsOf(onFile(), 'github')).toEqual([
      '192.30.252.0/22',
      '185.199.108.0/22',
      '140.82.112.0/20',
      '2a0a:a440::/29',
      '2606:50c0::/32',
      '4.208.26.196/32',
    ]);
  });

  it('updates one Svix region from the shared document without touching the others', async () => {
    const svix = fixture('svix-webhook-ips.json');
    svix.ca = ['52.60.44.49', '3.98.68.230', '3.96.105.28', '2600:1f21:1c:4000::/56'];
    server.routes.set(pathOf('https://docs.svix.com/webhook-ips.json'), respond.json(svix));
    const report = await update();
    expect(report.updated).toEqual(['svix-ca']);
    expect(progress).toContain('svix-ca: 4 ranges (+1 -1)');
    expect(cidrsOf(onFile(), 'svix-ca')).toEqual(['52.60.44.49/32', '3.98.68.230/32', '3.96.105.28/32', '2600:1f21:1c:4000::/56']);
  });
});

describe('updateWebhookRanges: failing feeds keep their previous values', () => {
  it('a feed that never answers times out; the others still update', async () => {
    server.routes.set(pathOf('https://api.paddle.com/ips'), respond.hang());
    server.routes.set(pathOf('https://sandbox-api.paddle.com/ips'), respond.stallBody());
    const stripe = fixture('stripe-ips_webhooks.json');
    stripe.WEBHOOKS.pop();
    server.routes.set(pathOf('https://stripe.com/files/ips/ips_webhooks.json'), respond.json(stripe));

    const started = Date.now();
    const report = await update({ timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(report.failed).toEqual([
      { id: 'paddle', reason: 'timeout after 300 ms' },
      { id: 'paddle-sandbox', reason: 'timeout after 300 ms' },
    ]);
    expect(progress).toContain('paddle: failed (timeout after 300 ms), kept 6 ranges');
    expect(report.updated).toEqual(['stripe']);
    const after = onFile();
    expect(cidrsOf(after, 'paddle')).toEqual(cidrsOf(snapshot, 'paddle'));
    expect(cidrsOf(after, 'paddle-sandbox')).toEqual(cidrsOf(snapshot, 'paddle-sandbox'));
    expect(cidrsOf(after, 'stripe')).toHaveLength(14);
    expect(() => loadWebhookRanges(dataDir)).not.toThrow();
  });

  it('a slow feed within the timeout is fine', async () => {
    server.routes.set(pathOf('https://api.github.com/meta'), respond.slow(150, respond.json(fixture('github-meta.json'))));
    const report = await update({ timeoutMs: 2000 });
    expect(report.failed).toEqual([]);
    expect(report.unchanged).toContain('github');
  });

  it('garbage, error statuses, wrong shapes and unsafe entries each fail only their provider', async () => {
    const set = (url: string, handler: Parameters<HttpFixture['routes']['set']>[1]) => server.routes.set(pathOf(url), handler);
    set('https://api.github.com/meta', respond.status(500, '{"message":"Server Error"}'));
    set('https://stripe.com/files/ips/ips_webhooks.json', respond.text('<html><body>Just a moment...</body></html>', { contentType: 'text/html' }));
    set('https://api.paddle.com/ips', respond.json({ error: { type: 'request_error', code: 'forbidden' } }, 200));
    set('https://sandbox-api.paddle.com/ips', respond.json({ data: { ipv4_cidrs: [] } }));
    set(
      'https://static.intercomcdn.com/intercom-ips/us/intercom-ip-ranges.json',
      respond.json({ ip_ranges: [{ range: '0.0.0.0/0', region: 'US', service: 'INTERCOM-OUTBOUND' }] }),
    );
    set(
      'https://static.intercomcdn.com/intercom-ips/eu/intercom-ip-ranges.json',
      respond.json({ ip_ranges: [{ range: '10.0.0.0/8', region: 'EU', service: 'INTERCOM-OUTBOUND' }] }),
    );
    set(
      'https://static.intercomcdn.com/intercom-ips/au/intercom-ip-ranges.json',
      respond.json({ ip_ranges: [{ range: '52.63.36.185/24', region: 'AU', service: 'INTERCOM-OUTBOUND' }] }),
    );
    set('https://ip-ranges.atlassian.com/', respond.status(404));
    const svix = fixture('svix-webhook-ips.json');
    svix.us = ['not an ip'];
    delete svix.in;
    set('https://docs.svix.com/webhook-ips.json', respond.json(svix));

    const before = readFileSync(file, 'utf8');
    const report = await update();
    expect(Object.fromEntries(report.failed.map((f) => [f.id, f.reason]))).toEqual({
      github: 'HTTP 500',
      stripe: 'response is not valid JSON',
      paddle: 'unexpected feed shape: no "data.ipv4_cidrs"',
      'paddle-sandbox': 'feed lists no ranges',
      'intercom-us': 'bad entry "0.0.0.0/0": is broader than /8 (it would match addresses no provider owns)',
      'intercom-eu': 'bad entry "10.0.0.0/8": is not a public range',
      'intercom-au': 'bad entry "52.63.36.185/24": has host bits set after the prefix',
      atlassian: 'HTTP 404',
      'svix-us': 'bad entry "not an ip": is not a valid CIDR',
      'svix-in': 'unexpected feed shape: no "in"',
    });
    expect(report.unchanged).toEqual(['svix-eu', 'svix-au', 'svix-ca']);
    expect(report.changed).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(loadWebhookRanges(dataDir)).toEqual(snapshot);
  });

  it('refuses a feed listing fewer than half the ranges on file, as the other updaters do; half is enough', async () => {
    // GitHub's six ranges shrunk to one public range: a truncated or tampered feed.
    server.routes.set(pathOf('https://api.github.com/meta'), respond.json({ ...fixture('github-meta.json'), hooks: ['45.33.32.0/24'] }));
    const stripe = fixture('stripe-ips_webhooks.json');
    stripe.WEBHOOKS = stripe.WEBHOOKS.slice(0, Math.ceil(stripe.WEBHOOKS.length / 2));
    server.routes.set(pathOf('https://stripe.com/files/ips/ips_webhooks.json'), respond.json(stripe));
    const report = await update();
    expect(report.failed).toEqual([
      { id: 'github', reason: 'refusing the download: 1 range, fewer than half of the 6 on file (a truncated or broken source?)' },
    ]);
    expect(progress).toContain(
      'github: failed (refusing the download: 1 range, fewer than half of the 6 on file (a truncated or broken source?)), kept 6 ranges',
    );
    expect(cidrsOf(onFile(), 'github')).toEqual(cidrsOf(snapshot, 'github'));
    expect(report.updated).toEqual(['stripe']);
    expect(cidrsOf(onFile(), 'stripe')).toHaveLength(8);
  });

  it('refuses a body over the size cap, with or without Content-Length', async () => {
    const big = JSON.stringify({ ...fixture('github-meta.json'), padding: 'x'.repeat(20_000) });
    server.routes.set(pathOf('https://api.github.com/meta'), respond.text(big, { contentType: 'application/json' }));
    server.routes.set(
      pathOf('https://stripe.com/files/ips/ips_webhooks.json'),
      respond.chunked(JSON.stringify({ WEBHOOKS: fixture('stripe-ips_webhooks.json').WEBHOOKS, padding: 'y'.repeat(20_000) })),
    );
    const report = await update({ maxBytes: 10_000 });
    expect(report.failed).toEqual([
      { id: 'github', reason: 'response larger than 10000 bytes' },
      { id: 'stripe', reason: 'response larger than 10000 bytes' },
    ]);
    expect(report.unchanged).toContain('atlassian');
  });

  it('an unreachable mirror fails every feed and leaves the file alone', async () => {
    const closed = await startHttpFixture();
    const deadUrl = closed.url;
    await closed.close();
    const before = readFileSync(file, 'utf8');
    const report = await update({ mirror: deadUrl });
    expect(report.failed).toHaveLength(13);
    expect(report.failed[0]).toEqual({ id: 'github', reason: 'request failed: ECONNREFUSED' });
    expect(report.updated).toEqual([]);
    expect(report.changed).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('throws, writing nothing, when the current dataset is corrupt', async () => {
    rmSync(file);
    await expect(update()).rejects.toThrow(file);
  });
});

describe('feed URLs and the mirror', () => {
  it('maps https://host/path to <mirror>/host/path', () => {
    expect(viaMirror('https://api.github.com/meta', 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/api.github.com/meta');
    expect(viaMirror('https://ip-ranges.atlassian.com/', 'http://mirror.internal/feeds/')).toBe('http://mirror.internal/feeds/ip-ranges.atlassian.com/');
  });

  it('lists the official feeds', () => {
    expect([...WEBHOOK_FEED_URLS].sort()).toEqual(Object.keys(FEED_FILES).sort());
    for (const url of WEBHOOK_FEED_URLS) expect(url.startsWith('https://')).toBe(true);
  });
});
