import { existsSync } from 'node:fs';
import { createSqliteMeter } from '../metering/sqlite.js';
import type { Meter } from '../metering/types.js';
import { CommandError } from './errors.js';

/**
 * Open the SQLite meter at `path`. Commands that only read or change existing state pass
 * `create: false`, so a mistyped `--db` path fails clearly instead of creating an empty file.
 */
export function openMeter(path: string, { create }: { create: boolean }): Meter {
  if (!create && !existsSync(path)) {
    throw new CommandError(`no database at ${path}; pass --db FILE (or set SECLOOKUP_DB), or create one with \`seclookup serve\` or \`seclookup keys create\``);
  }
  try {
    return createSqliteMeter(path);
  } catch (error) {
    throw new CommandError(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

/** Run `work` with an open meter and always close it, so the WAL is checkpointed and released. */
export async function withMeter<T>(path: string, options: { create: boolean }, work: (meter: Meter) => Promise<T>): Promise<T> {
  const meter = openMeter(path, options);
  try {
    return await work(meter);
  } finally {
    await meter.close();
  }
}
