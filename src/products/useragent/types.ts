/** The useragent lookup result (SPEC: useragent lookup result). Unrecognised fields are omitted. */
export interface UserAgentResult {
  /** The input, truncated to {@link USER_AGENT_MAX_LENGTH} characters. */
  user_agent: string;
  browser: { name?: string; version?: string };
  os: { name?: string; version?: string };
  /** desktop, mobile, tablet, smarttv, console, wearable, embedded, or unknown. */
  device_type: string;
  /** True for crawlers, bots, HTTP libraries and headless browsers; false for people's browsers and apps (isbot's list with the changes in bots.ts). */
  is_bot: boolean;
  engine?: string;
}

/**
 * Characters of a User-Agent that are parsed, cached and echoed. ua-parser-js itself reads
 * no more than 500, so a longer tail can never change the answer.
 */
export const USER_AGENT_MAX_LENGTH = 500;

export interface UserAgentEngineOptions {
  /** Parsed results kept in the LRU cache. @default 10000 entries; each about 1 KB */
  cacheSize?: number;
}
