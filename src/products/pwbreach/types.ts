import type { UpstreamOptions } from './upstream.js';

/** SPEC's pwbreach lookup result. It never holds the password or the hash. */
export interface PwbreachResult {
  /** True when the password appears in the breach data. */
  breached: boolean;
  /** How often it appears; 0 when not breached. */
  count: number;
}

/**
 * What `lookup.pwbreach(...)` takes: a password (a string, or `{ password }`), or the SHA-1 of
 * one as 40 hex digits in either case (`{ sha1 }`). Exactly one of them.
 */
export type PwbreachInput = string | { password?: string; sha1?: string };

export interface PwbreachEngineOptions {
  /**
   * A store file made by `seclookup data import pwbreach`. @default `<dataDir>/pwbreach/passwords.pwb`
   * when it exists, else the bundled sample (`<dataDir>/pwbreach/pwned-sample.txt`, compiled in memory)
   */
  store?: string;
  /**
   * A store file up to this size is read into memory at start (lookups make no system call);
   * a larger one is read per lookup at an offset, memory staying at its 4 MB index. 0: always
   * read from the file. @default 67,108,864 (64 MiB, about 3 million hashes)
   */
  memoryMaxBytes?: number;
  /**
   * Ask a range API compatible with Have I Been Pwned's instead of a local store: a URL template
   * with `{prefix}` (`https://api.pwnedpasswords.com/range/{prefix}`) or its options. @default none (local)
   */
  upstream?: string | UpstreamOptions;
  /** Upstream ranges kept in the cache (about 40 KB each; 0 for none). @default 1024 */
  cacheSize?: number;
  /** How long an upstream range is kept. @default 86,400,000 (24 h) */
  cacheTtlMs?: number;
}

/** The longest password looked up, in UTF-8 bytes; longer ones are 400 invalid_password. */
export const MAX_PASSWORD_BYTES = 1024;

/** Where an engine's ranges come from. */
export type PwbreachSourceKind = 'store' | 'sample' | 'upstream';
