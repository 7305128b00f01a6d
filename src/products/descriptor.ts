/**
 * What is known of a product without its engine: its id, key prefixes, envelope flags and the
 * client's request shape. Plain data in `src/products/<id>/descriptor.ts`, listed once in
 * `descriptors.ts`; the catalog and the HTTP client read it, and the client never loads an
 * engine (it runs in apps that only call a remote server). Imports nothing from the registry.
 */

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

/** What each input of a batch is: the product's one lookup parameter. */
export type BatchInput = 'ip' | 'domain' | 'email' | 'host' | 'ua' | 'sha1';

/** How the HTTP client calls a lookup product (src/client/). */
export interface ProductClientShape<Args extends unknown[]> {
  /**
   * The in-process call's arguments as an HTTP request: the inverse of the module's
   * `routes[].args` (test/client/requests.test.ts checks the two agree, and src/client/requests.ts
   * that it takes the engine's arguments).
   */
  request(...args: Args): ProductRequest;
  /**
   * Why these arguments cannot go over HTTP, if so: the client throws LookupError
   * `invalid_request` with it instead of sending (a descriptor imports nothing of the error
   * table, which reads the descriptors).
   */
  refuse?(...args: Args): string | undefined;
  /** `POST /v1/<id>/batch` and what each input is: the module's `batch.input`. */
  batchInput?: BatchInput;
}

/**
 * A `seclookup` command that belongs to a product (captcha's `sitekeys`). The main help lists
 * it from here; its code is loaded only when it runs.
 */
export interface ProductCommand {
  /** The help's usage column: `sitekeys create|list|revoke`. */
  usage: string;
  /** One line for the main help. */
  summary: string;
  /** The command's code: takes the arguments after its name, resolves with the exit code. */
  load(): Promise<(argv: string[]) => Promise<number>>;
}

/**
 * A call of the HTTP client beyond the lookup, grouped under the product's id
 * (`client.captcha.siteverify(...)`): its request, and the result it resolves with.
 */
export interface ProductClientCall<Args extends unknown[], Result> {
  request(...args: Args): ProductRequest;
  /** Type only (never set): what the call resolves with. */
  readonly result?: Result;
}

/** A {@link ProductClientCall} resolving with `Result`: `clientCall<SiteverifyResult>()((response: string) => ({ ... }))`. */
export function clientCall<Result>() {
  return <Args extends unknown[]>(request: (...args: Args) => ProductRequest): ProductClientCall<Args, Result> => ({ request });
}

export interface ProductDescriptor<Id extends string = string, Args extends unknown[] = never[]> {
  id: Id;
  /**
   * The product's module (`() => import('./index.js')`): its engine, routes and docs, loaded only
   * when wanted, so the client (which reads descriptors) never loads an engine and `seclookup
   * lookup geoip` loads geoip alone. registry.ts loads them all for `createLookup` and the API.
   */
  load(): Promise<object>;
  /** Its commands of `seclookup`, by name. */
  commands?: Readonly<Record<string, ProductCommand>>;
  secretPrefix: string;
  publicPrefix: string;
  /** Lookup responses carry `fetched_at` (SPEC: conventions table). */
  hasFetchedAt: boolean;
  /** The status resource carries `database_records`. */
  hasDatabaseRecords: boolean;
  /**
   * A query parameter the status route also takes the key from (captcha's `?sitekey=`, SPEC:
   * captcha GET status); the Bearer header still wins.
   */
  statusKeyParam?: string;
  /** Its error codes beyond the shared ones (src/errors.ts), with their HTTP status. */
  errorCodes?: Readonly<Record<string, number>>;
  /** The starter plan's limits for this product when they differ from the `'*'` row (SPEC's status-route examples). */
  starterPlan?: { rateLimitPerMinute: number; monthlyQuota: number };
  /** The client's method; absent for a product that is not a lookup (captcha has its own calls). */
  client?: ProductClientShape<Args>;
  /** The client's calls under `client.<id>` (captcha's `siteverify` and `usage`), by name: for a product with no `client` method (`client.<id>` is then this group). */
  clientCalls?: Readonly<Record<string, ProductClientCall<never[], unknown>>>;
}

/** Identity that keeps the literal types (the id, which fields are present): `export default defineDescriptor({ id: 'geoip', ... })`. */
export function defineDescriptor<const Descriptor extends ProductDescriptor>(descriptor: Descriptor): Descriptor {
  return descriptor;
}

/** SPEC's `GET /lookup?{param}=`: the query form rather than the path form, which every value survives. */
export const oneValue =
  (param: string) =>
  (value: string): ProductRequest => ({ method: 'GET', path: 'lookup', query: { [param]: value } });
