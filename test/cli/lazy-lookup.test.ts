/**
 * `seclookup lookup PRODUCT` loads that product's module and the modules it needs, no other
 * (issue 24: a one-shot lookup answers at once). The built CLI runs as a real process with a
 * module-resolution hook that records every file it loads; each product's module is its own
 * chunk in dist/ (`geoip-<hash>.js`), so the product chunks loaded name the products loaded.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { CLI_PATH, cliEnv, createTempDirs } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

/** The products whose module chunk `seclookup ...args` loaded, sorted, and its stdout. */
function productsLoadedBy(args: string[]): { products: string[]; stdout: string; status: number | null } {
  const dir = temp.make();
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, CLI_PATH, ...args], { env: cliEnv(), encoding: 'utf8' });
  const chunks = readFileSync(log, 'utf8')
    .split('\n')
    .filter((url) => url.includes('/dist/'))
    .map((url) => basename(url));
  const products = PRODUCT_IDS.filter((id) => chunks.some((chunk) => new RegExp(`^${id}-[\\w-]+\\.js$`).test(chunk)));
  return { products: [...products].sort(), stdout: run.stdout, status: run.status };
}

describe('seclookup lookup loads only the product asked for', () => {
  it('webhookip: its module alone', () => {
    const run = productsLoadedBy(['lookup', 'webhookip', '140.82.115.10']);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ matched: true, providers: [{ id: 'github' }] });
    expect(run.products).toEqual(['webhookip']);
  });

  it('geoip: its module and asn, which it needs', () => {
    const run = productsLoadedBy(['lookup', 'geoip', '8.8.8.8', '--geoip-reverse-dns', 'off']);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ip: '8.8.8.8', country: { code: 'US' } });
    expect(run.products).toEqual(['asn', 'geoip']);
  });

  it('the help lists every product, so it loads them all', () => {
    const run = productsLoadedBy(['lookup', '--help']);
    expect(run.status).toBe(0);
    expect(run.products).toEqual([...PRODUCT_IDS].sort());
  });
});
