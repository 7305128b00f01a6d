/**
 * captcha, server side, through `api.handle` (in-memory meter and single-use store, so the
 * store is not what is measured): challenges issued, slider solutions verified (signature,
 * trace check, nonce consumed, proof signed), proofs checked by siteverify (each once), against
 * the named baseline: an authenticated useragent status call through the same API (key, rate
 * window, envelope: what every route pays). Then the pow check alone (8 SHA-256 of 24 bytes)
 * against node:crypto hashing the same 8 inputs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { compare, ratioRow, type BenchRow } from '../harness.js';
import { createApi } from '../../src/api/create-api.js';
import type { ApiRequest } from '../../src/api/types.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { createPowPuzzle, powInput, solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';
import type { SliderParams } from '../../src/products/captcha/puzzles/slider.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { randomHex } from '../../src/lib/random-hex.js';

const SUITE = 'captcha (server side)';
const HOST = 'shop.example.com';
const COUNT = 3_000;

export async function run(): Promise<BenchRow[]> {
  const meter = createMemoryMeter();
  await meter.setPlan({ slug: 'bench', product: '*', rateLimitPerMinute: 100_000_000, monthlyQuota: null });
  const api = createApi({ lookup: createLookup(), meter, secret: randomBytes(32) });
  const site = await createSiteKey(meter, { domains: ['example.com'], plan: 'bench' });
  const ua = await issueKeys(meter, { product: 'useragent', plan: 'bench' });
  const get = (url: string, headers: Record<string, string> = {}): ApiRequest => ({ method: 'GET', url, headers, remoteAddress: '127.0.0.1' });
  const post = (url: string, json: unknown): ApiRequest => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(json),
    remoteAddress: '127.0.0.1',
  });
  const json = async (request: ApiRequest) => {
    const response = await api.handle(request);
    if (response.status !== 200) throw new Error(`captcha bench: ${request.url} answered ${response.status} ${response.body}`);
    return JSON.parse(response.body) as Record<string, unknown>;
  };
  const status = () => get('/v1/useragent/status', { authorization: `Bearer ${ua.publicKey}` });
  const challengeUrl = `/v1/captcha/challenge?sitekey=${site.siteKey}&hostname=${HOST}&puzzle_type=slider`;

  // Timed over a fixed number of requests (each token works once), baseline measured the same way right after.
  const timed = async (requests: ApiRequest[]) => {
    const start = performance.now();
    for (const request of requests) await json(request);
    return requests.length / ((performance.now() - start) / 1000);
  };
  const baseline = () => timed(Array.from({ length: COUNT }, status));

  await timed(Array.from({ length: 500 }, () => get(challengeUrl))); // warm-up
  await baseline();
  const challengeRate = await timed(Array.from({ length: COUNT }, () => get(challengeUrl)));
  const challengeBase = await baseline();

  const challenges = [];
  for (let i = 0; i < COUNT; i++) challenges.push(await json(get(challengeUrl)));
  const verifies = challenges.map((c) => {
    const target = (c.params as SliderParams).target;
    return post('/v1/captcha/verify', { sitekey: site.siteKey, hostname: HOST, token: `${c.challenge}.${target}`, trace: humanTrace(target) });
  });
  const proofs: string[] = [];
  const verifyStart = performance.now();
  for (const request of verifies) proofs.push(String((await json(request)).proof));
  const verifyRate = COUNT / ((performance.now() - verifyStart) / 1000);
  const verifyBase = await baseline();

  const siteverifyRate = await timed(proofs.map((proof) => post('/v1/captcha/siteverify', { secret: site.secretKey, response: proof })));
  const siteverifyBase = await baseline();

  const pow = createPowPuzzle();
  const params: PowParams = pow.create();
  const solution = solvePow(params);
  const salt = Buffer.from(params.salt, 'hex');
  const counters = solution.split(',').map(Number);
  const hashes = compare(
    () => pow.check(params, solution, null),
    () =>
      counters.map((c, i) =>
        createHash('sha256')
          .update(powInput(salt, i, c))
          .digest(),
      ),
    3,
    { batch: 200 },
  );

  // The random part of every challenge, proof and pow puzzle: 16 bytes as hex from the pool,
  // against one randomBytes call each (what service.ts and pow.ts did before).
  const nonces = compare(
    () => randomHex(16),
    () => randomBytes(16).toString('hex'),
    3,
    { batch: 1000 },
  );

  const row = (what: string, ops: number, base: number) =>
    ratioRow(
      { suite: SUITE, case: what, baseline: 'GET /v1/useragent/status through the same api.handle', opsPerSec: ops, baselineOpsPerSec: base, target: '(info)' },
      0,
    );
  return [
    row('GET /v1/captcha/challenge (slider): key, site key, rate window, domain check, signed challenge', challengeRate, challengeBase),
    row('POST /v1/captcha/verify (slider): signature, trace check, nonce consumed, quota, proof signed', verifyRate, verifyBase),
    row('POST /v1/captcha/siteverify: secret, proof signature, proof id consumed, Turnstile-shaped answer', siteverifyRate, siteverifyBase),
    ratioRow(
      {
        suite: SUITE,
        case: 'a nonce, proof id or pow salt: 16 random bytes as hex from the pooled CSPRNG draw',
        baseline: 'randomBytes(16).toString(hex), one CSPRNG call each (before)',
        opsPerSec: nonces.candidate,
        baselineOpsPerSec: nonces.baseline,
        target: '>= 5.00x',
      },
      5,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: 'pow check at the default difficulty (8 puzzles of 14 bits): parse + 8 SHA-256',
        baseline: 'node:crypto SHA-256 of the same 8 inputs',
        opsPerSec: hashes.candidate,
        baselineOpsPerSec: hashes.baseline,
        target: '(info)',
      },
      0,
    ),
  ];
}

function humanTrace(target: number) {
  const points = [];
  for (let i = 0; i <= 40; i++) {
    const eased = 1 - (1 - i / 40) ** 3;
    points.push({ x: Math.round(target * eased * 10) / 10, y: Math.round(Math.sin(i / 3) * 20) / 10, t: i * 19 });
  }
  points[points.length - 1].x = target;
  return points;
}
