/**
 * The embeddable library does not carry the server: bundling `createLookup` alone (as a user's
 * bundler would, npm packages left external) pulls in no file of the HTTP layer, the adapters,
 * the CLI, or the meter and its stores.
 */
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './import-graph.js';

/** Folders that make up the server, none of which the library may load. */
const SERVER_FOLDERS = ['src/api/', 'src/cli/', 'src/metering/', 'adapters/'];

/**
 * A product's own `seclookup` commands (captcha's `sitekeys`) are `import()`s in its descriptor
 * that only the CLI calls; a bundle that splits (tsup's, any app bundler's) keeps them in chunks
 * of their own. esbuild without splitting would inline them, so they are left out here.
 */
const productCommandsLeftOut: Plugin = {
  name: 'product-commands-left-out',
  setup(build) {
    build.onResolve({ filter: /^\.\/cli\.js$/ }, (args) =>
      args.kind === 'dynamic-import' && /src\/products\/\w+\/descriptor\.ts$/.test(args.importer) ? { path: args.path, external: true } : undefined,
    );
  },
};

async function bundledInputs(entry: string): Promise<string[]> {
  const result = await build({
    plugins: [productCommandsLeftOut],
    stdin: { contents: entry, resolveDir: REPO_ROOT, sourcefile: 'entry.ts', loader: 'ts' },
    bundle: true,
    metafile: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs);
}

describe('createLookup bundled alone', () => {
  it('holds the engines and none of the server', async () => {
    const inputs = await bundledInputs("export { createLookup } from './src/lookup.js';");
    // It is the library: the lookup, the registry and the products' engines are in.
    expect(inputs).toContain('src/lookup.ts');
    expect(inputs).toContain('src/products/registry.ts');
    expect(inputs).toContain('src/products/geoip/engine.ts');
    const server = inputs.filter((input) => SERVER_FOLDERS.some((folder) => input.startsWith(folder)));
    expect(server).toEqual([]);
  });

  it('would see the HTTP layer if the library loaded it', async () => {
    // The check above is only as good as the metafile's paths: the API's own entry must show up.
    const inputs = await bundledInputs("export { createApi } from './src/api/create-api.js';");
    expect(inputs).toContain('src/api/create-api.ts');
    expect(inputs).toContain('src/api/envelope.ts');
  });
});

/**
 * The source files a bundle loads when its entry is imported, as a splitting bundler (tsup,
 * which builds dist/, or an app's) lays it out: the entry chunk and the chunks it imports
 * statically. What sits behind an `import()` (a descriptor's module) loads only when called.
 */
async function loadedOnImport(entry: string): Promise<string[]> {
  const result = await build({
    stdin: { contents: entry, resolveDir: REPO_ROOT, sourcefile: 'entry.ts', loader: 'ts' },
    bundle: true,
    splitting: true,
    outdir: 'out',
    metafile: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  // `import()` targets are entry points of their own chunks too; the stdin one (entry.ts) is the entry.
  const [entryChunk] = Object.keys(outputs).filter((path) => outputs[path].entryPoint === 'entry.ts');
  const seen = new Set<string>();
  const visit = (chunk: string): void => {
    if (seen.has(chunk)) return;
    seen.add(chunk);
    for (const imported of outputs[chunk].imports) if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
  };
  visit(entryChunk);
  return [...seen].flatMap((chunk) => Object.keys(outputs[chunk].inputs));
}

describe('the HTTP client, imported', () => {
  it('loads the descriptors and no product module, engine or server file', async () => {
    const loaded = await loadedOnImport("export { createClient } from './src/client/index.js';");
    expect(loaded).toContain('src/client/index.ts');
    expect(loaded).toContain('src/products/geoip/descriptor.ts');
    const modules = loaded.filter((input) => /^src\/products\/\w+\/(?!descriptor\.ts$|types\.ts$)/.test(input));
    expect(modules).toEqual([]);
    expect(loaded.filter((input) => SERVER_FOLDERS.some((folder) => input.startsWith(folder)))).toEqual([]);
  });

  it('would see a product module if the client imported one statically', async () => {
    const loaded = await loadedOnImport("export { createClient } from './src/client/index.js'; export { default } from './src/products/geoip/index.js';");
    expect(loaded).toContain('src/products/geoip/engine.ts');
  });
});
