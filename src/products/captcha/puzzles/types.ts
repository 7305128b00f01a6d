/** What every puzzle type provides: fresh parameters, and the check of a solution against them. */

/** One pointer sample while dragging: px from the drag start, ms from the drag start; `k` marks a key press. */
export interface TracePoint {
  x: number;
  y: number;
  t: number;
  k?: number;
}

export interface Puzzle<Params extends object> {
  type: string;
  /** New parameters for a challenge (random where they must be). */
  create(): Params;
  /** `JSON.stringify(params)`, the same text, written without walking the object (one per challenge issued). */
  json(params: Params): string;
  /** Null when the solution (and trace, where the type needs one) passes; else why not (for the error message). */
  check(params: Params, solution: string, trace: readonly TracePoint[] | null): string | null;
  /** Parameters read back from a signed challenge (they were made by `create`, so only their shape is checked). */
  readParams(value: unknown): Params | null;
}
