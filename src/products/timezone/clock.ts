/**
 * A time zone's UTC offset and abbreviation at an instant, from Intl (the ICU time zone data
 * Node ships), with no Intl object built per lookup (a format call costs several µs):
 * formatters are made once per zone; an answer is remembered per zone for the UTC hour it was
 * asked in when the offset is the same at the hour's first and last millisecond, else for the
 * minute (offsets change only on a whole minute, and no zone changes twice within an hour); and
 * the abbreviation is remembered per zone and offset (EST goes with -05:00 in New York, EDT
 * with -04:00). A new hour costs two format calls per zone.
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
  /** The abbreviation (or null) found for each offset text seen in this zone. */
  abbreviations: Map<string, string | null>;
  /** The period the remembered answer holds for: [from, until) in ms. */
  from: number;
  until: number;
  answer: ZoneClock;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

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
        abbreviations: new Map(),
        from: 0,
        until: 0,
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
      if (ms >= formatters.from && ms < formatters.until) return formatters.answer;
      const hour = Math.floor(ms / HOUR) * HOUR;
      const shortOffset = zoneName(formatters.offset, ms);
      if (zoneName(formatters.offset, hour) === shortOffset && zoneName(formatters.offset, hour + HOUR - 1) === shortOffset) {
        formatters.from = hour;
        formatters.until = hour + HOUR;
      } else {
        // The offset changes within this hour: remember the answer for this minute only.
        formatters.from = Math.floor(ms / MINUTE) * MINUTE;
        formatters.until = formatters.from + MINUTE;
      }
      let abbreviation = formatters.abbreviations.get(shortOffset);
      if (abbreviation === undefined) {
        abbreviation = abbreviationOf(formatters.names, ms);
        formatters.abbreviations.set(shortOffset, abbreviation);
      }
      formatters.answer = Object.freeze({ utcOffset: offsetText(shortOffset), abbreviation });
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
