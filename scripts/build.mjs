#!/usr/bin/env node
/**
 * Builds dist/ with tsup, the JavaScript alone unless type declarations are wanted, and only
 * when asked to or when dist/ is missing or older than its sources.
 *
 *   node scripts/build.mjs             JavaScript only (fast: what install and start need)
 *   node scripts/build.mjs --dts       JavaScript and type declarations (pack, publish, tests)
 *   node scripts/build.mjs --prepare   npm's `prepare`: JavaScript only in a clone; with
 *                                      declarations when npm packs the folder (npm pack, npm
 *                                      publish, a git dependency), whose users need the types
 *   node scripts/build.mjs --if-stale  build the JavaScript only when an entry's output is
 *                                      missing or a source is newer than it (npm start)
 *
 * tsup's progress goes to stderr: `npm start`'s stdout is the request log alone.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const SOURCES = ['src', 'adapters', 'tsup.config.ts', 'package.json', 'tsconfig.json'];
const flags = new Set(process.argv.slice(2));

/** Newest modification time (ms) of a file, or of any file under a folder. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

/** What users load: the files package.json's "exports" and "bin" name. */
function outputs() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const targets = Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [] : [target.default]));
  return [...targets, ...Object.values(pkg.bin)].map((file) => join(ROOT, file));
}

/** True when some output is missing, or some source changed after the oldest output was built. */
function stale() {
  const built = outputs();
  if (built.some((file) => !existsSync(file))) return true;
  const oldestOutput = Math.min(...built.map((file) => statSync(file).mtimeMs));
  const newestSource = Math.max(
    ...SOURCES.map((path) => join(ROOT, path))
      .filter(existsSync)
      .map(newest),
  );
  return newestSource > oldestOutput;
}

/** npm packs this folder: `npm pack`, `npm publish`, or preparing a git (or folder) dependency. */
function packing() {
  const command = process.env.npm_command;
  return command === 'pack' || command === 'publish' || Boolean(process.env.npm_package_resolved);
}

const withTypes = flags.has('--dts') || (flags.has('--prepare') && packing());
if (flags.has('--if-stale') && !stale()) process.exit(0);
if (flags.has('--if-stale')) process.stderr.write('seclookup: building dist/ (missing or older than src/)\n');

// tsup logs with console.log; keep stdout for whatever runs after the build.
console.log = (...args) => console.error(...args);
process.chdir(ROOT);
const { build } = await import('tsup');
await build(withTypes ? {} : { dts: false, silent: flags.has('--if-stale') });
