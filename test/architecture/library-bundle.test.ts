/**
 * The embeddable library does not carry the server: bundling `createLookup` alone (as a user's
 * bundler would, npm packages left external) pulls in no file of the HTTP layer, the adapters,
 * the CLI, or the meter and its stores.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './import-graph.js';

/**
 * The one file under src/metering/ that a product uses as a plain helper, not as a meter or a
 * store: captcha's site keys are generated and hashed like API keys (keys.ts). The UTC calendar
 * and the SQLite file opener live in src/lib. Anything else under src/metering/ in the bundle
 * is the meter leaking in.
 */
const METERING_HELPERS = ['src/metering/keys.ts'];

/** Folders that make up the server, none of which the library may load. */
const SERVER_FOLDERS = ['src/api/', 'src/cli/', 'src/metering/', 'adapters/'];

async function bundledInputs(entry: string): Promise<string[]> {
  const result = await build({
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
    const server = inputs.filter((input) => SERVER_FOLDERS.some((folder) => input.startsWith(folder)) && !METERING_HELPERS.includes(input));
    expect(server).toEqual([]);
  });

  it('would see the HTTP layer if the library loaded it', async () => {
    // The check above is only as good as the metafile's paths: the API's own entry must show up.
    const inputs = await bundledInputs("export { createApi } from './src/api/create-api.js';");
    expect(inputs).toContain('src/api/create-api.ts');
    expect(inputs).toContain('src/api/envelope.ts');
  });
});
