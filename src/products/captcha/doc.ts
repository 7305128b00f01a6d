import type { ErrorCode } from '../../errors.js';
import { bool, int, isoTime, type JsonSchema, list, num, obj, oneOf, str } from '../../openapi/schema.js';
import type { ParamDoc, ServiceDoc } from '../../openapi/types.js';
import { FRAME_CSP } from './widget.js';
import { CHALLENGE_TTL_S, PROOF_TTL_S } from './service.js';

/** A success answer of a captcha route: the envelope's fields and the route's own. */
const answer = (fields: Readonly<Record<string, JsonSchema>>, optional: readonly string[] = []): JsonSchema =>
  obj({ success: { const: true }, request_id: str('Unique id of this request (also X-Request-Id).'), ...fields }, { optional });

const RISK_SCORE = int('0-100, lower is safer.', { minimum: 0, maximum: 100 });
const RISK_LEVEL = oneOf(['low', 'medium', 'high'], 'low (below 30), medium (30-59), high (60 and above).');
const PROOF = str(`The response token: valid ${PROOF_TTL_S} s, for one successful siteverify (at most 2,048 characters).`);
const ACTION = str('The action label sent (1-32 of A-Za-z0-9_-), echoed when one was sent.');
const ACTION_IN = {
  type: ['string', 'null'],
  description: 'Optional label such as login or signup: 1-32 of A-Za-z0-9_-. Siteverify may check it. Empty or null: none.',
  pattern: '^([A-Za-z0-9_-]{1,32})?$',
};
const HOSTNAME_IN = str("The page's hostname (the widget sends location.hostname); else the Origin header's host is used.");
const SITEKEY_IN = str('The public key (tf_pub_).');

const TELEMETRY = obj(
  {
    webdriver: bool(),
    headless: bool(),
    languages: num(),
    plugins: num(),
    touch: bool(),
    screen: list(num(), '[width, height].'),
    pointer_moves: num(),
    keys: num(),
    focus: bool(),
    elapsed_ms: num(),
    timezone: str(),
  },
  {
    optional: ['webdriver', 'headless', 'languages', 'plugins', 'touch', 'screen', 'pointer_moves', 'keys', 'focus', 'elapsed_ms', 'timezone'],
    description: 'Browser telemetry the widget collects. Unknown fields and wrong types are ignored, never an error.',
  },
);

/** What every route that checks the key can answer: the key (401), the site key's IP allowlist (403), the rate (429), a store failure (500). */
const KEY: readonly ErrorCode[] = ['missing_credentials', 'invalid_api_key', 'wrong_key_type', 'ip_not_allowed', 'rate_limit_exceeded', 'server_error'];
/** The page's domain check of the browser routes. */
const DOMAIN: readonly ErrorCode[] = ['domain_not_configured', 'domain_not_allowed', 'domain_required'];
/** Reading a request body (api/body.ts). */
const BODY: readonly ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type'];
/**
 * Answered before the key passed (reading the body comes first where there is one): such
 * answers carry no limit headers, and no CORS headers on the browser routes. Everything after
 * is answered once the request was counted (service.ts: authenticate, then gate.admit).
 */
const EARLY: readonly ErrorCode[] = ['missing_credentials', 'invalid_api_key', 'wrong_key_type', 'ip_not_allowed', ...BODY];

const SITEKEY_QUERY: ParamDoc = { description: 'The public key (tf_pub_).', required: true };
const PREFLIGHT = {
  summary: 'CORS preflight',
  description:
    'Answers 204 with Access-Control-Allow-Origin (the Origin), Allow-Methods GET, POST, OPTIONS, Allow-Headers Content-Type, Max-Age 600 and Vary: Origin when the Origin host is allowed for the site key of ?sitekey= (a preflight has no body); else 403 domain_not_allowed without them. Not rate-limited or billed.',
  auth: 'none',
  query: { sitekey: SITEKEY_QUERY },
  answers: { 204: null },
  errors: ['domain_not_allowed', 'server_error'],
  // A store failure reading the site key is answered before the Origin is looked at (no Vary).
  early: ['server_error'],
  metered: false,
  cors: 'preflight',
} as const satisfies ServiceDoc['routes'][string];

/** Turnstile's codes (and our risk-too-high), beside ours on every siteverify failure. */
const TURNSTILE_CODES = [
  'missing-input-secret',
  'invalid-input-secret',
  'missing-input-response',
  'invalid-input-response',
  'bad-request',
  'timeout-or-duplicate',
  'internal-error',
  'risk-too-high',
];

export const CAPTCHA_DOC: ServiceDoc = {
  summary: 'Puzzle and managed human verification: browser widget routes plus server-side token validation.',
  routes: {
    'GET challenge': {
      summary: 'Fetch a puzzle challenge',
      description: "Counts against the site key's rate, not the quota. The page must be on a domain allowed for the site key.",
      auth: 'public',
      keyIn: 'the sitekey query parameter',
      bearer: false,
      query: {
        sitekey: SITEKEY_QUERY,
        hostname: { description: "The page's hostname (the widget sends it); else the Origin header's host is used." },
        puzzle_type: {
          description: 'pow (the default), slider, or random (one of the two). Anything else is 400 invalid_request.',
          schema: oneOf(['pow', 'slider', 'random']),
        },
        telemetry: {
          description:
            'The browser telemetry (as in verify) as JSON text. The risk it shows (with the User-Agent and the caller address) sets the pow difficulty when the site key scales it: 14 bits at low risk, 16 at medium, 18 at high. Text that is not JSON counts as none, never an error.',
        },
      },
      answers: {
        200: answer({
          challenge: str('Opaque signed string (base64url characters and dots); the verify token is it, a dot, and the solution.'),
          puzzle_type: oneOf(['pow', 'slider'], 'The puzzle chosen.'),
          params: {
            description: "The puzzle's parameters: pow or slider (PROTOCOL.md).",
            anyOf: [
              obj({
                algorithm: { const: 'sha256' },
                salt: str('32 hex characters.'),
                difficulty: int('Leading zero bits each hash must have: 14, 16 or 18 by the risk seen (site key risk policy).'),
                count: int('Counters to find.'),
              }),
              obj({
                width: int('Track width, px.'),
                piece: int('Piece width, px.'),
                target: int("Where the piece's left edge must end, px."),
                tolerance: int('Allowed distance from target, px.'),
              }),
            ],
          },
          expires_in: int(`Seconds the challenge may be answered in (${CHALLENGE_TTL_S}).`),
        }),
      },
      errors: [...KEY, 'quota_exceeded', ...DOMAIN, 'invalid_request'],
      early: EARLY,
      cors: 'reflect',
    },
    'OPTIONS challenge': PREFLIGHT,
    'POST verify': {
      summary: 'Verify a puzzle solution',
      description:
        'Counts one verification against the monthly quota (given back when it fails). A wrong solution or an implausible trace is 400 challenge_failed; a bad, expired, foreign or already answered challenge 400 invalid_token (a wrong answer spends the challenge too): fetch a new one. ' +
        'risk_score is the higher of the score seen at challenge time and now.',
      auth: 'public',
      keyIn: 'the sitekey body field or query parameter',
      bearer: false,
      query: { sitekey: { description: 'The public key, when not in the body.' } },
      body: obj(
        {
          sitekey: SITEKEY_IN,
          hostname: HOSTNAME_IN,
          token: str('The challenge string, a dot, and the solution.'),
          action: ACTION_IN,
          trace: list(
            obj({ x: num(), y: num(), t: num(), k: num('1 on a keyboard step.') }, { optional: ['k'] }),
            'The pointer path while dragging (slider; PROTOCOL.md).',
          ),
          telemetry: TELEMETRY,
        },
        { optional: ['sitekey', 'hostname', 'action', 'trace', 'telemetry'] },
      ),
      answers: { 200: answer({ proof: PROOF, risk_score: RISK_SCORE, risk_level: RISK_LEVEL, action: ACTION }, ['action']) },
      errors: [...KEY, 'quota_exceeded', ...DOMAIN, ...BODY, 'invalid_request', 'invalid_token', 'challenge_failed'],
      early: EARLY,
      cors: 'reflect',
    },
    'OPTIONS verify': PREFLIGHT,
    'POST managed': {
      summary: 'Managed verification with puzzle fallback',
      description:
        'Evaluates browser telemetry and IP risk. Counts one verification against the monthly quota (given back when it fails). When a puzzle is needed, or the site key has Managed mode off, answers 422 interactive_required with interactive_required true: the widget falls back to challenge then verify.',
      auth: 'public',
      keyIn: 'the sitekey body field or query parameter',
      bearer: false,
      query: { sitekey: { description: 'The public key, when not in the body.' } },
      body: obj(
        { sitekey: SITEKEY_IN, hostname: HOSTNAME_IN, action: ACTION_IN, telemetry: TELEMETRY },
        { optional: ['sitekey', 'hostname', 'action', 'telemetry'] },
      ),
      answers: { 200: answer({ proof: PROOF, mode: { const: 'managed' }, risk_score: RISK_SCORE, risk_level: RISK_LEVEL, action: ACTION }, ['action']) },
      errors: [...KEY, 'quota_exceeded', ...DOMAIN, ...BODY, 'invalid_request', 'interactive_required'],
      early: EARLY,
      cors: 'reflect',
      errorFields: { interactive_required: { const: true, description: 'On 422 interactive_required: a puzzle is needed.' } },
    },
    'OPTIONS managed': PREFLIGHT,
    'POST siteverify': {
      summary: 'Server-side token validation',
      description:
        "Each response token works for one successful call; reuse is 400 token_already_used, except a retry with the idempotency_key of the call that used it, which gets that call's answer again (its success, or its risk_too_high). Counts against the site key's rate, not the quota. Every failure also carries Turnstile's error-codes, so Turnstile server libraries read it. " +
        "A proof whose risk score is at or above the site key's limit (default 60: level high; seclookup sitekeys update --risk-block-at) is 403 risk_too_high with error-codes [risk-too-high], risk_score and risk_level; the token is used up all the same.",
      auth: 'secret',
      keyIn: 'the secret body field',
      bearer: false,
      body: obj(
        {
          secret: str('The secret key (tf_sec_).'),
          response: str('The value of the captcha-response field (the proof).'),
          remoteip: str("The end user's IPv4 or IPv6 address (recommended); anything else is 400 invalid_request."),
          action: {
            type: ['string', 'null'],
            description: 'When sent (not empty or null), must match the action used at verify or managed (400 action_mismatch).',
          },
          idempotency_key: {
            type: ['string', 'null'],
            description:
              "A UUID of your choosing, the same on every retry of one verification (Turnstile's field): a retry with the key of a call that succeeded gets its success again instead of 400 token_already_used. Anything but a UUID (or empty, or null: none) is 400 invalid_request.",
          },
        },
        { optional: ['remoteip', 'action', 'idempotency_key'] },
      ),
      answers: {
        200: answer({
          challenge_ts: isoTime('When the proof was issued (ISO 8601, UTC).', 'millis'),
          hostname: str('The page hostname the proof was issued for.'),
          action: str('The action of the proof; empty when none was sent.'),
          'error-codes': list(str(), "Turnstile's field: always empty on success."),
          mode: oneOf(['puzzle', 'managed'], 'How the visitor passed.'),
          risk_score: RISK_SCORE,
          risk_level: RISK_LEVEL,
        }),
      },
      errors: [
        'missing_credentials',
        'invalid_api_key',
        'wrong_key_type',
        'ip_not_allowed',
        'rate_limit_exceeded',
        'server_error',
        ...BODY,
        'invalid_request',
        'invalid_token',
        'action_mismatch',
        'domain_not_allowed',
        'token_already_used',
        'risk_too_high',
      ],
      early: EARLY,
      errorFields: {
        'error-codes': list(oneOf(TURNSTILE_CODES), "Turnstile's codes for the failure (every siteverify error carries it); risk-too-high is ours."),
        risk_score: { ...RISK_SCORE, description: 'On 403 risk_too_high: the score of the proof.' },
        risk_level: { ...RISK_LEVEL, description: 'On 403 risk_too_high: its level.' },
      },
    },
    'GET status': {
      summary: 'Key health and quota snapshot',
      description: "Counts against the site key's rate, not the quota.",
      auth: 'public or secret',
      keyIn: 'the sitekey or secret query parameter',
      query: {
        sitekey: {
          description: 'The site key (tf_pub_) or the secret key (tf_sec_), when no Bearer header is sent: its prefix says which it is. Read before secret.',
        },
        secret: { description: 'Either key as well (tf_sec_ or tf_pub_), when neither a Bearer header nor sitekey is sent.' },
      },
      answers: {
        200: answer({
          status: str("The key's state: active."),
          product: { const: 'captcha' },
          plan: str('Plan slug.'),
          domains_configured: bool('The site key has a domain allowlist.'),
          domain_count: int('Domains on the allowlist.'),
          ip_restrictions: bool('The site key has an IP allowlist.'),
          rate_limit_per_minute: int('Requests per minute of the plan, per site key.'),
          monthly_quota: int('Monthly verifications of the subscription; -1 when unlimited.'),
          quota_unlimited: bool("Ours (beside SPEC's captcha status fields): true for unlimited plans."),
          quota_remaining: int('Verifications left this UTC month; -1 when unlimited.'),
          quota_period: str('YYYY-MM.'),
        }),
      },
      // wrong_key_type cannot happen: the key's prefix decides which kind is asked for.
      errors: ['missing_credentials', 'invalid_api_key', 'ip_not_allowed', 'rate_limit_exceeded', 'server_error'],
      early: EARLY,
    },
    'GET usage': {
      summary: 'Usage for the subscription',
      description:
        "Verifications (verify and managed) this UTC month over all site keys of the subscription. Counts against the site key's rate, not the quota. " +
        'The body is optional: read only when neither Bearer nor ?secret= is sent.',
      auth: 'secret',
      keyIn: 'the secret query parameter, or the secret field of a JSON or form body',
      query: {
        secret: { description: 'The secret key (tf_sec_), when no Bearer header is sent. A site key (tf_pub_), here or anywhere, is 401 wrong_key_type.' },
      },
      body: obj({ secret: str('The secret key (tf_sec_), when neither Bearer nor ?secret= is sent.') }, { optional: ['secret'] }),
      bodyRequired: false,
      answers: {
        200: answer({
          product: { const: 'captcha' },
          plan: str('Plan slug.'),
          subscription_id: str('The subscription.'),
          site_keys: int('Active site keys of the subscription.'),
          period: str('YYYY-MM.'),
          monthly_quota: int('Monthly verifications; -1 when unlimited.'),
          quota_unlimited: bool(),
          quota_used: int('Verifications this month.'),
          quota_remaining: int('Verifications left this month; -1 when unlimited.'),
          days: list(obj({ day: str('YYYY-MM-DD.'), verifications: int() }), 'Per day with verifications.'),
        }),
      },
      errors: ['missing_credentials', 'invalid_api_key', 'wrong_key_type', 'ip_not_allowed', 'rate_limit_exceeded', 'server_error', ...BODY],
      early: EARLY,
    },
  },
  // As widget.ts serves them (TYPES, crossOriginHeaders).
  assets: {
    summary: 'The widget files (api.js, its scripts, CSS and frame page), beyond the spec',
    contentTypes: ['text/javascript', 'text/css', 'text/html'],
    headers: {
      'X-Content-Type-Options': { description: '`nosniff`.', schema: { const: 'nosniff' }, required: true },
      'Cross-Origin-Resource-Policy': {
        description: '`cross-origin`: pages of other sites embed the widget.',
        schema: { const: 'cross-origin' },
        required: true,
      },
      'Access-Control-Allow-Origin': {
        description: '`*` on scripts and styles (they may be fetched with CORS, for SRI); absent on the frame page.',
        schema: { const: '*' },
      },
      'Content-Security-Policy': { description: 'The frame page only: it runs only its own files.', schema: { const: FRAME_CSP } },
      'Cross-Origin-Embedder-Policy': { description: 'The frame page only: `require-corp`.', schema: { const: 'require-corp' } },
    },
  },
};
