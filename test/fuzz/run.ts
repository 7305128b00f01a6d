/**
 * The fuzz run: the whole API (createApi over the Node adapter, on 127.0.0.1) with every
 * upstream replaced by a hostile one on loopback (hostile-dns.ts, hostile-upstreams.ts), sent
 * `perRoute` hostile requests on every route of every product and service (inputs.ts). Every
 * answer must be a 2xx, or the spec's error envelope with a 4xx/5xx status that is its code's
 * (never 500 `internal_error`), within `hangMs`; no answer may carry the upstream API key.
 * `npm run fuzz` (bench/fuzz.ts) runs it long; test/fuzz/fuzz.test.ts runs a slice.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { seclookup as seclookupExpress } from '../../adapters/express.js';
import { seclookup as seclookupFastify, seclookupClientErrors, seclookupFrameworkErrors } from '../../adapters/fastify.js';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { splitUrl } from '../../src/api/input.js';
import type { Api } from '../../src/api/types.js';
import { createApi } from '../../src/api/create-api.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { createLookup } from '../../src/lookup.js';
import { issueKeys } from '../../src/metering/keys.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { PRODUCT_IDS, type ProductId } from '../../src/products/catalog.js';
import { startHostileDnsServer } from './hostile-dns.js';
import { startHostileHttp, startHostileRdap, startHostileTls, startHostileWhois } from './hostile-upstreams.js';
import { fuzzRequest, type Credentials, type FuzzRequest, type FuzzRoute } from './inputs.js';
import { createRandom } from './random.js';

export type FuzzAdapter = 'node' | 'express' | 'fastify';

export interface FuzzOptions {
  /** Requests per route (method and path). */
  perRoute: number;
  seed?: number;
  /** Requests in flight at once. @default 32 */
  concurrency?: number;
  /** An answer slower than this is a hang. @default 30,000 ms */
  hangMs?: number;
  /** Only routes whose `METHOD path` contains this. */
  filter?: string;
  /**
   * The adapter the API is mounted with. Under Express and Fastify a path the API does not own
   * (`api.owns`: an unknown file under `/widget/` on Express) is the application's, answered by
   * the framework: only a 500 or a hang counts there. @default 'node'
   */
  adapter?: FuzzAdapter;
  /** Told as each route's last request is answered. */
  onRoute?: (row: RouteReport) => void;
}

export interface RouteReport {
  route: string;
  requests: number;
  /** Count per HTTP status. */
  statuses: Record<number, number>;
  /** 500s, and any answer with error_code internal_error. */
  internalErrors: number;
  /** Requests that got no answer within hangMs, or whose connection failed. */
  hangs: number;
  /** Answers that are not a 2xx and not the error envelope with its code's status. */
  badEnvelopes: number;
  /** Answers that carried the upstream key. */
  leaks: number;
  /** A few examples of what went wrong, for the report. */
  examples: string[];
}

export interface FuzzReport {
  routes: RouteReport[];
  requests: number;
  internalErrors: number;
  hangs: number;
  badEnvelopes: number;
  leaks: number;
  /** What createApi reported through onError (the errors behind 500s), first few. */
  reportedErrors: string[];
  durationMs: number;
  seed: number;
}

/** The upstream API key riskscore is configured with: no answer may contain it. */
const UPSTREAM_KEY = 'fuzz-upstream-key-7b1c0e9d4f';

export function fuzzRoutes(filter?: string): FuzzRoute[] {
  const document = buildOpenApiDocument() as {
    paths: Record<
      string,
      Record<
        string,
        { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }
      >
    >;
  };
  const routes: FuzzRoute[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method !== 'get' && method !== 'post') continue;
      const parameters = operation.parameters ?? [];
      const names = (where: string) => parameters.filter((p) => p.in === where).map((p) => p.name);
      const route: FuzzRoute = {
        method: method.toUpperCase(),
        path,
        query: names('query'),
        pathParams: names('path'),
        headers: names('header'),
        body: Object.keys(operation.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
      };
      if (!filter || `${route.method} ${route.path}`.includes(filter)) routes.push(route);
    }
  }
  return routes;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const started = performance.now();
  const random = createRandom(seed);
  const [dns, rdap, whois, upstreamHttp, tlsServers] = await Promise.all([
    startHostileDnsServer(createRandom(seed + 1)),
    startHostileRdap(createRandom(seed + 2)),
    startHostileWhois(createRandom(seed + 3)),
    startHostileHttp(createRandom(seed + 4)),
    startHostileTls(),
  ]);
  const fast = { connectMs: 300, totalMs: 800 };
  const lookup = createLookup({
    dns: { servers: [dns.address], timeouts: { connectMs: 200, totalMs: 300 }, attempts: 2 },
    outbound: { allowPrivateTargets: ['127.0.0.0/8'] },
    whois: {
      rdapServers: { com: rdap.base, net: rdap.base, org: rdap.base, io: null, xyz: null },
      whoisServers: { io: whois.address, xyz: whois.address },
      ianaServer: whois.address,
      whoisPort: Number(whois.address.split(':')[1]),
      timeouts: fast,
      lookupTimeoutMs: 1_500,
    },
    tls: { timeouts: fast },
    pwbreach: { upstream: { url: `${upstreamHttp.url}/range/{prefix}`, timeouts: fast, attempts: 2, backoffMs: 0 } },
    riskscore: { provider: 'ipinfo', url: `${upstreamHttp.url}/ipinfo`, key: UPSTREAM_KEY, timeouts: fast },
    asn: { cymru: { zone: 'origin.asn.fuzz.test', zone6: 'origin6.asn.fuzz.test' } },
    geoip: { reverseDns: { timeoutMs: 300 } },
    domainrep: { signalTimeoutMs: 2_000 },
  });
  const meter = createMemoryMeter();
  await meter.setPlan({ slug: 'fuzz', product: '*', rateLimitPerMinute: 100_000_000, monthlyQuota: null });
  const credentials: Credentials = { secret: {}, public: {}, siteKey: '', siteSecret: '' };
  for (const product of PRODUCT_IDS as readonly ProductId[]) {
    const keys = await issueKeys(meter, { product, plan: 'fuzz' });
    credentials.secret[product] = keys.secretKey;
    credentials.public[product] = keys.publicKey;
  }
  const site = await createSiteKey(meter, { domains: ['example.com', 'fuzz.test'], plan: 'fuzz' });
  credentials.siteKey = site.siteKey;
  credentials.siteSecret = site.secretKey;

  const reportedErrors: string[] = [];
  const api = createApi({
    lookup,
    meter,
    secret: 'fuzz-run-operator-secret-0123456789abcdef',
    onError: (error) => void (reportedErrors.length < 20 && reportedErrors.push(error instanceof Error ? (error.stack ?? error.message) : String(error))),
  });
  const adapter = options.adapter ?? 'node';
  const server = await mounted(api, adapter);
  const port = (server.address() as AddressInfo).port;
  const appsPath = (request: FuzzRequest) => adapter !== 'node' && !api.owns(splitUrl(request.url)[0]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency ?? 32 });
  const targets = { tlsPorts: tlsServers.ports };

  // Every route's requests made first, route by route (the seed decides them), then sent from
  // one pool: a route waiting on its slowest upstream timeout no longer holds up the others.
  const rows: RouteReport[] = [];
  const work: { row: RouteReport; request: FuzzRequest; left: { count: number } }[] = [];
  for (const route of fuzzRoutes(options.filter)) {
    const row: RouteReport = {
      route: `${route.method} ${route.path}`,
      requests: 0,
      statuses: {},
      internalErrors: 0,
      hangs: 0,
      badEnvelopes: 0,
      leaks: 0,
      examples: [],
    };
    rows.push(row);
    const left = { count: options.perRoute };
    for (let i = 0; i < options.perRoute; i++) work.push({ row, request: fuzzRequest(random, route, targets, credentials), left });
  }
  try {
    let next = 0;
    const worker = async () => {
      while (next < work.length) {
        const { row, request, left } = work[next++];
        judge(row, request, await send(port, agent, request, options.hangMs ?? 30_000), appsPath(request));
        if (--left.count === 0) options.onRoute?.(row);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 32 }, worker));
  } finally {
    agent.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all([dns.close(), rdap.close(), whois.close(), upstreamHttp.close(), tlsServers.close()]);
  }
  const total = (key: 'requests' | 'internalErrors' | 'hangs' | 'badEnvelopes' | 'leaks') => rows.reduce((sum, row) => sum + row[key], 0);
  return {
    routes: rows,
    requests: total('requests'),
    internalErrors: total('internalErrors'),
    hangs: total('hangs'),
    badEnvelopes: total('badEnvelopes'),
    leaks: total('leaks'),
    reportedErrors,
    durationMs: performance.now() - started,
    seed,
  };
}

type Answer = { status: number; contentType: string; body: string } | { failed: string };

function send(port: number, agent: http.Agent, request: FuzzRequest, hangMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, ...(request.body ? { 'content-length': String(request.body.length) } : {}) },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (error) => resolve({ failed: error.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ failed: `no answer within ${hangMs} ms` });
    }, hangMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      resolve({ failed: error.message });
    });
    req.end(request.body);
  });
}

/** The API on a listening server, mounted with `adapter` as an application would mount it. */
async function mounted(api: Api, adapter: FuzzAdapter): Promise<http.Server> {
  if (adapter === 'fastify') {
    const app = Fastify({ frameworkErrors: seclookupFrameworkErrors(api), clientErrorHandler: seclookupClientErrors(api) });
    app.register(seclookupFastify, { api });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server;
  }
  let listener: http.RequestListener = createListener(api);
  if (adapter === 'express') {
    const app = express();
    // An app parser in front, as most Express apps have: its refusals on the API's paths are the API's to answer.
    app.use(express.json());
    app.use(seclookupExpress({ api }));
    listener = app;
  }
  const server = handleClientErrors(http.createServer(listener), api);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** `appsPath`: a path the framework answers for the application; only a 500 or a hang counts. */
function judge(row: RouteReport, request: FuzzRequest, answer: Answer, appsPath = false): void {
  row.requests++;
  const example = (what: string) => void (row.examples.length < 5 && row.examples.push(`${what}: ${request.method} ${request.url.slice(0, 160)}`));
  if ('failed' in answer) {
    row.hangs++;
    return example(answer.failed);
  }
  row.statuses[answer.status] = (row.statuses[answer.status] ?? 0) + 1;
  if (answer.body.includes(UPSTREAM_KEY)) {
    row.leaks++;
    example('the upstream key in the answer');
  }
  let code: unknown;
  if (answer.status >= 400 && answer.contentType.startsWith('application/json')) {
    try {
      const body = JSON.parse(answer.body) as { success?: unknown; error?: unknown; error_code?: unknown };
      if (body.success === false && typeof body.error === 'string') code = body.error_code;
    } catch {
      // not JSON: a bad envelope below
    }
  }
  if (answer.status === 500 || code === 'internal_error') {
    row.internalErrors++;
    return example(`${answer.status} ${answer.body.slice(0, 200)}`);
  }
  if (answer.status < 200 || answer.status >= 600) {
    row.badEnvelopes++;
    return example(`status ${answer.status}`);
  }
  if (answer.status < 400 || appsPath) return;
  // Status routes that answer without the envelope (HEAD) carry no body.
  if (request.method === 'HEAD' && answer.body === '') return;
  const expected = typeof code === 'string' ? (ERROR_STATUS as Record<string, number>)[code] : undefined;
  if (expected !== answer.status) {
    row.badEnvelopes++;
    example(`${answer.status} with ${JSON.stringify(code)}: ${answer.body.slice(0, 120)}`);
  }
}
