/** The webhookip lookup result (SPEC: webhookip lookup result). */
export interface WebhookIpResult {
  ip: string;
  matched: boolean;
  /** Providers whose published ranges contain the IP; empty when `matched` is false. */
  providers: WebhookProvider[];
}

export interface WebhookProvider {
  id: string;
  name: string;
}

export interface WebhookIpOptions {
  /**
   * Restrict matching to one provider id (or an alias such as `jira` for `atlassian`), or to
   * several separated by commas. An unknown id throws LookupError('invalid_provider', 400).
   */
  provider?: string;
}

/** One provider entry of data/webhookip/ranges.json. */
export interface WebhookRangeSource {
  id: string;
  name: string;
  source_url: string;
  format?: string;
  notes?: string;
  aliases?: string[];
  cidrs: string[];
}

/** The whole dataset file. */
export interface WebhookRangesDataset {
  generated: string;
  providers: WebhookRangeSource[];
}
