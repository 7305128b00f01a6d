/**
 * The engine interface's structural rules (issue 21): every product's engine has the one verb
 * pair, modules do not forward it, a product reaches another's engine only through `needs`
 * (typed, never cast or duck-typed), and the core names no product to find engine features.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLookup } from '../../src/lookup.js';
import type { AnyProductModule, ProductEngine } from '../../src/products/module.js';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { PRODUCT_MODULES } from '../../src/products/registry.js';

const SRC = new URL('../../src/', import.meta.url).pathname;
const modules = PRODUCT_MODULES as readonly AnyProductModule[];

/** Every .ts file under a folder, bench files aside (they build engines by hand). */
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.startsWith('bench') ? [path] : [];
  });
}
/** A file's code, its comment lines left out. */
const read = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\*|\/\*|\/\/)/.test(line))
    .join('\n');
const relative = (path: string) => path.slice(SRC.length);

describe('the product engine interface', () => {
  it.each(modules.map((m) => [m.id, m] as const))('%s: the engine has prepare and lookup, and nothing else answers a lookup', (id, module) => {
    expect(Object.keys(module)).not.toContain('prepare');
    expect(Object.keys(module)).not.toContain('lookup');
    const engine = createLookup().engine(id as never) as ProductEngine & Record<string, unknown>;
    expect(typeof engine.prepare).toBe('function');
    expect(typeof engine.lookup).toBe('function');
    // The old second verbs are gone: one way to answer.
    for (const verb of ['check', 'match', 'assess', 'lookupNormalized', 'lookupPrepared', 'normalizeAndLookup'])
      expect(engine[verb], `${id}.${verb}`).toBeUndefined();
  });

  it('createLookup().close() closes engines through the interface, not by testing for a close method', () => {
    // createLookup's engines live in lookup-of.ts (over any module list; lookup.ts passes the registry's).
    const text = read(join(SRC, 'lookup-of.ts'));
    expect(text).not.toMatch(/typeof [\w?.]+close !?== 'function'/);
    expect(text).toMatch(/\.engine\.close\?\.\(\)/);
  });

  it('no product casts another product engine or tests it for a method: `needs` types ctx.engine(id)', () => {
    const offenders: string[] = [];
    for (const path of sources(join(SRC, 'products'))) {
      const text = read(path);
      for (const match of text.matchAll(/\bas (?:Partial<)?(?!ProductEngine\b)[A-Z]\w*Engine\b|typeof (?:e|\w*[Ee]ngine)\??\.\w+ === 'function'/g))
        offenders.push(`${relative(path)}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  it("every engine a product's folder asks for (engine('id')) is listed in its module's needs", () => {
    const asked: Record<string, string[]> = {};
    for (const module of modules) {
      const folder = join(SRC, 'products', module.id);
      const ids = new Set<string>();
      for (const path of sources(folder)) for (const [, id] of read(path).matchAll(/\bengine\('([a-z]+)'\)/g)) ids.add(id);
      if (ids.size > 0) asked[module.id] = [...ids].sort();
    }
    const declared = Object.fromEntries(
      Object.keys(asked).map((id) => [id, [...(modules.find((m) => m.id === id)!.needs ?? [])].filter((need) => asked[id].includes(need)).sort()]),
    );
    expect(declared).toEqual(asked);
    expect(Object.keys(asked).sort()).toEqual(['domainrep', 'geoip', 'riskscore', 'timezone']);
  });

  it('the metrics name no product: dataset dates come from the modules that declare datasetAges', () => {
    const named: string[] = [];
    for (const path of sources(join(SRC, 'metrics'))) {
      for (const id of PRODUCT_IDS) if (read(path).includes(`'${id}'`)) named.push(`${relative(path)}: '${id}'`);
    }
    expect(named).toEqual([]);
    // Every product that loads a dataset dates it; useragent, emailauth, tls and captcha ship their rules in code.
    expect(
      modules
        .filter((m) => m.datasetAges)
        .map((m) => m.id)
        .sort(),
    ).toEqual(['asn', 'dnsbl', 'domainrep', 'emailval', 'geoip', 'pwbreach', 'riskscore', 'scamrisk', 'timezone', 'webhookip', 'whois']);
  });
});
