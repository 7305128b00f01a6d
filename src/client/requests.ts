/**
 * Each product's in-process call as an HTTP request: the inverse of the product's `routes[].args`
 * (src/products/<id>/index.ts), which read the same arguments back on the server.
 *
 * The table cannot be computed from the product modules at run time: they import their engines
 * (maxmind, better-sqlite3, ...), which the client must never load. Instead it is typed against
 * the registry, so it is exhaustive and each entry takes exactly `LookupArgs<Id>` (a product added
 * to the registry fails `tsc` here until it has its entry), and test/client/requests.test.ts
 * checks every entry against its module: the route it names exists, and the arguments that route
 * reads back from the request prepare to the same query as the caller's arguments in-process.
 *
 * Imports are types only.
 */
import { LookupError } from '../errors.js';
import type { LookupArgs } from '../lookup.js';
import type { BatchInput } from '../products/module.js';
import type { BuiltProductId } from '../products/registry.js';

/** One request below `/v1/<product>/`. */
export interface ProductRequest {
  method: 'GET' | 'POST';
  /** `lookup`, `assess`, `status`, ...: one of the product's route paths. */
  path: string;
  /** Query parameters; undefined ones are left out. */
  query?: Readonly<Record<string, string | undefined>>;
  /** A JSON body (POST). */
  body?: Readonly<Record<string, unknown>>;
  /** The body field the key goes in, for a route that reads no Bearer header (captcha's siteverify: `secret`). */
  keyIn?: string;
}

export type RequestTable = { readonly [Id in BuiltProductId]: (...args: LookupArgs<Id>) => ProductRequest };

/** SPEC's `GET /lookup?{param}=`: the query form rather than the path form, which every value survives. */
const oneValue =
  (param: string) =>
  (value: string): ProductRequest => ({ method: 'GET', path: 'lookup', query: { [param]: value } });

const byIp = oneValue('ip');
const byDomain = oneValue('domain');

/** In registry order. */
export const REQUESTS: RequestTable = {
  // POST rather than GET: a User-Agent of any length fits a JSON body (64 KiB), not a URL.
  useragent: (ua) => ({ method: 'POST', path: 'lookup', body: { ua } }),
  webhookip: (ip, options) => ({ method: 'GET', path: 'lookup', query: { ip, provider: options?.provider } }),
  geoip: byIp,
  timezone: byIp,
  emailauth: byDomain,
  dnsbl: (ip, options) => {
    // Every configured zone is checked over HTTP (README: dnsbl); silently checking others than
    // the caller named would be a wrong answer.
    if (options?.zones !== undefined)
      throw new LookupError('invalid_request', 'dnsbl zones cannot be chosen over HTTP: the service checks every zone it is configured with');
    return byIp(ip);
  },
  emailval: oneValue('email'),
  tls: (host, options) => ({ method: 'GET', path: 'lookup', query: { host, port: options?.port === undefined ? undefined : String(options.port) } }),
  whois: byDomain,
  asn: byIp,
  // Always POST: a password never goes into a URL (the server refuses ?password=).
  pwbreach: (input) => ({
    method: 'POST',
    path: 'lookup',
    body: typeof input === 'string' ? { password: input } : { password: input?.password, sha1: input?.sha1 },
  }),
  // `{ type, value, region? }` or `{ <type>: value }`, sent as it is.
  scamrisk: (request) => ({ method: 'POST', path: 'assess', body: request }),
  domainrep: byDomain,
  riskscore: byIp,
};

/**
 * The products with `POST /v1/<product>/batch`, and what each input is: their module's
 * `batch.input` (test/client/requests.test.ts checks the two agree). pwbreach takes SHA-1
 * hashes only: a password never leaves in a batch.
 */
export const BATCH_INPUTS = {
  useragent: 'ua',
  webhookip: 'ip',
  geoip: 'ip',
  timezone: 'ip',
  emailauth: 'domain',
  dnsbl: 'ip',
  emailval: 'email',
  tls: 'host',
  whois: 'domain',
  asn: 'ip',
  pwbreach: 'sha1',
  domainrep: 'domain',
  riskscore: 'ip',
} as const satisfies Partial<Record<BuiltProductId, BatchInput>>;

export type BatchProductId = keyof typeof BATCH_INPUTS;
