/**
 * `npm test` starts with scripts/pretest.mjs: the build, the type-check and the lint, side by
 * side. A step that fails must fail the whole, by name, with its output, however the others end.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without declarations
import { runSteps } from '../scripts/pretest.mjs';

type Step = { name: string; command: string[] };
const node = (code: string): string[] => [process.execPath, '-e', code];

async function outcome(steps: Step[]): Promise<{ failed: string[]; printed: string }> {
  let printed = '';
  const failed = await (runSteps as (steps: Step[], out: { write(text: string | Buffer): void }) => Promise<string[]>)(steps, {
    write: (text) => {
      printed += String(text);
    },
  });
  return { failed, printed };
}

describe('scripts/pretest.mjs', () => {
  it('passes when every step passes, printing each one once', async () => {
    const { failed, printed } = await outcome([
      { name: 'one', command: node('console.log("built")') },
      { name: 'two', command: node('') },
    ]);
    expect(failed).toEqual([]);
    expect(printed).toMatch(/^> one: ok after [\d.]+ s\nbuilt$/m);
    expect(printed).toMatch(/^> two: ok after [\d.]+ s$/m);
  });

  it('names each failed step, with its exit code and output, while the others still run to their end', async () => {
    const { failed, printed } = await outcome([
      { name: 'type-check', command: node('console.error("error TS2322"); process.exit(2)') },
      { name: 'slow build', command: node('setTimeout(() => console.log("declarations written"), 300)') },
      { name: 'killed', command: node('process.kill(process.pid, "SIGKILL")') },
      { name: 'missing', command: ['/nonexistent/tool'] },
    ]);
    expect(failed.sort()).toEqual(['killed', 'missing', 'type-check']);
    expect(printed).toMatch(/^> type-check: failed \(exit 2\) after [\d.]+ s\nerror TS2322\n/m);
    expect(printed).toMatch(/^> slow build: ok after [\d.]+ s\ndeclarations written\n/m);
    expect(printed).toContain('> killed: failed (exit 1)');
    expect(printed).toMatch(/> missing: failed \(exit 1\)[^\n]*\n[^\n]*ENOENT/);
  });
});
