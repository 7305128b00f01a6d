/**
 * Abbreviations from the tz database: every zone and link of the bundled table, at the three
 * instants of test/fixtures/timezone/tz-abbreviations.tsv (January and July of this year, July
 * 1985), against what glibc reads from the same tzdata release (a TZif reader and POSIX-rule
 * evaluator that are not ours); and the engine's offset against the same fixture.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { bundledAbbreviations, readAbbreviations } from '../../src/products/timezone/abbreviations.js';
import { createZoneClocks } from '../../src/products/timezone/clock.js';

const fixture = readFileSync(new URL('../fixtures/timezone/tz-abbreviations.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => {
    const [zone, instant, abbreviation, offset] = line.split('\t');
    return { zone, ms: Date.parse(instant), abbreviation, offset };
  });
const data = JSON.parse(readFileSync(new URL('../../data/timezone/abbreviations.json', import.meta.url), 'utf8')) as {
  tzdata: string;
  zones: Record<string, unknown>;
  links: Record<string, string>;
};
const names = [...Object.keys(data.zones), ...Object.keys(data.links)];
/** tzdata's test zone "Factory" (abbreviation -00), which ICU does not know: offset and abbreviation null. */
const NOT_IN_ICU = ['Factory'];

describe('every zone of the bundled tz table, against glibc on the same tzdata', () => {
  const clocks = createZoneClocks();

  it('the fixture holds every zone and link of the table at three instants, built from the same tzdata release', () => {
    expect(names.length).toBeGreaterThan(590);
    expect(new Set(fixture.map((row) => row.zone))).toEqual(new Set(names));
    expect(fixture).toHaveLength(names.length * 3);
    expect(readFileSync(new URL('../fixtures/timezone/tz-abbreviations.tsv', import.meta.url), 'utf8')).toContain(`tzdata ${data.tzdata}`);
    expect(bundledAbbreviations().version).toBe(data.tzdata);
  });

  it('gives the tz source abbreviation for every zone at every instant', () => {
    const wrong = fixture
      .filter((row) => !NOT_IN_ICU.includes(row.zone))
      .filter((row) => clocks.at(row.zone, row.ms).abbreviation !== row.abbreviation)
      .map((row) => `${row.zone} ${new Date(row.ms).toISOString()}: ${clocks.at(row.zone, row.ms).abbreviation} != ${row.abbreviation}`);
    expect(wrong).toEqual([]);
  });

  it('keeps the offsets (Intl) equal to glibc at the same instants (glibc writes -00:00 for tzdata "-00")', () => {
    const wrong = fixture
      .filter((row) => !NOT_IN_ICU.includes(row.zone))
      .filter((row) => clocks.at(row.zone, row.ms).utcOffset !== row.offset.replace('-00:00', '+00:00'))
      .map((row) => `${row.zone} ${new Date(row.ms).toISOString()}`);
    expect(wrong).toEqual([]);
  });

  it('a zone ICU does not know (Factory) has neither offset nor abbreviation', () => {
    expect(clocks.at('Factory', Date.UTC(2026, 0, 15))).toEqual({ utcOffset: null, abbreviation: null });
  });

  it.each([
    ['Asia/Tokyo', Date.UTC(1949, 6, 15), '+10:00', 'JDT'], // Japan kept DST 1948-1951
    ['Europe/Moscow', Date.UTC(2012, 6, 15), '+04:00', 'MSK'], // "permanent summer time" 2011-2014: MSK at +04
    ['Europe/Moscow', Date.UTC(1985, 6, 15), '+04:00', 'MSD'],
    ['America/New_York', Date.UTC(1944, 6, 15), '-04:00', 'EWT'], // war time
    ['Europe/Dublin', Date.UTC(2026, 0, 15), '+00:00', 'GMT'], // negative DST in the source: winter GMT, summer IST
    ['Europe/Dublin', Date.UTC(2026, 6, 15), '+01:00', 'IST'],
    ['America/Sao_Paulo', Date.UTC(2010, 0, 15), '-02:00', '-02'], // a number, as tzdata writes it
    ['Asia/Kolkata', Date.UTC(1943, 6, 15), '+06:30', '+0630'],
    ['America/New_York', Date.UTC(2040, 6, 15), '-04:00', 'EDT'], // past every stored transition: the footer rule
    ['Australia/Lord_Howe', Date.UTC(2026, 0, 15), '+11:00', '+11'], // half-hour DST
  ])('%s at %s: %s %s', (zone, ms, offset, abbreviation) => {
    expect(clocks.at(zone, ms)).toEqual({ utcOffset: offset, abbreviation });
  });
});

describe('the table reader', () => {
  const temp = mkdtempSync(join(tmpdir(), 'seclookup-tz-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));
  /** A table for Etc/UTC whose name changes at 12:30 on 2026-01-15, its offset never. */
  function renamedAtHalfPast(): string {
    const path = join(temp, 'renamed.json');
    const change = Date.UTC(2026, 0, 15, 12, 30) / 1000;
    writeFileSync(
      path,
      JSON.stringify({
        tzdata: 'test',
        links: {},
        zones: {
          'Etc/UTC': {
            types: [
              [0, 'OLD'],
              [0, 'NEW'],
            ],
            at: [change],
            type: [1],
            rule: [],
          },
        },
      }),
    );
    return path;
  }

  it('a name that changes inside an hour, at the same offset, changes at its instant (not held for the hour)', () => {
    const clocks = createZoneClocks(readAbbreviations(renamedAtHalfPast()));
    expect(clocks.at('Etc/UTC', Date.UTC(2026, 0, 15, 12, 10))).toEqual({ utcOffset: '+00:00', abbreviation: 'OLD' });
    expect(clocks.at('Etc/UTC', Date.UTC(2026, 0, 15, 12, 29, 59, 999)).abbreviation).toBe('OLD');
    expect(clocks.at('Etc/UTC', Date.UTC(2026, 0, 15, 12, 30)).abbreviation).toBe('NEW');
    expect(clocks.at('Etc/UTC', Date.UTC(2026, 0, 15, 12, 10)).abbreviation).toBe('OLD');
  });

  it('when the table and Intl disagree on the offset, the name the zone used with Intl offset nearest in time; none if it never did', () => {
    const path = join(temp, 'disagree.json');
    // A made-up Tokyo whose table says +10 from 2000 on: Intl says +09.
    const tokyo = {
      types: [
        [32400, 'JST'],
        [36000, 'XST'],
      ],
      at: [946684800],
      type: [1],
      rule: [],
    };
    const berlin = { types: [[36000, 'XST']], at: [], type: [], rule: [] };
    writeFileSync(path, JSON.stringify({ tzdata: 'test', links: {}, zones: { 'Asia/Tokyo': tokyo, 'Europe/Berlin': berlin } }));
    const table = readAbbreviations(path);
    expect(table.at('Asia/Tokyo', Date.UTC(2026, 0, 15), 32400).abbreviation).toBe('JST');
    expect(table.at('Asia/Tokyo', Date.UTC(2026, 0, 15), 36000).abbreviation).toBe('XST');
    expect(createZoneClocks(table).at('Europe/Berlin', Date.UTC(2026, 0, 15))).toEqual({ utcOffset: '+01:00', abbreviation: null });
  });

  it('a zone not in the table: Intl offset, no abbreviation', () => {
    expect(createZoneClocks(readAbbreviations(renamedAtHalfPast())).at('Asia/Tokyo', Date.UTC(2026, 0, 15))).toEqual({
      utcOffset: '+09:00',
      abbreviation: null,
    });
  });

  it('a missing or malformed table is dataset_missing / dataset_invalid, naming the file', () => {
    const missing = join(temp, 'none.json');
    const bad = join(temp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ zones: [] }));
    const error = (path: string) => {
      try {
        readAbbreviations(path);
      } catch (e) {
        return e;
      }
      return null;
    };
    expect(isSeclookupError(error(missing), 'dataset_missing') && (error(missing) as Error).message).toContain(missing);
    expect(isSeclookupError(error(bad), 'dataset_invalid') && (error(bad) as Error).message).toContain(bad);
  });
});
