/**
 * timezone over real data: the zone from the geoip engine's database (MaxMind's time_zone, or
 * the coordinates of a DB-IP record), and offset and abbreviation for the engine's clock, set
 * by each test to a winter or summer instant, or either side of a DST change.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { isLookupError, isSeclookupError } from '../../src/errors.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { offsetText } from '../../src/products/timezone/clock.js';
import { MAXMIND } from './geoip-fixtures.js';

const JANUARY = Date.UTC(2026, 0, 15, 12);
const JULY = Date.UTC(2026, 6, 15, 12);

/** A lookup whose clock the test moves. */
function at(ms: number, geoip: Record<string, unknown> = {}) {
  const clock = { now: ms };
  const lookup = createLookup({ now: () => clock.now, geoip: { asn: false, watch: false, ...geoip } });
  return { lookup, clock };
}

describe('offset and abbreviation follow daylight saving time', () => {
  it('America/New_York: -05:00 EST in January, -04:00 EDT in July (MaxMind time_zone)', async () => {
    const { lookup, clock } = at(JANUARY, { database: MAXMIND.enterprise });
    expect(await lookup.timezone('74.209.24.1')).toEqual({
      ip: '74.209.24.1',
      timezone: { id: 'America/New_York', utc_offset: '-05:00', abbreviation: 'EST' },
      country: { code: 'US' },
      city: 'Chatham',
    });
    clock.now = JULY;
    expect((await lookup.timezone('74.209.24.1')).timezone).toEqual({ id: 'America/New_York', utc_offset: '-04:00', abbreviation: 'EDT' });
  });

  it('changes at the exact minute of the transition (2026-03-08 07:00 UTC in New York)', async () => {
    const change = Date.UTC(2026, 2, 8, 7);
    const { lookup, clock } = at(change - 1, { database: MAXMIND.enterprise });
    expect((await lookup.timezone('74.209.24.1')).timezone).toMatchObject({ utc_offset: '-05:00', abbreviation: 'EST' });
    clock.now = change;
    expect((await lookup.timezone('74.209.24.1')).timezone).toMatchObject({ utc_offset: '-04:00', abbreviation: 'EDT' });
    clock.now = change - 60_000;
    expect((await lookup.timezone('74.209.24.1')).timezone).toMatchObject({ utc_offset: '-05:00', abbreviation: 'EST' });
  });

  it('changes at the exact minute inside an hour: Australia/Adelaide leaves ACDT at 2026-04-04 16:30 UTC', () => {
    const engine = at(JANUARY).lookup.engine('timezone');
    const change = Date.UTC(2026, 3, 4, 16, 30);
    expect(engine.clock('Australia/Adelaide', change - 60_001)).toEqual({ utcOffset: '+10:30', abbreviation: 'ACDT' });
    expect(engine.clock('Australia/Adelaide', change - 1)).toEqual({ utcOffset: '+10:30', abbreviation: 'ACDT' });
    expect(engine.clock('Australia/Adelaide', change)).toEqual({ utcOffset: '+09:30', abbreviation: 'ACST' });
    expect(engine.clock('Australia/Adelaide', change + 20 * 60_000)).toEqual({ utcOffset: '+09:30', abbreviation: 'ACST' });
    expect(engine.clock('Australia/Adelaide', change - 15 * 60_000)).toEqual({ utcOffset: '+10:30', abbreviation: 'ACDT' });
    expect(engine.clock('Australia/Adelaide', Date.UTC(2026, 3, 4, 17, 59))).toEqual({ utcOffset: '+09:30', abbreviation: 'ACST' });
  });

  it('Europe/London: +00:00 GMT and +01:00 BST (MaxMind City)', async () => {
    const { lookup, clock } = at(JANUARY, { database: MAXMIND.city });
    expect(await lookup.timezone('81.2.69.142')).toEqual({
      ip: '81.2.69.142',
      timezone: { id: 'Europe/London', utc_offset: '+00:00', abbreviation: 'GMT' },
      country: { code: 'GB' },
      city: 'London',
    });
    clock.now = JULY;
    expect((await lookup.timezone('81.2.69.142')).timezone).toMatchObject({ utc_offset: '+01:00', abbreviation: 'BST' });
  });

  it('Australia/Sydney from DB-IP coordinates: +11:00 AEDT in January, +10:00 AEST in July', async () => {
    const { lookup, clock } = at(JANUARY);
    expect(await lookup.timezone('1.1.1.1')).toEqual({
      ip: '1.1.1.1',
      timezone: { id: 'Australia/Sydney', utc_offset: '+11:00', abbreviation: 'AEDT' },
      country: { code: 'AU' },
      city: 'Sydney',
    });
    clock.now = JULY;
    expect((await lookup.timezone('1.1.1.1')).timezone).toMatchObject({ utc_offset: '+10:00', abbreviation: 'AEST' });
  });

  it('Europe/Berlin over IPv6 (DB-IP): CET and CEST', async () => {
    const { lookup, clock } = at(JANUARY);
    expect((await lookup.timezone('2a00:1450:4001::1')).timezone).toEqual({ id: 'Europe/Berlin', utc_offset: '+01:00', abbreviation: 'CET' });
    clock.now = JULY;
    expect((await lookup.timezone('2a00:1450:4001::1')).timezone).toEqual({ id: 'Europe/Berlin', utc_offset: '+02:00', abbreviation: 'CEST' });
  });

  it('Asia/Tokyo is JST, from the tz database (Intl knows no name for it), never GMT+9', async () => {
    const { lookup } = at(JANUARY, { database: MAXMIND.city });
    expect((await lookup.timezone('2001:218::1')).timezone).toEqual({ id: 'Asia/Tokyo', utc_offset: '+09:00', abbreviation: 'JST' });
  });

  it.each([
    ['Asia/Kolkata', '+05:30', 'IST'],
    ['Asia/Kathmandu', '+05:45', '+0545'], // tzdata itself writes a number here
    ['America/St_Johns', '-03:30', 'NST'],
    ['Pacific/Honolulu', '-10:00', 'HST'],
    ['Europe/Moscow', '+03:00', 'MSK'],
    ['Europe/Istanbul', '+03:00', '+03'],
    ['Asia/Seoul', '+09:00', 'KST'],
    ['Asia/Shanghai', '+08:00', 'CST'],
    ['Asia/Jerusalem', '+02:00', 'IST'],
    ['America/Sao_Paulo', '-03:00', '-03'],
    ['Africa/Johannesburg', '+02:00', 'SAST'],
    ['Africa/Lagos', '+01:00', 'WAT'],
    ['Etc/UTC', '+00:00', 'UTC'],
    ['Etc/GMT+5', '-05:00', '-05'],
    ['Asia/Calcutta', '+05:30', 'IST'], // a link (backward) name
    ['US/Eastern', '-05:00', 'EST'],
  ])('%s in January: %s, abbreviation %s', (zone, offset, abbreviation) => {
    const engine = at(JANUARY).lookup.engine('timezone');
    expect(engine.clock(zone)).toEqual({ utcOffset: offset, abbreviation });
  });

  it('a zone id ICU does not know gives null offset and abbreviation', () => {
    expect(at(JANUARY).lookup.engine('timezone').clock('Mars/Olympus_Mons')).toEqual({ utcOffset: null, abbreviation: null });
  });

  it('reads Intl short offsets', () => {
    expect(['GMT', 'GMT+0', 'GMT-5', 'GMT+5:30', 'GMT-3:30', 'GMT+14', 'UTC', 'EST', ''].map(offsetText)).toEqual([
      '+00:00',
      '+00:00',
      '-05:00',
      '+05:30',
      '-03:30',
      '+14:00',
      '+00:00',
      null,
      null,
    ]);
  });
});

describe('what the database gives', () => {
  it('uses the geoip engine and its database (one in memory): configure geoip, timezone follows', async () => {
    const { lookup } = at(JANUARY, { database: MAXMIND.city });
    expect((await lookup.timezone('81.2.69.142')).city).toBe('London');
    expect(lookup.engine('geoip').info().files[0].path).toBe(MAXMIND.city);
  });

  it('a country-only record (GeoIP2-Country: no coordinates, no time_zone) gives its country and null zone', async () => {
    const { lookup } = at(JANUARY, { database: MAXMIND.country });
    expect(await lookup.timezone('81.2.69.142')).toEqual({
      ip: '81.2.69.142',
      timezone: { id: null, utc_offset: null, abbreviation: null },
      country: { code: 'GB' },
      city: null,
    });
  });

  it('an address the database has no record for gives nulls, not an error', async () => {
    const { lookup } = at(JANUARY, { database: MAXMIND.city });
    expect(await lookup.timezone('8.8.8.8')).toEqual({
      ip: '8.8.8.8',
      timezone: { id: null, utc_offset: null, abbreviation: null },
      country: { code: null },
      city: null,
    });
  });

  it('IPv4-mapped IPv6 is the IPv4 address', async () => {
    const { lookup } = at(JULY);
    expect(await lookup.timezone('::ffff:1.1.1.1')).toEqual(await lookup.timezone('1.1.1.1'));
  });

  it('is never cached: computed for the clock of each call', async () => {
    const { lookup } = at(JULY);
    expect((await lookup.detailed.timezone('1.1.1.1')).cached).toBe(false);
    expect((await lookup.detailed.timezone('1.1.1.1')).fetchedAt).toBeUndefined();
  });

  it.each([
    ['10.1.2.3', 'ip_not_routable', 422],
    ['fd00::1', 'ip_not_routable', 422],
    ['nope', 'invalid_ip', 400],
    ['', 'invalid_ip', 400],
  ])('%j: %s', async (ip, code, status) => {
    const error = await at(JANUARY)
      .lookup.timezone(ip)
      .catch((e: unknown) => e);
    expect(isLookupError(error) && [error.code, error.status]).toEqual([code, status]);
  });

  it('502 lookup_failed when the database fails while read', async () => {
    const { lookup } = at(JANUARY, { database: MAXMIND.brokenPointers });
    const error = await lookup.timezone('1.1.1.16').catch((e: unknown) => e);
    expect(isLookupError(error) && [error.code, error.status]).toEqual(['lookup_failed', 502]);
  });

  it('fails to build, naming the file, when the geoip database is missing', async () => {
    const missing = join(tmpdir(), 'seclookup-no-such-geoip.mmdb');
    const error = await at(JANUARY, { database: missing })
      .lookup.timezone('1.1.1.1')
      .catch((e: unknown) => e);
    expect(isSeclookupError(error, 'dataset_missing') && (error as Error).message).toContain(missing);
  });
});

describe('the abbreviation table of the data folder (createLookup dataDir, --data-dir)', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  /** A data folder holding a copy of the bundled timezone/ folder. */
  function dataDir(): { dir: string; file: string } {
    const dir = mkdtempSync(join(tmpdir(), 'seclookup-timezone-data-'));
    made.push(dir);
    cpSync(join(bundledDataDir(), 'timezone'), join(dir, 'timezone'), { recursive: true });
    return { dir, file: join(dir, 'timezone', 'abbreviations.json') };
  }
  const lookupIn = (dir: string) => createLookup({ dataDir: dir, now: () => JANUARY, geoip: { asn: false, watch: false, database: MAXMIND.enterprise } });

  it('is the one read: a table of that folder naming New York differently is what answers', async () => {
    const { dir, file } = dataDir();
    const table = JSON.parse(readFileSync(file, 'utf8')) as { zones: Record<string, { types: [number, string][]; rule: [number, string][] }> };
    const ny = table.zones['America/New_York'];
    for (const pairs of [ny.types, ny.rule]) for (const pair of pairs) if (pair[1] === 'EST') pair[1] = 'XST';
    writeFileSync(file, JSON.stringify(table));
    expect((await lookupIn(dir).timezone('74.209.24.1')).timezone).toEqual({ id: 'America/New_York', utc_offset: '-05:00', abbreviation: 'XST' });
    // The bundled table is untouched, and still answers for the bundled folder.
    expect((await lookupIn(bundledDataDir()).timezone('74.209.24.1')).timezone.abbreviation).toBe('EST');
  });

  it('missing there: the build fails with dataset_missing naming the file (as serve and doctor build it)', () => {
    const { dir, file } = dataDir();
    rmSync(file);
    const lookup = lookupIn(dir);
    let error: unknown;
    try {
      lookup.load('timezone');
    } catch (e) {
      error = e;
    }
    expect(isSeclookupError(error, 'dataset_missing')).toBe(true);
    expect((error as Error).message).toContain(file);
  });

  it.each([
    ['not JSON', '{"tzdata": '],
    ['an array', '[]'],
    ['no zones', '{"tzdata": "2025b", "links": {}, "zones": {}}'],
    ['a zone without types', '{"tzdata": "2025b", "links": {}, "zones": {"America/New_York": {"at": [], "type": [], "rule": []}}}'],
    [
      'a type index out of range',
      '{"tzdata": "2025b", "links": {}, "zones": {"America/New_York": {"types": [[-18000, "EST"]], "at": [0], "type": [3], "rule": []}}}',
    ],
    [
      'a link to no zone',
      '{"tzdata": "2025b", "links": {"US/Eastern": "America/Nowhere"}, "zones": {"UTC": {"types": [[0, "UTC"]], "at": [], "type": [], "rule": []}}}',
    ],
  ])('broken there (%s): the build fails with dataset_invalid naming the file', (_what, content) => {
    const { dir, file } = dataDir();
    writeFileSync(file, content);
    let error: unknown;
    try {
      lookupIn(dir).engine('timezone');
    } catch (e) {
      error = e;
    }
    expect(isSeclookupError(error, 'dataset_invalid')).toBe(true);
    expect((error as Error).message).toContain(file);
  });
});
