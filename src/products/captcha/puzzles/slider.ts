/**
 * Slider: drag a piece along a track until it sits on a notch. The position alone is easy for
 * a script; the pointer path (`trace`) is what is checked for human plausibility:
 * - 10 to 2,000 points, times never going back, 250 ms to 60 s from first to last;
 * - the path ends where the solution says (within 2 px);
 * - not a ruler: a path with no vertical jitter at all AND an even pace is refused;
 * - slowing down near the target: the pace over the last fifth of the way is below the pace
 *   over the middle three fifths, as a hand homing in on a mark does.
 * Keyboard users move the piece with arrow keys: a trace of key presses (`k: 1` on every point)
 * needs at least 3 presses over at least 300 ms and is not held to the pointer rules.
 */
import { randomInt } from 'node:crypto';
import type { Puzzle, TracePoint } from './types.js';

export interface SliderParams {
  /** Track length in px. */
  width: number;
  /** Piece width in px. */
  piece: number;
  /** Where the piece's left edge must end, px from the start. */
  target: number;
  /** How far off the end may be, px. */
  tolerance: number;
}

export const SLIDER_DEFAULTS = { width: 300, piece: 44, tolerance: 6 } as const;
const MAX_POINTS = 2_000;

export function createSliderPuzzle(): Puzzle<SliderParams> {
  const { width, piece, tolerance } = SLIDER_DEFAULTS;
  return {
    type: 'slider',
    create: () => ({ width, piece, target: randomInt(70, width - piece - 9), tolerance }),
    json: (p) => `{"width":${p.width},"piece":${p.piece},"target":${p.target},"tolerance":${p.tolerance}}`,
    readParams(value) {
      const p = value as Partial<SliderParams> | null;
      if (!p || ![p.width, p.piece, p.target, p.tolerance].every((n) => Number.isSafeInteger(n))) return null;
      return p as SliderParams;
    },
    check(params, solution, trace) {
      if (!/^-?\d{1,4}$/.test(solution)) return 'the solution is not a position';
      const end = Number(solution);
      if (Math.abs(end - params.target) > params.tolerance) return 'the piece is not on the target';
      return checkTrace(trace, end, params);
    },
  };
}

/** Null when the trace looks like a person moving the piece to `end`; else the reason. */
export function checkTrace(trace: readonly TracePoint[] | null, end: number, params: SliderParams): string | null {
  if (!Array.isArray(trace) || trace.length === 0) return 'a slider needs the trace of the drag';
  if (trace.length > MAX_POINTS) return `the trace has more than ${MAX_POINTS} points`;
  for (const p of trace) {
    if (typeof p !== 'object' || p === null || ![p.x, p.y, p.t].every((n) => typeof n === 'number' && Number.isFinite(n)))
      return 'trace points need numeric x, y and t';
    if (p.x < -20 || p.x > params.width + 20 || Math.abs(p.y) > 500) return 'a trace point is off the track';
  }
  for (let i = 1; i < trace.length; i++) if (trace[i].t < trace[i - 1].t) return 'the trace goes back in time';
  const last = trace[trace.length - 1];
  if (Math.abs(last.x - end) > 2) return 'the trace does not end at the solution';
  const duration = last.t - trace[0].t;

  if (trace.every((p) => p.k === 1)) {
    if (trace.length < 3 || duration < 300) return 'too few or too fast key presses';
    return null;
  }

  if (trace.length < 10) return 'the trace has too few points';
  if (duration < 250) return 'the drag was too fast for a person';
  if (duration > 60_000) return 'the drag took over a minute';

  const ys = trace.map((p) => p.y);
  const flat = Math.max(...ys) - Math.min(...ys) < 0.5;
  if (flat && evenPace(trace)) return 'the path is ruler-straight at an even pace';

  const start = trace[0].x;
  const distance = last.x - start;
  if (distance < 20) return 'the piece barely moved';
  const middle = pace(trace, start + 0.2 * distance, start + 0.8 * distance);
  const final = pace(trace, start + 0.8 * distance, Infinity);
  if (middle === null || final === null) return 'the trace has too few points along the way';
  if (final >= middle) return 'no slowing down near the target';
  return null;
}

/** Mean speed (px/ms) over the steps that begin between `from` and `to`. */
function pace(trace: readonly TracePoint[], from: number, to: number): number | null {
  let dx = 0;
  let dt = 0;
  for (let i = 1; i < trace.length; i++) {
    const a = trace[i - 1];
    if (a.x < from || a.x >= to) continue;
    dx += Math.abs(trace[i].x - a.x);
    dt += trace[i].t - a.t;
  }
  return dt > 0 ? dx / dt : null;
}

/** Are the step speeds nearly all the same (coefficient of variation under 5%)? */
function evenPace(trace: readonly TracePoint[]): boolean {
  const speeds: number[] = [];
  for (let i = 1; i < trace.length; i++) {
    const dt = trace[i].t - trace[i - 1].t;
    if (dt > 0) speeds.push((trace[i].x - trace[i - 1].x) / dt);
  }
  if (speeds.length < 2) return true;
  const mean = speeds.reduce((a, b) => a + b, 0) / speeds.length;
  const variance = speeds.reduce((a, b) => a + (b - mean) ** 2, 0) / speeds.length;
  return mean === 0 || Math.sqrt(variance) / Math.abs(mean) < 0.05;
}
