import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest, in the order they start, so the two workers stay busy: measured
 * one file at a time on the 2-core VM, some wait much of their time (a browser drawing, servers
 * draining, Redis failing over: wall well over CPU) and some keep both cores busy (servers in
 * child processes: CPU over wall). Two waiting files side by side leave a core idle, so the
 * list alternates them with busy ones: the browser file at once, beside the busy files, and the
 * next waiting one when those are done. Every other file follows, in Vitest's order (the
 * durations of its last run when it has them, from node_modules/.vite). Seconds: wall, CPU.
 */
const FIRST: readonly string[] = [
  'test/browser/captcha-widget.test.ts', // 47, 28
  'test/adapters/large-body.test.ts', // 15, 23
  'test/readme.test.ts', // 11, 17
  'test/architecture/add-a-product.test.ts', // 10, 14
  'test/package.test.ts', // 8, 10
  'test/cli/serve.test.ts', // 35, 23
  'test/products/riskscore.test.ts', // 9, 11
  'test/cli/allowance-billing.test.ts', // 7, 10
  'test/cli/pwbreach.test.ts', // 8, 10
  'test/redis/cluster.test.ts', // 15, 9
  'test/products/scamrisk-datasets.test.ts', // 8, 9
  'test/fuzz/fuzz.test.ts', // 8, 9
  'test/cli/billing-follows-answers.test.ts', // 14, 9
  'test/cli/database-access.test.ts', // 7, 9
  'test/cli/doctor.test.ts', // 7, 9
  'test/browser/captcha-risk.test.ts', // 11, 6
  'test/adapters/transport-abuse.test.ts', // 12, 9
  'test/conformance/http-conformance.test.ts', // 6, 8
  'test/redis/cluster-serve.test.ts', // 9, 3
  'test/cli/serve-log-rotation.test.ts', // 13, 6
  'test/cli/connection-limit.test.ts', // 6 wall, mostly its serve children's
  'test/cli/billing-chaos.test.ts', // 6, 7
  'test/redis/cluster-conformance.test.ts', // 10, 6
  'test/products/scamrisk-update.test.ts', // 8, 7
  'test/cli/config.test.ts', // 7, 1
  'test/products/geoip-timezone-country.test.ts', // 6, 6
];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId);
    const rank = (spec: TestSpecification) => {
      const index = FIRST.indexOf(path(spec));
      return index === -1 ? FIRST.length : index;
    };
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous: the limits only matter when something hangs, and a shared, loaded 2-core machine
    // can take over 10 s to start a `serve` child (tests wait up to 30 s for its first line).
    testTimeout: 45_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker per core but one: a single worker on 2 cores. Most files
    // wait on servers, child processes and a browser as much as they compute, so one worker more
    // than the cores fills those waits: the whole suite on the 2-core VM took 300 s with 2
    // workers, 271 s with 3, 279 s with 4 (2026-11-29, quiet machine, one run each).
    maxWorkers: availableParallelism() + 1,
    // A worker keeps the modules it has loaded from one file to the next: importing the sources
    // afresh for each of the 150 files cost more than the tests of most of them. No test mocks
    // modules, stubs globals or changes the environment; each starts the servers it needs.
    isolate: false,
    // The workers allocate fast (servers, property tests, datasets) and V8's young generation
    // (16 MB a semi-space) made them scavenge often: 8% of their CPU in a profile of the suite.
    // At 64 MB, six of the heaviest files took 66-68 CPU-s against 70-75 (two runs each).
    execArgv: ['--max-semi-space-size=64'],
    sequence: { sequencer: SlowFirstSequencer },
  },
});
