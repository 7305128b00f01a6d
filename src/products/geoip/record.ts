/**
 * A database record read as the fields of a geoip result. Two layouts are read, recognised by
 * the record's own shape (not by the file's databaseType, which differs between DB-IP's own
 * downloads and ip-location-db's):
 *
 * - flat (ip-location-db's DB-IP City Lite): `country_code, state1, state2, city, postcode,
 *   latitude, longitude, timezone`, with empty strings for missing values (postcode and
 *   timezone are always empty in the Lite data);
 * - MaxMind (GeoIP2 / GeoLite2 City, Country, Enterprise, and DB-IP's MaxMind-layout files):
 *   `continent`, `country`, `subdivisions`, `city`, `postal`, `location`, `traits`, with
 *   English names under `names.en`.
 *
 * What a record leaves out is filled only where it follows from what it gives: the continent
 * and country name from the country code, the EU flag from the EU list, the time zone from the
 * coordinates (tz-lookup), kept to one of the country's own zones (tzdata's zone.tab:
 * country-zones.ts). Everything else stays null.
 */
import tzlookup from '@photostructure/tz-lookup';
import { bundledCountryZones, type CountryZones } from './country-zones.js';
import { CONTINENT_NAMES, continentOf, countryNameOf, EU_MEMBERS, isKnownCountry } from './countries.js';

/** The location part of a result, made once per database record and shared (read-only). */
export interface Geo {
  readonly continent: string | null;
  readonly countryCode: string | null;
  readonly countryName: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly postal: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly timezoneId: string | null;
  readonly isEu: boolean | null;
  /** Connection fields carried by the record itself (GeoIP2 Enterprise `traits`). */
  readonly isp: string | null;
  readonly org: string | null;
  readonly asn: number | null;
  readonly domain: string | null;
  /** False when the record says nothing about where the address is (no country, continent or coordinates). */
  readonly located: boolean;
  /** False when it says nothing about the location or the network either: no answer at all (404). */
  readonly known: boolean;
}

type Loose = Record<string, unknown>;

/**
 * Read a record of either layout; a zone worked out from coordinates stays within the record's
 * country as `zones` (tzdata's zone.tab in the engine's data folder) lists them. Never throws on
 * odd shapes: unknown fields read as null.
 */
export function readGeo(record: unknown, zones: CountryZones = bundledCountryZones()): Geo {
  const rec = (isObject(record) ? record : {}) as Loose;
  return typeof rec.country_code === 'string' || typeof rec.state1 === 'string' ? readFlat(rec, zones) : readMaxMind(rec, zones);
}

function readFlat(rec: Loose, zones: CountryZones): Geo {
  const code = countryCode(rec.country_code);
  const latitude = coordinate(rec.latitude, 90);
  const longitude = coordinate(rec.longitude, 180);
  return finish({
    continent: code ? continentOf(code) : null,
    countryCode: code,
    countryName: code ? countryNameOf(code) : null,
    region: text(rec.state1),
    city: text(rec.city),
    postal: text(rec.postcode),
    latitude,
    longitude,
    timezoneId: text(rec.timezone) ?? zoneAt(latitude, longitude, code, zones),
    isEu: code ? EU_MEMBERS.has(code) : null,
    isp: null,
    org: null,
    asn: null,
    domain: null,
  });
}

function readMaxMind(rec: Loose, zones: CountryZones): Geo {
  const country = objectAt(rec, 'country');
  const code = country ? countryCode(country.iso_code) : null;
  const continent = objectAt(rec, 'continent');
  const location = objectAt(rec, 'location');
  const latitude = location ? coordinate(location.latitude, 90) : null;
  const longitude = location ? coordinate(location.longitude, 180) : null;
  const subdivisions = Array.isArray(rec.subdivisions) ? rec.subdivisions : [];
  const traits = objectAt(rec, 'traits') ?? rec; // Enterprise: under traits; ISP-style files: top level
  const euFlag = country?.is_in_european_union;
  const continentCode = continent ? text(continent.code) : null;
  return finish({
    continent: englishName(continent) ?? (continentCode ? CONTINENT_NAMES[continentCode] : undefined) ?? (code ? continentOf(code) : null),
    countryCode: code,
    countryName: code ? (englishName(country) ?? countryNameOf(code)) : null,
    region: englishName(isObject(subdivisions[0]) ? (subdivisions[0] as Loose) : null),
    city: englishName(objectAt(rec, 'city')),
    postal: text(objectAt(rec, 'postal')?.code),
    latitude,
    longitude,
    timezoneId: (location ? text(location.time_zone) : null) ?? zoneAt(latitude, longitude, code, zones),
    // MaxMind sets the flag only when true; a record without it falls back on the EU list.
    isEu: code ? (typeof euFlag === 'boolean' ? euFlag : EU_MEMBERS.has(code)) : null,
    isp: text(traits.isp),
    org: text(traits.organization) ?? text(traits.autonomous_system_organization),
    asn: asNumber(traits.autonomous_system_number),
    domain: text(traits.domain)?.toLowerCase() ?? null,
  });
}

/** One class, so every Geo has the same shape (and no spread or freeze per record). */
class GeoValue implements Geo {
  readonly continent: string | null;
  readonly countryCode: string | null;
  readonly countryName: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly postal: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly timezoneId: string | null;
  readonly isEu: boolean | null;
  readonly isp: string | null;
  readonly org: string | null;
  readonly asn: number | null;
  readonly domain: string | null;
  readonly located: boolean;
  readonly known: boolean;

  constructor(f: Omit<Geo, 'located' | 'known'>) {
    this.continent = f.continent;
    this.countryCode = f.countryCode;
    this.countryName = f.countryName;
    this.region = f.region;
    this.city = f.city;
    this.postal = f.postal;
    this.latitude = f.latitude;
    this.longitude = f.longitude;
    this.timezoneId = f.timezoneId;
    this.isEu = f.isEu;
    this.isp = f.isp;
    this.org = f.org;
    this.asn = f.asn;
    this.domain = f.domain;
    this.located = f.countryCode !== null || f.continent !== null || f.latitude !== null;
    this.known = this.located || f.isp !== null || f.org !== null || f.asn !== null || f.domain !== null;
  }
}

function finish(fields: Omit<Geo, 'located' | 'known'>): Geo {
  return new GeoValue(fields);
}

/**
 * The zone at the coordinates (both present), else null: tz-lookup's, kept within the record's
 * country when tzdata lists zones for it (country-zones.ts: a coordinate near a border can fall
 * in the neighbour's zone). Run once per record while the engine's record memo holds it; the
 * country check is one Set lookup, the search for a replacement only runs on a mismatch.
 */
function zoneAt(latitude: number | null, longitude: number | null, country: string | null, zones: CountryZones): string | null {
  if (latitude === null || longitude === null) return null;
  const found = lookupZone(latitude, longitude);
  return country === null ? found : zones.zoneFor(country, latitude, longitude, found, lookupZone);
}

function lookupZone(latitude: number, longitude: number): string | null {
  try {
    return tzlookup(latitude, longitude);
  } catch {
    return null; // out-of-range coordinates: no zone rather than a failed lookup
  }
}

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(rec: Loose, key: string): Loose | null {
  const value = rec[key];
  return isObject(value) ? value : null;
}

/** A non-empty string, else null (flat records use '' for missing). */
function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function englishName(part: Loose | null): string | null {
  const names = part ? part.names : undefined;
  return isObject(names) ? text(names.en) : null;
}

/** A known country code (upper case), else null: `ZZ`, `EU`, `AP` and '' are not countries. */
function countryCode(value: unknown): string | null {
  if (typeof value !== 'string' || value.length !== 2) return null;
  const code = value.toUpperCase();
  return isKnownCountry(code) ? code : null;
}

/** A finite coordinate within ±limit, rounded to 4 decimals (DB-IP's are float32: 37.422000885 is 37.422). */
function coordinate(value: unknown, limit: number): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > limit) return null;
  return Math.round(value * 10_000) / 10_000;
}

function asNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
