/**
 * The engines behind `createLookup`, over a list of product modules: built on first use (or all
 * at once with `eager` / `load()`), so one product's missing dataset never stops another.
 */
import { invalidOption, isSeclookupError, SeclookupError } from './errors.js';
import { createMemoryCache, createProductCache, type ProductCache } from './lib/cache.js';
import { bundledDataDir, packageVersion } from './lib/datasets.js';
import { checkDnsResolverOptions, createDnsResolver, type DnsResolver, type DnsResolverOptions } from './lib/dns/index.js';
import { addUpstreamObserver, observeCache } from './lib/observe.js';
import {
  checkKnownNames,
  checkOptionalBoolean,
  checkOptionalFunction,
  checkOptionsObject,
  closestName,
  describeValue,
  invalidOptionFrom,
  isOptionsObject,
} from './lib/option-checks.js';
import { checkAllowPrivateTargets, createOutboundGuard, type OutboundGuard } from './lib/outbound.js';
import { checkMaxSockets } from './lib/outbound-slots.js';
import type { LookupOutcome } from './lib/outcome.js';
import type { Lookup, LookupOptions } from './lookup.js';
import type { ProductId } from './products/catalog.js';
import { unknownOptionNames, type AnyProductModule, type EngineContext, type ProductEngine as AnyEngine } from './products/module.js';
import type { BuiltProductId } from './products/registry.js';

type Built = { engine: AnyEngine } | { error: unknown };

let cacheGeneration: string | undefined;

/**
 * A product's keys on a shared cache store: `<product>:<seclookup's version>:`. Each version reads
 * only what it wrote: during a rolling upgrade on one Redis, an entry of the other version (of
 * another shape, or a result an upgrade corrects) is never read as a result. A build that cannot
 * find its package.json (bundled into an app) shares one generation, `unversioned`, and relies
 * on the shape check alone.
 */
function sharedCacheNamespace(product: string): string {
  if (cacheGeneration === undefined) {
    try {
      cacheGeneration = packageVersion();
    } catch {
      cacheGeneration = 'unversioned';
    }
  }
  return `${product}:${cacheGeneration}`;
}

/** The options `createLookup` takes beside the products' (each product's id): the compiler keeps the list complete. */
const GENERAL_OPTIONS: { readonly [Name in Exclude<keyof LookupOptions, BuiltProductId>]-?: true } = {
  dataDir: true,
  cache: true,
  eager: true,
  dns: true,
  outbound: true,
  observer: true,
  onCacheError: true,
  now: true,
};

/**
 * Every configuration mistake `createLookup` can see without building an engine: the options
 * themselves, a name it does not know (a typo, at the top level or in a product's options), and
 * each option's type and range (each product's `checkOptions`). TypeError `invalid_option`
 * naming the option. Cheap: no file is read and no engine is built.
 */
function checkLookupOptions(modules: readonly AnyProductModule[], given: unknown): LookupOptions {
  const options = checkOptionsObject(given, 'createLookup: options', 'an object');
  const productIds = modules.map((module) => module.id);
  const unknown = Object.keys(options).find((name) => !Object.hasOwn(GENERAL_OPTIONS, name) && !productIds.includes(name as ProductId));
  if (unknown !== undefined) {
    const meant = closestName(unknown, [...Object.keys(GENERAL_OPTIONS), ...productIds]);
    throw invalidOption(
      `createLookup: ${unknown} is not an option${meant ? ` (did you mean ${meant}?)` : ''}; options: ${Object.keys(GENERAL_OPTIONS).join(', ')}, and per product: ${productIds.join(', ')}`,
    );
  }
  if (options.dataDir !== undefined && (typeof options.dataDir !== 'string' || options.dataDir === ''))
    throw invalidOption(`createLookup: dataDir must be a folder path (got ${describeValue(options.dataDir)})`);
  const { cache } = options;
  if (cache !== undefined && !(isOptionsObject(cache) && ['get', 'set', 'delete'].every((method) => typeof cache[method] === 'function')))
    throw invalidOption(`createLookup: cache must be a CacheStore (get, set, delete), such as createMemoryCache() (got ${describeValue(cache)})`);
  checkOptionalBoolean(options.eager, 'createLookup: eager');
  if (options.dns !== undefined && !isResolver(options.dns as DnsResolver)) checkDnsResolverOptions(options.dns, 'dns');
  if (options.outbound !== undefined) {
    const outbound = checkOptionsObject(options.outbound, 'createLookup: outbound', '{ allowPrivateTargets, maxSockets }');
    checkKnownNames(outbound, ['allowPrivateTargets', 'maxSockets'], 'createLookup: outbound');
    if (outbound.maxSockets !== undefined) outboundMaxSockets(outbound.maxSockets);
  }
  const { observer } = options;
  if (observer !== undefined) {
    const hooks = checkOptionsObject(observer, 'createLookup: observer', 'a LookupObserver { cache?, upstream? }, such as createMetrics().observer');
    checkOptionalFunction(hooks.cache, 'createLookup: observer.cache');
    checkOptionalFunction(hooks.upstream, 'createLookup: observer.upstream');
  }
  checkOptionalFunction(options.onCacheError, 'createLookup: onCacheError');
  checkOptionalFunction(options.now, 'createLookup: now');
  checkProductOptions(modules, options);
  return options as LookupOptions;
}

/**
 * A product's options given as something else than an object, or with a name it does not know
 * (a typo), are refused; then the product checks their types and ranges (its `checkOptions`).
 */
function checkProductOptions(modules: readonly AnyProductModule[], options: Readonly<Record<string, unknown>>): void {
  for (const module of modules) {
    const given: unknown = options[module.id];
    if (given === undefined) continue;
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw invalidOption(`createLookup: ${module.id} options must be an object`);
    const [unknown] = unknownOptionNames(module, given);
    if (unknown !== undefined) {
      const known = Object.keys(module.optionNames);
      throw invalidOption(
        `createLookup: ${module.id}.${unknown} is not an option of ${module.id} (${known.length > 0 ? `its options: ${known.join(', ')}` : 'it has none'})`,
      );
    }
    module.checkOptions?.(given as Readonly<Record<string, unknown>>);
  }
}

/**
 * `createLookup` over the modules given: one method per module, engines built on first use. The
 * CLI's `lookup` passes one product's modules (and those it needs), loaded alone.
 */
export function createLookupOf(modules: readonly AnyProductModule[], given: LookupOptions = {}): Lookup {
  const options = checkLookupOptions(modules, given);
  const byId = new Map(modules.map((module) => [module.id, module]));
  const dataDir = options.dataDir ?? bundledDataDir();
  const now = options.now ?? Date.now;
  const built = new Map<ProductId, Built>();
  let resolver: DnsResolver | undefined;
  // Built now, so a bad allowPrivateTargets CIDR throws from createLookup.
  const guard = createOutboundGuard({
    dns: () => dns(),
    allowPrivateTargets: allowPrivateTargets(options.outbound?.allowPrivateTargets),
    maxSockets: options.outbound?.maxSockets,
  });
  const outbound = (): OutboundGuard => guard;
  const dns = (): DnsResolver =>
    (resolver ??= isResolver(options.dns)
      ? options.dns
      : createDnsResolver({ now, cache: { store: options.cache }, onCacheError: options.onCacheError, ...options.dns }));

  let closed = false;

  function engine(id: ProductId): AnyEngine {
    let entry = built.get(id);
    if (!entry) {
      const module = byId.get(id);
      if (!module) throw invalidOption(`${id} has no lookup engine yet`);
      // An engine built now would hold what close() released (a file watch, a database) with nothing left to release it.
      if (closed) throw new SeclookupError('store_failed', `${id}: this lookup is closed (close() was called) and builds no more engines; create another`);
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
  const stopObserving = observer?.upstream ? addUpstreamObserver(observer) : undefined;
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
        if (options.cache)
          return observed(module.id, createProductCache(options.cache, { namespace: sharedCacheNamespace(module.id), ttlMs, onError: options.onCacheError }));
        return observed(
          module.id,
          maxEntries > 0 ? createProductCache(createMemoryCache({ maxEntries, now: options.now }), { ttlMs, onError: options.onCacheError }) : null,
        );
      },
    };
  }

  /** What `load` was asked for: every product, one id, or a list of ids, each one of these modules'. */
  function productsToLoad(products: unknown): ProductId[] {
    if (products === undefined) return [...byId.keys()];
    const list: unknown = typeof products === 'string' ? [products] : products;
    if (!Array.isArray(list)) throw invalidOption(`load: products must be a product id or an array of them (got ${describeValue(products)})`);
    for (const id of list) {
      if (typeof id !== 'string' || !byId.has(id as ProductId))
        throw invalidOption(`load: ${describeValue(id)} is not a product with a lookup engine (products: ${[...byId.keys()].join(', ')})`);
    }
    return list as ProductId[];
  }

  function load(products?: BuiltProductId | readonly BuiltProductId[]): void {
    const failures: { id: string; error: unknown }[] = [];
    for (const id of productsToLoad(products)) {
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
    // A configuration mistake only the build could see (a zone name its data file does not
    // define) is said as one: fix the options first. Else the first failure's code.
    const mistake = failures.find(({ error }) => isSeclookupError(error, 'invalid_option'));
    if (mistake) throw invalidOptionFrom(message, mistake.error);
    const first = failures[0].error;
    throw new SeclookupError(first instanceof SeclookupError ? first.code : 'dataset_invalid', message, { cause: first });
  }

  const calls: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const detailed: Record<string, (...args: unknown[]) => Promise<LookupOutcome<object>>> = {};
  for (const module of modules) {
    const outcomeOf = async (args: unknown[]) => {
      const productEngine = engine(module.id);
      return productEngine.lookup(productEngine.prepare(...args));
    };
    detailed[module.id] = async (...args) => plainOutcome(await outcomeOf(args));
    calls[module.id] = async (...args) => (await outcomeOf(args)).result;
  }

  /**
   * The outcome as a plain object of its fields: engines may hand over a class whose `result` or
   * `json` is a getter (made on first read), which a spread, JSON.stringify or structuredClone
   * of it would not carry.
   */
  function plainOutcome<Result>(outcome: LookupOutcome<Result>): LookupOutcome<Result> {
    const { result, cached, fetchedAt, json, expiresAt } = outcome;
    const plain: LookupOutcome<Result> = { result, cached };
    if (fetchedAt !== undefined) plain.fetchedAt = fetchedAt;
    if (json !== undefined) plain.json = json;
    if (expiresAt !== undefined) plain.expiresAt = expiresAt;
    return plain;
  }

  async function close(): Promise<void> {
    closed = true;
    stopObserving?.();
    // Lookups still waiting for a socket fail now, rather than connect after close.
    guard.slots.close();
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

/** `outbound.allowPrivateTargets`, checked and normalized (TypeError `invalid_option` naming it and the CIDR). */
function allowPrivateTargets(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  try {
    return checkAllowPrivateTargets(value);
  } catch (error) {
    throw invalidOptionFrom(`createLookup: outbound.${(error as Error).message}`, error);
  }
}

/** `outbound.maxSockets`, checked (TypeError `invalid_option` naming it). */
function outboundMaxSockets(value: unknown): number {
  try {
    return checkMaxSockets(value);
  } catch (error) {
    throw invalidOptionFrom(`createLookup: outbound.${(error as Error).message}`, error);
  }
}
