/** riskscore's list files are input too: an emptied list or a snapshots.json of another shape is refused, naming the file. */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { loadLocalData } from '../../src/products/riskscore/local.js';

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-riskscore-shape-'));
  made.push(dir);
  cpSync(join(bundledDataDir(), 'riskscore'), join(dir, 'riskscore'), { recursive: true, filter: (path) => !path.endsWith('.idx') });
  return dir;
}

describe('riskscore list files', () => {
  it('an emptied list (the Tor exits) is refused: the Tor flag would never be set', () => {
    const dir = dataDir();
    const path = join(dir, 'riskscore', 'tor', 'tor-exits.csv');
    writeFileSync(path, '');
    expect(() => loadLocalData(dir)).toThrow(
      expect.objectContaining({ code: 'dataset_invalid', message: `seclookup: riskscore dataset ${path} lists no entries` }),
    );
  });

  it.each([['[]'], ['{"tor": 5}'], ['"2026-01-01"']])('snapshots.json %s is refused', (content) => {
    const dir = dataDir();
    const path = join(dir, 'riskscore', 'snapshots.json');
    writeFileSync(path, content);
    expect(() => loadLocalData(dir)).toThrow(`seclookup: ${path} must be a JSON object of group -> date strings`);
  });
});
