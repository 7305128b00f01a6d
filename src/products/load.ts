/**
 * Load some products' modules, not all: `seclookup lookup geoip` needs geoip's module and the
 * modules geoip `needs` (asn), and no other product's engine, dataset or npm package.
 */
import type { ProductId } from './catalog.js';
import type { ProductDescriptor } from './descriptor.js';
import { PRODUCT_DESCRIPTORS } from './descriptors.js';
import type { AnyProductModule } from './module.js';

const DESCRIPTORS: ReadonlyMap<string, ProductDescriptor> = new Map((PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).map((d) => [d.id, d]));

/** A product's module (a service's, for captcha), loaded through its descriptor. */
export async function loadModule(id: ProductId): Promise<object> {
  const descriptor = DESCRIPTORS.get(id);
  if (!descriptor) throw new TypeError(`no product ${id}`);
  return ((await descriptor.load()) as { default: object }).default;
}

/**
 * The lookup modules of `ids` and of every product they need, transitively, the ones asked for
 * first. A service (captcha) has no lookup module and is left out.
 */
export async function loadProductModules(ids: readonly ProductId[]): Promise<AnyProductModule[]> {
  const loaded = new Map<string, AnyProductModule>();
  let wanted: readonly ProductId[] = ids;
  while (wanted.length > 0) {
    const modules = await Promise.all(wanted.filter((id) => !loaded.has(id)).map(loadModule));
    const next: ProductId[] = [];
    for (const module of modules) {
      if (!('createEngine' in module)) continue;
      const product = module as AnyProductModule;
      loaded.set(product.id, product);
      next.push(...((product.needs ?? []) as ProductId[]).filter((id) => !loaded.has(id)));
    }
    wanted = [...new Set(next)];
  }
  return [...loaded.values()];
}
