/**
 * `createLookup`: the in-process engines of every built product, one method each, derived from
 * the product registry. Engines are built on first use (or all at once with `eager` / `load()`),
 * so one product's missing dataset never stops another.
 */
import type { CacheStore } from './lib/cache.js';
import type { DnsResolver, DnsResolverOptions } from './lib/dns/index.js';
import type { LookupObserver } from './lib/observe.js';
import type { LookupOutcome } from './lib/outcome.js';
import { createLookupOf } from './lookup-of.js';
import type { AnyProductModule, ArgsOf, EngineContext, ResultOf } from './products/module.js';
import { PRODUCT_MODULES, type BuiltProductId } from './products/registry.js';

export type { LookupOutcome } from './lib/outcome.js';

type RegisteredModule = (typeof PRODUCT_MODULES)[number];
type ModuleOf<Id extends BuiltProductId> = Extract<RegisteredModule, { id: Id }>;
/** A product's engine, as `lookup.engine(id)` returns it. */
export type ProductEngine<Id extends BuiltProductId> = ModuleOf<Id> extends { createEngine(context: never): infer Engine } ? Engine : never;
/** The arguments of a product's in-process call (`[ip, options?]` for webhookip): its engine's `prepare`. */
export type LookupArgs<Id extends BuiltProductId> = ArgsOf<ProductEngine<Id>>;
/** A product's result type (`UserAgentResult`, `WebhookIpResult`, ...). */
export type LookupResult<Id extends BuiltProductId> = ResultOf<ProductEngine<Id>>;
/** The options `createLookup({ <id>: ... })` takes for a product. */
export type ProductEngineOptions<Id extends BuiltProductId> =
  // biome-ignore lint/suspicious/noExplicitAny: the products a module needs differ per product; only its options are read here
  ModuleOf<Id> extends { createEngine(context: EngineContext<infer Options, any>): unknown } ? Options : never;

/** One method per built product: validate, look up, resolve with the result or throw LookupError. */
export type LookupCalls = { [Id in BuiltProductId]: (...args: LookupArgs<Id>) => Promise<LookupResult<Id>> };
/** The same calls resolving with `{ result, cached, fetchedAt?, json? }`, as the HTTP API uses them. */
export type DetailedLookupCalls = { [Id in BuiltProductId]: (...args: LookupArgs<Id>) => Promise<LookupOutcome<LookupResult<Id>>> };
/** Per-product options, keyed by product id: `{ useragent: { cacheSize: 50_000 } }`. */
export type ProductOptionsMap = { [Id in BuiltProductId]?: ProductEngineOptions<Id> };

export interface LookupOptions extends ProductOptionsMap {
  /**
   * Folder holding the datasets (`webhookip/ranges.json`, ...).
   * @default the `data/` folder shipped with the package
   */
  dataDir?: string;
  /**
   * One store for every product's result cache (a shared store, such as Redis, for several
   * instances), keys prefixed by product. @default a private in-process LRU per product,
   * sized by that product's options
   */
  cache?: CacheStore;
  /**
   * Build every engine now, so a missing or corrupt dataset throws from `createLookup` rather
   * than at the first lookup of that product (what `seclookup serve` does). @default false
   */
  eager?: boolean;
  /**
   * The DNS resolver of every DNS-using product: options for one (`{ servers: ['127.0.0.1:5353'],
   * timeouts: { totalMs: 2000 } }`), or a resolver made with `createDnsResolver`.
   * @default the system's resolvers, 2 attempts of 2 s, TTL-honouring cache
   */
  dns?: DnsResolverOptions | DnsResolver;
  /**
   * The outbound-connection guard of tls, whois and every product that connects to a host a
   * client names. `allowPrivateTargets` is DANGEROUS: it lets clients reach those networks
   * (for tests against loopback servers, or lookups of your own hosts). @default none allowed
   *
   * `maxSockets`: most of their sockets open at once, and of the pwbreach and riskscore upstream
   * APIs', all products together (each is an open file). A connection past it waits for one to
   * close within its lookup's deadline, then fails as that product's upstream failure
   * (`lookup_failed`); so does one finding
   * 8 × `maxSockets` waiting already. `seclookup serve` sets it from the open-files limit.
   * @default Infinity (no cap)
   */
  outbound?: { allowPrivateTargets?: readonly string[]; maxSockets?: number };
  /**
   * Told about cache reads per product and about every upstream call (DNS, RDAP, WHOIS, TLS,
   * HTTP), for metrics (`createMetrics().observer` from `seclookup/metrics`). Upstream calls are
   * observed process-wide from `createLookup` until `close()`. @default none (no cost)
   */
  observer?: LookupObserver;
  /** Told when a cache store fails (lookups then run uncached; an error it throws is ignored). @default none */
  onCacheError?: (error: unknown) => void;
  /** Clock in ms since the epoch (tests pass a fixed one): engines, the DNS cache and the result caches read it. @default Date.now */
  now?: () => number;
}

/** The in-process engines. Every call validates its input and throws {@link LookupError}. */
export interface Lookup extends LookupCalls {
  readonly detailed: DetailedLookupCalls;
  /**
   * A product's engine, built now if it is not yet. Throws SeclookupError `dataset_missing`
   * or `dataset_invalid` (naming the file) when its data cannot be loaded; the failure is
   * remembered, so restart after fixing the data.
   */
  engine<Id extends BuiltProductId>(id: Id): ProductEngine<Id>;
  /**
   * Build the engines of `products` (one product id, a list of them, default: every built
   * product) now. Throws one SeclookupError listing every product whose data failed to load, or,
   * when a failure is a configuration mistake only the build could see (a zone name its data
   * file does not define), a TypeError `invalid_option` listing them. A name that is not a
   * product's is refused first, with `invalid_option`.
   */
  load(products?: BuiltProductId | readonly BuiltProductId[]): void;
  /**
   * Release what the built engines hold open (file watches, scamrisk's report database). Lookups
   * after it may fail; one needing an engine not built yet fails with SeclookupError
   * `store_failed` (a closed lookup builds none: nothing would release it). Engines are closed in the order they were built; the first error is thrown
   * after all were tried.
   */
  close(): Promise<void>;
}

/**
 * Build the lookup engines. Every configuration mistake it can see without reading data (an
 * option of the wrong type or out of range, a misspelled name, at the top level or in a
 * product's options) throws here, a TypeError with `code: 'invalid_option'` naming the option;
 * engines are still built on first use (or by `eager` / `load()`).
 *
 * @example
 * const lookup = createLookup();
 * await lookup.useragent('Mozilla/5.0 ...'); // { browser: { name: 'Chrome', ... }, ... }
 */
export function createLookup(options: LookupOptions = {}): Lookup {
  return createLookupOf(PRODUCT_MODULES as readonly AnyProductModule[], options) as Lookup;
}
