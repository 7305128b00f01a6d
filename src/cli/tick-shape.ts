/**
 * Keeps one entry of Node's `process.nextTick` queue alive for as long as serve runs.
 *
 * Node makes each entry as an object literal with computed (symbol) keys, so V8 keeps its
 * hidden class (map) only while some entry is alive. Between bursts of traffic none is, and a
 * memory-reducing collection (V8's memory reducer: when the process goes idle, or at the latest
 * 100 s after the last full collection) then lets that map die. V8 deoptimizes
 * `process.nextTick` and everything built on the dead map, and the code it makes again stays
 * slow: with one route loaded in bursts, nextTick's own time went from 0.2 to 2.9 µs per
 * request for the rest of the process's life (docs/benchmarks.md, "Idle gaps and V8's memory
 * reducer").
 *
 * One entry held keeps the map, for the price of one small object. It is taken from inside a
 * tick callback with `executionAsyncResource()`, which turns on no async hooks.
 */
import { executionAsyncResource } from 'node:async_hooks';

let asked = false;
let held: object | undefined;

/** Hold a nextTick queue entry from the next tick on (once per process; later calls do nothing). */
export function holdTickEntryShape(): void {
  if (asked) return;
  asked = true;
  process.nextTick(() => {
    held = executionAsyncResource();
  });
}

/** The entry held, once the tick ran (for the test that checks it is Node's own entry). */
export function heldTickEntry(): object | undefined {
  return held;
}
