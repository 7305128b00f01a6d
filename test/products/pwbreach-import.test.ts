/**
 * The pwbreach importer: both input formats (one HASH:COUNT file; per-prefix SUFFIX:COUNT files
 * or their folder), sorted and unsorted input giving the same store, duplicates, padding, line
 * endings, corrupt lines (refused or skipped, reported by line number), atomic replacement and
 * idempotent re-runs, and a generated file of two million lines.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { parseSha1Hex } from '../../src/products/pwbreach/hash.js';
import { ImportRefused, importBreachFiles, LineReader, MAX_LINE_BYTES, type ImportOptions } from '../../src/products/pwbreach/import.js';
import { openStoreFile, RECORD_BYTES, RECORDS_OFFSET } from '../../src/products/pwbreach/store.js';
import { writeHashFile } from '../../src/products/pwbreach/testdata.js';

const SAMPLE = join(bundledDataDir(), 'pwbreach', 'pwned-sample.txt');
const sampleLines = readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean);
const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();

const root = mkdtempSync(join(tmpdir(), 'seclookup-pwbreach-import-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const dir = () => {
  const made = join(root, `case-${++counter}`);
  mkdirSync(made);
  return made;
};

/**
 * The store's hashes and counts as `HASH:COUNT` lines, read through the ranges of the prefixes
 * of `expected` (with a check that the store holds no other hash): equal to `expected` when
 * the store holds exactly those lines.
 */
function dump(path: string, expected: string[]): string[] {
  const store = openStoreFile(path);
  try {
    const out: string[] = [];
    for (const head of [...new Set(expected.map((line) => line.slice(0, 5)))].sort()) {
      for (const line of store.range(parseInt(head, 16)).lines()) out.push(head + line);
    }
    expect(store.records).toBe(out.length);
    return out;
  } finally {
    store.close();
  }
}

function countOf(path: string, hash: string): number {
  const store = openStoreFile(path);
  try {
    return store.count(parseSha1Hex(hash)!);
  } finally {
    store.close();
  }
}

async function refused(paths: string[], options: ImportOptions): Promise<ImportRefused> {
  const error = await importBreachFiles(paths, options).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportRefused);
  return error as ImportRefused;
}

/** The sample split the way the official downloader writes it: a file per prefix, SUFFIX:COUNT. */
function splitByPrefix(into: string, lines: string[], name = (prefix: string) => `${prefix}.txt`, eol = '\r\n'): void {
  const byPrefix = new Map<string, string[]>();
  for (const line of lines) {
    const prefix = line.slice(0, 5);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), line.slice(5)]);
  }
  for (const [prefix, suffixes] of byPrefix) writeFileSync(join(into, name(prefix)), suffixes.join(eol));
}

describe('pwbreach import: formats', () => {
  it('imports the HASH:COUNT sample, sorted, in one pass', async () => {
    const out = join(dir(), 'passwords.pwb');
    const report = await importBreachFiles([SAMPLE], { out });
    expect(report).toMatchObject({ files: 1, lines: sampleLines.length, hashes: sampleLines.length, duplicates: 0, corrupt: 0, sorted: true, out });
    expect(report.storeBytes).toBe(RECORDS_OFFSET + sampleLines.length * RECORD_BYTES);
    expect(dump(out, sampleLines)).toEqual(sampleLines);
    expect(countOf(out, sha1('123456'))).toBe(Number(sampleLines.find((l) => l.startsWith(sha1('123456')))!.split(':')[1]));
  });

  it('imports a folder of per-prefix SUFFIX:COUNT files (CRLF, no final newline) to the same store', async () => {
    // A tenth of the sample: creating thousands of small files is slow on some file systems.
    const lines = sampleLines.filter((_, i) => i % 10 === 0);
    const folder = dir();
    splitByPrefix(folder, lines);
    writeFileSync(join(folder, 'README.md'), 'not a range');
    mkdirSync(join(folder, 'nested'));
    const out = join(dir(), 'passwords.pwb');
    // A tenth of the prefixes: a partial folder, imported only when allowed.
    const report = await importBreachFiles([folder], { out, allowPartial: true });
    expect(report).toMatchObject({ hashes: lines.length, corrupt: 0, sorted: true });
    expect(report.ignored.map((p) => p.slice(folder.length + 1)).sort()).toEqual(['README.md', 'nested']);
    const single = join(dir(), 'hashes.txt');
    writeFileSync(single, lines.join('\n'));
    const fromSingle = join(dir(), 'passwords.pwb');
    await importBreachFiles([single], { out: fromSingle });
    expect(readFileSync(out).equals(readFileSync(fromSingle))).toBe(true);
    expect(dump(out, lines)).toEqual(lines);
  });

  it('takes per-prefix files named without .txt, in lower case, given one by one', async () => {
    const folder = dir();
    splitByPrefix(folder, sampleLines.slice(0, 300), (prefix) => prefix.toLowerCase(), '\n');
    const files = readdirSync(folder).map((name) => join(folder, name));
    const out = join(dir(), 'p.pwb');
    await importBreachFiles(files, { out });
    expect(dump(out, sampleLines.slice(0, 300))).toEqual(sampleLines.slice(0, 300));
  });

  it('sorts unsorted input through buckets to the same store as sorted input', async () => {
    const folder = dir();
    const shuffled = [...sampleLines].reverse();
    for (let i = 0; i < shuffled.length; i += 7) [shuffled[i], shuffled[shuffled.length - 1 - i]] = [shuffled[shuffled.length - 1 - i], shuffled[i]];
    writeFileSync(join(folder, 'shuffled.txt'), shuffled.join('\n'));
    const progress: string[] = [];
    const out = join(dir(), 'passwords.pwb');
    const report = await importBreachFiles([join(folder, 'shuffled.txt')], { out, bucketRecords: 500, onProgress: (line) => progress.push(line) });
    expect(report).toMatchObject({ sorted: false, hashes: sampleLines.length, duplicates: 0 });
    expect(report.buckets).toBeGreaterThan(4);
    expect(progress.join('\n')).toMatch(/not in ascending order/);
    expect(dump(out, sampleLines)).toEqual(sampleLines);
    // The bucket folder is gone.
    expect(readdirSync(join(out, '..'))).toEqual(['passwords.pwb']);
  });

  it('merges a hash listed twice (in one file, across files, across formats) keeping the largest count', async () => {
    const folder = dir();
    const [hash] = sampleLines[0].split(':');
    writeFileSync(join(folder, 'a.txt'), `${hash}:5\n${hash.toLowerCase()}:9\n${hash}:2\n`);
    writeFileSync(join(folder, `${hash.slice(0, 5)}.txt`), `${hash.slice(5)}:7\n`);
    const out = join(dir(), 'p.pwb');
    const report = await importBreachFiles([join(folder, 'a.txt'), join(folder, `${hash.slice(0, 5)}.txt`)], { out });
    expect(report).toMatchObject({ hashes: 1, duplicates: 3 });
    expect(countOf(out, hash)).toBe(9);
    // Unsorted input merges the same way.
    const shuffledOut = join(dir(), 'p.pwb');
    writeFileSync(join(folder, 'b.txt'), `${hash}:5\n${sampleLines[5]}\n${hash}:9\n${sampleLines[1]}\n${hash}:2\n`);
    const unsorted = await importBreachFiles([join(folder, 'b.txt')], { out: shuffledOut });
    expect(unsorted).toMatchObject({ sorted: false, hashes: 3, duplicates: 2 });
    expect(countOf(shuffledOut, hash)).toBe(9);
  });

  it('skips blank lines, a byte order mark and padding lines (count 0), which are not corrupt', async () => {
    const folder = dir();
    const padding = `${sampleLines[2].slice(0, 40)}:0`;
    writeFileSync(join(folder, 'x.txt'), `\uFEFF${sampleLines[0]}\r\n\r\n${sampleLines[1]}\r\n${padding}\r\n${sampleLines[3]}\r\n\r\n`);
    const out = join(dir(), 'p.pwb');
    const report = await importBreachFiles([join(folder, 'x.txt')], { out });
    expect(report).toMatchObject({ lines: 4, hashes: 3, padding: 1, corrupt: 0 });
    expect(dump(out, [sampleLines[0], sampleLines[1], sampleLines[3]])).toEqual([sampleLines[0], sampleLines[1], sampleLines[3]]);
  });
});

describe('pwbreach import: corrupt lines and atomic replacement', () => {
  const corruptFile = (folder: string) => {
    const lines = [...sampleLines.slice(0, 10)];
    lines[2] = 'hunter2'; // a plaintext password: reported by line number, never shown
    lines[5] = `${sampleLines[5].slice(0, 39)}:12`; // 39 hex digits
    lines[7] = `${sampleLines[7].split(':')[0]}:-3`;
    lines[8] = `${sampleLines[8].split(':')[0]} 4`;
    const path = join(folder, 'damaged.txt');
    writeFileSync(path, lines.join('\n'));
    return path;
  };

  it('refuses the whole import by default, reporting the count and first line numbers, and leaves the store as it was', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    await importBreachFiles([SAMPLE], { out });
    const before = readFileSync(out);
    const path = corruptFile(folder);
    const error = await refused([path], { out });
    expect(error.report).toMatchObject({ corrupt: 4, lines: 10, corruptAt: [`${path}:3`, `${path}:6`, `${path}:8`, `${path}:9`], out: null });
    expect(error.message).toMatch(/4 corrupt line\(s\), first at .*damaged\.txt:3/);
    expect(error.message).not.toContain('hunter2');
    expect(readFileSync(out).equals(before)).toBe(true);
    expect(readdirSync(folder).sort()).toEqual(['damaged.txt', 'passwords.pwb']);
  });

  it("an NTLM hash list (HIBP's other download) is refused with a hint to take the SHA-1 one; any other corrupt first line gets none", async () => {
    const folder = dir();
    const ntlm = join(folder, 'pwned-passwords-ntlm.txt');
    // NTLM lines: 32 hex digits (MD4 of the UTF-16LE password), a colon, a count.
    writeFileSync(ntlm, ['8846F7EAEE8FB117AD06BDD830B7586C:10434004', '32ED87BDB5FDC5E9CBA88547376818D4:3752262'].join('\n'));
    const error = await refused([ntlm], { out: join(folder, 'passwords.pwb') });
    expect(error.message).toBe(
      `2 corrupt line(s), first at ${ntlm}:1, ${ntlm}:2 (32 hex digits and a count: an NTLM hash list; pwbreach needs the SHA-1 one, pwned-passwords-sha1); nothing was imported (the store is unchanged)`,
    );
    expect((await refused([corruptFile(folder)], { out: join(folder, 'other.pwb') })).message).not.toContain('NTLM');
  });

  it('imports the good lines with skipCorrupt, still reporting the bad ones', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    const report = await importBreachFiles([corruptFile(folder)], { out, skipCorrupt: true });
    expect(report).toMatchObject({ corrupt: 4, hashes: 6 });
    expect(
      dump(
        out,
        [0, 1, 3, 4, 6, 9].map((i) => sampleLines[i]),
      ),
    ).toEqual([0, 1, 3, 4, 6, 9].map((i) => sampleLines[i]));
  });

  it('reports line numbers across chunk boundaries and files, and only the first five', async () => {
    const folder = dir();
    const good = sampleLines.join('\n');
    writeFileSync(join(folder, 'a.txt'), `${good}\nbad\n`);
    writeFileSync(join(folder, 'b.txt'), ['x', 'y', 'z', 'w', 'v', 'u'].join('\n'));
    const error = await refused([join(folder, 'a.txt'), join(folder, 'b.txt')], { out: join(folder, 'out.pwb') });
    expect(error.report.corrupt).toBe(7);
    expect(error.report.corruptAt).toEqual([`${join(folder, 'a.txt')}:${sampleLines.length + 1}`, ...[1, 2, 3, 4].map((n) => `${join(folder, 'b.txt')}:${n}`)]);
    expect(existsSync(join(folder, 'out.pwb'))).toBe(false);
  });

  it('refuses input without a single hash', async () => {
    const folder = dir();
    writeFileSync(join(folder, 'empty.txt'), '\n\n');
    const error = await refused([join(folder, 'empty.txt')], { out: join(folder, 'out.pwb') });
    expect(error.message).toMatch(/no hashes/);
    expect(existsSync(join(folder, 'out.pwb'))).toBe(false);
  });

  it('fails on a missing input without touching the store', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    await importBreachFiles([SAMPLE], { out });
    const before = readFileSync(out);
    await expect(importBreachFiles([join(folder, 'nope.txt')], { out })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readFileSync(out).equals(before)).toBe(true);
  });

  it('is idempotent: a re-run writes the same bytes, and replaces the file rather than rewriting it in place', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    await importBreachFiles([SAMPLE], { out });
    const first = readFileSync(out);
    const reader = openStoreFile(out); // a reader of the old store keeps reading it, whole
    await importBreachFiles([SAMPLE], { out });
    expect(readFileSync(out).equals(first)).toBe(true);
    expect(reader.count(parseSha1Hex(sha1('123456'))!)).toBeGreaterThan(0);
    reader.close();
    expect(readdirSync(folder)).toEqual(['passwords.pwb']);
  });

  it('removes the temporary files of an import whose process died', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    // A pid far above any Linux pid_max: not alive.
    writeFileSync(join(folder, '.passwords.pwb.tmp-99999999-abcd'), 'half-written');
    mkdirSync(join(folder, '.passwords.pwb.buckets-99999999-abcd'));
    await importBreachFiles([SAMPLE], { out });
    expect(readdirSync(folder)).toEqual(['passwords.pwb']);
  });
});

describe('pwbreach import: where it writes, checked before any work', () => {
  const shuffled = (folder: string) => {
    const path = join(folder, 'shuffled.txt');
    writeFileSync(path, [...sampleLines].reverse().join('\n'));
    return path;
  };

  it('refuses an out that is a folder, before reading any input and without staging anything beside it', async () => {
    const folder = dir();
    const out = join(folder, 'store');
    mkdirSync(out);
    await expect(importBreachFiles([join(folder, 'not-read.txt')], { out })).rejects.toThrow(
      `${out} is a folder: the store is a file (give its path, such as ${join(out, 'passwords.pwb')})`,
    );
    expect(readdirSync(folder)).toEqual(['store']);
  });

  it('refuses a tmpDir that does not exist instead of creating it, and a tmpDir that is a file', async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    const input = shuffled(folder);
    const missing = join(folder, 'no', 'such', 'tmp');
    await expect(importBreachFiles([input], { out, tmpDir: missing, bucketRecords: 500 })).rejects.toThrow(`the temporary folder ${missing} does not exist`);
    expect(existsSync(join(folder, 'no'))).toBe(false);
    await expect(importBreachFiles([input], { out, tmpDir: input })).rejects.toThrow(`the temporary folder ${input} is not a folder`);
    expect(existsSync(out)).toBe(false);
  });

  it('puts the bucket files of unsorted input in an existing tmpDir, and leaves it empty', async () => {
    const folder = dir();
    const tmpDir = join(folder, 'tmp');
    mkdirSync(tmpDir);
    const report = await importBreachFiles([shuffled(folder)], { out: join(folder, 'passwords.pwb'), tmpDir, bucketRecords: 500 });
    expect(report.sorted).toBe(false);
    expect(readdirSync(tmpDir)).toEqual([]);
  });

  it("removes the bucket folder a dead import left in tmpDir (Ctrl-C), and nobody else's files there", async () => {
    const folder = dir();
    const tmpDir = join(folder, 'tmp');
    mkdirSync(tmpDir);
    // A pid far above any Linux pid_max: not alive. This process's own pid: alive, kept.
    mkdirSync(join(tmpDir, '.passwords.pwb.buckets-99999999-abcd'));
    mkdirSync(join(tmpDir, `.passwords.pwb.buckets-${process.pid}-abcd`));
    writeFileSync(join(tmpDir, 'someone-else.txt'), 'kept');
    await importBreachFiles([SAMPLE], { out: join(folder, 'passwords.pwb'), tmpDir });
    expect(readdirSync(tmpDir).sort()).toEqual([`.passwords.pwb.buckets-${process.pid}-abcd`, 'someone-else.txt']);
  });
});

describe('pwbreach import: a generated file of two million lines', () => {
  it('imports every line, sorted, and answers sampled hashes with their counts', async () => {
    const folder = dir();
    const input = join(folder, 'hashes.txt');
    const { records, samples } = writeHashFile(input, { records: 2_000_000, seed: 11, crlf: true, sampleEvery: 5000 });
    const out = join(folder, 'passwords.pwb');
    const bars: number[] = [];
    const report = await importBreachFiles([input], { out, onProgressBar: (p) => bars.push(p.done / p.total) });
    expect(report).toMatchObject({ lines: records, hashes: records, corrupt: 0, sorted: true });
    expect(bars.at(-1)).toBe(1);
    expect(bars.length).toBeGreaterThan(5);
    const store = openStoreFile(out);
    try {
      for (const { hash, count } of samples) expect(store.count(hash)).toBe(count);
    } finally {
      store.close();
    }
  }, 30_000);
});

describe('pwbreach import: a line longer than any valid one', () => {
  const source = { path: 'one-line.txt', kind: 'hash' as const, prefix: -1, size: 0, regular: true };

  it('is counted as corrupt as soon as it passes the longest valid line, before its newline arrives, in memory that does not grow', () => {
    const records: string[] = [];
    const reader = new LineReader((hash, count) => records.push(`${Buffer.from(hash).toString('hex').toUpperCase()}:${count}`));
    reader.begin(source);
    const chunk = Buffer.alloc(64 * 1024, 0x41); // "AAAA...", no line break
    reader.feed(chunk, chunk.length);
    expect(reader).toMatchObject({ corrupt: 1, lines: 1, corruptAt: ['one-line.txt:1'] });
    // 12.5 MB more of the same line: nothing is kept of it (it was kept whole, copied again per chunk).
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 200; i++) reader.feed(chunk, chunk.length);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024);
    expect(reader.corrupt).toBe(1);
    // The next line is read as usual, with its own line number.
    const next = Buffer.from(`AAAA\n${sampleLines[0]}\n${sampleLines[1].slice(0, 20)}`);
    reader.feed(next, next.length);
    const rest = Buffer.from(`${sampleLines[1].slice(20)}\n`);
    reader.feed(rest, rest.length);
    reader.end();
    expect(reader).toMatchObject({ corrupt: 1, lines: 3 });
    expect(records).toEqual([sampleLines[0], sampleLines[1]]);
  });

  it('takes a valid line of the longest length split across chunks, and refuses one byte more', () => {
    const hash = sampleLines[0].split(':')[0];
    const longest = `${hash}:${'9'.repeat(15)}\r`;
    expect(longest.length).toBe(MAX_LINE_BYTES);
    const reader = new LineReader(() => {});
    reader.begin(source);
    for (const text of [longest.slice(0, 30), longest.slice(30), '\n', `0${longest}`.slice(0, 50), `0${longest}`.slice(50), '\n']) {
      reader.feed(Buffer.from(text), text.length);
    }
    reader.end();
    expect(reader).toMatchObject({ lines: 2, corrupt: 1, corruptAt: ['one-line.txt:2'] });
  });

  it('a file of a few MB without a line break is refused as one corrupt line; --skip-corrupt imports the lines after it', async () => {
    const folder = dir();
    const input = join(folder, 'no-breaks.txt');
    writeFileSync(input, `${'A'.repeat(6 * 1024 * 1024)}\n${sampleLines.slice(0, 3).join('\n')}\n`);
    const out = join(folder, 'passwords.pwb');
    const error = await refused([input], { out });
    expect(error.report).toMatchObject({ corrupt: 1, corruptAt: [`${input}:1`], lines: 4 });
    const report = await importBreachFiles([input], { out, skipCorrupt: true });
    expect(report).toMatchObject({ corrupt: 1, hashes: 3 });
    expect(dump(out, sampleLines.slice(0, 3))).toEqual(sampleLines.slice(0, 3));
  });
});

describe('pwbreach import: a folder of per-prefix files lacking some prefixes', () => {
  it('is refused before any work, naming how many prefixes are missing; allowPartial imports it and reports the gap', async () => {
    const folder = dir();
    const lines = sampleLines.slice(0, 50);
    splitByPrefix(folder, lines);
    const prefixes = new Set(lines.map((line) => line.slice(0, 5))).size;
    const out = join(dir(), 'passwords.pwb');
    const missing = (2 ** 20 - prefixes).toLocaleString('en-US');
    await expect(importBreachFiles([folder], { out })).rejects.toThrow(
      `${folder} lacks ${missing} of the 1,048,576 prefix files (first missing: 00000, 00001, 00002, ...): every password under a missing prefix would read "not breached"; download the rest, or import it as it is with --allow-partial`,
    );
    expect(readdirSync(join(out, '..'))).toEqual([]);

    const report = await importBreachFiles([folder], { out, allowPartial: true });
    expect(report).toMatchObject({ hashes: lines.length, partial: [{ path: folder, missing: 2 ** 20 - prefixes, firstMissing: ['00000', '00001', '00002'] }] });
    expect(dump(out, lines)).toEqual(lines);
  });
});

describe('pwbreach import: where the store goes', () => {
  it("refuses a store whose data folder does not exist, creating nothing; the store's own folder is made", async () => {
    const typo = join(dir(), 'no-such-data');
    const out = join(typo, 'pwbreach', 'passwords.pwb');
    await expect(importBreachFiles([SAMPLE], { out })).rejects.toThrow(`cannot write ${out}: the folder ${typo} does not exist`);
    expect(existsSync(typo)).toBe(false);
    mkdirSync(typo);
    await importBreachFiles([SAMPLE], { out });
    expect(readdirSync(join(typo, 'pwbreach'))).toEqual(['passwords.pwb']);
  });

  it("keeps the store's permissions when it replaces it (an operator's 0600 stays 0600); a new store is 0644", async () => {
    const folder = dir();
    const out = join(folder, 'passwords.pwb');
    await importBreachFiles([SAMPLE], { out });
    expect(statSync(out).mode & 0o777).toBe(0o644 & ~process.umask());
    chmodSync(out, 0o600);
    await importBreachFiles([SAMPLE], { out });
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });
});
