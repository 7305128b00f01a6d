/**
 * Why an address failed the format checks (the second entry of `risk.reasons`, after
 * `invalid_format`). Checked in this order; the first that applies is reported.
 */
export const EMAIL_FORMAT_REASONS = [
  /** A control character (C0, DEL, C1) anywhere in the input, leading and trailing ones included. */
  'control_characters',
  /** Over 254 octets once normalized, or over 512 characters as given. */
  'address_too_long',
  /** No `@`. */
  'missing_at_sign',
  /** A quoted local part (`"john doe"@example.com`): legal RFC 5322, refused here. */
  'quoted_local_part',
  /** An address literal (`john@[192.0.2.1]`, `john@[IPv6:2001:db8::1]`): legal RFC 5321, refused here. */
  'address_literal',
  /** An RFC 5322 comment (`john(work)@example.com`): refused here. */
  'comment',
  /** Nothing before the `@`. */
  'empty_local_part',
  /** Nothing after the `@`. */
  'empty_domain',
  /** A character outside RFC 5322 atext (and non-ASCII letters, marks, digits) in the local part: spaces, `@`, `<`, ... */
  'local_part_invalid_character',
  /** A dot at the start or end of the local part, or two in a row. */
  'local_part_dots',
  /** Local part over 64 octets (UTF-8). */
  'local_part_too_long',
  /** The domain is not a host name (see normalizeDomain). */
  'invalid_domain',
  /** The domain has one label (`localhost`). */
  'single_label_domain',
] as const;

export type EmailFormatReason = (typeof EMAIL_FORMAT_REASONS)[number];

/** Why `has_mx` is false; exactly one of these accompanies `has_mx: false` on a well-formed address. */
export const EMAIL_MX_REASONS = [
  /** The domain has no MX records and no A/AAAA records either (DNS NODATA). */
  'no_mx',
  /** No MX records, but A or AAAA records: RFC 5321 5.1 "implicit MX" delivery may work; still `has_mx: false`. */
  'no_mx_implicit_a',
  /** RFC 7505 null MX (`MX 0 .`): the domain declares that it accepts no mail. */
  'null_mx',
  /**
   * MX records, but none names a host: each exchange is an IP address (`MX 10 192.0.2.1`) or ends
   * in an all-numeric label, which RFC 5321 5.1 does not allow; senders find no server to use, and
   * the MX records rule out the implicit MX of an A record.
   */
  'no_mx_hostname',
  /** The domain does not exist (DNS NXDOMAIN). */
  'domain_not_found',
] as const;

export type EmailMxReason = (typeof EMAIL_MX_REASONS)[number];

/** Every code `risk.reasons` may hold. */
export type EmailRiskReason = 'invalid_format' | EmailFormatReason | 'disposable_domain' | EmailMxReason | 'role_account';

export type EmailRiskLevel = 'low' | 'medium' | 'high';

export interface EmailRisk {
  /** high: invalid format, disposable domain or no MX; medium: role-like local part; low: none of these. */
  level: EmailRiskLevel;
  /**
   * Machine-readable codes, in this order: `invalid_format` then the format reason; or
   * `disposable_domain`, the MX reason, `role_account`, each when it applies. Empty when low.
   */
  reasons: EmailRiskReason[];
}

/** The emailval lookup result (SPEC: emailval lookup result). */
export interface EmailValResult {
  /** The normalized address (domain lower-cased ASCII); for an invalid one, the trimmed input. */
  email: string;
  /** The domain part (normalized when valid); empty string when none can be found. */
  domain: string;
  valid_format: boolean;
  /** The domain is on the disposable list, or one of its parents up to the registrable domain is listed with its subdomains; false when the format is invalid. */
  disposable: boolean;
  /** MX records found (a null MX, and an exchange that is an IP address, do not count); false when the format is invalid. */
  has_mx: boolean;
  /** `"priority host"`, sorted by priority then host (host names only); empty when there are none or the format is invalid. */
  mx: string[];
  risk: EmailRisk;
  /** Always {@link EMAIL_LIMITS_NOTE}. */
  limits_note: string;
}

/** SPEC: present on every success, restating what v1 checks. */
export const EMAIL_LIMITS_NOTE =
  'Checks only the address format, known disposable domains and MX records. It does not verify that the mailbox exists, detect catch-all domains, or score deliverability.';

export interface EmailValEngineOptions {
  /** Results kept in the private LRU (each entry lives as long as its DNS answers). @default 10000 entries, about 1 KB each; 0 for none */
  cacheSize?: number;
}
