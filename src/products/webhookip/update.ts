import { DEFAULT_MAX_BYTES } from '../../lib/http-get.js';
import { createSourceFetcher, writeAtomically, type SourceRequestOptions } from '../../lib/source-update.js';
import { formatIp, parseCidr } from '../../lib/ip.js';
import { loadWebhookRanges, webhookRangeProblem, validateWebhookRanges, webhookRangesPath } from './engine.js';
import type { WebhookRangesDataset } from './types.js';

/**
 * Refresh data/webhookip/ranges.json from the providers' official machine-readable feeds.
 *
 * Safety rules: one bad feed never wipes a provider (it keeps its previous ranges and is
 * reported as failed), nor shrinks it to fewer than half its ranges on file; every request has
 * a timeout and a size cap; the file is rewritten atomically and only when something changed.
 */

/** Request limits default to 15 s per request and 5 MB per response. */
export interface WebhookUpdateOptions extends SourceRequestOptions {
  /** Data folder holding `webhookip/ranges.json`; the file is read and rewritten in place. */
  dataDir: string;
  /** One line per provider, e.g. `stripe: 15 ranges (+1 -0)`; the CLI prints them to stderr. */
  onProgress?: (line: string) => void;
  /** Clock for the `generated` date (UTC). @default () => new Date() */
  now?: () => Date;
}

export interface WebhookUpdateReport {
  /** Providers whose ranges changed. */
  updated: string[];
  /** Providers whose feed answered with the ranges already on file. */
  unchanged: string[];
  /** Providers without a machine-readable feed: left as they are. */
  kept: string[];
  /** Providers whose feed failed; they kept their previous ranges. */
  failed: { id: string; reason: string }[];
  /** The dataset file. */
  path: string;
  /** True when the file was rewritten. */
  changed: boolean;
}

/** A feed URL and, for each provider it serves, how to pull that provider's entries out. */
export interface WebhookFeed {
  url: string;
  providers: Readonly<Record<string, (body: unknown) => unknown[]>>;
}

const INTERCOM_REGIONS = ['us', 'eu', 'au'] as const;
const SVIX_REGIONS = ['us', 'eu', 'au', 'ca', 'in'] as const;
/** Atlassian products whose outgoing webhooks the `atlassian` entry stands for. */
const ATLASSIAN_PRODUCTS = ['bitbucket', 'jira', 'confluence'];

/**
 * The official feeds (data/webhookip/SOURCES.md). Several providers may share one URL (the
 * five Svix regions); it is fetched once. Providers not listed here (HTML sources, and
 * omise, whose JSON layout is not confirmed) keep their snapshot values.
 */
export const WEBHOOK_FEEDS: readonly WebhookFeed[] = [
  { url: 'https://api.github.com/meta', providers: { github: (body) => arrayAt(body, 'hooks') } },
  { url: 'https://stripe.com/files/ips/ips_webhooks.json', providers: { stripe: (body) => arrayAt(body, 'WEBHOOKS') } },
  { url: 'https://api.paddle.com/ips', providers: { paddle: (body) => arrayAt(body, 'data', 'ipv4_cidrs') } },
  { url: 'https://sandbox-api.paddle.com/ips', providers: { 'paddle-sandbox': (body) => arrayAt(body, 'data', 'ipv4_cidrs') } },
  ...INTERCOM_REGIONS.map((region) => ({
    url: `https://static.intercomcdn.com/intercom-ips/${region}/intercom-ip-ranges.json`,
    providers: { [`intercom-${region}`]: intercomOutbound },
  })),
  { url: 'https://ip-ranges.atlassian.com/', providers: { atlassian: atlassianEgressV4 } },
  {
    url: 'https://docs.svix.com/webhook-ips.json',
    providers: Object.fromEntries(SVIX_REGIONS.map((region) => [`svix-${region}`, (body: unknown) => arrayAt(body, region)])),
  },
];

/** Why a provider with a JSON source is still not fetched. */
const KEPT_REASONS: Readonly<Record<string, string>> = {
  omise: 'feed layout not confirmed',
};

/** Every feed URL, in fetch order (for docs and tests). */
export const WEBHOOK_FEED_URLS: readonly string[] = WEBHOOK_FEEDS.map((feed) => feed.url);

const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Fetch every feed (in parallel, each URL once), merge the answers into the dataset and
 * rewrite the file if anything changed. Throws only when the current file cannot be read or
 * the new one cannot be written; feed failures are reported, not thrown.
 */
export async function updateWebhookRanges(options: WebhookUpdateOptions): Promise<WebhookUpdateReport> {
  const path = webhookRangesPath(options.dataDir);
  const current = loadWebhookRanges(options.dataDir);
  const fetcher = createSourceFetcher(
    options,
    { timeoutMs: DEFAULT_TIMEOUT_MS, maxBytes: DEFAULT_MAX_BYTES, userAgent: 'seclookup-webhook-ranges-updater' },
    (reason) => new FeedError(reason),
  );
  const progress = options.onProgress ?? (() => {});

  // Every needed URL at once, each once; a feed none of the dataset's providers uses is skipped.
  const ids = new Set(current.providers.map((p) => p.id));
  const bodies = new Map<string, Promise<unknown>>();
  for (const feed of WEBHOOK_FEEDS) {
    if (!Object.keys(feed.providers).some((id) => ids.has(id))) continue;
    const body = fetcher.json(feed.url);
    body.catch(() => {}); // awaited below, per provider; this only silences the early rejection
    bodies.set(feed.url, body);
  }
  const feedOf = new Map(WEBHOOK_FEEDS.flatMap((feed) => Object.keys(feed.providers).map((id) => [id, feed] as const)));

  const report: WebhookUpdateReport = { updated: [], unchanged: [], kept: [], failed: [], path, changed: false };
  const providers = [];
  for (const provider of current.providers) {
    const feed = feedOf.get(provider.id);
    if (!feed) {
      report.kept.push(provider.id);
      progress(`${provider.id}: kept (${KEPT_REASONS[provider.id] ?? 'no machine-readable feed'})`);
      providers.push(provider);
      continue;
    }
    let fresh: string[];
    try {
      fresh = normalizeFeedRanges(feed.providers[provider.id](await bodies.get(feed.url)));
      checkPlausible(fresh, provider.cidrs);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      report.failed.push({ id: provider.id, reason });
      progress(`${provider.id}: failed (${reason}), kept ${plural(provider.cidrs.length, 'range')}`);
      providers.push(provider);
      continue;
    }
    const before = new Set(provider.cidrs.map(canonicalCidr));
    const added = fresh.filter((cidr) => !before.has(cidr)).length;
    const removed = before.size - (fresh.length - added);
    if (added === 0 && removed === 0) {
      report.unchanged.push(provider.id);
      progress(`${provider.id}: ${plural(fresh.length, 'range')} (unchanged)`);
      providers.push(provider);
    } else {
      report.updated.push(provider.id);
      progress(`${provider.id}: ${plural(fresh.length, 'range')} (+${added} -${removed})`);
      providers.push({ ...provider, cidrs: fresh }); // every other field kept, in its place
    }
  }

  if (report.updated.length > 0) {
    const next: WebhookRangesDataset = { ...current, generated: isoDate((options.now ?? (() => new Date()))()), providers };
    validateWebhookRanges(next, path); // never write a file the loader would refuse
    await writeAtomically(path, `${JSON.stringify(next, null, 2)}\n`);
    report.changed = true;
  }
  return report;
}

// --- feed parsing ---------------------------------------------------------------------------

/** A feed problem, reported as the provider's failure reason. */
class FeedError extends Error {}

/** The array at `keys` inside `body`, or a FeedError naming the missing key. */
function arrayAt(body: unknown, ...keys: string[]): unknown[] {
  let value = body;
  for (const key of keys) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !(key in value)) {
      throw new FeedError(`unexpected feed shape: no "${keys.join('.')}"`);
    }
    value = (value as Record<string, unknown>)[key];
  }
  if (!Array.isArray(value)) throw new FeedError(`unexpected feed shape: "${keys.join('.')}" is not an array`);
  return value;
}

/** Intercom: `ip_ranges[]` of `{range, region, service}`; webhooks are the outbound service. */
function intercomOutbound(body: unknown): unknown[] {
  return arrayAt(body, 'ip_ranges')
    .filter((item) => isRecord(item) && item.service === 'INTERCOM-OUTBOUND')
    .map((item) => (item as Record<string, unknown>).range);
}

/**
 * Atlassian: `items[]` with `cidr`, `product[]`, `direction[]`. Webhooks leave through the
 * egress ranges of Bitbucket, Jira and Confluence. IPv4 only, as in the snapshot: the IPv6
 * egress ranges were never double-confirmed (SOURCES.md).
 */
function atlassianEgressV4(body: unknown): unknown[] {
  return arrayAt(body, 'items')
    .filter(
      (item) =>
        isRecord(item) &&
        Array.isArray(item.direction) &&
        item.direction.includes('egress') &&
        (!Array.isArray(item.product) || item.product.some((p) => ATLASSIAN_PRODUCTS.includes(p as string))) &&
        typeof item.cidr === 'string' &&
        !item.cidr.includes(':'),
    )
    .map((item) => (item as Record<string, unknown>).cidr);
}

/**
 * Canonical `network/bits` strings, deduplicated, in feed order. Bare IPs become /32 or /128.
 * Any entry that is not a clean, public, reasonably narrow CIDR fails the whole provider:
 * a feed that suddenly lists `0.0.0.0/0` or `10.0.0.0/8` is broken or tampered with, and
 * must not turn the allowlist into "everyone".
 */
function normalizeFeedRanges(entries: unknown[]): string[] {
  const out = new Set<string>();
  for (const entry of entries) {
    const text = typeof entry === 'string' ? entry.trim() : entry;
    const problem = webhookRangeProblem(text);
    if (problem) throw new FeedError(`bad entry ${JSON.stringify(entry)}: ${problem}`);
    const [addr, bits] = parseCidr(text as string);
    out.add(`${formatIp(addr)}/${bits}`);
  }
  if (out.size === 0) throw new FeedError('feed lists no ranges');
  return [...out];
}

/**
 * A feed listing fewer than half the provider's ranges on file is refused, as every updater
 * does: a truncated or tampered feed must not shrink an allowlist to one range, refusing the
 * provider's real webhooks.
 */
function checkPlausible(fresh: readonly string[], onFile: readonly string[]): void {
  const before = new Set(onFile.map(canonicalCidr)).size;
  if (fresh.length < before / 2) {
    throw new FeedError(`refusing the download: ${plural(fresh.length, 'range')}, fewer than half of the ${before} on file (a truncated or broken source?)`);
  }
}

/** The snapshot's CIDRs compared in the same canonical form as fresh ones. */
function canonicalCidr(cidr: string): string {
  const [addr, bits] = parseCidr(cidr);
  return `${formatIp(addr)}/${bits}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
