import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The files that take longest (seconds on the 2-core VM, summed test time), started first so the
 * workers stay busy to the end instead of one finishing a long file alone. Vitest orders by the
 * durations of its last run when it has them (node_modules/.vite); this is for a fresh clone.
 */
const SLOW_FILES: Record<string, number> = {
  'test/cli/serve.test.ts': 53,
  'test/browser/captcha-widget.test.ts': 51,
  'test/adapters/large-body.test.ts': 21,
  'test/cli/billing-follows-answers.test.ts': 21,
  'test/architecture/add-a-product.test.ts': 21,
  'test/readme.test.ts': 14,
  'test/adapters/transport-abuse.test.ts': 14,
  'test/products/captcha.test.ts': 13,
  'test/browser/captcha-risk.test.ts': 13,
  'test/cli/security.test.ts': 13,
  'test/products/riskscore.test.ts': 11,
  'test/conformance/http-conformance.test.ts': 10,
  'test/cli/allowance-billing.test.ts': 10,
  'test/fuzz/fuzz.test.ts': 10,
  'test/cli/pwbreach.test.ts': 10,
  'test/products/scamrisk-datasets.test.ts': 9,
  'test/cli/database-access.test.ts': 9,
  'test/redis/cluster.test.ts': 8,
};

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) => relative(this.ctx.config.root, spec.moduleId);
    const known = (spec: TestSpecification) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`) !== undefined;
    // The last run's durations are better than this list.
    if (sorted.every(known)) return sorted;
    const weight = (spec: TestSpecification) => SLOW_FILES[path(spec)] ?? 0;
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => weight(b.spec) - weight(a.spec) || a.index - b.index)
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
    // wait on servers and child processes as much as they compute, so one per core is faster
    // (measured on the 2-core VM; a third worker gained nothing).
    maxWorkers: availableParallelism(),
    // A worker keeps the modules it has loaded from one file to the next: importing the sources
    // afresh for each of the 150 files cost more than the tests of most of them. No test mocks
    // modules, stubs globals or changes the environment; each starts the servers it needs.
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
  },
});
