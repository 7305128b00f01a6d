/**
 * The layering rules of the source, checked on its import graph (README, Architecture):
 * the source never imports the test or bench trees, products never import the HTTP layer, and
 * no import cycle passes through the product registry.
 */
import { describe, expect, it } from 'vitest';
import { cycleThrough, edgesBetween, importSpecifiers, readImportGraph, type ImportGraph } from './import-graph.js';

const SOURCE_FOLDERS = ['src', 'adapters'];
const REGISTRY = 'src/products/registry.ts';

describe('import rules', () => {
  const graph = readImportGraph(SOURCE_FOLDERS);

  it('reads the whole source tree, registry and API included', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get(REGISTRY)).toContain('src/products/descriptors.ts');
    // The registry reaches each module through its descriptor's load(), an import() the graph holds.
    expect(graph.get('src/products/descriptors.ts')).toContain('src/products/geoip/descriptor.ts');
    expect(graph.get('src/products/geoip/descriptor.ts')).toContain('src/products/geoip/index.ts');
    expect(graph.get('src/api/create-api.ts')).toContain('src/errors.ts');
  });

  it('no file under src/ or adapters/ imports test/ or bench/', () => {
    expect(edgesBetween(graph, ['src/', 'adapters/'], ['test/', 'bench/'])).toEqual([]);
  });

  it('no file under src/products imports src/api (not even a type)', () => {
    expect(edgesBetween(graph, ['src/products/'], ['src/api/'])).toEqual([]);
  });

  it('no import closes a cycle through src/products/registry.ts (not even a type: the registry types the library)', () => {
    expect(cycleThrough(graph, REGISTRY)?.join(' -> ') ?? 'no cycle').toBe('no cycle');
  });
});

describe('the import graph reader', () => {
  it('sees static imports, type imports, re-exports and import()', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "import './side-effect.js';",
      "const later = () => import('./lazy.js');",
      "let t: import('./in-type.js').T;",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['./a.js', './b.js', './c.js', './e.js', './g.js', './h.js', './side-effect.js', './lazy.js', './in-type.js']);
  });

  it('finds the shortest cycle through a file and names its files in order', () => {
    const graph: ImportGraph = new Map([
      ['lookup', ['registry']],
      ['registry', ['captcha']],
      ['captcha', ['api', 'lib']],
      ['api', ['lookup', 'lib']],
      ['lib', []],
    ]);
    expect(cycleThrough(graph, 'registry')).toEqual(['registry', 'captcha', 'api', 'lookup', 'registry']);
    expect(cycleThrough(graph, 'lib')).toBeNull();
    expect(cycleThrough(new Map([['self', ['self']]]), 'self')).toEqual(['self', 'self']);
  });

  it('reports an edge into a forbidden folder as "from -> to"', () => {
    const graph: ImportGraph = new Map([['src/products/x/bench.ts', ['test/servers/dns-server.ts', 'src/lib/ip.ts']]]);
    expect(edgesBetween(graph, ['src/'], ['test/', 'bench/'])).toEqual(['src/products/x/bench.ts -> test/servers/dns-server.ts']);
  });
});
