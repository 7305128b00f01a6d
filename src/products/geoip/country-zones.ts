/**
 * The time zones of each country, from the tz database's `zone.tab` (bundled as
 * data/timezone/zone.tab, see its SOURCES.md): one row per country and zone, with the zone's
 * principal location. Used to keep a zone found from coordinates within the record's own
 * country.
 *
 * Why: tz-lookup's boundaries are coarse, so coordinates near a border (Saint-Pierre, a few km
 * off Newfoundland; Monte Cristo on the Haitian border; Sarande across from Corfu) fall in the
 * neighbouring country's zone, sometimes with another UTC offset. The record's country code is
 * the better witness of which side of the border the address is on.
 *
 * The rule ({@link CountryZones.zoneFor}): tz-lookup's zone stands when it is one of the
 * country's zones, or when tzdata lists no zone for the country (DB-IP's XK, Kosovo; BV, HM).
 * Otherwise the country's only zone; or, for a country of several zones, the one tz-lookup finds
 * most often on the smallest ring of points around the coordinates where it finds any of them
 * (rings out to about 55 km), which follows the real boundaries between the country's own zones
 * (Sault Ste. Marie, Michigan, is America/Detroit, not America/Menominee, whose principal
 * location is nearer); or, when none is that near, the zone whose principal location is
 * nearest. A zone Node's ICU does not know is never chosen as a replacement (it would have no
 * offset); if the country has none it knows, tz-lookup's zone stands.
 *
 * Names: zone.tab gives each country its own name even where zones are shared (SI
 * Europe/Ljubljana and HR Europe/Zagreb, both links to Europe/Belgrade), and tz-lookup answers
 * with those same names, so a plain Set lookup tells them apart. The one zone zone.tab cannot
 * place is Europe/Simferopol (Crimea): its own note says it is listed as UA, while zone1970.tab
 * lists it for RU and UA, so it is accepted for RU as well.
 *
 * Read once per process, on first use (the geoip engine reads it when it is built, so a missing
 * or broken file fails there, naming the file): about 420 rows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeclookupError } from '../../errors.js';
import { bundledDataDir } from '../../lib/datasets.js';

/** A zone and its principal location, in degrees. */
interface Place {
  readonly zone: string;
  readonly latitude: number;
  readonly longitude: number;
}

export interface CountryZones {
  /** The zone.tab rows read. */
  readonly rows: number;
  /** The zones tzdata lists for a country (upper-case ISO code); undefined when it lists none. */
  zonesOf(country: string): ReadonlySet<string> | undefined;
  /**
   * The zone for a record of `country` at these coordinates, given tz-lookup's answer there
   * (`found`, null when it had none): `found` when it is one of the country's zones or the
   * country has none listed, else one of the country's (module comment).
   */
  zoneFor(
    country: string,
    latitude: number,
    longitude: number,
    found: string | null,
    lookup: (latitude: number, longitude: number) => string | null,
  ): string | null;
}

export const ZONE_TAB_FILE = join('timezone', 'zone.tab');

/** zone1970.tab lists Europe/Simferopol for RU and UA; zone.tab only for UA (see its note on the row). */
const ALSO_ACCEPTED: Readonly<Record<string, readonly string[]>> = { RU: ['Europe/Simferopol'] };

/** Probe rings, in degrees of latitude (about 2, 5, 11, 22, 33 and 55 km), and points per ring. */
const RING_RADII = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5];
const RING_POINTS = 16;

/** ISO 6709 as zone.tab writes it: ±DDMM±DDDMM or ±DDMMSS±DDDMMSS. */
const COORDINATES = /^([+-])(\d{2})(\d{2})(\d{2})?([+-])(\d{3})(\d{2})(\d{2})?$/;

/** The table of a data folder (its `timezone/zone.tab`), read once per process and folder. */
const tables = new Map<string, CountryZones>();

/**
 * The table in `dataDir` (the engine's data folder: `createLookup({ dataDir })`, `--data-dir`),
 * read on first use. Throws SeclookupError `dataset_missing` / `dataset_invalid` naming the file.
 */
export function countryZonesIn(dataDir: string): CountryZones {
  let table = tables.get(dataDir);
  if (!table) tables.set(dataDir, (table = readCountryZones(join(dataDir, ZONE_TAB_FILE))));
  return table;
}

/** The bundled data folder's table. */
export function bundledCountryZones(): CountryZones {
  return countryZonesIn(bundledDataDir());
}

/** Read a zone.tab file. Throws SeclookupError `dataset_missing` (unreadable) / `dataset_invalid` (not such a file). */
export function readCountryZones(path: string): CountryZones {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
  const places = new Map<string, Place[]>();
  let rows = 0;
  for (const [index, line] of text.split('\n').entries()) {
    if (line === '' || line.startsWith('#')) continue;
    const [country, coordinates, zone] = line.split('\t');
    const match = coordinates ? COORDINATES.exec(coordinates) : null;
    if (!country || !/^[A-Z]{2}$/.test(country) || !match || !zone) {
      throw new SeclookupError(
        'dataset_invalid',
        `seclookup: dataset ${path} is not a tzdata zone.tab: line ${index + 1} is ${JSON.stringify(line.slice(0, 80))}`,
      );
    }
    const [, latSign, latD, latM, latS, lonSign, lonD, lonM, lonS] = match;
    const place: Place = {
      zone,
      latitude: degrees(latSign!, latD!, latM!, latS),
      longitude: degrees(lonSign!, lonD!, lonM!, lonS),
    };
    const list = places.get(country);
    if (list) list.push(place);
    else places.set(country, [place]);
    rows++;
  }
  if (rows < 300) throw new SeclookupError('dataset_invalid', `seclookup: dataset ${path} is not a tzdata zone.tab: ${rows} rows`);

  const zones = new Map<string, ReadonlySet<string>>();
  for (const [country, list] of places) zones.set(country, new Set([...list.map((place) => place.zone), ...(ALSO_ACCEPTED[country] ?? [])]));

  return {
    rows,
    zonesOf: (country) => zones.get(country),
    zoneFor(country, latitude, longitude, found, lookup) {
      const own = zones.get(country);
      if (!own || (found !== null && own.has(found))) return found;
      const list = places.get(country)!;
      if (list.length === 1) return knownToIntl(list[0]!.zone) ? list[0]!.zone : found;
      return probe(own, latitude, longitude, lookup) ?? nearest(list, latitude, longitude) ?? found;
    },
  };
}

function degrees(sign: string, d: string, m: string, s: string | undefined): number {
  const value = Number(d) + Number(m) / 60 + (s ? Number(s) / 3600 : 0);
  return sign === '-' ? -value : value;
}

/**
 * The country's zone that tz-lookup finds nearest the coordinates: on the first ring (smallest
 * radius) where it finds any, the one found at most of the ring's points (the first found on a tie).
 */
function probe(own: ReadonlySet<string>, latitude: number, longitude: number, lookup: (latitude: number, longitude: number) => string | null): string | null {
  // Degrees of longitude as long as one of latitude here, so that a ring is round on the ground.
  const stretch = 1 / Math.max(Math.cos((latitude * Math.PI) / 180), 0.1);
  for (const radius of RING_RADII) {
    const counts = new Map<string, number>();
    for (let i = 0; i < RING_POINTS; i++) {
      const angle = (2 * Math.PI * i) / RING_POINTS;
      const lat = latitude + radius * Math.sin(angle);
      if (lat > 90 || lat < -90) continue;
      let lon = longitude + radius * stretch * Math.cos(angle);
      if (lon > 180) lon -= 360;
      else if (lon < -180) lon += 360;
      const zone = lookup(lat, lon);
      if (zone !== null && own.has(zone) && knownToIntl(zone)) counts.set(zone, (counts.get(zone) ?? 0) + 1);
    }
    let best: string | null = null;
    let most = 0;
    for (const [zone, count] of counts) {
      if (count > most) {
        best = zone;
        most = count;
      }
    }
    if (best !== null) return best;
  }
  return null;
}

/** The zone (known to Intl) whose principal location is nearest the coordinates (great-circle distance). */
function nearest(list: readonly Place[], latitude: number, longitude: number): string | null {
  let best: string | null = null;
  let shortest = Number.POSITIVE_INFINITY;
  for (const place of list) {
    const distance = haversine(latitude, longitude, place.latitude, place.longitude);
    if (distance < shortest && knownToIntl(place.zone)) {
      best = place.zone;
      shortest = distance;
    }
  }
  return best;
}

/** Central angle between two points (radians): enough to compare distances. */
function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(a)));
}

const intlKnows = new Map<string, boolean>();

/** Whether this Node's ICU knows the zone (an older Node may not know the newest zone.tab names). */
function knownToIntl(zone: string): boolean {
  let known = intlKnows.get(zone);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      known = true;
    } catch {
      known = false;
    }
    intlKnows.set(zone, known); // bounded: only zone.tab's names are asked
  }
  return known;
}
