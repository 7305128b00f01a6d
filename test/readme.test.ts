/**
 * The documentation's TypeScript snippets must work as pasted: every ```ts block of README.md and
 * of every page under docs/ is type-checked as its own module against the built package (imports
 * of `seclookup` resolve through package.json "exports" to dist/, as in a user's project), and
 * blocks marked `<!-- readme-test: run -->` are also run, in a scratch folder, and must exit 0.
 * Every relative link between those pages must lead to a file, and to a heading of it, that exist.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { readServeConfig } from '../src/cli/config.js';
import { SERVE_OPTIONS } from '../src/cli/serve.js';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const SNIPPETS = join(ROOT, 'test', '.readme-snippets');
/** TypeScript's native compiler (tsgo), run as its package's bin. */
const TSGO = join(ROOT, 'node_modules/@typescript/native-preview/bin/tsgo');
/**
 * The ```ts blocks there were when the README held them all (18, issue 24 moved them to docs/)
 * plus the README's new ones (4): a block lost in a move fails the count.
 */
const TS_BLOCKS_AT_LEAST = 22;
/** Pages written on parallel branches of issue 24; linked already, checked once they exist. */
const PAGES_OF_OTHER_BRANCHES = new Set(
  ['benchmarks', 'performance-engines', 'whois-accuracy', 'emailauth-standards', 'accuracy', 'redis-cluster', 'capacity'].map((name) => `docs/${name}.md`),
);

/**
 * tsgo's errors (`file(line,col): error TSn: message`, a chained message's lines indented below
 * it) as `page line N: message`, at the line of the page the snippet came from.
 */
function snippetErrors(output: string): string[] {
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    const error = /^(.+?)\((\d+),\d+\): error TS\d+: (.*)$/.exec(line);
    if (error) {
      const snippet = snippets.find((s) => s.file === join(ROOT, error[1]));
      // The snippet's first line is the one after its fence (snippet.line).
      errors.push(snippet ? `${snippet.page} line ${snippet.line + Number(error[2])}: ${error[3]}` : line);
    } else if (line.trim() !== '' && errors.length > 0) errors[errors.length - 1] += `\n${line.trim()}`;
    else if (line.trim() !== '') errors.push(line);
  }
  return errors;
}

/** README.md and every Markdown page under docs/, as paths relative to the repository. */
function pages(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) found.push(join(dir, entry.name));
    }
  };
  walk('docs');
  return found;
}

interface Snippet {
  page: string;
  line: number;
  code: string;
  run: boolean;
  file: string;
}

const texts = new Map(pages().map((page) => [page, readFileSync(join(ROOT, page), 'utf8')]));
const snippets: Snippet[] = [];
const fence = /(<!-- readme-test: run -->\s*\n)?```ts\n([\s\S]*?)```/g;
for (const [page, text] of texts) {
  for (const match of text.matchAll(fence)) {
    const line = text.slice(0, match.index).split('\n').length + (match[1] ? 1 : 0);
    const file = join(SNIPPETS, `${page.replace(/\.md$/, '').replace(/[^\w-]+/g, '-')}-line-${line}.ts`);
    snippets.push({ page, line, code: match[2], run: Boolean(match[1]), file });
  }
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (outside code blocks), repeated ones numbered as GitHub does. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = !inFence && /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Every relative Markdown link of a page (outside code blocks) that is broken, as `page: link (why)`. */
function brokenLinks(page: string, text: string): string[] {
  const broken: string[] = [];
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
    if (PAGES_OF_OTHER_BRANCHES.has(file) && !existsSync(join(ROOT, file))) continue;
    if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no such file)`);
    else if (anchor && !anchors(texts.get(file) ?? readFileSync(join(ROOT, file), 'utf8')).has(anchor))
      broken.push(`${page}: ${target} (no such heading in ${file})`);
  }
  return broken;
}

rmSync(SNIPPETS, { recursive: true, force: true });
mkdirSync(SNIPPETS, { recursive: true });
for (const snippet of snippets) writeFileSync(snippet.file, snippet.code);
const scratch = mkdtempSync(join(tmpdir(), 'seclookup-readme-'));
afterAll(() => {
  rmSync(SNIPPETS, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe('README and docs/ snippets', () => {
  it('has every TypeScript snippet, in the README and in docs/, some of them run', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(TS_BLOCKS_AT_LEAST);
    expect(snippets.filter((s) => s.page === 'README.md').length).toBeGreaterThanOrEqual(4);
    expect(snippets.filter((s) => s.run).length).toBeGreaterThanOrEqual(5);
    // A guide a newcomer reads in five minutes; the reference lives in docs/.
    expect(texts.get('README.md')!.split('\n').length).toBeLessThanOrEqual(400);
    expect(existsSync(join(ROOT, 'dist', 'index.d.ts')), 'build first: npm test runs tsup before vitest').toBe(true);
  });

  it('type-checks every snippet as pasted', () => {
    // With the project's compiler options, the snippets alone as the program's files. Checked by
    // TypeScript's native compiler (tsgo): tsc's program took 13 s of the suite for the same errors.
    const config = join(SNIPPETS, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noUnusedLocals: false }, include: [], files: snippets.map((s) => s.file) }),
    );
    const run = spawnSync(process.execPath, [TSGO, '--noEmit', '--pretty', 'false', '-p', config], { cwd: ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(snippetErrors(run.stdout)).toEqual([]);
    expect(run.status).toBe(0);
  }, 60_000);

  it.each(snippets.filter((s) => s.run).map((s) => [`${s.page} line ${s.line}`, s] as const))(
    'runs the snippet at %s',
    async (_line, snippet) => {
      // Its types stripped, as tsx would at each run (the check above has read them): plain node
      // then runs it, from a scratch folder, and `seclookup` resolves to the package as a user's does.
      const { default: ts } = await import('typescript');
      const js = ts.transpileModule(snippet.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
      const runnable = snippet.file.replace(/\.ts$/, '.mjs');
      writeFileSync(runnable, js.outputText);
      const result = spawnSync(process.execPath, [runnable], { cwd: scratch, encoding: 'utf8', timeout: 30_000 });
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    },
    40_000,
  );

  it('links only to pages and headings that exist', () => {
    expect([...texts].flatMap(([page, text]) => brokenLinks(page, text))).toEqual([]);
  });

  it("accepts the README's configuration example as serve's config file, every setting known", () => {
    const readme = texts.get('README.md')!;
    const example = /```json\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Configuration')))![1];
    const file = join(scratch, 'seclookup.json');
    writeFileSync(file, example);
    const config = readServeConfig(file, SERVE_OPTIONS, 'serve');
    expect(config.values).toMatchObject({ port: '8080', 'data-dir': '/var/lib/seclookup/data' });
    expect(Object.keys(config.products)).toEqual(['useragent']);
  });
});
