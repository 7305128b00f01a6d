/**
 * Dataset ages, from the engines: each product module's `datasetAges` says when the data its
 * engine loaded was built or published, as the data records it (an MMDB file's build time, a
 * `"generated"` field, a snapshot date), or null for data that records no date (undated).
 *
 * Never the files' modification times: a fresh clone, `data init`, a copy or an untar gives the
 * files new times while the data stays as old as it was; and after `data update` the files on
 * disk are new while a running process still answers from what it loaded at its start.
 */
import type { AnyProductModule, ProductEngine } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';

export interface DatasetAge {
  product: string;
  dataset: string;
  /** When the data was built or published, ms since the epoch; null when the data records no date. */
  builtAtMs: number | null;
  /** A release name the data carries instead of a date (`tzdata 2025b`). */
  version?: string;
}

/** Where the engines come from: a `createLookup()` (or anything with its `engine(id)`). */
export interface EngineSource {
  engine(id: string): unknown;
}

/**
 * The ages of the data each product's engine loaded, for the products whose module declares
 * `datasetAges`. Builds the engines not built yet; a product whose engine cannot be built
 * (missing data) reports nothing.
 */
export function datasetAges(lookup: EngineSource): DatasetAge[] {
  const ages: DatasetAge[] = [];
  for (const module of PRODUCT_MODULES as readonly AnyProductModule[]) {
    if (!module.datasetAges) continue;
    const engine = engineOf(lookup, module.id);
    if (engine) for (const age of agesOf(module, engine)) ages.push({ product: module.id, ...age, builtAtMs: recordedDate(age.builtAtMs) });
  }
  return ages;
}

/**
 * A recorded date, or null for none: a time at or before the epoch is the zero an MMDB writer
 * leaves in `build_epoch` when it records no build time, not a build 56 years ago.
 */
function recordedDate(builtAtMs: number | null): number | null {
  return builtAtMs === null || !Number.isFinite(builtAtMs) || builtAtMs <= 0 ? null : builtAtMs;
}

/** A module's ages of its engine's data; none when reading them fails, so one product never fails the whole scrape. */
function agesOf(module: AnyProductModule, engine: ProductEngine): ReturnType<NonNullable<AnyProductModule['datasetAges']>> {
  try {
    return module.datasetAges?.(engine) ?? [];
  } catch {
    return [];
  }
}

function engineOf(lookup: EngineSource, id: string): ProductEngine | null {
  try {
    return lookup.engine(id) as ProductEngine;
  } catch {
    return null; // not built (missing data or dependency): nothing to report
  }
}
