/**
 * The descriptor list (src/products/descriptors.ts) and the registry name the same products in
 * the same order, and the catalog is the descriptors' data: a product's id, prefixes and flags
 * are declared once, in its own folder.
 */
import { readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRODUCT_IDS, PRODUCTS } from '../../src/products/catalog.js';
import { PRODUCT_DESCRIPTORS } from '../../src/products/descriptors.js';
import { BUILT_PRODUCT_IDS, SERVICE_MODULES } from '../../src/products/registry.js';

const PRODUCTS_DIR = resolve(import.meta.dirname, '../../src/products');

describe('product descriptors', () => {
  it('list the registry modules, then the service modules, in order', () => {
    expect(PRODUCT_DESCRIPTORS.map((descriptor) => descriptor.id)).toEqual([...BUILT_PRODUCT_IDS, ...SERVICE_MODULES.map((module) => module.id)]);
  });

  it('are the catalog: ids, prefixes and envelope flags', () => {
    expect(PRODUCT_IDS).toEqual(PRODUCT_DESCRIPTORS.map((descriptor) => descriptor.id));
    for (const descriptor of PRODUCT_DESCRIPTORS) {
      expect(PRODUCTS[descriptor.id]).toMatchObject({
        id: descriptor.id,
        secretPrefix: descriptor.secretPrefix,
        publicPrefix: descriptor.publicPrefix,
        hasFetchedAt: descriptor.hasFetchedAt,
        hasDatabaseRecords: descriptor.hasDatabaseRecords,
      });
    }
    expect(PRODUCTS.captcha.statusKeyParam).toBe('sitekey');
    expect(PRODUCTS.geoip).toMatchObject({ secretPrefix: 'geo_sec_', publicPrefix: 'geo_pub_', hasFetchedAt: true });
  });

  it('live one per product folder, beside its module', () => {
    const folders = readdirSync(PRODUCTS_DIR, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    for (const folder of folders) expect(existsSync(join(PRODUCTS_DIR, folder.name, 'descriptor.ts')), folder.name).toBe(true);
    expect(folders.map((folder) => folder.name).sort()).toEqual([...PRODUCT_IDS].sort());
  });
});
