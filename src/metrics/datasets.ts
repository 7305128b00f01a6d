/**
 * Dataset ages, computed at scrape time: for each product folder of the data directory, each
 * data file or folder's age (now minus its newest file's modification time: `data update` and
 * `data import` write files whole, so that is when the data was last replaced), and the build
 * time geoip's and asn's MaxMind files carry in their metadata.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PRODUCT_IDS } from '../products/catalog.js';
import type { AnyProductModule, ProductEngine } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';

export interface DatasetAge {
  product: string;
  dataset: string;
  /** When the data was built or last written, ms since the epoch. */
  builtAtMs: number;
}

/** An engine's view, for the products whose data says when it was built (their module's `datasetAges`). */
export interface EngineSource {
  engine(id: string): unknown;
}

/**
 * Not datasets: documentation and licence files beside the data, build scripts, hidden and
 * temporary files, and the compiled indexes engines write next to their sources (named after
 * a hash of the data, which would make a new label value on every update).
 */
const NOT_DATA = /^(SOURCES|README|LICENSE|LICENCE|NOTICE|seclookup-|\.)|\.(md|mjs|js|ts|idx|tmp|lock)$/i;

export function datasetAges(dataDir: string | undefined, lookup: EngineSource | undefined): DatasetAge[] {
  const ages: DatasetAge[] = [];
  if (dataDir) {
    for (const product of PRODUCT_IDS) {
      const folder = join(dataDir, product);
      for (const entry of list(folder)) {
        if (NOT_DATA.test(entry)) continue;
        const newest = newestMtime(join(folder, entry));
        if (newest > 0) ages.push({ product, dataset: entry, builtAtMs: newest });
      }
    }
  }
  if (lookup) {
    for (const module of PRODUCT_MODULES as readonly AnyProductModule[]) {
      if (!module.datasetAges) continue;
      const engine = engineOf(lookup, module.id);
      if (engine) for (const age of module.datasetAges(engine)) ages.push({ product: module.id, ...age });
    }
  }
  return ages;
}

function engineOf(lookup: EngineSource, id: string): ProductEngine | null {
  try {
    return lookup.engine(id) as ProductEngine;
  } catch {
    return null; // not built (missing data or dependency): nothing to report
  }
}

function list(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The newest modification time of a file, or of the data files under a folder; 0 when none. */
function newestMtime(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of list(path)) {
    if (NOT_DATA.test(entry) || entry === 'LICENSES') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}
