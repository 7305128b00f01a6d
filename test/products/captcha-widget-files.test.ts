/**
 * Static checks on the captcha widget's files (src/products/captcha/widget/): what a strict
 * CSP and old browsers need (no inline code or style, no eval, ES2019 syntax), the cache-busting
 * placeholder the server fills in, the four languages, and WCAG AA colour contrast in both
 * themes. The behaviour itself is tested in a real browser (test/browser/captcha-widget.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const DIR = new URL('../../src/products/captcha/widget/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, DIR), 'utf8');
const JS = ['api.js', 'frame.js', 'worker.js'];

/** Syntax newer than ES2019 that TypeScript's parser accepts but older browsers do not. */
function post2019(name: string, code: string): string[] {
  const found: string[] = [];
  const file = ts.createSourceFile(name, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const at = (node: ts.Node) => `${name}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const newer = new Set([
    ts.SyntaxKind.QuestionQuestionToken,
    ts.SyntaxKind.QuestionQuestionEqualsToken,
    ts.SyntaxKind.BarBarEqualsToken,
    ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ]);
  const visit = (node: ts.Node): void => {
    if ((ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node) || ts.isCallExpression(node)) && node.questionDotToken)
      found.push(`${at(node)} ?.`);
    if (ts.isBinaryExpression(node) && newer.has(node.operatorToken.kind)) found.push(`${at(node)} ${node.operatorToken.getText()}`);
    if (ts.isPrivateIdentifier(node) || ts.isBigIntLiteral(node) || ts.isClassStaticBlockDeclaration(node)) found.push(`${at(node)} ${node.getText()}`);
    if (ts.isNumericLiteral(node) && node.getText().includes('_')) found.push(`${at(node)} numeric separator`);
    if (ts.isMetaProperty(node) || node.kind === ts.SyntaxKind.ImportKeyword || node.kind === ts.SyntaxKind.ExportKeyword)
      found.push(`${at(node)} module syntax`);
    if (ts.isPropertyAccessExpression(node) && ['replaceAll', 'at', 'hasOwn', 'any', 'allSettled'].includes(node.name.text))
      found.push(`${at(node)} .${node.name.text}`);
    ts.forEachChild(node, visit);
  };
  visit(file);
  if ((file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length) found.push(`${name}: syntax error`);
  return found;
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
function variables(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/--(\w+):(#[0-9a-f]{6})/g)].map((m) => [m[1], m[2]]));
}

describe('captcha widget files', () => {
  it('holds exactly the files the server serves (.js, .css, .html)', () => {
    expect(readdirSync(DIR).sort()).toEqual(['api.js', 'frame.html', 'frame.js', 'widget.css', 'worker.js']);
  });

  it('frame.html runs under its strict CSP: scripts and styles from files only, no inline code or style', () => {
    const html = read('frame.html');
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/javascript:/i);
    for (const tag of html.match(/<script[^>]*>[\s\S]*?<\/script>/gi) ?? [])
      expect(tag).toMatch(/^<script src="[a-z.]+\?v=__WIDGET_VERSION__"[^>]*><\/script>$/);
    expect(html).toMatch(/<script src="frame\.js\?v=__WIDGET_VERSION__"/);
    expect(html).toMatch(/<link rel="stylesheet" href="widget\.css\?v=__WIDGET_VERSION__">/);
  });

  it('the scripts never eval, never write inline styles or HTML, and stay ES2019', () => {
    for (const name of JS) {
      const code = read(name);
      expect(code, name).not.toMatch(
        /\beval\s*\(|new Function|setTimeout\(\s*['"`]|innerHTML|outerHTML|insertAdjacentHTML|document\.write|cssText|setAttribute\(\s*['"]style|createElement\(\s*['"]style/,
      );
      expect(post2019(name, code), name).toEqual([]);
      expect(code.startsWith('/*'), `${name} starts with its comment`).toBe(true);
    }
  });

  it('api.js carries the version placeholder into the frame URL; frame.js into the worker URL', () => {
    const api = read('api.js');
    expect(api).toContain("var VERSION = '__WIDGET_VERSION__';");
    expect(api).toMatch(/\/widget\/frame\.html\?v=' \+ encodeURIComponent\(VERSION\)/);
    expect(read('frame.js')).toMatch(/new Worker\('worker\.js\?v=' \+ V\)/);
  });

  it('speaks en, fr, de and es, each with every message', () => {
    const code = read('frame.js');
    const literal = code.slice(code.indexOf('var I18N = '), code.indexOf('var ERRORS = '));
    const context = vm.createContext({});
    vm.runInContext(literal, context);
    const i18n = (context as { I18N: Record<string, Record<string, string>> }).I18N;
    expect(Object.keys(i18n).sort()).toEqual(['de', 'en', 'es', 'fr']);
    for (const [lang, strings] of Object.entries(i18n)) {
      expect(Object.keys(strings).sort(), lang).toEqual(Object.keys(i18n.en).sort());
      for (const [key, text] of Object.entries(strings)) {
        expect(text.trim().length, `${lang}.${key}`).toBeGreaterThan(0);
        for (const slot of ['{n}', '{code}']) expect(text.includes(slot), `${lang}.${key} ${slot}`).toBe(i18n.en[key].includes(slot));
      }
    }
    // The loader's iframe titles cover the same languages.
    expect(read('api.js')).toMatch(/TITLES = \{ en: '[^']+', fr: '[^']+', de: '[^']+', es: '[^']+' \}/);
  });

  it('meets WCAG AA contrast in the light and the dark theme, and auto follows dark exactly', () => {
    const css = read('widget.css');
    const light = variables(css.match(/:root\{([^}]*)\}/)![1]);
    const dark = variables(css.match(/\n\.dark\{([^}]*)\}/)![1]);
    const auto = variables(css.match(/\.auto\{([^}]*)\}/)![1]);
    expect(auto).toEqual(dark);
    for (const [theme, c] of Object.entries({ light, dark })) {
      // Text (4.5:1): body text, secondary text, success and error messages, on the background.
      for (const fg of ['fg', 'mu', 'ok', 'er']) expect(contrast(c[fg], c.bg), `${theme} ${fg} on bg`).toBeGreaterThanOrEqual(4.5);
      // Non-text (3:1): the checkbox border, the focus ring, the tick, the progress bar on the
      // track, the piece and the slot outline on the track, the track edge against the page.
      for (const [fg, bg] of [
        ['bd', 'bg'],
        ['ac', 'bg'],
        ['ok', 'bg'],
        ['ac', 'tr'],
        ['pc', 'tr'],
        ['fg', 'tr'],
      ]) {
        expect(contrast(c[fg], c[bg]), `${theme} ${fg} on ${bg}`).toBeGreaterThanOrEqual(3);
      }
      expect(contrast(c.fg, c.tr), `${theme} text on track`).toBeGreaterThanOrEqual(4.5);
    }
  });
});
