/**
 * The emailauth lookup result (SPEC: emailauth lookup result). Fields SPEC lists are marked
 * SPEC; the others are ours, added so a client can tell a usable setup from a broken one
 * without changing what the SPEC fields mean.
 */
export interface EmailAuthResult {
  /** SPEC: the normalized domain: lower-case ASCII (IDN labels as punycode), no trailing dot. */
  domain: string;
  /** SPEC: presence score 0-100: SPF 35 + DMARC 40 + DKIM 25 when found. */
  score: number;
  spf: SpfResult;
  dkim: DkimResult;
  dmarc: DmarcResult;
}

export interface SpfResult {
  /** SPEC: a TXT record starting `v=spf1` exists at the domain (also when there are several). */
  found: boolean;
  /** SPEC: the raw record; with several, the first in the DNS answer. Null when none. */
  record: string | null;
  /** Ours: every `v=spf1` record at the domain, in answer order. */
  records: string[];
  /**
   * Ours: exactly one `v=spf1` record and it follows RFC 7208's grammar (none is `none`; several,
   * or one that fails the grammar, a permerror: RFC 7208 4.5, 4.6). Nothing is evaluated: an
   * include or redirect target is not fetched, so `valid` says the record itself is well formed.
   */
  valid: boolean;
  /** Ours: why `valid` is false when a record was found (several records, or the grammar error and its term); null when valid or none found. */
  error: string | null;
}

export interface DkimSelector {
  /** SPEC: the selector probed (`google`, ...). */
  selector: string;
  /** SPEC: the raw key record (character-strings joined), after any CNAME chain. */
  record: string;
  /** Ours: the key is revoked (an empty `p=`, RFC 6376 3.6.1). */
  revoked: boolean;
}

export interface DkimResult {
  /** SPEC: any probed selector returned a DKIM key record (a revoked one included). */
  found: boolean;
  /** SPEC: the selectors with a key record, in {@link DKIM_SELECTORS} order. */
  selectors: DkimSelector[];
  /**
   * Ours: selectors whose query failed (timeout, SERVFAIL) while the others answered; they are
   * missing from `selectors`, so `found: false` is then not conclusive. Empty normally. A
   * result with failed selectors is not cached.
   */
  failed_selectors: string[];
}

export interface DmarcResult {
  /**
   * SPEC: a `v=DMARC1` record exists at `_dmarc.<domain>`; ours, widened: or a record found by
   * the DMARCbis tree walk applies to the domain (its organizational or public suffix domain's).
   */
  found: boolean;
  /** SPEC: the raw record that applies; with several at the domain and none above, the first of them. Null when none. */
  record: string | null;
  /** Ours: every `v=DMARC1` record at the name the record came from, in answer order (several only at the domain itself). */
  records: string[];
  /**
   * Ours: exactly one record where it was found (several at a name are discarded, DMARCbis; with
   * none above, no policy applies) and it follows RFC 7489's syntax (6.3, 6.4): a valid `p=`
   * (none, quarantine, reject), and valid `sp=`, `pct=`, `adkim=`, `aspf=`, `rua=`, `ruf=`, `fo=`,
   * `rf=`, `ri=` when present, no tag twice; unknown tags are ignored. Nothing is evaluated.
   */
  valid: boolean;
  /**
   * Ours: why `valid` is false when a record was found (several records, or the syntax error and
   * its tag; for a missing or invalid `p=`/`sp=`, also what RFC 7489 6.6.3 has receivers do: apply
   * `p=none` when `rua=` is valid, else no policy); null when valid or none found.
   */
  error: string | null;
  /**
   * Ours: where the record was found: `_dmarc.<domain>`, the organizational domain's (the walk's
   * highest record, or the one a `psd=n` marks, or the name below a `psd=y`), or the public
   * suffix domain's (a `psd=y` record, when the organizational domain has none); null when none.
   */
  source: 'domain' | 'organizational' | 'public_suffix' | null;
  /** Ours: the domain whose `_dmarc` record that is; null when none. */
  policy_domain: string | null;
}

/** SPEC: the DKIM selectors probed, in this order, at `{selector}._domainkey.{domain}`. */
export const DKIM_SELECTORS = ['default', 'google', 'selector1', 'selector2', 'k1', 's1', 's2', 'mail', 'smtp'] as const;

/** SPEC: score points per mechanism found. */
export const SCORE_POINTS = { spf: 35, dmarc: 40, dkim: 25 } as const;

export interface EmailAuthEngineOptions {
  /** Results kept in the private LRU (ignored with a shared cache store). @default 10000 entries; about 2 KB each */
  cacheSize?: number;
}
