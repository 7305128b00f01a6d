import { bundledDataDir } from './lib/datasets.js';
import { createUserAgentEngine } from './products/useragent/engine.js';
import type { UserAgentEngineOptions, UserAgentResult } from './products/useragent/types.js';
import { createWebhookIpEngine, loadWebhookRanges } from './products/webhookip/engine.js';
import type { WebhookIpOptions, WebhookIpResult, WebhookRangesDataset } from './products/webhookip/types.js';

/** A result plus what the API needs to fill `cached` and `fetched_at`. */
export interface LookupOutcome<Result> {
  result: Result;
  /** True when the result was served from the cache (SPEC: `cached`). */
  cached: boolean;
  /** When the underlying data was retrieved; products that carry `fetched_at` set it. */
  fetchedAt?: Date;
  /**
   * `JSON.stringify(result)`, from engines that keep it alongside a cached result, so the
   * API can answer without serializing the same result again on every request.
   */
  json?: string;
}

export interface LookupOptions {
  /**
   * Folder holding the datasets (`webhookip/ranges.json`, ...).
   * @default the `data/` folder shipped with the package
   */
  dataDir?: string;
  useragent?: UserAgentEngineOptions;
  webhookip?: {
    /** Use these ranges instead of reading `<dataDir>/webhookip/ranges.json`. */
    dataset?: WebhookRangesDataset;
  };
}

/** The in-process engines. Every method validates its input and throws {@link LookupError}. */
export interface Lookup {
  /** Parse a User-Agent. Throws `invalid_user_agent` (400) for a missing or empty string. */
  useragent(ua: string): Promise<UserAgentResult>;
  /**
   * Is this IP in a webhook provider's published ranges? Throws `invalid_ip` (400),
   * `invalid_provider` (400) or `ip_not_routable` (422).
   */
  webhookip(ip: string, options?: WebhookIpOptions): Promise<WebhookIpResult>;
  /** The same lookups with cache metadata, as the HTTP API uses them. */
  readonly detailed: {
    useragent(ua: string): Promise<LookupOutcome<UserAgentResult>>;
    webhookip(ip: string, options?: WebhookIpOptions): Promise<LookupOutcome<WebhookIpResult>>;
  };
}

/**
 * Build the engines. Datasets are loaded here, so a missing or corrupt file throws now,
 * not at the first lookup.
 *
 * @example
 * const lookup = createLookup();
 * await lookup.useragent('Mozilla/5.0 ...'); // { browser: { name: 'Chrome', ... }, ... }
 */
export function createLookup(options: LookupOptions = {}): Lookup {
  const dataDir = options.dataDir ?? bundledDataDir();
  const userAgent = createUserAgentEngine(options.useragent);
  const webhookRanges = options.webhookip?.dataset ?? loadWebhookRanges(dataDir);
  const webhook = createWebhookIpEngine(webhookRanges);

  // Engines are synchronous today; the async surface leaves room for ones that are not.
  const detailed = {
    useragent: async (ua: string) => userAgent.lookup(ua),
    webhookip: async (ip: string, opts?: WebhookIpOptions) => webhook.lookup(ip, opts),
  };
  return {
    useragent: async (ua) => userAgent.lookup(ua).result,
    webhookip: async (ip, opts) => webhook.lookup(ip, opts).result,
    detailed,
  };
}
