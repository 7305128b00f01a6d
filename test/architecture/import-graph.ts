/**
 * The import graph of the source, read with TypeScript's parser (no type checking): every
 * `import` (type-only ones too), `export ... from` and `import()` of a relative path, resolved
 * to a repository path. Used by imports.test.ts to hold the layering rules.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Repository-relative file (posix separators) -> the repository-relative files it imports. */
export type ImportGraph = Map<string, string[]>;

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

function listTsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTsFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `./x.js` -> `x.ts` (or `x/index.ts`), as TypeScript's NodeNext resolution does; undefined for packages. */
export function resolveSpecifier(fromFile: string, specifier: string, exists: (path: string) => boolean): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find(exists) ?? base;
}

/** The imports of one file's text, as written (static, re-exports, and `import('...')` with a literal). */
export function importSpecifiers(text: string): string[] {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text); // `import('./x.js').T` in a type
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The graph of every .ts file under the given repository folders. */
export function readImportGraph(folders: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  const exists = (path: string) => existsSync(join(REPO_ROOT, path)) && statSync(join(REPO_ROOT, path)).isFile();
  for (const folder of folders) {
    for (const path of listTsFiles(join(REPO_ROOT, folder))) {
      const file = relative(REPO_ROOT, path).split('\\').join('/');
      const targets = importSpecifiers(readFileSync(path, 'utf8'))
        .map((specifier) => resolveSpecifier(file, specifier, exists))
        .filter((target): target is string => target !== undefined);
      graph.set(file, [...new Set(targets)]);
    }
  }
  return graph;
}

/** Every edge `from -> to` where `from` starts with one of `fromPrefixes` and `to` with one of `toPrefixes`. */
export function edgesBetween(graph: ImportGraph, fromPrefixes: readonly string[], toPrefixes: readonly string[]): string[] {
  const edges: string[] = [];
  for (const [from, targets] of graph) {
    if (!fromPrefixes.some((prefix) => from.startsWith(prefix))) continue;
    for (const to of targets) if (toPrefixes.some((prefix) => to.startsWith(prefix))) edges.push(`${from} -> ${to}`);
  }
  return edges;
}

/**
 * A shortest import cycle through `file` (`[file, ..., file]`), or null when none: breadth-first
 * from what `file` imports until `file` is reached again.
 */
export function cycleThrough(graph: ImportGraph, file: string): string[] | null {
  const cameFrom = new Map<string, string>();
  const queue: string[] = [];
  for (const next of graph.get(file) ?? []) {
    if (next === file) return [file, file];
    if (!cameFrom.has(next)) {
      cameFrom.set(next, file);
      queue.push(next);
    }
  }
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const next of graph.get(current) ?? []) {
      if (next === file) {
        const path = [file];
        for (let at: string | undefined = current; at !== undefined && at !== file; at = cameFrom.get(at)) path.unshift(at);
        return [file, ...path];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, current);
        queue.push(next);
      }
    }
  }
  return null;
}
