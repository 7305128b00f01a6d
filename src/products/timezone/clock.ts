/**
 * A time zone's UTC offset and abbreviation at an instant, from Intl (the ICU time zone data
 * Node ships), with no Intl object built per lookup: formatters are made once per zone and an
 * answer is remembered per zone for the minute it was asked in (offsets only ever change on a
 * whole minute).
 *
 * Offset: `timeZoneName: 'shortOffset'` ("GMT-5", "GMT+5:30", "GMT") as `-05:00`, `+05:30`,
 * `+00:00`.
 *
 * Abbreviation: ICU knows real abbreviations only per locale (en-US knows EST and PDT, en-GB
 * BST and CET, en-AU AEST, en-IN IST, ...) and otherwise writes "GMT+3". Each zone is formatted
 * in a short list of English locales and the first real abbreviation (letters only, like EST,
 * CEST, AEDT, UTC, GMT, ChST) wins; when none has one (Asia/Tokyo, Europe/Moscow), the
 * abbreviation is null, never a made-up "GMT+3" or "+03".
 */

/** English locales whose ICU data names zones of their region, in the order they are tried. */
const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-AU', 'en-IN', 'en-NZ', 'en-CA', 'en-ZA', 'en-IE'] as const;

/** What a zone looks like at one instant. */
export interface ZoneClock {
  /** `+HH:MM` / `-HH:MM`, or null when the zone is unknown to this Node's ICU. */
  utcOffset: string | null;
  abbreviation: string | null;
}

interface ZoneFormatters {
  offset: Intl.DateTimeFormat;
  names: Intl.DateTimeFormat[];
  /** The minute (ms / 60000) of the remembered answer. */
  minute: number;
  answer: ZoneClock;
}

const UNKNOWN: ZoneClock = Object.freeze({ utcOffset: null, abbreviation: null });
const REAL_ABBREVIATION = /^[A-Za-z]{2,6}$/;
const SHORT_OFFSET = /^(?:GMT|UTC)(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/;

/** A zone's clock, its formatters made on first use. Bounded: ICU knows a few hundred zones. */
export function createZoneClocks(): { at(zone: string, ms: number): ZoneClock; readonly size: number } {
  const zones = new Map<string, ZoneFormatters | null>();

  function formattersOf(zone: string): ZoneFormatters | null {
    let formatters = zones.get(zone);
    if (formatters !== undefined) return formatters;
    try {
      formatters = {
        offset: new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' }),
        names: ABBREVIATION_LOCALES.map((locale) => new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' })),
        minute: Number.NaN,
        answer: UNKNOWN,
      };
    } catch {
      formatters = null; // not a zone ICU knows (RangeError): offset and abbreviation unknown
    }
    if (zones.size >= 2048) zones.clear(); // zone ids come from a database: bounded all the same
    zones.set(zone, formatters);
    return formatters;
  }

  return {
    at(zone, ms) {
      const formatters = formattersOf(zone);
      if (!formatters) return UNKNOWN;
      const minute = Math.floor(ms / 60_000);
      if (formatters.minute !== minute) {
        formatters.answer = Object.freeze({ utcOffset: offsetText(zoneName(formatters.offset, ms)), abbreviation: abbreviationOf(formatters.names, ms) });
        formatters.minute = minute;
      }
      return formatters.answer;
    },
    get size() {
      return zones.size;
    },
  };
}

function zoneName(format: Intl.DateTimeFormat, ms: number): string {
  for (const part of format.formatToParts(ms)) if (part.type === 'timeZoneName') return part.value;
  return '';
}

/** "GMT-5" -> "-05:00", "GMT+5:30" -> "+05:30", "GMT" -> "+00:00"; null for anything else. */
export function offsetText(shortOffset: string): string | null {
  const match = SHORT_OFFSET.exec(shortOffset);
  if (!match) return null;
  const [, sign = '+', hours = '0', minutes = '00'] = match;
  return `${sign}${hours.padStart(2, '0')}:${minutes}`;
}

function abbreviationOf(formats: readonly Intl.DateTimeFormat[], ms: number): string | null {
  for (const format of formats) {
    const name = zoneName(format, ms);
    if (REAL_ABBREVIATION.test(name)) return name;
  }
  return null;
}
