/**
 * The lint and format check: `npm test` runs it, and it refuses what it should. Each case runs
 * the project's own biome.jsonc over one probe file in a scratch folder.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'acorn';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const BIOME = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
const scratch = mkdtempSync(join(tmpdir(), 'seclookup-lint-'));
copyFileSync(join(ROOT, 'biome.jsonc'), join(scratch, 'biome.jsonc'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `npm run lint` over a folder holding only `file` with `code`; the scratch folder is no git work tree. */
function check(file: string, code: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(scratch, 'case-'));
  copyFileSync(join(scratch, 'biome.jsonc'), join(dir, 'biome.jsonc'));
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), code);
  const run = spawnSync(process.execPath, [BIOME, 'check', '--error-on-warnings', '--vcs-enabled=false', '.'], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

// The house style: 2 spaces, single quotes, semicolons, trailing commas, arrow parentheses, lines up to 160.
const HOUSE_STYLE = `import { join } from 'node:path';

/** One statement a line while it fits in 160 columns. */
export function describePath(parts: readonly string[], options: { separator?: string; upper?: boolean } = {}): string {
  const text = parts.filter((part) => part.trim() !== '').join(options.separator ?? '/');
  return options.upper ? join(text).toUpperCase() : join(text);
}

export const LIMITS = {
  short: 1,
  long: 2,
};
`;

describe('lint and format check', () => {
  it('runs in npm test, beside the build and the type check', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.pretest).toBe('node scripts/pretest.mjs');
    // @ts-expect-error: a plain .mjs script, without declarations
    const { STEPS } = (await import('../scripts/pretest.mjs')) as { STEPS: { command: string[] }[] };
    expect(STEPS.map((step) => step.command.slice(1).join(' '))).toEqual([
      'scripts/build.mjs --dts',
      'node_modules/typescript/bin/tsc --noEmit',
      'run --silent lint',
    ]);
    expect(pkg.scripts.lint).toBe('biome check --error-on-warnings .');
    expect(pkg.scripts.format).toBe('biome format --write .');
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm install && npm test$/m);
  });

  it('passes code written in the house style', () => {
    const result = check('src/probe.ts', HOUSE_STYLE);
    expect(result.output).not.toMatch(/×/);
    expect(result.status).toBe(0);
  });

  it('fails on a format error (double quotes, a missing semicolon)', () => {
    const result = check('src/probe.ts', HOUSE_STYLE.replace("from 'node:path';", 'from "node:path"'));
    expect(result.status).toBe(1);
    expect(result.output).toContain('Formatter would have printed');
  });

  it('fails on a lint error, and on a lint warning', () => {
    const debuggerLeft = check('src/probe.ts', `${HOUSE_STYLE}\nexport function stop(): void {\n  debugger;\n}\n`);
    expect(debuggerLeft.status).toBe(1);
    expect(debuggerLeft.output).toContain('lint/suspicious/noDebugger');

    const explicitAny = check('src/probe.ts', `${HOUSE_STYLE}\nexport function same(value: any): unknown {\n  return value;\n}\n`);
    expect(explicitAny.status).toBe(1);
    expect(explicitAny.output).toContain('lint/suspicious/noExplicitAny');
  });

  it('lets the captcha widget stay ES5 (function callbacks, a catch binding it does not use)', () => {
    const es5 = [
      '(function () {',
      "  'use strict';",
      '  var ok = false;',
      '  try {',
      '    ok = [1].every(function (n) {',
      '      return n > 0;',
      '    });',
      '  } catch (e) {',
      '    ok = false;',
      '  }',
      '  window.ok = ok;',
      '})();',
      '',
    ].join('\n');
    expect(check('src/products/captcha/widget/probe.js', es5).status).toBe(0);
    const elsewhere = check('src/probe.js', es5);
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.output).toContain('lint/complexity/useArrowFunction');
    // The formatter too: a call broken over lines gets no trailing comma (ES2017) there.
    const longCall = ['(function () {', '  window.open(', `    '/${'a'.repeat(90)}',`, `    '${'b'.repeat(90)}'`, '  );', '})();', ''].join('\n');
    expect(check('src/products/captcha/widget/probe.js', longCall).status).toBe(0);
    expect(check('src/probe.js', longCall).output).toContain('Formatter would have printed');
  });

  it('keeps the widget scripts ES5: each parses as ECMAScript 5', () => {
    const widget = join(ROOT, 'src/products/captcha/widget');
    const scripts = readdirSync(widget).filter((name) => name.endsWith('.js'));
    expect(scripts.sort()).toEqual(['api.js', 'frame.js', 'worker.js']);
    for (const name of scripts) expect(() => parse(readFileSync(join(widget, name), 'utf8'), { ecmaVersion: 5 }), name).not.toThrow();
  });
});
