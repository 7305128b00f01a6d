import { readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRODUCT_IDS, PRODUCTS } from '../../src/products/catalog.js';
import type { AnyProductModule, ProductEngine } from '../../src/products/module.js';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../../src/products/registry.js';
import { createLookup } from '../../src/lookup.js';
import { createMemoryMeter } from '../../src/metering/memory/meter.js';
import { issueKeys } from '../../src/metering/keys.js';

const PRODUCTS_DIR = new URL('../../src/products/', import.meta.url);
const folders = readdirSync(PRODUCTS_DIR).filter((name) => statSync(new URL(name, PRODUCTS_DIR)).isDirectory());
const modules = PRODUCT_MODULES as readonly AnyProductModule[];

describe('product registry', () => {
  it('lists every folder under src/products/ exactly once, under its own id (lookup products and service products)', () => {
    const ids = [...modules, ...SERVICE_MODULES].map((m) => m.id);
    expect([...ids].sort()).toEqual([...folders].sort());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of folders) expect(PRODUCT_IDS).toContain(id);
  });

  it.each(modules.map((m) => [m.id, m] as const))('%s has every part a product must have', async (id, module) => {
    expect(typeof module.createEngine).toBe('function');
    // The engine has the verbs; the module does not forward them.
    expect(module).not.toHaveProperty('prepare');
    expect(module).not.toHaveProperty('lookup');
    const engine = createLookup().engine(id as never) as ProductEngine;
    expect(typeof engine.prepare).toBe('function');
    expect(typeof engine.lookup).toBe('function');
    expect(module.routes.length).toBeGreaterThan(0);
    for (const route of module.routes) {
      expect(['GET', 'POST']).toContain(route.method);
      // SPEC names scamrisk's route `assess`; every other product's is `lookup`.
      const base = id === 'scamrisk' ? 'assess' : 'lookup';
      expect(route.path === base || route.path.startsWith(`${base}/:`)).toBe(true);
      expect(typeof route.args).toBe('function');
    }
    for (const route of module.extraRoutes ?? []) {
      expect(['GET', 'POST']).toContain(route.method);
      // Beside the lookup routes, never in their place.
      expect(route.path.split('/')[0]).not.toBe('lookup');
      expect(typeof route.prepare).toBe('function');
      expect(typeof route.lookup).toBe('function');
    }
    expect(module.cli.input.length).toBeGreaterThan(0);
    expect(module.cli.example.length).toBeGreaterThan(0);
    expect(typeof module.cli.args).toBe('function');
    // Products whose status carries database_records must say how many records they hold.
    if (PRODUCTS[id].hasDatabaseRecords) {
      expect(module.statusExtras, `${id} needs statusExtras with database_records`).toBeTypeOf('function');
      const engine = createLookup().engine(id as never) as ProductEngine;
      const { publicKey } = await issueKeys(createMemoryMeter(), { product: id });
      expect(publicKey.length).toBeGreaterThan(0);
      const extras = module.statusExtras!(engine, { id: 'k', subscriptionId: 's', product: id, kind: 'public', status: 'active', ipAllow: [], plan: null });
      expect(Number.isSafeInteger(extras.database_records)).toBe(true);
    }
  });

  it('gives createLookup one method and one detailed method per registered product', () => {
    const lookup = createLookup() as unknown as Record<string, unknown> & { detailed: Record<string, unknown> };
    for (const { id } of modules) {
      expect(typeof lookup[id]).toBe('function');
      expect(typeof lookup.detailed[id]).toBe('function');
    }
  });
});
