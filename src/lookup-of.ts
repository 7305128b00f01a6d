/**
 * The engines behind `createLookup`, over a list of product modules: built on first use (or all
 * at once with `eager` / `load()`), so one product's missing dataset never stops another.
 */
import { invalidOption, SeclookupError } from './errors.js';
import { createMemoryCache, createProductCache, type ProductCache } from './lib/cache.js';
import { bundledDataDir } from './lib/datasets.js';
import { createDnsResolver, type DnsResolver, type DnsResolverOptions } from './lib/dns/index.js';
import { addUpstreamObserver, observeCache } from './lib/observe.js';
import { createOutboundGuard, type OutboundGuard } from './lib/outbound.js';
import type { LookupOutcome } from './lib/outcome.js';
import type { Lookup, LookupOptions } from './lookup.js';
import type { ProductId } from './products/catalog.js';
import { unknownOptionNames, type AnyProductModule, type EngineContext, type ProductEngine as AnyEngine } from './products/module.js';
import type { BuiltProductId } from './products/registry.js';

type Built = { engine: AnyEngine } | { error: unknown };

/** A product's options given as something else than an object, or with a name it does not know (a typo), are refused. */
function checkProductOptions(modules: readonly AnyProductModule[], options: LookupOptions): void {
  for (const module of modules) {
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
 * `createLookup` over the modules given: one method per module, engines built on first use. The
 * CLI's `lookup` passes one product's modules (and those it needs), loaded alone.
 */
export function createLookupOf(modules: readonly AnyProductModule[], options: LookupOptions = {}): Lookup {
  checkProductOptions(modules, options);
  const byId = new Map(modules.map((module) => [module.id, module]));
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
      : createDnsResolver({ now, cache: { store: options.cache }, onCacheError: options.onCacheError, ...options.dns }));

  function engine(id: ProductId): AnyEngine {
    let entry = built.get(id);
    if (!entry) {
      const module = byId.get(id);
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
        return observed(
          module.id,
          maxEntries > 0 ? createProductCache(createMemoryCache({ maxEntries, now: options.now }), { ttlMs, onError: options.onCacheError }) : null,
        );
      },
    };
  }

  function load(products: readonly BuiltProductId[] = modules.map((m) => m.id as BuiltProductId)): void {
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
  for (const module of modules) {
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
