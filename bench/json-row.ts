/**
 * The ready-JSON row of an engine bench: what the API sends for a lookup (the answer's JSON)
 * made from the engine's ready JSON (LookupOutcome `json`), against the same lookup with
 * `JSON.stringify(result)`, which is what the envelope did for these products before. The
 * baseline still runs the engine's JSON step too (it is part of `lookup`), so the ratio is a
 * floor of the gain.
 */
import { compare, ratioRow, type BenchRow, type MeasureOptions } from './harness.js';

interface Outcome {
  result: object;
  json?: string;
}

export function readyJsonRow(suite: string, workload: string, lookup: (i: number) => Outcome, options: MeasureOptions, minRatio = 1.5): BenchRow {
  const versus = compare(
    (i) => {
      const outcome = lookup(i);
      return outcome.json ?? JSON.stringify(outcome.result);
    },
    (i) => JSON.stringify(lookup(i).result),
    3,
    options,
  );
  return ratioRow(
    {
      suite,
      case: `answer JSON (what the API sends): ${workload}`,
      baseline: 'the same lookups + JSON.stringify(result) (the envelope before ready JSON)',
      opsPerSec: versus.candidate,
      baselineOpsPerSec: versus.baseline,
      target: `>= ${minRatio.toFixed(2)}x`,
    },
    minRatio,
  );
}
