/**
 * `npm start` runs `scripts/build.mjs --if-stale` before the CLI: it must build nothing (and print
 * nothing) when dist/ is fresh, and build when an output is missing or a source is newer. The
 * script runs here as it is, from a copy in a scratch package whose mtimes the test sets; that
 * package has no tsup, so "it builds" shows as its message on stderr and then a failed import.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = new URL('../scripts/build.mjs', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'seclookup-build-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const OLD = new Date('2026-01-01T00:00:00Z');
const NEW = new Date('2026-01-02T00:00:00Z');

/** A package with sources at OLD and every output of "exports" and "bin" at NEW. */
function freshPackage() {
  rmSync(root, { recursive: true, force: true });
  for (const dir of ['scripts', 'src/lib', 'adapters', 'dist']) mkdirSync(join(root, dir), { recursive: true });
  copyFileSync(SCRIPT, join(root, 'scripts', 'build.mjs'));
  const pkg = {
    name: 'x',
    type: 'module',
    bin: { x: 'dist/cli.js' },
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
  };
  const files: [string, string, Date][] = [
    ['package.json', JSON.stringify(pkg), OLD],
    ['tsconfig.json', '{}', OLD],
    ['tsup.config.ts', 'export default {};', OLD],
    ['src/index.ts', 'export {};', OLD],
    ['src/lib/deep.ts', 'export {};', OLD],
    ['adapters/node.ts', 'export {};', OLD],
    ['dist/index.js', '', NEW],
    ['dist/cli.js', '', NEW],
  ];
  for (const [file, text, time] of files) {
    writeFileSync(join(root, file), text);
    utimesSync(join(root, file), time, time);
  }
  for (const dir of ['src/lib', 'src', 'adapters']) utimesSync(join(root, dir), OLD, OLD);
}

function run() {
  return spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
}

const BUILDING = 'seclookup: building dist/ (missing or older than src/)\n';

describe('scripts/build.mjs --if-stale (npm start)', () => {
  beforeEach(freshPackage);

  it('builds nothing and prints nothing when every output is newer than every source', () => {
    expect(run()).toMatchObject({ status: 0, stdout: '', stderr: '' });
  });

  it('builds when a source deep in src/ is newer than the outputs', () => {
    utimesSync(join(root, 'src/lib/deep.ts'), NEW, new Date(NEW.getTime() + 1000));
    const result = run();
    expect(result.stderr.startsWith(BUILDING)).toBe(true);
    expect(result.stderr).toContain("Cannot find package 'tsup'");
    expect(result.stdout).toBe('');
  });

  it('builds when an output that package.json names is missing', () => {
    rmSync(join(root, 'dist/cli.js'));
    expect(run().stderr.startsWith(BUILDING)).toBe(true);
  });

  it('builds when an adapter changed', () => {
    utimesSync(join(root, 'adapters/node.ts'), NEW, new Date(NEW.getTime() + 1000));
    expect(run().stderr.startsWith(BUILDING)).toBe(true);
  });
});
