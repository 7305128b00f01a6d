import type { TimeoutOptions } from '../../lib/deadline.js';

/** The tls lookup result (SPEC: tls lookup result). */
export interface TlsResult {
  /** The host checked: the ASCII (punycode) hostname, lower case, no trailing dot; or the canonical IP address. */
  host: string;
  /** The TCP port connected to. */
  port: number;
  /** True when the engine's clock is inside the certificate's validity window (notBefore and notAfter inclusive). Not a trust verdict. */
  valid: boolean;
  /** The issuer's distinguished name, RFC 4514 order (most specific first): `CN=R11, O=Let's Encrypt, C=US`. */
  issuer: string;
  /** The subject's distinguished name, same form; empty when the certificate has none. */
  subject: string;
  /** `YYYY-MM-DDThh:mm:ssZ`. */
  not_before: string;
  /** `YYYY-MM-DDThh:mm:ssZ`. */
  not_after: string;
  /** Whole days until not_after, rounded down; negative once expired. */
  days_remaining: number;
  /** The dNSName Subject Alternative Names, as the certificate holds them, in its order. */
  san: string[];
  /** The negotiated protocol (`TLSv1.3`, `TLSv1.2`, ...); absent when Node cannot tell. */
  protocol?: string;
  /** SHA-256 of the certificate's DER, 64 lowercase hex digits. */
  fingerprint_sha256: string;
}

/** Per-call options of `lookup.tls(host, options)`. */
export interface TlsOptions {
  /** The port to check (1-65535), as a number or decimal text; `host:port` may say it instead. @default 443 */
  port?: number | string;
}

/** `createLookup({ tls: ... })`. */
export interface TlsEngineOptions {
  /**
   * Deadlines of one check: `connectMs` bounds the TCP connection and the TLS handshake,
   * `totalMs` the whole check, name resolution included. @default { connectMs: 3000, totalMs: 5000 }
   */
  timeouts?: TimeoutOptions;
  /** Result cache entries; 0 for none. @default 10000 */
  cacheSize?: number;
  /** How long a result is reused, in ms (never past a change of `valid` or `days_remaining`). @default 300000 (5 minutes) */
  cacheTtlMs?: number;
}
