/**
 * The README's TypeScript snippets must work as pasted: every ```ts block is type-checked as
 * its own module against the built package (imports of `seclookup` resolve through
 * package.json "exports" to dist/, as in a user's project), and blocks marked
 * `<!-- readme-test: run -->` are also run, in a scratch folder, and must exit 0.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const SNIPPETS = join(ROOT, 'test', '.readme-snippets');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** tsx's loader, by absolute URL: snippets run from a scratch folder that has no node_modules. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Snippet {
  line: number;
  code: string;
  run: boolean;
  file: string;
}

const snippets: Snippet[] = [];
const fence = /(<!-- readme-test: run -->\s*\n)?```ts\n([\s\S]*?)```/g;
for (const match of readme.matchAll(fence)) {
  const line = readme.slice(0, match.index).split('\n').length + (match[1] ? 1 : 0);
  snippets.push({ line, code: match[2], run: Boolean(match[1]), file: join(SNIPPETS, `readme-line-${line}.ts`) });
}

rmSync(SNIPPETS, { recursive: true, force: true });
mkdirSync(SNIPPETS, { recursive: true });
for (const snippet of snippets) writeFileSync(snippet.file, snippet.code);
const scratch = mkdtempSync(join(tmpdir(), 'seclookup-readme-'));
afterAll(() => {
  rmSync(SNIPPETS, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe('README snippets', () => {
  it('has TypeScript snippets, some of them run', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(4);
    expect(snippets.some((s) => s.run)).toBe(true);
    expect(existsSync(join(ROOT, 'dist', 'index.d.ts')), 'build first: npm test runs tsup before vitest').toBe(true);
  });

  it('type-checks every snippet as pasted', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
    const program = ts.createProgram(
      snippets.map((s) => s.file),
      { ...config.options, noEmit: true, noUnusedLocals: false },
    );
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && d.file.fileName.startsWith(SNIPPETS))
      .map(
        (d) =>
          `README line ${snippets.find((s) => s.file === d.file!.fileName)!.line + d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(problems).toEqual([]);
  }, 60_000);

  it.each(snippets.filter((s) => s.run).map((s) => [s.line, s] as const))(
    'runs the snippet at README line %i',
    (_line, snippet) => {
      const result = spawnSync(process.execPath, ['--import', TSX, snippet.file], { cwd: scratch, encoding: 'utf8', timeout: 30_000 });
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    },
    40_000,
  );
});
