/**
 * The products of SPEC.md: path segment, key prefixes, and which envelope and status fields each
 * carries, as each product's descriptor (src/products/<id>/descriptor.ts) declares them.
 */
import type { ProductDescriptor } from './descriptor.js';
import { PRODUCT_DESCRIPTORS } from './descriptors.js';

export { SCAMRISK_TYPES } from './scamrisk/descriptor.js';

/** Every product id, in the descriptor list's order. */
export const PRODUCT_IDS = PRODUCT_DESCRIPTORS.map((descriptor) => descriptor.id) as readonly ProductId[] as readonly [ProductId, ...ProductId[]];

/** A product's id: the union of the descriptor list's ids, so a new product type-checks by its one line there. */
export type ProductId = (typeof PRODUCT_DESCRIPTORS)[number]['id'];

export interface ProductInfo extends Omit<ProductDescriptor, 'id' | 'client'> {
  id: ProductId;
}

export const PRODUCTS: Readonly<Record<ProductId, ProductInfo>> = Object.freeze(
  Object.fromEntries(
    (PRODUCT_DESCRIPTORS as readonly ProductDescriptor[]).map(({ id, ...descriptor }) => [
      id,
      {
        id,
        secretPrefix: descriptor.secretPrefix,
        publicPrefix: descriptor.publicPrefix,
        hasFetchedAt: descriptor.hasFetchedAt,
        hasDatabaseRecords: descriptor.hasDatabaseRecords,
        ...(descriptor.statusKeyParam ? { statusKeyParam: descriptor.statusKeyParam } : {}),
      },
    ]),
  ) as Record<ProductId, ProductInfo>,
);

export function isProductId(value: string): value is ProductId {
  return Object.hasOwn(PRODUCTS, value);
}
