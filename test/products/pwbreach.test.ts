/**
 * pwbreach engine: the bundled sample (expected counts read from the sample itself), input
 * rules, ranges, and the store format (counts, the windowed search, validation on open).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, appendFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LookupError, SeclookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { STORE_FILE } from '../../src/products/pwbreach/engine.js';
import { PREFIX_COUNT, parseSha1Hex, prefixOf, suffixHex } from '../../src/products/pwbreach/hash.js';
import { buildStoreInMemory } from '../../src/products/pwbreach/import.js';
import { PADDING_EXTRA, PADDING_MIN, parseRangeAnswer, rangeText, textRange } from '../../src/products/pwbreach/range.js';
import { INDEX_OFFSET, MAX_COUNT, memorySink, openStoreBuffer, openStoreFile, RECORDS_OFFSET, StoreWriter } from '../../src/products/pwbreach/store.js';
import { writeStoreFile } from '../../src/products/pwbreach/testdata.js';

const SAMPLE = join(bundledDataDir(), 'pwbreach', 'pwned-sample.txt');
/** The sample as the test reads it, independently of the importer: upper-case hash -> count. */
const sample = new Map(
  readFileSync(SAMPLE, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [hash, count] = line.split(':');
      return [hash.toUpperCase(), Number(count)] as const;
    }),
);
const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();

const temp = mkdtempSync(join(tmpdir(), 'seclookup-pwbreach-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function errorOf(promise: Promise<unknown>): Promise<LookupError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LookupError);
  return error as LookupError;
}

describe('pwbreach: the bundled sample', () => {
  const lookup = createLookup();

  it('finds 123456 with its count in the sample', async () => {
    const expected = sample.get(sha1('123456'));
    expect(expected).toBeGreaterThan(0);
    expect(await lookup.pwbreach('123456')).toEqual({ breached: true, count: expected });
    expect(await lookup.pwbreach({ password: 'password' })).toEqual({ breached: true, count: sample.get(sha1('password')) });
  });

  it('takes the SHA-1 in either case', async () => {
    const hash = sha1('123456');
    const expected = { breached: true, count: sample.get(hash) };
    expect(await lookup.pwbreach({ sha1: hash })).toEqual(expected);
    expect(await lookup.pwbreach({ sha1: hash.toLowerCase() })).toEqual(expected);
    expect(await lookup.pwbreach({ sha1: hash.slice(0, 20).toLowerCase() + hash.slice(20) })).toEqual(expected);
  });

  it('answers every hash of the sample with its count', async () => {
    const engine = lookup.engine('pwbreach');
    expect(engine.source).toBe('sample');
    expect(engine.records).toBe(sample.size);
    const wrong = [...sample].filter(([hash, count]) => {
      const outcome = engine.lookup(engine.prepare({ sha1: hash })) as { result: { breached: boolean; count: number }; cached: boolean };
      return !outcome.result.breached || outcome.result.count !== count || outcome.cached;
    });
    expect(wrong).toEqual([]);
  });

  it('answers count 0 for a password not in the data, and for hashes next to listed ones', async () => {
    expect(await lookup.pwbreach('a password nobody has used, surely: 7f3c9e')).toEqual({ breached: false, count: 0 });
    const listed = Buffer.from(sha1('123456'), 'hex');
    for (const delta of [-1, 1]) {
      const near = Buffer.from(listed);
      near[19] += delta;
      expect(await lookup.pwbreach({ sha1: near.toString('hex') })).toEqual({ breached: false, count: 0 });
    }
  });

  it('hashes the UTF-8 bytes as given: no trimming, no normalization', async () => {
    expect((await lookup.pwbreach(' 123456')).breached).toBe(false);
    const cafe = 'café';
    expect(prefixOf(lookup.engine('pwbreach').prepare(cafe).hash)).toBe(prefixOf(Buffer.from(sha1(cafe), 'hex')));
    expect(lookup.engine('pwbreach').prepare(cafe).hash.toString('hex')).not.toBe(
      lookup.engine('pwbreach').prepare(cafe.normalize('NFD')).hash.toString('hex'),
    );
  });

  it('puts nothing of the input in the result', async () => {
    const outcome = await lookup.detailed.pwbreach('123456');
    expect(Object.keys(outcome.result)).toEqual(['breached', 'count']);
    expect(outcome.json).toBe(JSON.stringify(outcome.result));
  });

  it('serves the range of a prefix in the range API format', async () => {
    const hash = sha1('123456');
    const range = await lookup.engine('pwbreach').range(hash.slice(0, 5).toLowerCase());
    const expected = [...sample].filter(([h]) => h.startsWith(hash.slice(0, 5))).map(([h, c]) => `${h.slice(5)}:${c}`);
    expect(range.lines()).toEqual(expected.sort());
    expect(range.size).toBe(expected.length);
    expect(rangeText(range, false)).toBe(expected.join('\r\n'));
  });
});

describe('pwbreach: input rules', () => {
  const lookup = createLookup();

  it.each([
    ['an empty password', ''],
    ['an empty object', {}],
    ['null', null],
    ['an empty sha1 and no password', { sha1: '' }],
    ['a password that is not a string', { password: 123456 }],
    ['a sha1 of 39 hex digits', { sha1: 'A'.repeat(39) }],
    ['a sha1 of 41 hex digits', { sha1: 'A'.repeat(41) }],
    ['a sha1 with a non-hex digit', { sha1: `${'A'.repeat(39)}G` }],
    ['a sha1 with surrounding spaces', { sha1: ` ${'A'.repeat(40)}` }],
    ['a sha1 with a non-ASCII digit', { sha1: `${'A'.repeat(39)}\u0661` }],
    ['a sha1 that is not a string', { sha1: 40 }],
    ['both a password and a sha1', { password: 'x', sha1: 'A'.repeat(40) }],
    // Found by a reviewer: hashed as U+FFFD (what UTF-8 encoding makes of it), a password nobody sent.
    ['a password holding a lone surrogate', 'hunter2\ud83d'],
    ['a password holding a lone low surrogate', '\ude00hunter2'],
  ])('refuses %s with 400 invalid_password', async (_name, input) => {
    const error = await errorOf(lookup.pwbreach(input as never));
    expect(error.code).toBe('invalid_password');
    expect(error.status).toBe(400);
  });

  it('takes a surrogate pair (an emoji) as the one character it is', async () => {
    expect((await lookup.pwbreach('hunter2\ud83d\ude00')).breached).toBe(false);
  });

  it('caps a password at 1,024 UTF-8 bytes', async () => {
    expect((await lookup.pwbreach('a'.repeat(1024))).breached).toBe(false);
    expect((await errorOf(lookup.pwbreach('a'.repeat(1025)))).code).toBe('invalid_password');
    // 342 three-byte characters are 1,026 bytes though only 342 UTF-16 units.
    expect((await errorOf(lookup.pwbreach('€'.repeat(342)))).code).toBe('invalid_password');
    expect((await lookup.pwbreach('€'.repeat(341))).breached).toBe(false);
  });

  it('never repeats the input in an error message', async () => {
    const secret = 'Sup3r-s3cret-PW';
    const long = `${secret}${'x'.repeat(2000)}`;
    const messages = [
      (await errorOf(lookup.pwbreach(long))).message,
      (await errorOf(lookup.pwbreach({ password: secret, sha1: sha1(secret) }))).message,
      (await errorOf(lookup.pwbreach({ sha1: `${sha1(secret)}0` }))).message,
    ];
    for (const message of messages) {
      expect(message).not.toContain(secret);
      expect(message.toUpperCase()).not.toContain(sha1(secret).slice(5));
    }
  });

  it('refuses a range prefix that is not 5 hex digits with 400 invalid_request', async () => {
    const engine = lookup.engine('pwbreach');
    for (const prefix of ['', '7C4A', '7C4A8D', 'GGGGG', '7c4a ']) {
      expect((await errorOf(engine.range(prefix))).code).toBe('invalid_request');
    }
  });
});

describe('pwbreach: the range API text format', () => {
  const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:1', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2', 'FFFFF6E8FA6EECAD2A3AA415EEC418D38EC:30'];

  it('reads an answer with LF or CRLF, either case, or a byte-order mark first, dropping padding (count 0) and blank lines', () => {
    const answer = ['0018a45c4d1def81644b54ab7f969b88d65:1', '0000000000000000000000000000000000A:0', lines[1], '', lines[2], ''].join('\r\n');
    const text = parseRangeAnswer(answer);
    expect(text).toBe(lines.join('\r\n'));
    expect(parseRangeAnswer(answer.replaceAll('\r\n', '\n'))).toBe(text);
    // A mirror serving files saved by a Windows editor: the mark is no part of the first line.
    expect(parseRangeAnswer(`\uFEFF${answer}`)).toBe(text);
    const range = textRange(text);
    expect(range.size).toBe(3);
    const hash = (prefix: string, suffix: string) => parseSha1Hex(prefix + suffix)!;
    expect(range.count(hash('21BD1', '0018A45C4D1DEF81644B54AB7F969B88D65'))).toBe(1);
    expect(range.count(hash('21BD1', 'FFFFF6E8FA6EECAD2A3AA415EEC418D38EC'))).toBe(30);
    expect(range.count(hash('21BD1', '0000000000000000000000000000000000A'))).toBe(0);
    expect(suffixHex(hash('21BD1', '00d4f6e8fa6eecad2a3aa415eec418d38ec'))).toBe('00D4F6E8FA6EECAD2A3AA415EEC418D38EC');
  });

  it('sorts an answer out of order and keeps the largest count of a suffix listed twice', () => {
    expect(parseRangeAnswer([lines[2], lines[0], `${lines[0].slice(0, 35)}:7`, lines[1]].join('\n'))).toBe(
      [`${lines[0].slice(0, 35)}:7`, lines[1], lines[2]].join('\r\n'),
    );
  });

  it.each([
    ['HTML', '<html><body>Service Unavailable</body></html>'],
    ['a short suffix', '0018A45C4D1DEF81644B54AB7F969B88D6:1'],
    ['a non-hex suffix', '0018A45C4D1DEF81644B54AB7F969B88D6Z:1'],
    ['a count that is not a number', '0018A45C4D1DEF81644B54AB7F969B88D65:one'],
    ['a missing count', '0018A45C4D1DEF81644B54AB7F969B88D65:'],
    ['good lines then garbage', `${lines[0]}\r\n${lines[1]}\r\n{"error":true}`],
  ])('refuses %s as a whole (no half answers)', (_name, answer) => {
    expect(() => parseRangeAnswer(answer)).toThrow(SeclookupError);
  });

  it('pads to at least 800 entries, then 0-200 more, with count 0, in order', () => {
    const range = textRange(lines.join('\r\n'));
    for (let i = 0; i < 5; i++) {
      const padded = rangeText(range, true).split('\r\n');
      expect(padded.length).toBeGreaterThanOrEqual(PADDING_MIN);
      expect(padded.length).toBeLessThanOrEqual(PADDING_MIN + PADDING_EXTRA);
      expect(padded.filter((line) => !line.endsWith(':0'))).toEqual(lines);
      expect([...padded].sort()).toEqual(padded);
      expect(new Set(padded.map((line) => line.slice(0, 35))).size).toBe(padded.length);
      for (const line of padded) expect(line).toMatch(/^[0-9A-F]{35}:\d+$/);
    }
  });
});

describe('pwbreach: the store', () => {
  it('stores 28-bit counts, larger ones capped', () => {
    const file = join(temp, 'counts.txt');
    const rows = [
      ['0000000000000000000000000000000000000001', 1],
      ['0000000000000000000000000000000000000002', 2 ** 24 - 1],
      ['0000000000000000000000000000000000000003', 2 ** 24],
      ['0000000000000000000000000000000000000004', MAX_COUNT],
      ['0000000000000000000000000000000000000005', MAX_COUNT + 1],
      ['FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF', 123_456_789],
    ] as const;
    writeFileSync(file, rows.map(([h, c]) => `${h}:${c}\n`).join(''));
    const store = openStoreBuffer(buildStoreInMemory([file]));
    expect(store.records).toBe(rows.length);
    for (const [hash, count] of rows) expect(store.count(parseSha1Hex(hash)!)).toBe(Math.min(count, MAX_COUNT));
  });

  it('finds every hash of a large range, uniform or not (the windowed search falls back to the whole range)', () => {
    // 5,000 hashes under one prefix, all crowded at the start of the suffix space: the estimate is far off.
    const file = join(temp, 'skewed.txt');
    const hashes = Array.from({ length: 5000 }, (_, i) =>
      `ABCDE000${i.toString(16).toUpperCase().padStart(8, '0')}${randomBytes(12).toString('hex').toUpperCase()}`.slice(0, 40),
    );
    writeFileSync(file, hashes.map((h, i) => `${h}:${i + 1}`).join('\n'));
    const store = openStoreBuffer(buildStoreInMemory([file]));
    expect(hashes.filter((hash, i) => store.count(parseSha1Hex(hash)!) !== i + 1)).toEqual([]);
    expect(store.count(parseSha1Hex(`ABCDEFFF${'0'.repeat(32)}`)!)).toBe(0);
    expect(store.count(parseSha1Hex(`ABCDE000${'0'.repeat(32)}`)!)).toBe(0);
    expect(store.range(0xabcde).size).toBe(5000);
  });

  const generated = (() => {
    let made: { path: string; records: number; samples: { hash: Buffer; count: number }[] } | undefined;
    return () =>
      (made ??= (() => {
        const path = join(temp, 'generated.pwb');
        return { path, ...writeStoreFile(path, { records: 200_000, seed: 3, sampleEvery: 97 }) };
      })());
  })();

  it.each([
    ['read into memory (a small file, by default)', undefined],
    ['read at offsets (memoryMaxBytes 0)', 0],
  ])('reads a generated store file of 200,000 hashes %s: every sampled hash, and random hashes as their whole range says', (_how, memoryMaxBytes) => {
    const { path, records, samples } = generated();
    const store = openStoreFile(path, { memoryMaxBytes });
    try {
      expect(store.records).toBe(records);
      expect(samples.filter(({ hash, count }) => store.count(hash) !== count)).toEqual([]);
      const absent = Array.from({ length: 2000 }, () => randomBytes(20));
      expect(absent.filter((hash) => store.count(hash) !== store.range(prefixOf(hash)).count(hash))).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('refuses a truncated, extended or foreign file as dataset_invalid, and a missing one as dataset_missing', () => {
    const path = join(temp, 'valid.pwb');
    writeStoreFile(path, { records: 1000, seed: 4 });
    const broken = (name: string, damage: (file: string) => void) => {
      const file = join(temp, name);
      copyFileSync(path, file);
      damage(file);
      return file;
    };
    for (const file of [
      broken('truncated.pwb', (f) => truncateSync(f, RECORDS_OFFSET + 10)),
      broken('extended.pwb', (f) => appendFileSync(f, 'x')),
      broken('foreign.pwb', (f) => writeFileSync(f, Buffer.alloc(RECORDS_OFFSET + 21))),
    ]) {
      expect(() => openStoreFile(file)).toThrow(expect.objectContaining({ code: 'dataset_invalid' }));
      expect(() => openStoreFile(file, { memoryMaxBytes: 0 })).toThrow(expect.objectContaining({ code: 'dataset_invalid' }));
    }
    expect(() => openStoreFile(join(temp, 'absent.pwb'))).toThrow(expect.objectContaining({ code: 'dataset_missing' }));
  });

  it('reads the index as the writer wrote it (u32 little-endian), and refuses one out of order or short of the records', () => {
    const path = join(temp, 'index.pwb');
    const { records, samples } = writeStoreFile(path, { records: 3000, seed: 6, sampleEvery: 1 });
    expect(samples).toHaveLength(records);
    const bytes = readFileSync(path);
    const entry = (prefix: number) => bytes.readUInt32LE(INDEX_OFFSET + prefix * 4);
    // Each entry is the number of records under the prefixes before it; the last is every record.
    const perPrefix = new Uint32Array(PREFIX_COUNT);
    for (const { hash } of samples) perPrefix[prefixOf(hash)]++;
    let before = 0;
    for (let prefix = 0; prefix <= PREFIX_COUNT; prefix++) {
      if (entry(prefix) !== before) throw new Error(`index entry ${prefix} is ${entry(prefix)}, not ${before}`);
      before += perPrefix[prefix] ?? 0;
    }
    expect(entry(PREFIX_COUNT)).toBe(records);
    const store = openStoreBuffer(bytes);
    expect(samples.filter(({ hash, count }) => store.count(hash) !== count)).toEqual([]);
    const damaged = (prefix: number, value: number) => {
      const copy = Buffer.from(bytes);
      copy.writeUInt32LE(value, INDEX_OFFSET + prefix * 4);
      const file = join(temp, `index-${prefix}.pwb`);
      writeFileSync(file, copy);
      return [copy, file] as const;
    };
    const cases = [
      [damaged(PREFIX_COUNT, records - 1), /index does not cover the records/],
      [damaged(0, 1), /index does not cover the records/],
      [damaged(1000, entry(1001) + 1), /index out of order/],
      [damaged(PREFIX_COUNT - 1, records + 1), /index out of order/],
    ] as const;
    for (const [[copy, file], message] of cases) {
      expect(() => openStoreBuffer(copy)).toThrow(message);
      expect(() => openStoreFile(file)).toThrow(message);
      expect(() => openStoreFile(file, { memoryMaxBytes: 0 })).toThrow(message);
    }
  });

  it('the writer takes hashes in ascending order only: one that goes back is refused, not written into a wrong index', () => {
    const hashAt = (prefix: number) => Buffer.from(`${prefix.toString(16).padStart(5, '0')}${'0'.repeat(35)}`, 'hex');
    const writer = new StoreWriter(memorySink());
    writer.add(hashAt(0x00005), 0, 1);
    writer.add(hashAt(0x00005).fill(1, 10), 0, 2);
    expect(() => writer.add(hashAt(0x00003), 0, 1)).toThrow(/ascending order/);
    const sink = memorySink();
    const ordered = new StoreWriter(sink);
    for (const prefix of [0, 1, 2, 0x7ffff, PREFIX_COUNT - 1]) ordered.add(hashAt(prefix), 0, prefix + 1);
    ordered.finish();
    const store = openStoreBuffer(sink.bytes());
    expect([0, 1, 2, 3, 0x7ffff, PREFIX_COUNT - 2, PREFIX_COUNT - 1].map((prefix) => store.range(prefix).size)).toEqual([1, 1, 1, 0, 1, 0, 1]);
    expect(store.count(hashAt(PREFIX_COUNT - 1))).toBe(PREFIX_COUNT);
  });

  it('prefers an imported store in the data folder over the sample; with neither, the engine is dataset_missing', async () => {
    const dataDir = join(temp, 'data-with-store');
    mkdirSync(join(dataDir, 'pwbreach'), { recursive: true });
    const { samples } = writeStoreFile(join(dataDir, STORE_FILE), { records: 5000, seed: 5, sampleEvery: 10 });
    const lookup = createLookup({ dataDir });
    expect(lookup.engine('pwbreach').source).toBe('store');
    expect(await lookup.pwbreach({ sha1: samples[3].hash.toString('hex') })).toEqual({ breached: true, count: samples[3].count });
    expect((await lookup.pwbreach('123456')).breached).toBe(false);

    const empty = createLookup({ dataDir: join(temp, 'no-data') });
    await expect(empty.pwbreach('123456')).rejects.toMatchObject({ code: 'dataset_missing' });
  });
});
