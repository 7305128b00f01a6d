/** captcha's answers as the HTTP client returns them (src/client/), declared with its descriptor's client calls. */

/** A response token that passed `siteverify` (Turnstile's field names, and ours). */
export interface SiteverifyResult {
  /** When the challenge was passed, ISO 8601. */
  challenge_ts: string;
  /** The page's hostname the token was issued for. */
  hostname: string;
  /** The widget's action, or ''. */
  action: string;
  'error-codes': string[];
  /** `puzzle` or `managed`. */
  mode: string;
  /** 0-100, lower is safer. */
  risk_score: number;
  risk_level: 'low' | 'medium' | 'high';
}

/** The captcha subscription's use this month (`GET /v1/captcha/usage`). */
export interface CaptchaUsage {
  product: 'captcha';
  plan: string;
  subscription_id: string;
  site_keys: number;
  period: string;
  monthly_quota: number;
  quota_unlimited: boolean;
  quota_used: number;
  quota_remaining: number;
  days: { day: string; verifications: number }[];
}
