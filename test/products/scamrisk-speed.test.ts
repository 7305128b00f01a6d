/**
 * The shortcuts of scamrisk's hot path keep its answers: the Bitcoin shape test lets every
 * address the validator accepts through, the one-edit distance agrees with the full table, the
 * assessment JSON is JSON.stringify's byte for byte, parsed identifiers are reused, and the
 * SQLite report store's in-memory set of reported identifiers sees other processes' reports.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAddressInfo } from 'bitcoin-address-validation';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { mayBeBitcoin } from '../../src/products/scamrisk/crypto.js';
import { createScamriskEngine } from '../../src/products/scamrisk/engine.js';
import { levenshtein, loadScamLists } from '../../src/products/scamrisk/lists.js';
import { createMemoryReportStore, createSqliteReportStore } from '../../src/products/scamrisk/reports.js';
import { assessmentJson } from '../../src/products/scamrisk/scoring.js';
import { SOFT_SOURCES, type IdentifierType } from '../../src/products/scamrisk/types.js';

const dir = mkdtempSync(join(tmpdir(), 'scamrisk-speed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(bytes: Uint8Array): string {
  let value = 0n;
  for (const b of bytes) value = value * 256n + BigInt(b);
  let out = '';
  while (value > 0n) {
    out = B58[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();
/** A base58check address: version byte, 20-byte payload, the double-SHA-256 checksum. */
function base58check(version: number, payload: Uint8Array): string {
  const body = Uint8Array.from([version, ...payload]);
  return base58(Uint8Array.from([...body, ...sha256(sha256(body)).subarray(0, 4)]));
}

describe('the Bitcoin shape test', () => {
  it('lets through every base58 address the validator accepts (all four versions, any payload, leading zeros too)', () => {
    const payload = fc.oneof(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.constant(new Uint8Array(20)), fc.constant(new Uint8Array(20).fill(255)));
    fc.assert(
      fc.property(fc.constantFrom(0x00, 0x05, 0x6f, 0xc4), payload, (version, bytes) => {
        const address = base58check(version, bytes);
        expect(() => getAddressInfo(address)).not.toThrow();
        expect(mayBeBitcoin(address), address).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('lets through bech32 and bech32m addresses of every network; keeps EVM and other chains away from the validator', () => {
    for (const address of [
      'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
      'BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ',
      'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297',
      'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
      'bcrt1qs758ursh4q9z627kt3pp5yysm78ddny6txaqgw',
      'TB1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KXPJZSX',
    ]) {
      expect(() => getAddressInfo(address), address).not.toThrow();
      expect(mayBeBitcoin(address), address).toBe(true);
    }
    for (const other of [
      '0x04DBA1194ee10112fE6C3207C0687DEf0e78baCf',
      'TBHTJqAy4DhHhmT3dNceJYNRz4SdLofLre',
      'LNf2JDiuunBz7GMDKFYHN4rq5meXWxiwfb',
      'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh',
    ]) {
      expect(mayBeBitcoin(other), other).toBe(false);
      expect(() => getAddressInfo(other), other).toThrow();
    }
  });
});

/** The full edit-distance table, for reference. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return rows[a.length][b.length];
}

it('levenshtein within one edit agrees with the full table', () => {
  const word = fc.stringMatching(/^[ab.-]{0,7}$/);
  fc.assert(
    fc.property(word, word, (a, b) => {
      expect(levenshtein(a, b, 1)).toBe(Math.min(distance(a, b), 2));
      expect(levenshtein(a, b, 0)).toBe(Math.min(distance(a, b), 1));
    }),
    { numRuns: 2000 },
  );
  expect(levenshtein('paypal', 'paypa1', 1)).toBe(1);
  expect(levenshtein('paypal', 'papyal', 1)).toBe(2);
});

describe('the assessment JSON and the identifier memo', () => {
  const SAMPLES: [IdentifierType, string][] = [
    ['crypto', '0x04DBA1194ee10112fE6C3207C0687DEf0e78baCf'],
    ['crypto', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'],
    ['domain', 'login.paypal.com.secure-verify.xyz'],
    ['domain', 'xn--pypal-4ve.com'],
    ['url', 'http://user@paypal.com.account-check.xyz/login'],
    ['phone', '+44 909 879 0000'],
    ['email', 'alice@example.com'],
    ['username', 'telegram:bob'],
    ['address', '10 Downing Street, London SW1A 2AA'],
    ['ip', '9.9.9.9'],
  ];

  it('is JSON.stringify(result) byte for byte, with reports, disputes and signals of every kind', async () => {
    const reports = createMemoryReportStore({ now: () => Date.UTC(2025, 5, 1) });
    const engine = createScamriskEngine({
      lists: loadScamLists(bundledDataDir()),
      options: { reports, disable: [...SOFT_SOURCES] },
      now: () => Date.UTC(2025, 5, 2),
      engine: () => null,
      cache: null,
    });
    for (const [type, value] of SAMPLES) {
      await engine.report({ type, value, category: 'phishing', source: 'desk', note: 'a "quoted" note\nwith a newline' });
      const second = await engine.report({ type, value, category: 'scam', source: 'other', verified: true });
      await reports.dispute(second.id, true, Date.UTC(2025, 5, 1, 12));
    }
    for (const [type, value] of [...SAMPLES, ['domain', 'example.com'] as [IdentifierType, string]]) {
      const outcome = await engine.lookup(engine.prepare({ type, value }));
      expect(outcome.json).toBe(JSON.stringify(outcome.result));
      expect(assessmentJson(outcome.result)).toBe(JSON.stringify(outcome.result));
    }
  });

  it('falls back to JSON.stringify when the caveats were changed', async () => {
    const engine = createScamriskEngine({ lists: loadScamLists(bundledDataDir()), options: { disable: [...SOFT_SOURCES] }, now: Date.now, engine: () => null });
    const { result } = await engine.lookup(engine.prepare({ type: 'domain', value: 'example.com' }));
    result.limitations = ['only this'];
    expect(assessmentJson(result)).toBe(JSON.stringify(result));
  });

  it('a repeated input reuses its parsed identifier; a refused one is refused every time', () => {
    const engine = createScamriskEngine({ lists: loadScamLists(bundledDataDir()), options: { disable: [...SOFT_SOURCES] }, now: Date.now, engine: () => null });
    const first = engine.prepare({ type: 'phone', value: '+1 415 555 2671' });
    expect(engine.prepare({ phone: '+1 415 555 2671' }).identifier).toBe(first.identifier);
    expect(engine.prepare({ type: 'phone', value: '+1 415 555 2671', region: 'US' }).identifier).not.toBe(first.identifier);
    for (let i = 0; i < 2; i++)
      expect(() => engine.prepare({ type: 'crypto', value: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' })).toThrow(
        expect.objectContaining({ code: 'invalid_identifier' }),
      );
  });
});

describe('the SQLite store across processes (two connections to one file)', () => {
  it('a report filed elsewhere shows within refreshMs; disputes of known identifiers show at once', async () => {
    const path = join(dir, 'shared.db');
    let clock = Date.UTC(2025, 0, 1);
    const now = () => clock;
    const here = createSqliteReportStore(path, { now, refreshMs: 1000 });
    const elsewhere = createSqliteReportStore(path, { now, refreshMs: 1000 });
    expect(await here.find('domain', 'evil.example')).toEqual([]);

    const filed = await elsewhere.add({ type: 'domain', identifier: 'evil.example', category: 'phishing', source: 'desk' });
    expect(await elsewhere.find('domain', 'evil.example')).toHaveLength(1); // the filing process: at once
    clock += 999;
    expect(await here.find('domain', 'evil.example')).toEqual([]); // checked less than refreshMs ago
    clock += 1;
    expect((await here.find('domain', 'evil.example')).map((r) => r.id)).toEqual([filed.id]);

    // Rows of a reported identifier are read from the file: a dispute elsewhere shows at once.
    await elsewhere.dispute(filed.id, true, clock);
    expect((await here.find('domain', 'evil.example'))[0].disputed).toBe(true);
    await here.close();
    await elsewhere.close();
  });

  it('a reopened store knows the reports already on file', async () => {
    const path = join(dir, 'reopen.db');
    const first = createSqliteReportStore(path);
    await first.add({ type: 'username', identifier: 'alice', category: 'spam', source: 'x' });
    await first.close();
    const second = createSqliteReportStore(path);
    expect(await second.find('username', 'alice')).toHaveLength(1);
    expect(await second.find('username', 'bob')).toEqual([]);
    await second.close();
  });
});
