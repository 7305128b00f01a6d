/**
 * A time zone's UTC offset and abbreviation at an instant, with no Intl object built per
 * lookup (a format call costs several µs): one formatter is made per zone; an answer is
 * remembered per zone for the UTC hour it was asked in when the offset is the same at the
 * hour's first and last millisecond (and no abbreviation change falls inside it), else for the
 * minute (offsets change only on a whole minute, and no zone changes twice within an hour).
 * A new hour costs two format calls per zone.
 *
 * Offset: Intl (the ICU time zone data Node ships), `timeZoneName: 'shortOffset'` ("GMT-5",
 * "GMT+5:30", "GMT") as `-05:00`, `+05:30`, `+00:00`.
 *
 * Abbreviation: the tz database's own (abbreviations.ts): JST, MSK, EST/EDT, and numbers like
 * `+0545` only where tzdata itself writes them; null when the zone is not in the bundled table.
 * Never Intl's per-locale "GMT+3".
 */
import { bundledAbbreviations, type ZoneAbbreviations } from './abbreviations.js';

/** What a zone looks like at one instant. */
export interface ZoneClock {
  /** `+HH:MM` / `-HH:MM`, or null when the zone is unknown to this Node's ICU. */
  utcOffset: string | null;
  abbreviation: string | null;
}

interface ZoneFormatters {
  offset: Intl.DateTimeFormat;
  /** The period the remembered answer holds for: [from, until) in ms. */
  from: number;
  until: number;
  answer: ZoneClock;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

const UNKNOWN: ZoneClock = Object.freeze({ utcOffset: null, abbreviation: null });
const SHORT_OFFSET = /^(?:GMT|UTC)(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/;

/**
 * A zone's clock, its formatter made on first use. Bounded: ICU knows a few hundred zones.
 * @param abbreviations the tz table (default: the bundled one, read now: a missing file fails here).
 */
export function createZoneClocks(abbreviations: ZoneAbbreviations = bundledAbbreviations()): {
  at(zone: string, ms: number): ZoneClock;
  readonly size: number;
} {
  const zones = new Map<string, ZoneFormatters | null>();

  function formattersOf(zone: string): ZoneFormatters | null {
    let formatters = zones.get(zone);
    if (formatters !== undefined) return formatters;
    try {
      formatters = {
        offset: new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' }),
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
      const utcOffset = offsetText(shortOffset);
      if (utcOffset === null) {
        formatters.answer = UNKNOWN;
        return UNKNOWN;
      }
      const named = abbreviations.at(zone, ms, offsetSeconds(utcOffset));
      // The answer holds only while the tz table's entry does too (a renamed abbreviation can change mid-hour).
      formatters.from = Math.max(formatters.from, named.from);
      formatters.until = Math.min(formatters.until, named.until);
      formatters.answer = Object.freeze({ utcOffset, abbreviation: named.abbreviation });
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

/** "+05:30" -> 19800, "-03:30" -> -12600. */
function offsetSeconds(utcOffset: string): number {
  const sign = utcOffset.startsWith('-') ? -1 : 1;
  return sign * (Number(utcOffset.slice(1, 3)) * 3600 + Number(utcOffset.slice(4, 6)) * 60);
}
