import type { ServiceDoc, ServiceRouteDoc } from '../../openapi/types.js';
import type { ErrorCode } from '../../errors.js';

const ALL: ErrorCode[] = ['missing_credentials', 'invalid_api_key', 'wrong_key_type', 'ip_not_allowed', 'rate_limit_exceeded', 'quota_exceeded', 'server_error', 'token_already_used', 'domain_not_allowed', 'domain_required', 'domain_not_configured', 'invalid_token', 'challenge_failed', 'action_mismatch', 'interactive_required', 'invalid_request', 'invalid_json', 'payload_too_large', 'unsupported_media_type'];
const stub = (summary: string): ServiceRouteDoc => ({ summary, auth: 'public or secret', answers: { 200: { type: 'object' }, 204: null }, errors: ALL, errorFields: { interactive_required: { type: 'boolean' }, 'error-codes': { type: 'array', items: { type: 'string' } } } });

export const CAPTCHA_DOC: ServiceDoc = {
  summary: 'Puzzle and managed human verification: browser widget routes plus server-side token validation.',
  routes: {
    'GET challenge': stub('Fetch a puzzle challenge'),
    'OPTIONS challenge': stub('CORS preflight'),
    'POST verify': stub('Verify a puzzle solution'),
    'OPTIONS verify': stub('CORS preflight'),
    'POST managed': stub('Managed verification with puzzle fallback'),
    'OPTIONS managed': stub('CORS preflight'),
    'POST siteverify': stub('Server-side token validation'),
    'GET status': stub('Key health and quota snapshot'),
    'GET usage': stub('Usage for the subscription'),
  },
  assets: { summary: 'The widget files (captcha.js, its CSS and frame page), beyond the spec' },
};
