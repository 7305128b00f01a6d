/**
 * The captcha routes (PROTOCOL.md): challenge, verify and managed for pages (public key), and
 * siteverify, status and usage for the site's server (secret key). Checks in SPEC's order: the
 * key (401), the site key's IP allowlist (403), rate and quota (429), the page's domain (403),
 * then the token (400), and only then the single-use nonce or proof id, consumed atomically,
 * so garbage never burns a real token and two racing submits cannot both pass. A challenge's
 * nonce is consumed before its solution is checked: a wrong answer uses it up too. A failed
 * verify or managed call gives its quota unit back.
 */
import { LookupError, clientGoneRefusal, isLookupError, refusal, type ErrorCode } from '../../errors.js';
import { andThen, isPromise, type MaybePromise } from '../../lib/outcome.js';
import { createCidrMatcher, parseIp, type IpAddress } from '../../lib/ip.js';
import { successBody, successBodyOfMembers } from '../../lib/envelope.js';
import { bearerToken, firstHeader } from '../../lib/headers.js';
import { quotaPeriod } from '../../lib/calendar.js';
import type { Reservation } from '../../metering/types.js';
import type { ServiceAnswer, ServiceContext, ServiceHandler, ServiceKey, ServiceRequest } from '../service.js';
import { createKeyRingSource } from './key-ring.js';
import { createPowPuzzle } from './puzzles/pow.js';
import { randomHex } from '../../lib/random-hex.js';
import { createSliderPuzzle } from './puzzles/slider.js';
import type { Puzzle, TracePoint } from './puzzles/types.js';
import {
  MANAGED_PASS_BELOW,
  addressSignals,
  lacksInteractionCounts,
  readTelemetry,
  readTelemetryText,
  riskLevel,
  riskScore,
  telemetrySignals,
  type Telemetry,
} from './risk.js';
import { POW_DIFFICULTY, powDifficulty, riskBlocked, riskPolicyOf } from './risk-policy.js';
import { hostAllowed, normalizeHostname, publicKeyIdOfSecret, readSiteKey, type SiteKeyConfig } from './site-keys.js';
import { checkToken, openToken, readToken, signToken, tokenKeyId, type KeyRing, type SigningKey, type TokenKind } from './signing.js';

/** Seconds a challenge may be answered in. */
export const CHALLENGE_TTL_S = 120;
/** Seconds a proof stays valid (SPEC: tokens are valid for 300 s). */
export const PROOF_TTL_S = 300;
/** How long site key settings are reused before being read again (an update shows within this). */
const SETTINGS_TTL_MS = 2_000;
const ACTION = /^[A-Za-z0-9_-]{1,32}$/;
/** siteverify's `idempotency_key`, as Turnstile takes it: a UUID. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Bound of each memo below (they start over when full): what is parsed again per request otherwise. */
const MEMO_ENTRIES = 1_000;

// `risk`: the score seen when the challenge was issued, which also set the pow difficulty.
const CHALLENGE: TokenKind<'siteKey' | 'hostname' | 'puzzle' | 'params' | 'risk' | 'nonce' | 'issuedAt' | 'expiresAt'> = {
  label: 'seclookup-captcha-challenge',
  fields: ['siteKey', 'hostname', 'puzzle', 'params', 'risk', 'nonce', 'issuedAt', 'expiresAt'],
};
type ProofField = 'id' | 'siteKey' | 'hostname' | 'action' | 'mode' | 'puzzle' | 'risk' | 'issuedAt' | 'expiresAt';
type ProofFields = Record<ProofField, string>;
const PROOF: TokenKind<ProofField> = {
  label: 'seclookup-captcha-proof',
  fields: ['id', 'siteKey', 'hostname', 'action', 'mode', 'puzzle', 'risk', 'issuedAt', 'expiresAt'],
};

/** What a challenge is made of: the site key and page it is for, its puzzle, the risk that chose it, when. */
export interface ChallengeSpec {
  siteKey: string;
  hostname: string;
  puzzle: Puzzle<object>;
  risk: number;
  issuedAt: number;
  requestId: string;
}

/**
 * The challenge route's answer: a fresh puzzle and the token that carries it, signed with the
 * ring's current key. The route's own work once the key, the meter and the risk have answered
 * (`npm run bench -- routes` measures it alone).
 */
export function challengeBody(keys: KeyRing, spec: ChallengeSpec): string {
  const { puzzle, issuedAt } = spec;
  const paramsJson = puzzle.json(puzzle.create());
  const challenge = signToken(keys, CHALLENGE, {
    siteKey: spec.siteKey,
    hostname: spec.hostname,
    puzzle: puzzle.type,
    params: paramsJson,
    risk: spec.risk,
    nonce: randomHex(16),
    issuedAt,
    expiresAt: issuedAt + CHALLENGE_TTL_S * 1000,
  });
  // The params were serialized for the token already: spliced in, the same text JSON.stringify of
  // { challenge, puzzle_type, params, expires_in } makes. The token (base64url and a dot) and the
  // puzzle type (a word) need no escaping.
  const members = `"challenge":"${challenge}","puzzle_type":"${puzzle.type}","params":${paramsJson},"expires_in":${CHALLENGE_TTL_S}`;
  return successBodyOfMembers({ requestId: spec.requestId }, members);
}

/** Turnstile's `error-codes` for our codes, so Turnstile server libraries read our failures. */
const TURNSTILE_CODES: Partial<Record<ErrorCode, string>> = {
  missing_credentials: 'missing-input-secret',
  invalid_api_key: 'invalid-input-secret',
  wrong_key_type: 'invalid-input-secret',
  invalid_request: 'missing-input-response',
  invalid_json: 'bad-request',
  unsupported_media_type: 'bad-request',
  payload_too_large: 'bad-request',
  invalid_token: 'invalid-input-response',
  token_already_used: 'timeout-or-duplicate',
  action_mismatch: 'invalid-input-response',
  domain_not_allowed: 'invalid-input-response',
  ip_not_allowed: 'invalid-input-secret',
  rate_limit_exceeded: 'internal-error',
  quota_exceeded: 'internal-error',
  server_error: 'internal-error',
  // Turnstile has no code for this refusal: ours, in its style.
  risk_too_high: 'risk-too-high',
};

/**
 * `{ 'error-codes': [Turnstile's code] }` for each of our codes, made once and frozen: the error
 * envelope keeps the JSON of a frozen fields object (src/api/envelope.ts).
 */
const TURNSTILE_FIELDS = new Map<ErrorCode, Readonly<Record<string, unknown>>>();
function turnstileFields(code: ErrorCode): Readonly<Record<string, unknown>> {
  let fields = TURNSTILE_FIELDS.get(code);
  if (fields === undefined) TURNSTILE_FIELDS.set(code, (fields = Object.freeze({ 'error-codes': Object.freeze([TURNSTILE_CODES[code] ?? 'bad-request']) })));
  return fields;
}

/** A key and its site key's settings. */
interface Authenticated {
  key: ServiceKey;
  site: SiteKeyConfig;
}

export function createCaptchaService(context: ServiceContext): Record<string, ServiceHandler> {
  const { meter, gate, singleUse, lookup, now } = context;
  // The API's clock (tests pass a fake one): settings and the key ring are reread by it too.
  const ring = createKeyRingSource(meter, context.secret, now);
  const puzzles: Record<string, Puzzle<object>> = { pow: createPowPuzzle() as Puzzle<object>, slider: createSliderPuzzle() as Puzzle<object> };
  // The pow puzzle at each difficulty a risk level can ask for (checking reads it from the signed params).
  const powAt = new Map<number, Puzzle<object>>();
  const settingsCache = new Map<string, { config: SiteKeyConfig | null; readAt: number }>();
  const allowlists = new Map<string, (ip: IpAddress) => boolean>();
  // A secret key's site key is written once, when the pair is made, and never changed: a found
  // one is remembered (revocation is the key's status, which gate.resolve checks every time).
  const publicKeyIds = new Map<string, string>();
  // Proofs a siteverify found already used, by their exact text: a replay is refused without
  // decoding it, computing its MAC again or asking the single-use store. Sound because a used id
  // stays used until it expires (expiry is still checked first), and the same bytes under the
  // same key have the same MAC: an entry counts only while that very key is in the ring.
  const spentProofs = new Map<string, { key: SigningKey; values: ProofFields }>();

  function publicKeyIdOf(secretKeyId: string): MaybePromise<string | null> {
    const known = publicKeyIds.get(secretKeyId);
    if (known !== undefined) return known;
    return publicKeyIdOfSecret(meter, secretKeyId).then((found) => {
      if (found !== null) {
        if (publicKeyIds.size >= MEMO_ENTRIES) publicKeyIds.clear();
        publicKeyIds.set(secretKeyId, found);
      }
      return found;
    });
  }

  /** The site key's settings: at once while the last read is fresh, else read again. */
  function siteKeyOf(publicKeyId: string): MaybePromise<SiteKeyConfig> {
    // Read again once SETTINGS_TTL_MS has passed on the API's clock (a test moves its fake clock instead of waiting).
    const cached = settingsCache.get(publicKeyId);
    if (cached && now() - cached.readAt < SETTINGS_TTL_MS) return siteKeyOrRefusal(cached.config);
    return readSiteKey(meter, publicKeyId).then((config) => {
      if (settingsCache.size > 10_000) settingsCache.clear();
      settingsCache.set(publicKeyId, { config, readAt: now() });
      return siteKeyOrRefusal(config);
    });
  }

  function siteKeyOrRefusal(config: SiteKeyConfig | null): SiteKeyConfig {
    if (!config) throw refusal('invalid_api_key', 'the key is not a site key (create site keys with seclookup sitekeys create)');
    return config;
  }

  /**
   * The key and its site key, for a route that takes `kind` of key: at once when the meter and
   * the settings answer at once (a warm key), else as a promise. May throw its refusal at once.
   */
  function authenticate(given: string | undefined, kind: 'public' | 'secret', request: ServiceRequest): MaybePromise<Authenticated> {
    // White space around a key (a line break read with it from a file) is dropped, as a Bearer key's is.
    const token = given?.trim();
    if (!token) throw refusal('missing_credentials', kind === 'public' ? 'no site key: send sitekey' : 'no secret key: send secret');
    const other = kind === 'public' ? 'tf_sec_' : 'tf_pub_';
    if (token.startsWith(other)) {
      throw refusal(
        'wrong_key_type',
        kind === 'public'
          ? 'a secret key on a browser route: pages carry the site key (tf_pub_), never the secret'
          : 'a site key (tf_pub_) on a server route: send the secret key (tf_sec_)',
      );
    }
    return andThen(gate.resolve(token), (key) => {
      if (key.kind !== kind) throw refusal('wrong_key_type', `this route takes the ${kind} key`);
      const publicKeyId = kind === 'public' ? key.id : publicKeyIdOf(key.id);
      return andThen(publicKeyId, (id) => {
        if (!id) throw refusal('invalid_api_key', 'the key is not a site key');
        return andThen(siteKeyOf(id), (site) => {
          checkAllowlist(site, request);
          return { key, site };
        });
      });
    });
  }

  /** 403 ip_not_allowed unless the caller is on the site key's IP allowlist (when it has one). */
  function checkAllowlist(site: SiteKeyConfig, request: ServiceRequest): void {
    if (site.ipAllow.length === 0) return;
    const list = site.ipAllow.join(',');
    let allowed = allowlists.get(list);
    if (!allowed) allowlists.set(list, (allowed = createCidrMatcher(site.ipAllow)));
    const ip = request.clientIp();
    if (!ip || !allowed(ip)) throw refusal('ip_not_allowed', "the caller IP is not on this site key's allowlist");
  }

  /** The page hostname: the `hostname` field, else the Origin's host; checked against the allowlist. A third-party Origin is refused. */
  function pageHost(site: SiteKeyConfig, hostnameField: unknown, request: ServiceRequest): string {
    if (site.domains.length === 0)
      throw refusal('domain_not_configured', 'this site key has no domains: add them with seclookup sitekeys update KEY --domain example.com');
    const origin = originHost(request);
    if (origin && !origin.own && !hostAllowed(origin.host, site.domains))
      throw refusal('domain_not_allowed', `the page origin ${origin.host} is not allowed for this site key`);
    const given =
      hostnameField === undefined || hostnameField === null || hostnameField === '' ? (origin && !origin.own ? origin.host : null) : hostnameOf(hostnameField);
    if (!given) throw refusal('domain_required', 'send the page hostname (hostname), as the widget does');
    if (!hostAllowed(given, site.domains)) throw refusal('domain_not_allowed', `the hostname ${given} is not allowed for this site key`);
    return given;
  }

  /** CORS: reflect the Origin when its host is allowed for the site key. */
  function allowOrigin(site: SiteKeyConfig | null, request: ServiceRequest): boolean {
    const origin = firstHeader(request.headers.origin);
    const parsed = origin ? originHost(request) : null;
    request.responseHeaders.vary = 'Origin';
    if (!origin || !parsed || !site || !hostAllowed(parsed.host, site.domains)) return false;
    request.responseHeaders['access-control-allow-origin'] = origin;
    return true;
  }

  /** A challenge, at once when the key, the meter and the key ring answer at once (the usual case). */
  function issueChallenge(request: ServiceRequest): MaybePromise<ServiceAnswer> {
    return andThen(authenticate(request.query.get('sitekey') ?? undefined, 'public', request), ({ key, site }) => {
      allowOrigin(site, request);
      // A puzzle solved with no quota left could only be refused at verify: refused before the work.
      const admitted = gate.admit(key, { rateKeyId: site.publicKeyId, reserveQuota: false, needsQuotaLeft: true }, request.responseHeaders);
      return andThen(admitted, () => {
        const hostname = pageHost(site, request.query.get('hostname'), request);
        // The risk seen now sets the pow difficulty (and so the puzzle); both go into the signed challenge.
        const risk = riskScore(signalsOf(readTelemetryText(request.query.get('telemetry')), request));
        const puzzle = choosePuzzle(request.query.get('puzzle_type'), powDifficulty(riskPolicyOf(site.risk), riskLevel(risk)));
        return andThen(ring(), (keys) => signedChallenge(request, keys, site, hostname, puzzle, risk));
      });
    });
  }

  function signedChallenge(request: ServiceRequest, keys: KeyRing, site: SiteKeyConfig, hostname: string, puzzle: Puzzle<object>, risk: number): ServiceAnswer {
    // ASCII by construction (challengeBody): the hostname and site key travel inside the base64url token.
    return { body: challengeBody(keys, { siteKey: site.publicKeyId, hostname, puzzle, risk, issuedAt: now(), requestId: request.requestId }), ascii: true };
  }

  function powPuzzle(difficulty: number): Puzzle<object> {
    let puzzle = powAt.get(difficulty);
    if (!puzzle) powAt.set(difficulty, (puzzle = createPowPuzzle({ difficulty }) as Puzzle<object>));
    return puzzle;
  }

  /**
   * The puzzle `type` asks for, with the pow at `difficulty`. Once the risk has raised the
   * difficulty above low's, the pow whatever the type: a script passes a slider in milliseconds,
   * so picking one must never be cheaper than the work the risk asks for.
   */
  function choosePuzzle(type: string | null, difficulty: number): Puzzle<object> {
    if (type !== null && type !== '' && type !== 'pow' && type !== 'slider' && type !== 'random')
      throw refusal('invalid_request', `puzzle_type must be pow, slider or random (got ${JSON.stringify(type).slice(0, 40)})`);
    const pow = powPuzzle(difficulty);
    if (difficulty > POW_DIFFICULTY.low) return pow;
    if (type === 'slider') return puzzles.slider;
    if (type === 'random') return Number.parseInt(randomHex(1), 16) & 1 ? puzzles.slider : pow;
    return pow;
  }

  /**
   * A quota unit held for `work`, billed when it answers 200 to a client still there. A client
   * gone meanwhile gets its unit back, and its answer (a proof nobody will read) is 499
   * `client_closed_request`, as a lookup's: logged as not answered, so the log matches the bill.
   */
  async function billed(key: ServiceKey, site: SiteKeyConfig, request: ServiceRequest, work: () => Promise<ServiceAnswer>): Promise<ServiceAnswer> {
    const { reservation } = await gate.admit(key, { rateKeyId: site.publicKeyId, reserveQuota: true }, request.responseHeaders);
    let kept = false;
    try {
      const answer = await work();
      kept = answer.status === undefined || answer.status === 200;
      if (kept && request.clientGone()?.aborted) {
        kept = false;
        throw clientGoneRefusal();
      }
      return answer;
    } finally {
      if (reservation && kept) gate.commit(reservation as Reservation);
      else if (reservation) await gate.refund(reservation as Reservation, request.responseHeaders);
    }
  }

  /** What verify and managed share: the site key from the body, CORS, a quota unit held, the page's hostname and the action. */
  async function browserPost(
    request: ServiceRequest,
    work: (call: { body: Record<string, unknown>; site: SiteKeyConfig; hostname: string; action: string }) => Promise<ServiceAnswer>,
  ): Promise<ServiceAnswer> {
    const body = await request.body();
    const authenticated = authenticate(stringField(body.sitekey) ?? request.query.get('sitekey') ?? undefined, 'public', request);
    const { key, site } = isPromise(authenticated) ? await authenticated : authenticated;
    allowOrigin(site, request);
    return billed(key, site, request, () => work({ body, site, hostname: pageHost(site, body.hostname, request), action: readAction(body.action) }));
  }

  /** The risk signals of one pass: the widget's telemetry, the User-Agent header and the caller's address. */
  function signalsOf(telemetry: Telemetry, request: ServiceRequest) {
    return [...telemetrySignals(telemetry, firstHeader(request.headers['user-agent'])), ...addressSignals(lookup, request.clientIp())];
  }

  function verify(request: ServiceRequest): Promise<ServiceAnswer> {
    return browserPost(request, async ({ body, site, hostname, action }) => {
      const token = stringField(body.token);
      if (!token) throw refusal('invalid_request', 'send token: the challenge, a dot, and the solution');
      const cut = token.lastIndexOf('.');
      const keys = await ring(tokenKeyId(CHALLENGE, token.slice(0, Math.max(0, cut))) ?? undefined);
      const challenge = cut > 0 ? openToken(keys, CHALLENGE, token.slice(0, cut)) : null;
      if (!challenge) throw refusal('invalid_token', 'the challenge is not one of ours or was altered; fetch a new one');
      if (Number(challenge.expiresAt) <= now()) throw refusal('invalid_token', 'the challenge expired; fetch a new one');
      if (challenge.siteKey !== site.publicKeyId) throw refusal('invalid_token', 'the challenge was issued for another site key');
      if (challenge.hostname !== hostname) throw refusal('invalid_token', 'the challenge was issued for another hostname');
      const puzzle = puzzles[challenge.puzzle];
      const params = puzzle?.readParams(JSON.parse(challenge.params));
      if (!puzzle || !params) throw refusal('invalid_token', 'the challenge names an unknown puzzle');
      const trace = readTrace(body.trace);
      // The higher of the risk seen at challenge time and now: clean telemetry at one step does not wash out the other.
      const score = Math.max(Number(challenge.risk) || 0, riskScore(signalsOf(readTelemetry(body.telemetry), request)));
      // A risk that rose since the challenge (verified from another address, a HeadlessChrome
      // User-Agent) owes the harder pow that risk asks for: a slider or a 14-bit pow fetched at low
      // risk is not enough. Refused before the challenge is spent; a new challenge asks the work owed.
      const done = challenge.puzzle === 'pow' ? (params as { difficulty: number }).difficulty : POW_DIFFICULTY.low;
      if (done < powDifficulty(riskPolicyOf(site.risk), riskLevel(score)))
        throw refusal('invalid_token', `the risk rose to ${riskLevel(score)} since the challenge was issued; fetch a new one`);
      // Used up before the answer is checked: a wrong answer spends the challenge as a right one
      // does, so each try costs a new challenge (no guessing a slider's position on one).
      if (!(await singleUse.consume(`c:${challenge.nonce}`, Number(challenge.expiresAt), now()))) {
        throw refusal('invalid_token', 'this challenge was already answered; fetch a new one');
      }
      const problem = puzzle.check(params, token.slice(cut + 1), trace);
      if (problem) throw refusal('challenge_failed', `the puzzle was not solved: ${problem}; fetch a new challenge`);
      const proof = issueProof(keys, site, hostname, action, 'puzzle', challenge.puzzle, score);
      return { body: successBody({ proof, risk_score: score, risk_level: riskLevel(score), ...(action ? { action } : {}) }, { requestId: request.requestId }) };
    });
  }

  function managed(request: ServiceRequest): Promise<ServiceAnswer> {
    return browserPost(request, async ({ body, site, hostname, action }) => {
      if (!site.managed) throw interactive('managed mode is off for this site key: solve a puzzle');
      const telemetry = readTelemetry(body.telemetry);
      // No telemetry scores low only because nothing can be judged: never a pass.
      if (lacksInteractionCounts(telemetry)) throw interactive('a puzzle is needed (no telemetry: send pointer_moves and keys, as the widget does)');
      const signals = signalsOf(telemetry, request);
      const score = riskScore(signals);
      if (score >= MANAGED_PASS_BELOW) throw interactive(`a puzzle is needed (signals: ${signals.map((s) => s.name).join(', ')})`);
      const proof = issueProof(await ring(), site, hostname, action, 'managed', 'none', score);
      return {
        body: successBody(
          { proof, mode: 'managed', risk_score: score, risk_level: riskLevel(score), ...(action ? { action } : {}) },
          { requestId: request.requestId },
        ),
      };
    });
  }

  function issueProof(keys: KeyRing, site: SiteKeyConfig, hostname: string, action: string, mode: 'puzzle' | 'managed', puzzle: string, risk: number): string {
    const issuedAt = now();
    return signToken(keys, PROOF, {
      id: randomHex(16),
      siteKey: site.publicKeyId,
      hostname,
      action,
      mode,
      puzzle,
      risk,
      issuedAt,
      expiresAt: issuedAt + PROOF_TTL_S * 1000,
    });
  }

  /**
   * The rate window a request counts in: the site key's for its pages, the secret key's own for
   * the site's server, so page traffic (anyone holding the public key can send it) cannot lock
   * siteverify out. Two windows per site key, each at the plan's per-minute rate.
   */
  function rateWindowOf(key: ServiceKey, site: SiteKeyConfig): string {
    return key.kind === 'secret' ? key.id : site.publicKeyId;
  }

  function siteverify(request: ServiceRequest): Promise<ServiceAnswer | LookupError> {
    // Its own refusals are returned, not thrown (see ServiceHandler): a forged or replayed proof,
    // refused request after request, costs no throw. One thrown on the way (the body, the key,
    // the rate) is returned here as siteverify's.
    return siteverifyChecked(request).catch((error: unknown) => {
      if (isLookupError(error)) return error.fields?.['error-codes'] !== undefined ? error : siteverifyRefusal(error.code, error.message, error.fields);
      context.onError?.(error, request.requestId);
      return siteverifyRefusal('server_error', 'unexpected server error; retry with backoff');
    });
  }

  /** A siteverify refusal: our envelope, plus Turnstile's `error-codes` for its server libraries (unless `fields` names them). */
  function siteverifyRefusal(code: ErrorCode, message: string, fields?: Readonly<Record<string, unknown>>): LookupError {
    if (fields === undefined) return refusal(code, message, { fields: turnstileFields(code) });
    return refusal(code, message, { fields: { ...fields, 'error-codes': fields['error-codes'] ?? turnstileFields(code)['error-codes'] } });
  }

  async function siteverifyChecked(request: ServiceRequest): Promise<ServiceAnswer | LookupError> {
    const body = await request.body({ multipart: true }).catch((error: unknown) => Promise.reject(asBadRequest(error)));
    const authenticated = authenticate(stringField(body.secret), 'secret', request);
    const { key, site } = isPromise(authenticated) ? await authenticated : authenticated;
    const admitted = gate.admit(key, { rateKeyId: rateWindowOf(key, site), reserveQuota: false }, request.responseHeaders);
    if (isPromise(admitted)) await admitted;
    const response = stringField(body.response);
    if (!response) return siteverifyRefusal('invalid_request', 'send response: the value of the captcha-response field');
    if (body.remoteip !== undefined && body.remoteip !== '' && (typeof body.remoteip !== 'string' || !parseIp(body.remoteip.trim()))) {
      return siteverifyRefusal('invalid_request', 'remoteip must be an IPv4 or IPv6 address', { 'error-codes': ['bad-request'] });
    }
    const idempotencyKey = idempotencyKeyOf(body.idempotency_key);
    if (idempotencyKey === false) {
      return siteverifyRefusal('invalid_request', 'idempotency_key must be a UUID (the same one on every retry of one verification)', {
        'error-codes': ['bad-request'],
      });
    }
    // A replay of a proof already refused as used: its MAC was checked with this very key.
    // (Asked only when there are some: hashing a fresh 400-character text is not free.)
    const spent = spentProofs.size > 0 ? spentProofs.get(response) : undefined;
    const known = spent !== undefined && (await ring(spent.key.kid)).byId.get(spent.key.kid) === spent.key;
    let proof: ProofFields | null;
    let signingKey: SigningKey | undefined;
    if (known) ({ key: signingKey, values: proof } = spent);
    else {
      const read = readToken(PROOF, response);
      const ringNow = ring(read?.kid);
      const keys = isPromise(ringNow) ? await ringNow : ringNow;
      proof = checkToken(keys, read);
      signingKey = read ? keys.byId.get(read.kid) : undefined;
    }
    if (!proof) return siteverifyRefusal('invalid_token', 'the response is not a valid captcha token');
    if (proof.siteKey !== site.publicKeyId) return siteverifyRefusal('invalid_token', 'the response was issued for another site key (secret mismatch)');
    if (Number(proof.expiresAt) <= now())
      return siteverifyRefusal('invalid_token', 'the response expired (tokens are valid for 300 s)', { 'error-codes': ['timeout-or-duplicate'] });
    // No action to check: absent, empty or JSON null (as clients send an unset optional field).
    if (body.action !== undefined && body.action !== null && body.action !== '' && body.action !== proof.action)
      return siteverifyRefusal('action_mismatch', `the response was issued for action ${JSON.stringify(proof.action)}`);
    if (!hostAllowed(proof.hostname, site.domains))
      return siteverifyRefusal('domain_not_allowed', `the hostname ${proof.hostname} is no longer allowed for this site key`);
    // With an idempotency key, the proof is claimed for it: a retry with the key (on any
    // instance, even while the first call is still at work) is a win again and gets the first
    // call's answer; a call without it, or with another, finds the proof used. A memo'd spent
    // proof is still asked about when a key comes with it: the key may be the one it was spent with.
    if ((known && !idempotencyKey) || !(await singleUse.consume(`p:${proof.id}`, Number(proof.expiresAt), now(), idempotencyKey))) {
      if (!known && signingKey) {
        if (spentProofs.size >= MEMO_ENTRIES) spentProofs.clear();
        spentProofs.set(response, { key: signingKey, values: proof });
      }
      return siteverifyRefusal('token_already_used', 'this response was already verified: each token works once');
    }
    const risk = Number(proof.risk);
    // After the token is consumed: a refused token stays used, as a passed one does.
    const policy = riskPolicyOf(site.risk);
    if (riskBlocked(policy, risk)) {
      return siteverifyRefusal(
        'risk_too_high',
        `the visitor's risk score ${risk} is at or above this site key's limit ${policy.blockAt} (seclookup sitekeys update KEY --risk-block-at N|off)`,
        { risk_score: risk, risk_level: riskLevel(risk) },
      );
    }
    return {
      body: successBody(
        {
          challenge_ts: new Date(Number(proof.issuedAt)).toISOString(),
          hostname: proof.hostname,
          action: proof.action,
          'error-codes': [],
          mode: proof.mode,
          risk_score: risk,
          risk_level: riskLevel(risk),
        },
        { requestId: request.requestId },
      ),
    };
  }

  async function status(request: ServiceRequest): Promise<ServiceAnswer> {
    const token = bearerToken(request.headers) ?? request.query.get('sitekey') ?? request.query.get('secret') ?? undefined;
    const kind = token?.startsWith('tf_sec_') ? 'secret' : 'public';
    const { key, site } = await authenticate(token, kind, request);
    const { quota } = await gate.admit(key, { rateKeyId: rateWindowOf(key, site), reserveQuota: false }, request.responseHeaders);
    return {
      body: successBody(
        {
          status: key.status,
          product: 'captcha',
          plan: key.plan.slug,
          domains_configured: site.domains.length > 0,
          domain_count: site.domains.length,
          ip_restrictions: site.ipAllow.length > 0,
          rate_limit_per_minute: key.plan.rateLimitPerMinute,
          monthly_quota: quota!.limit ?? -1,
          quota_unlimited: quota!.limit === null,
          quota_remaining: quota!.remaining ?? -1,
          quota_period: quota!.period,
        },
        { requestId: request.requestId },
      ),
    };
  }

  async function usage(request: ServiceRequest): Promise<ServiceAnswer> {
    const token = bearerToken(request.headers) ?? request.query.get('secret') ?? stringField((await request.body()).secret);
    const { key, site } = await authenticate(token, 'secret', request);
    const { quota } = await gate.admit(key, { rateKeyId: rateWindowOf(key, site), reserveQuota: false }, request.responseHeaders);
    const period = quotaPeriod(now());
    const rows = (await meter.usage(period)).filter((row) => row.subscriptionId === key.subscriptionId && row.product === 'captcha');
    const siteKeys = (await meter.listKeys()).filter((k) => k.subscriptionId === key.subscriptionId && k.kind === 'public' && k.status === 'active').length;
    return {
      body: successBody(
        {
          product: 'captcha',
          plan: key.plan.slug,
          subscription_id: key.subscriptionId,
          site_keys: siteKeys,
          period,
          monthly_quota: quota!.limit ?? -1,
          quota_unlimited: quota!.limit === null,
          quota_used: rows.reduce((sum, row) => sum + row.lookups, 0),
          quota_remaining: quota!.remaining ?? -1,
          days: rows.map((row) => ({ day: row.day, verifications: row.lookups })),
        },
        { requestId: request.requestId },
      ),
    };
  }

  /** OPTIONS on a browser route: 204 with the CORS headers when the Origin is allowed for `?sitekey=`. */
  async function preflight(request: ServiceRequest): Promise<ServiceAnswer> {
    const token = request.query.get('sitekey');
    let site: SiteKeyConfig | null = null;
    if (token && token.startsWith('tf_pub_')) {
      try {
        site = (await authenticate(token, 'public', request)).site;
      } catch (error) {
        if (!isLookupError(error)) throw error;
      }
    }
    if (!allowOrigin(site, request)) throw refusal('domain_not_allowed', 'preflight refused: send ?sitekey= and an Origin allowed for it');
    Object.assign(request.responseHeaders, {
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'Content-Type',
      'access-control-max-age': '600',
    });
    // A 204 has no body, so nothing for the API's default Content-Type to describe.
    delete request.responseHeaders['content-type'];
    return { status: 204, body: '' };
  }

  return { challenge: issueChallenge, verify, managed, siteverify, status, usage, preflight };
}

function interactive(message: string): LookupError {
  return refusal('interactive_required', message, { fields: { interactive_required: true } });
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function readAction(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string' || !ACTION.test(value)) throw refusal('invalid_request', 'action must be 1 to 32 letters, digits, _ or -');
  return value;
}

function readTrace(value: unknown): TracePoint[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw refusal('invalid_request', 'trace must be an array of {x, y, t} points');
  return value as TracePoint[];
}

/** An Origin header's normalized host and its URL host (to compare with this API's own), or null; by header text. */
const origins = new Map<string, { host: string; urlHost: string } | null>();

/** The Origin header's host, and whether it is this API's own origin (the widget's iframe). */
function originHost(request: ServiceRequest): { host: string; own: boolean } | null {
  const origin = firstHeader(request.headers.origin);
  if (!origin || origin === 'null') return null;
  let parsed = origins.get(origin);
  if (parsed === undefined) {
    parsed = parseOrigin(origin);
    // Origins are short; a long header is parsed each time rather than kept.
    if (origin.length <= 300) {
      if (origins.size >= MEMO_ENTRIES) origins.clear();
      origins.set(origin, parsed);
    }
  }
  if (!parsed) return null;
  // Behind a reverse proxy that rewrites Host, X-Forwarded-Host names the public origin; it
  // counts only from a trusted proxy (trustProxy), else anyone could claim to be this API.
  return { host: parsed.host, own: parsed.urlHost === request.ownHost() };
}

function parseOrigin(origin: string): { host: string; urlHost: string } | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  const host = normalizeHostname(url.hostname.replace(/^\[|\]$/g, ''));
  return host ? { host, urlHost: url.host } : null;
}

/** The page hostname a request names, normalized (null when it is not one); by text. */
const hostnames = new Map<string, string | null>();

function hostnameOf(field: unknown): string | null {
  if (typeof field !== 'string') return normalizeHostname(field);
  let host = hostnames.get(field);
  if (host === undefined) {
    host = normalizeHostname(field);
    if (field.length <= 300) {
      if (hostnames.size >= MEMO_ENTRIES) hostnames.clear();
      hostnames.set(field, host);
    }
  }
  return host;
}

/**
 * A body refused whole for its form (multipart that does not parse, a file part: the only
 * `invalid_request` a body read throws) is Turnstile's `bad-request`, not its "missing response".
 */
function asBadRequest(error: unknown): unknown {
  if (!isLookupError(error) || error.code !== 'invalid_request') return error;
  return refusal(error.code, error.message, { fields: { 'error-codes': ['bad-request'] } });
}

/** siteverify's optional `idempotency_key`: a UUID (lower-cased), undefined when absent, false when malformed. */
function idempotencyKeyOf(value: unknown): string | undefined | false {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : false;
}
