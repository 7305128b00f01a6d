/**
 * `createLookup`: the in-process engines of every built product, one method each, derived from
 * the product registry. Engines are built on first use (or all at once with `eager` / `load()`),
 * so one product's missing dataset never stops another.
 */
import { invalidOption, SeclookupError } from './errors.js';
import { createMemoryCache, createProductCache, type CacheStore, type ProductCache } from './lib/cache.js';
import { bundledDataDir } from './lib/datasets.js';
import { createDnsResolver, type DnsResolver, type DnsResolverOptions } from './lib/dns/index.js';
import { addUpstreamObserver, observeCache, type LookupObserver } from './lib/observe.js';
import { createOutboundGuard, type OutboundGuard } from './lib/outbound.js';
import type { LookupOutcome } from './lib/outcome.js';
import type { ProductId } from './products/catalog.js';
import {
  unknownOptionNames,
  type AnyProductModule,
  type ArgsOf,
  type EngineContext,
  type ProductEngine as AnyEngine,
  type ResultOf,
} from './products/module.js';
import { PRODUCT_MODULES, productModule, type BuiltProductId } from './products/registry.js';

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
   */
  outbound?: { allowPrivateTargets?: readonly string[] };
  /**
   * Told about cache reads per product and about every upstream call (DNS, RDAP, WHOIS, TLS,
   * HTTP), for metrics (`createMetrics().observer` from `seclookup/metrics`). Upstream calls are
   * observed process-wide from `createLookup` until `close()`. @default none (no cost)
   */
  observer?: LookupObserver;
  /** Told when a cache store fails (lookups then run uncached). @default none */
  onCacheError?: (error: unknown) => void;
  /** Clock in ms since the epoch (tests pass a fixed one). @default Date.now */
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
   * Build the engines of `products` (default: every built product) now. Throws one
   * SeclookupError listing every product whose data failed to load.
   */
  load(products?: readonly BuiltProductId[]): void;
  /**
   * Release what the built engines hold open (file watches, scamrisk's report database). Lookups
   * after it may fail. Engines are closed in the order they were built; the first error is thrown
   * after all were tried.
   */
  close(): Promise<void>;
}

type Built = { engine: AnyEngine } | { error: unknown };

/** A product's options given as something else than an object, or with a name it does not know (a typo), are refused. */
function checkProductOptions(options: LookupOptions): void {
  for (const module of PRODUCT_MODULES as readonly AnyProductModule[]) {
    const given: unknown = (options as Record<string, unknown>)[module.id];
    if (given === undefined) continue;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw invalidOption(`createLookup: ${module.id} options must be an object`);
    const [unknown] = unknownOptionNames(module, given);
    if (unknown !== undefined) {
      const known = Object.keys(module.optionNames);
      throw invalidOption(
        `createLookup: ${module.id}.${unknown} is not an option of ${module.id} (${known.length > 0 ? `its options: ${known.join(', ')}` : 'it has none'})`,
      );
    }
  }
}

/**
 * Build the lookup engines.
 *
 * @example
 * const lookup = createLookup();
 * await lookup.useragent('Mozilla/5.0 ...'); // { browser: { name: 'Chrome', ... }, ... }
 */
export function createLookup(options: LookupOptions = {}): Lookup {
  checkProductOptions(options);
  const dataDir = options.dataDir ?? bundledDataDir();
  const now = options.now ?? Date.now;
  const built = new Map<ProductId, Built>();
  let resolver: DnsResolver | undefined;
  // Built now, so a bad allowPrivateTargets CIDR throws from createLookup.
  const guard = createOutboundGuard({ dns: () => dns(), allowPrivateTargets: options.outbound?.allowPrivateTargets });
  const outbound = (): OutboundGuard => guard;
  const dns = (): DnsResolver =>
    (resolver ??= isResolver(options.dns)
      ? options.dns
      : createDnsResolver({ cache: { store: options.cache }, onCacheError: options.onCacheError, ...options.dns }));

  function engine(id: ProductId): AnyEngine {
    let entry = built.get(id);
    if (!entry) {
      const module = productModule(id);
      if (!module) throw invalidOption(`${id} has no lookup engine yet`);
      try {
        entry = { engine: module.createEngine(contextFor(module)) };
      } catch (error) {
        entry = { error };
      }
      built.set(id, entry);
    }
    if ('error' in entry) throw entry.error;
    return entry.engine;
  }

  const observer = options.observer;
  const stopObserving = observer?.upstream ? addUpstreamObserver(observer.upstream.bind(observer)) : undefined;
  const observed = <Value>(product: string, cache: ProductCache<Value> | null): ProductCache<Value> | null =>
    cache && observer?.cache ? observeCache(cache, product, observer.cache.bind(observer)) : cache;

  function contextFor(module: AnyProductModule): EngineContext<unknown, ProductId> {
    return {
      dataDir,
      options: (options as Record<string, unknown>)[module.id],
      now,
      engine: ((id: ProductId) => {
        // A dependency must be declared: `needs` is what types the call, and what a reader sees.
        if (!module.needs?.includes(id)) throw invalidOption(`${module.id} uses the ${id} engine without listing it in needs`);
        return engine(id);
      }) as EngineContext<unknown, ProductId>['engine'],
      dns,
      outbound,
      cache: ({ ttlMs, maxEntries }) => {
        if (options.cache) return observed(module.id, createProductCache(options.cache, { namespace: module.id, ttlMs, onError: options.onCacheError }));
        return observed(module.id, maxEntries > 0 ? createProductCache(createMemoryCache({ maxEntries }), { ttlMs, onError: options.onCacheError }) : null);
      },
    };
  }

  function load(products: readonly BuiltProductId[] = PRODUCT_MODULES.map((m) => m.id)): void {
    const failures: { id: string; error: unknown }[] = [];
    for (const id of products) {
      try {
        engine(id);
      } catch (error) {
        failures.push({ id, error });
      }
    }
    if (failures.length === 0) return;
    // One line per product; the `seclookup: ` some dataset messages start with is said once, by whoever prints this.
    const message = failures
      .map(({ id, error }) => `${id}: ${(error instanceof Error ? error.message : String(error)).replace(/^seclookup: /, '')}`)
      .join('\n');
    const first = failures[0].error;
    throw new SeclookupError(first instanceof SeclookupError ? first.code : 'dataset_invalid', message, { cause: first });
  }

  const calls: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const detailed: Record<string, (...args: unknown[]) => Promise<LookupOutcome<object>>> = {};
  for (const module of PRODUCT_MODULES as readonly AnyProductModule[]) {
    detailed[module.id] = async (...args) => {
      const productEngine = engine(module.id);
      return productEngine.lookup(productEngine.prepare(...args));
    };
    calls[module.id] = async (...args) => (await detailed[module.id](...args)).result;
  }

  async function close(): Promise<void> {
    stopObserving?.();
    const errors: unknown[] = [];
    for (const entry of built.values()) {
      if (!('engine' in entry)) continue;
      try {
        await entry.engine.close?.();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  }

  const lookup = { ...calls, detailed, engine, load, close } as unknown as Lookup;
  if (options.eager) lookup.load();
  return lookup;
}

function isResolver(value: DnsResolverOptions | DnsResolver | undefined): value is DnsResolver {
  return typeof (value as DnsResolver | undefined)?.resolve === 'function';
}
