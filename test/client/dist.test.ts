/**
 * The built `seclookup/client` (dist/client.js, made by tsup before the tests): it loads no
 * engine, no package and no Node module, only its own code and the chunk holding LookupError,
 * which is the very class `seclookup` exports, so `instanceof` works across the two subpaths.
 * The product descriptors it reads name their modules and commands lazily (`load: () =>
 * import(...)`, for the registry and the CLI); the client never calls those, so they are listed
 * apart and must be nothing else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { REPO_ROOT } from '../cli/harness.js';

const DIST = join(REPO_ROOT, 'dist');
/**
 * Generous: about 45 KB today, unminified, comments included (client.js about 31 KB, of which
 * 8 KB are the engines' argument checks and length rules, src/client/args.ts, and 6 KB the
 * retry rules, src/client/retry.ts; LookupError's chunk 4 KB; the product descriptors 9 KB).
 */
const MAX_BYTES = 52 * 1024;

/** Every file dist/client.js loads, following its relative imports; every other specifier met; and the files behind its `import()`s. */
function closure(entry: string): { files: Map<string, number>; external: Set<string>; lazy: Set<string> } {
  const files = new Map<string, number>();
  const external = new Set<string>();
  const lazy = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    const code = readFileSync(file, 'utf8');
    files.set(file, Buffer.byteLength(code));
    for (const match of code.matchAll(/(?:^|[\s;])(?:import|export)\s*(?:[\w*{}\s,$]+\s*from\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
      const specifier = match[1] ?? match[2];
      const relative = specifier.startsWith('./') || specifier.startsWith('../');
      if (!relative) external.add(specifier);
      else if (match[2] !== undefined) lazy.add(resolve(dirname(file), specifier));
      else visit(resolve(dirname(file), specifier));
    }
  };
  visit(entry);
  return { files, external, lazy };
}

describe('dist/client.js', () => {
  const entry = join(DIST, 'client.js');

  it('is built, small, and imports nothing but its own chunks', () => {
    expect(existsSync(entry), 'run tsup first (npm test does)').toBe(true);
    const { files, external } = closure(entry);
    expect([...external]).toEqual([]);
    const total = [...files.values()].reduce((sum, bytes) => sum + bytes, 0);
    expect(total).toBeLessThan(MAX_BYTES);
    for (const file of files.keys()) {
      expect(readFileSync(file, 'utf8')).not.toMatch(/better-sqlite3|ioredis|maxmind|ua-parser-js|node:/);
    }
  });

  it("names no module lazily but the products' own (their modules and commands), which only the registry and the CLI load", () => {
    const { lazy } = closure(entry);
    const names = [...lazy].map((file) => basename(file).replace(/-[\w-]+\.js$/, '')).sort();
    expect(names).toEqual([...PRODUCT_IDS, 'cli', 'cli'].sort());
  });

  it('throws the LookupError class that seclookup exports', async () => {
    const remote = (await import(pathToFileURL(entry).href)) as typeof import('../../src/client/index.js');
    const local = (await import(pathToFileURL(join(DIST, 'index.js')).href)) as typeof import('../../src/index.js');
    expect(remote.LookupError).toBe(local.LookupError);
    const client = remote.createClient({ baseUrl: 'http://127.0.0.1:1', keys: {} });
    const error = await client.geoip('8.8.8.8').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(local.LookupError);
    expect(error).toMatchObject({ code: 'missing_credentials' });
  });
});
