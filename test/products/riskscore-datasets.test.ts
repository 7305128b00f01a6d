/**
 * riskscore's list files are input too: an emptied list or a snapshots.json of another shape is
 * refused, naming the file; a missing or broken list fails the engine's build (so `serve` stops
 * at start and `doctor` says fail), and no client ever reads the server's paths.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { NO_PROVIDER } from '../../src/products/riskscore/engine.js';
import { loadLocalData } from '../../src/products/riskscore/local.js';
import { createApiStack } from '../api/harness.js';
import { thrown } from '../thrown.js';

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

describe('a riskscore dataset the local provider needs', () => {
  it('missing (riskscore/tor deleted): the build fails naming the file, for engine() and load() alike', () => {
    const dir = dataDir();
    rmSync(join(dir, 'riskscore', 'tor'), { recursive: true });
    const path = join(dir, 'riskscore', 'tor', 'tor-exits.csv');
    const lookup = createLookup({ dataDir: dir });
    const error = thrown(() => lookup.engine('riskscore'));
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect(error.message).toContain(`riskscore dataset ${path} is missing`);
    // What serve (and doctor) build at start: the failure is there, before any port opens.
    const loaded = thrown(() => createLookup({ dataDir: dir }).load());
    expect(isSeclookupError(loaded, 'dataset_missing')).toBe(true);
    expect(loaded.message).toContain(`riskscore: riskscore dataset ${path} is missing`);
  });

  it('broken (a list that does not read): the build fails naming the file', () => {
    const dir = dataDir();
    const path = join(dir, 'riskscore', 'tor', 'tor-exits.csv');
    writeFileSync(path, 'this is not, a tor exit list\n');
    const error = thrown(() => createLookup({ dataDir: dir }).engine('riskscore'));
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect(error.message).toContain(path);
  });

  it('a client never reads the path: an engine built on first request answers 500, the detail goes to onError', async () => {
    const dir = dataDir();
    rmSync(join(dir, 'riskscore', 'tor'), { recursive: true });
    const stack = await createApiStack({ lookup: createLookup({ dataDir: dir }) });
    const keys = await stack.keys('riskscore');
    const reply = await stack.call('/v1/riskscore/lookup?ip=8.8.8.8', { key: keys.secretKey });
    expect(reply.status).toBe(500);
    expect(reply.body.error_code).toBe('internal_error');
    expect(reply.raw).not.toContain(dir);
    expect(reply.raw).not.toContain('tor-exits');
    expect(stack.errors.map(({ error }) => (error as Error).message).join('\n')).toContain(join(dir, 'riskscore', 'tor', 'tor-exits.csv'));
  });

  it('not needed with an upstream provider (the local data is not read) nor with local: false (503 without a path)', async () => {
    const dir = dataDir();
    rmSync(join(dir, 'riskscore'), { recursive: true });
    const upstream = createLookup({ dataDir: dir, riskscore: { provider: 'ipinfo', key: 'k', url: 'http://127.0.0.1:1/ipinfo' } });
    upstream.load('riskscore');
    expect(upstream.engine('riskscore')).toMatchObject({ provider: 'ipinfo', local: null, databaseRecords: 0 });

    const off = createLookup({ dataDir: dir, riskscore: { local: false } });
    off.load('riskscore');
    const stack = await createApiStack({ lookup: off });
    const keys = await stack.keys('riskscore');
    const reply = await stack.call('/v1/riskscore/lookup?ip=8.8.8.8', { key: keys.secretKey });
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ error_code: 'upstream_unconfigured', error: NO_PROVIDER });
    expect(reply.raw).not.toContain(dir);
  });
});
