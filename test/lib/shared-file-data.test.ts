/**
 * sharedFileData: one value per set of unchanged files in a process, built again when a file is
 * replaced, edited, added to a folder, or was missing.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedFileData } from '../../src/lib/shared-file-data.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { loadPhishingLists } from '../../src/products/domainrep/data.js';
import { loadEmailLists } from '../../src/products/emailval/engine.js';
import { loadSampleStore, SAMPLE_FILE } from '../../src/products/pwbreach/engine.js';
import { loadScamLists } from '../../src/products/scamrisk/lists.js';

describe('sharedFileData', () => {
  let dir: string;
  let builds: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'seclookup-shared-'));
    builds = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = () => join(dir, 'list.txt');
  const load = (kind = 'test-list', paths = [file()]) =>
    sharedFileData(kind, paths, () => {
      builds++;
      return { lines: paths.map((path) => path) };
    });

  it('builds once for unchanged files, again for another kind', () => {
    writeFileSync(file(), 'a\n');
    const first = load();
    expect(load()).toBe(first);
    expect(builds).toBe(1);
    expect(load('another-list')).not.toBe(first);
    expect(builds).toBe(2);
  });

  it('builds again when a file is replaced by rename (data update), edited in place, or appears', () => {
    writeFileSync(file(), 'a\n');
    const first = load();
    writeFileSync(join(dir, 'new.txt'), 'a\n');
    renameSync(join(dir, 'new.txt'), file()); // same size, new inode
    const replaced = load();
    expect(replaced).not.toBe(first);
    utimesSync(file(), new Date(), new Date(Date.now() + 5000)); // same inode, new mtime
    const edited = load();
    expect(edited).not.toBe(replaced);
    const missing = join(dir, 'optional.txt');
    const without = load('with-optional', [file(), missing]);
    writeFileSync(missing, 'b\n');
    expect(load('with-optional', [file(), missing])).not.toBe(without);
    expect(builds).toBe(5);
  });

  it('builds again when a folder among the paths gets another entry', () => {
    writeFileSync(file(), 'a\n');
    const first = load('folder', [dir]);
    expect(load('folder', [dir])).toBe(first);
    writeFileSync(join(dir, 'added.txt'), 'b\n');
    utimesSync(dir, new Date(), new Date(Date.now() + 5000)); // a folder's mtime has the file system's granularity
    expect(load('folder', [dir])).not.toBe(first);
  });

  it('keeps nothing when the build throws', () => {
    const failing = () =>
      sharedFileData('failing', [file()], () => {
        builds++;
        throw new Error('unreadable');
      });
    expect(failing).toThrow('unreadable');
    expect(failing).toThrow('unreadable');
    expect(builds).toBe(2);
  });
});

describe('product data shared by the engines of one process', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'seclookup-shared-data-'));
    for (const folder of ['scamrisk', 'phishing', 'emailval', 'pwbreach']) cpSync(join(bundledDataDir(), folder), join(dataDir, folder), { recursive: true });
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('are read once while unchanged, and again when a file is added or replaced', () => {
    const lists = loadScamLists(dataDir);
    expect(loadScamLists(dataDir)).toBe(lists);
    expect(loadPhishingLists(dataDir)).toBe(loadPhishingLists(dataDir));
    expect(loadEmailLists(dataDir)).toBe(loadEmailLists(dataDir));

    // `data update scamrisk` writing a new asset's OFAC list: the next engine sees it.
    const address = '0x1111111111111111111111111111111111111111';
    expect(lists.sanctioned(address)).toEqual([]);
    writeFileSync(join(dataDir, 'scamrisk', 'ofac', 'sanctioned_addresses_ZZZ.txt'), `${address}\n`);
    utimesSync(join(dataDir, 'scamrisk', 'ofac'), new Date(), new Date(Date.now() + 5000));
    expect(loadScamLists(dataDir).sanctioned(address)).toEqual(['ZZZ']);

    // A disposable-domain list replaced by rename: the next engine reads the new one.
    const disposable = join(dataDir, 'emailval', 'disposable-domains.txt');
    writeFileSync(`${disposable}.new`, 'only-this-one.example\n');
    renameSync(`${disposable}.new`, disposable);
    const emailLists = loadEmailLists(dataDir);
    expect(emailLists.disposable.matches('only-this-one.example')).toBe(true);
    expect(emailLists.disposable.size).toBe(1);

    // The breach sample, compiled and opened once: engines share the store; a new sample is read again.
    const sample = loadSampleStore(dataDir);
    expect(loadSampleStore(dataDir)).toBe(sample);
    const password = createHash('sha1').update('only-this-one').digest();
    expect(sample.count(password)).toBe(0);
    writeFileSync(join(dataDir, `${SAMPLE_FILE}.new`), `${password.toString('hex').toUpperCase()}:7\n`);
    renameSync(join(dataDir, `${SAMPLE_FILE}.new`), join(dataDir, SAMPLE_FILE));
    const replaced = loadSampleStore(dataDir);
    expect([replaced.records, replaced.count(password), sample.records > 1000]).toEqual([1, 7, true]);
  });
});
