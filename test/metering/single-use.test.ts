import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemorySingleUseStore } from '../../src/metering/memory/single-use.js';
import { createSqliteSingleUseStore } from '../../src/metering/sqlite/single-use.js';
import { describeSingleUseStore } from './single-use-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'seclookup-single-use-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let current = '';

describeSingleUseStore('memory', () => createMemorySingleUseStore());
describeSingleUseStore(
  'sqlite',
  () => createSqliteSingleUseStore((current = join(dir, `tokens-${++n}.db`))),
  () => createSqliteSingleUseStore(current),
);
