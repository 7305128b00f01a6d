/**
 * serve holds one `process.nextTick` queue entry so that V8's memory reducer cannot let the
 * entries' hidden class die and leave nextTick deoptimized (src/cli/tick-shape.ts).
 *
 * The child processes below show the mechanism on this Node: nextTick optimized, no entry alive,
 * then a memory-reducing collection (a heap snapshot starts one, as the memory reducer does).
 * Without an entry held, V8 throws nextTick's optimized code away; with one held, it keeps it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { heldTickEntry } from '../../src/cli/tick-shape.js';
import { REPO_ROOT, createTempDirs } from './harness.js';
import { running, startServe } from './serve-process.js';

const temp = createTempDirs();
afterEach(async () => {
  for (const serve of running) await serve.stop('SIGKILL');
});
afterAll(() => temp.cleanup());

const CHILD = `
import { writeHeapSnapshot } from 'node:v8';
import { holdTickEntryShape } from ${JSON.stringify(join(REPO_ROOT, 'src/cli/tick-shape.ts'))};
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const optimizeOnNextCall = new Function('f', '%PrepareFunctionForOptimization(f); %OptimizeFunctionOnNextCall(f)');
const TURBOFANNED = 1 << 6;
const turn = () => new Promise((resolve) => setImmediate(resolve));
if (process.env.HOLD === '1') { holdTickEntryShape(); await turn(); }
const noop = () => {};
for (let i = 0; i < 20; i++) { for (let j = 0; j < 100; j++) process.nextTick(noop); await turn(); }
optimizeOnNextCall(process.nextTick);
process.nextTick(noop);
await turn();
const before = (status(process.nextTick) & TURBOFANNED) !== 0;
writeHeapSnapshot(${JSON.stringify(join(temp.make(), 'heap.heapsnapshot'))});
const after = (status(process.nextTick) & TURBOFANNED) !== 0;
console.log(JSON.stringify({ before, after }));
`;

function nextTickAcrossMemoryReducingGc(hold: boolean): { before: boolean; after: boolean } {
  const child = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--no-concurrent-recompilation', '--import', 'tsx', '--input-type=module', '-e', CHILD],
    { cwd: REPO_ROOT, env: { ...process.env, HOLD: hold ? '1' : '0' }, encoding: 'utf8', timeout: 60_000 },
  );
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout);
}

describe('the nextTick entry serve holds', () => {
  it('keeps process.nextTick optimized through a memory-reducing collection, which deoptimizes it otherwise', () => {
    expect(nextTickAcrossMemoryReducingGc(false)).toEqual({ before: true, after: false });
    expect(nextTickAcrossMemoryReducingGc(true)).toEqual({ before: true, after: true });
  });

  it('is held by serve, and is a real entry of Node', async () => {
    await startServe(join(temp.make(), 'serve.db'));
    const entry = heldTickEntry() as { callback?: unknown };
    expect(typeof entry.callback).toBe('function');
    // Node keys each entry's async ids by symbols: the literal whose shape is kept.
    expect(Object.getOwnPropertySymbols(entry).map(String)).toEqual(expect.arrayContaining(['Symbol(async_id_symbol)', 'Symbol(trigger_async_id_symbol)']));
  });
});
