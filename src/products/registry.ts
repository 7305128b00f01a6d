/**
 * Every built product's module, loaded from the one product list (descriptors.ts: each
 * descriptor's `load`). `createLookup`, the API's routes and status extras, `seclookup serve`,
 * `seclookup data` and the bench runner read these lists; adding a product is its folder under
 * src/products/ plus one line in descriptors.ts. Code that wants one product only (`seclookup
 * lookup geoip`) loads it through `loadProductModules` (load.ts) instead of importing this file.
 */
import type { ProductId } from './catalog.js';
import { PRODUCT_DESCRIPTORS } from './descriptors.js';
import type { AnyProductModule } from './module.js';
import type { ServiceModule } from './service.js';

/** What a descriptor's `load` resolves with: its folder's `index.ts` default export. */
type LoadedModule<Descriptor> = Descriptor extends { load(): Promise<{ default: infer Module }> } ? Module : never;
type AnyLoadedModule = LoadedModule<(typeof PRODUCT_DESCRIPTORS)[number]>;
/** The modules with a lookup engine (every product but captcha). */
type RegisteredModule = Extract<AnyLoadedModule, { createEngine: unknown }>;

/** True for a lookup product's module, false for a service (captcha). */
export function isLookupModule(module: object): module is AnyProductModule {
  return 'createEngine' in module;
}

// Loaded at once, in list order: the library's `createLookup` is synchronous.
const LOADED: readonly object[] = await Promise.all(PRODUCT_DESCRIPTORS.map(async (descriptor) => ((await descriptor.load()) as { default: object }).default));

/** The lookup products' modules, in list order. */
export const PRODUCT_MODULES = LOADED.filter(isLookupModule) as readonly AnyProductModule[] as readonly RegisteredModule[];

/** The products that are not lookups and own their routes' handling (products/service.ts). */
export const SERVICE_MODULES: readonly ServiceModule[] = LOADED.filter((module) => !isLookupModule(module)) as ServiceModule[];

/** The products with a lookup engine, in registry order. */
export type BuiltProductId = RegisteredModule['id'];

const BY_ID: ReadonlyMap<ProductId, AnyProductModule> = new Map(PRODUCT_MODULES.map((module) => [module.id, module as AnyProductModule]));

/** The module of a built product, or undefined for a product that has only its status route. */
export function productModule(id: ProductId): AnyProductModule | undefined {
  return BY_ID.get(id);
}

export function isBuiltProduct(id: string): id is BuiltProductId {
  return BY_ID.has(id as ProductId);
}

export const BUILT_PRODUCT_IDS: readonly BuiltProductId[] = PRODUCT_MODULES.map((module) => module.id);
