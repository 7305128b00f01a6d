/** What the SQLite meter's test files share: a fresh database file per test, and a key's consume request. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createSqliteMeter } from '../../src/metering/sqlite/meter.js';
import type { Meter } from '../../src/metering/types.js';
import { T0 } from './conformance/index.js';

export { requestFor } from './conformance/index.js';

/**
 * A fresh file per test (`path`, in its own `dir`), made before each test and removed after it
 * with every meter `open` opened on it. Call it inside a `describe`.
 */
export function sqliteMeterFile(prefix: string) {
  let dir = '';
  let path = '';
  const opened: Meter[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    path = join(dir, 'meter.db');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((meter) => meter.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get path() {
      return path;
    },
    /** A meter on the test's file, its usage() clock at T0 like the calls; closed after the test. */
    open(options?: Parameters<typeof createSqliteMeter>[1]): Meter {
      const meter = createSqliteMeter(path, { now: () => T0, ...options });
      opened.push(meter);
      return meter;
    },
  };
}
