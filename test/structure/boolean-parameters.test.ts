/**
 * Named option objects where booleans pile up: no function in src/ (or adapters/) declares two
 * or more boolean parameters, so no call site reads `f(x, true, y, false)`. Checked on the
 * syntax (parameters typed `boolean` or defaulting to a boolean literal), file by file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function isBooleanParameter(parameter: ts.ParameterDeclaration): boolean {
  if (parameter.type) return parameter.type.kind === ts.SyntaxKind.BooleanKeyword;
  const init = parameter.initializer;
  return init?.kind === ts.SyntaxKind.TrueKeyword || init?.kind === ts.SyntaxKind.FalseKeyword;
}

/** `file:line name(...)` for every function-like node with two or more boolean parameters. */
function functionsWithBooleanPairs(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && node.parameters.filter(isBooleanParameter).length >= 2) {
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(`${relative(ROOT, file)}:${line} ${name}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('named option objects', () => {
  it('the check finds what it looks for', () => {
    const text =
      'function admit(a: string, reserve: boolean, h: object, lenient: boolean) {}\nconst f = (x = true, y = false) => 0;\nfunction ok(one: boolean, o: { two: boolean }) {}';
    expect(functionsWithBooleanPairs(join(ROOT, 'x.ts'), text)).toEqual(['x.ts:1 admit', 'x.ts:2 (anonymous)']);
  });

  it('no function in src/ or adapters/ takes two or more boolean parameters', () => {
    const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'adapters'))];
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => functionsWithBooleanPairs(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });
});
