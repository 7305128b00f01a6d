/**
 * `instrumentMeter(meter, metrics)`: the same Meter, with every store call timed and every
 * failure (a throw or a rejection) counted by operation. Synchronous answers stay synchronous
 * (the API spends no promise or deadline on a store that answers from memory).
 */
import { performance } from 'node:perf_hooks';
import { isPromise } from '../lib/outcome.js';
import type { Meter } from '../metering/types.js';
import type { FastCounter, FastHistogram } from './fast.js';

/** The Meter operations timed, a fixed set (the `op` label). */
export const METER_OPS = [
  'resolveKey',
  'consume',
  'refund',
  'commit',
  'quota',
  'createSubscription',
  'addKeys',
  'listKeys',
  'revokeKey',
  'updateSubscription',
  'setPlan',
  'listPlans',
  'usage',
  'getSetting',
  'setSetting',
  'setSettingIfAbsent',
  'close',
] as const satisfies readonly (keyof Meter)[];

export interface MeterInstruments {
  meterDuration: FastHistogram;
  meterErrors: FastCounter;
}

export function instrumentMeter<M extends Meter>(meter: M, instruments: MeterInstruments): M {
  const { meterDuration, meterErrors } = instruments;
  // Anything else the store has (its own extras) is reached through the prototype.
  const wrapped = Object.create(meter) as M;
  for (const op of METER_OPS) {
    const original = meter[op] as (...args: unknown[]) => unknown;
    if (typeof original !== 'function') continue;
    const labels = [op] as const;
    const latency = meterDuration.child(labels);
    const done = (started: number, ok: boolean) => {
      meterDuration.observeInto(latency, (performance.now() - started) / 1000);
      if (!ok) meterErrors.inc(labels);
    };
    (wrapped as Record<string, unknown>)[op] = (...args: unknown[]) => {
      const started = performance.now();
      let answer: unknown;
      try {
        answer = original.apply(meter, args);
      } catch (error) {
        done(started, false);
        throw error;
      }
      if (isPromise(answer)) {
        return answer.then(
          (value) => {
            done(started, true);
            return value;
          },
          (error: unknown) => {
            done(started, false);
            throw error;
          },
        );
      }
      done(started, true);
      return answer;
    };
  }
  return wrapped;
}
