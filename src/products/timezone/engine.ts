/**
 * The timezone engine: IANA time zone, UTC offset and abbreviation for a public IP, plus its
 * country and city. It reads the geoip engine's database (one database in memory for both
 * products): the zone is the database's (MaxMind's `location.time_zone`) or the one at the
 * record's coordinates (DB-IP Lite has none of its own); offset and abbreviation are for the
 * engine's clock `now`, so they follow daylight saving time.
 *
 * An address the database has no record for is answered with nulls, not an error (SPEC lists no
 * 404 for timezone; ours). 400 `invalid_ip` and 422 `ip_not_routable` come from prepare (so a
 * private address is never billed); 502 `lookup_failed` when the database cannot be read.
 * Abbreviations come from the data folder's `timezone/abbreviations.json`: a missing or broken
 * one fails the build (index.ts), naming the file.
 */
import { readRoutableIp, type IpInput } from '../../lib/ip-input.js';
import { createJsonMemo } from '../../lib/json-memo.js';
import type { LookupOutcome } from '../../lib/outcome.js';
import type { GeoIpEngine } from '../geoip/engine.js';
import type { ZoneAbbreviations } from './abbreviations.js';
import { createZoneClocks } from './clock.js';
import type { TimezoneResult } from './types.js';

export interface TimezoneEngine {
  /** LookupError `invalid_ip` (400), then `ip_not_routable` (422). No I/O. */
  prepare(ip: string): IpInput;
  /** Synchronous; throws LookupError `lookup_failed` (502) when the database cannot be read. */
  lookup(input: IpInput): LookupOutcome<TimezoneResult>;
  /** The zone's offset and abbreviation at `ms` (default: now). */
  clock(zone: string, ms?: number): { utcOffset: string | null; abbreviation: string | null };
  /** The tzdata release of the abbreviation table it loaded (`2025b`); null with the bundled default. */
  readonly tzdata: string | null;
}

export interface TimezoneEngineDeps {
  /** The geoip engine whose database is read. */
  geoip: Pick<GeoIpEngine, 'locate'>;
  now: () => number;
  /**
   * The tz abbreviation table: the product reads its data folder's (`loadAbbreviations(dataDir)`).
   * @default the bundled one
   */
  abbreviations?: ZoneAbbreviations;
}

export function createTimezoneEngine({ geoip, now, abbreviations }: TimezoneEngineDeps): TimezoneEngine {
  const clocks = createZoneClocks(abbreviations);
  // The answers' JSON by address, kept while its record and the zone's clock reading are the same.
  const answers = createJsonMemo<TimezoneResult>();
  return {
    prepare: (ip) => readRoutableIp(ip),
    lookup(input) {
      const geo = geoip.locate(input);
      const id = geo?.timezoneId ?? null;
      const clock = id === null ? null : clocks.at(id, now());
      const result: TimezoneResult = {
        ip: input.ip,
        timezone: { id, utc_offset: clock?.utcOffset ?? null, abbreviation: clock?.abbreviation ?? null },
        country: { code: geo?.countryCode ?? null },
        city: geo?.city ?? null,
      };
      // Computed on every call from the local database, never from a cache of results; only its
      // JSON is reused (from an address's second lookup on), while the record and the clock
      // reading (one object per zone and hour) hold.
      return { result, cached: false, json: answers.repeated(input.ip, result, geo, clock) };
    },
    clock: (zone, ms = now()) => {
      const { utcOffset, abbreviation } = clocks.at(zone, ms);
      return { utcOffset, abbreviation };
    },
    tzdata: abbreviations?.version ?? null,
  };
}
