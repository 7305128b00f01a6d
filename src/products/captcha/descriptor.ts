/** captcha: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { defineDescriptor } from '../descriptor.js';

export default defineDescriptor({
  id: 'captcha',
  load: () => import('./index.js'),
  commands: {
    sitekeys: {
      usage: 'sitekeys create|list|update|revoke|rotate-signing-key',
      summary: 'captcha site keys (domains, IP allowlist, managed mode)',
      load: async () => (await import('./cli.js')).runSitekeys,
    },
  },
  secretPrefix: 'tf_sec_',
  publicPrefix: 'tf_pub_',
  hasFetchedAt: false,
  hasDatabaseRecords: false,
  starterPlan: { rateLimitPerMinute: 60, monthlyQuota: 10_000 },
  statusKeyParam: 'sitekey',
  // SPEC's captcha table, then ours: a bad, expired or foreign challenge or response token; a
  // wrong solution or an implausible trace; siteverify's action differs; managed mode needs a
  // puzzle (SPEC: 422 with interactive_required true, no code listed); siteverify of a proof
  // whose risk score is at or above the site key's limit.
  errorCodes: {
    token_already_used: 400,
    domain_not_allowed: 403,
    domain_required: 403,
    domain_not_configured: 403,
    server_error: 500,
    invalid_token: 400,
    challenge_failed: 400,
    action_mismatch: 400,
    interactive_required: 422,
    risk_too_high: 403,
  },
});
