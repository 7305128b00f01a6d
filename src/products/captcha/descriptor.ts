/** captcha: what the catalog and the HTTP client know of it (src/products/descriptor.ts). */
import { clientCall, defineDescriptor } from '../descriptor.js';
import type { CaptchaUsage, SiteverifyResult } from './client-types.js';

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
  // The routes a site's server calls, with the site's secret key (`keys.captcha`): `client.captcha.siteverify(...)`.
  clientCalls: {
    // Resolves when the token is valid (each token once); throws the LookupError otherwise
    // (`token_already_used`, `invalid_token`, `action_mismatch`, ...). Each call sends an
    // idempotency key (a fresh UUID unless given), the same on its retries: a retry after a lost
    // answer gets the success the first attempt had, not `token_already_used`.
    siteverify: clientCall<SiteverifyResult>()((response: string, options: { remoteip?: string; action?: string; idempotencyKey?: string } = {}) => ({
      method: 'POST',
      path: 'siteverify',
      keyIn: 'secret',
      body: { response, remoteip: options.remoteip, action: options.action, idempotency_key: options.idempotencyKey ?? crypto.randomUUID() },
    })),
    usage: clientCall<CaptchaUsage>()(() => ({ method: 'GET', path: 'usage' })),
  },
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
