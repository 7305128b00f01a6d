/**
 * Dates as registries write them, read into instants. RDAP sends RFC 3339 (with the usual
 * deviations: `+0000`, fractions, no zone at all); port-43 WHOIS sends anything from ISO 8601
 * to `05-Dec-2020`, `18.7.2012 04:04:23`, `2001-Aug-23.`, `20141204 14:57:44`,
 * `2025/05/29 10:45:59 (JST)` and `Tue Feb 10 09:42:42 2004`.
 *
 * Rules (ours):
 * - A value is read only when ALL of it is a date (plus a zone, a trailing `.`, or a note in
 *   parentheses such as `(YYYY-MM-DD)`): `before Aug-1996` and `see at www.register.bg` are
 *   not dates, and give null rather than a guess.
 * - Numeric day-month orders: `D.M.YYYY`, `DD/MM/YYYY` and `DD-MM-YYYY` are day first (the
 *   registries that use them: .fi, .rs, .cr, .pt, .il, .hk), except where the second number
 *   cannot be a month (`12/18/2001`, Dot TK); year-first forms are year, month, day.
 * - A time with a zone offset or a known zone abbreviation (UTC, GMT, JST, CET, CLST, EDT, ...)
 *   is converted to UTC; a time with no zone, or an abbreviation we do not know, is read as UTC.
 *   A date without a time is midnight UTC.
 * - Out-of-range parts (month 13, 30 February, hour 25) make the value unreadable.
 */

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
  january: 1,
  february: 2,
  march: 3,
  april: 4,
  june: 6,
  july: 7,
  august: 8,
  september: 9,
  october: 10,
  november: 11,
  december: 12,
};

/** Zone abbreviations that registries print, in minutes east of UTC. Ambiguous ones (CST, IST) are left out. */
const ZONES: Readonly<Record<string, number>> = {
  utc: 0,
  gmt: 0,
  ut: 0,
  z: 0,
  wet: 0,
  west: 60,
  bst: 60,
  cet: 60,
  met: 60,
  cest: 120,
  mest: 120,
  eet: 120,
  sast: 120,
  wat: 60,
  eest: 180,
  eat: 180,
  msk: 180,
  hkt: 480,
  sgt: 480,
  awst: 480,
  jst: 540,
  kst: 540,
  aest: 600,
  aedt: 660,
  nzst: 720,
  nzdt: 780,
  clt: -240,
  clst: -180,
  art: -180,
  brt: -180,
  ast: -240,
  edt: -240,
  est: -300,
  cdt: -300,
  mdt: -360,
  mst: -420,
  pdt: -420,
  pst: -480,
};

// A time of day: H:MM, H:MM:SS, with an optional fraction.
const TIME = String.raw`(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?`;
// What may follow the time: an offset (+02, +0200, +02:00, Z), `GMT+0:00`, or a zone word.
const ZONE = String.raw`(?:\s*(Z|[+-]\d{1,2}(?::?\d{2})?|(?:GMT|UTC)[+-]\d{1,2}(?::?\d{2})?|[A-Za-z]{2,5}))?`;

interface Shape {
  pattern: RegExp;
  /** Year, month, day from the match. */
  ymd(m: RegExpExecArray): [number, number, number] | null;
  /** Index of the first time group (hour), when the shape has a time. */
  time?: number;
}

const shape = (date: string, order: (m: RegExpExecArray) => [number, number, number] | null, withTime = true): Shape => {
  const groups = (new RegExp(`${date}|`).exec('') as RegExpExecArray).length - 1;
  return {
    pattern: new RegExp(`^${date}${withTime ? `(?:[T\\s]+${TIME})?${ZONE}` : ''}$`, 'i'),
    ymd: order,
    time: withTime ? groups + 1 : undefined,
  };
};

const month = (name: string): number | null => MONTHS[name.toLowerCase()] ?? null;
const twoDigitYear = (yy: number): number => (yy < 50 ? 2000 + yy : 1900 + yy);

const SHAPES: readonly Shape[] = [
  // 2024-06-03T09:54:56Z, 2002-12-04 00:00:00+02, 1999.10.27 13:00:00, 2025/05/29 10:45:59
  shape(String.raw`(\d{4})[-./](\d{1,2})[-./](\d{1,2})`, (m) => [+m[1], +m[2], +m[3]]),
  // 20141204 14:57:44, 19990518
  shape(String.raw`(\d{4})(\d{2})(\d{2})`, (m) => [+m[1], +m[2], +m[3]]),
  // 20121216134104 (RIPE-style stamps of .ua, .il): YYYYMMDDhhmmss
  { pattern: /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/, ymd: (m) => [+m[1], +m[2], +m[3]], time: 4 },
  // 2007. 03. 02 (KRNIC; the last dot is dropped before)
  shape(String.raw`(\d{4})\.\s+(\d{1,2})\.\s+(\d{1,2})`, (m) => [+m[1], +m[2], +m[3]], false),
  // 18.7.2012 04:04:23, 30/10/2002, 05-06-1999: day first, unless only month first can be
  // read (Dot TK's 12/18/2001)
  shape(String.raw`(\d{1,2})[-./](\d{1,2})[-./](\d{4})`, (m) => (+m[2] > 12 && +m[1] <= 12 ? [+m[3], +m[1], +m[2]] : [+m[3], +m[2], +m[1]])),
  // 05-Dec-2020, 07-nov-2007, 05-Oct-1997 04:00:00 UTC, 29-APR-05, 14 Jul 1998
  shape(String.raw`(\d{1,2})[-\s/.]([A-Za-z]{3,9})\.?[-\s/.,]+(\d{4}|\d{2})`, (m) => {
    const mo = month(m[2]);
    return mo === null ? null : [m[3].length === 2 ? twoDigitYear(+m[3]) : +m[3], mo, +m[1]];
  }),
  // 2001-Aug-23
  shape(String.raw`(\d{4})[-\s/.]([A-Za-z]{3,9})[-\s/.](\d{1,2})`, (m) => {
    const mo = month(m[2]);
    return mo === null ? null : [+m[1], mo, +m[3]];
  }),
  // Aug 23 2001, August 23, 2001
  shape(String.raw`([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})`, (m) => {
    const mo = month(m[1]);
    return mo === null ? null : [+m[3], mo, +m[2]];
  }),
];

// ctime: Tue Feb 10 09:42:42 2004 (the year after the time), optionally with a zone before the year.
const CTIME = new RegExp(String.raw`^(?:[A-Za-z]{3},?\s+)?([A-Za-z]{3,9})\s+(\d{1,2})\s+${TIME}(?:\s+([A-Za-z]{2,5}))?\s+(\d{4})$`, 'i');
// RFC 2822: Thu, 26 Jun 2008 21:40:25 EDT
const RFC2822 = new RegExp(String.raw`^[A-Za-z]{3},\s+(\d{1,2})\s+([A-Za-z]{3,9})\s+(\d{4})\s+${TIME}${ZONE}$`, 'i');

/**
 * The instant (ms since the epoch) a registry's date text stands for, or null when the text
 * is not wholly a readable date (see the rules above).
 */
export function parseRegistryDate(input: string): number | null {
  let text = input.trim();
  if (text === '' || text.length > 64) return null;
  text = text.replace(/\s*#\d+$/, ''); // registro.br: `19990518 #162310`
  // A parenthesised note at the end: a zone (`(JST)`, `(GMT+0:00)`) or a remark (`(YYYY-MM-DD)`).
  const note = /\s*\(([^()]*)\)$/.exec(text);
  let noteZone: number | null = null;
  if (note) {
    text = text.slice(0, note.index);
    noteZone = zoneOffset(note[1].trim());
  }
  text = text.replace(/\.$/, '').trim();
  // `Friday 7th November 2003`, `2nd April, 2001`, `Thu Aug 03 2006`: no weekday, no ordinal suffix.
  text = text
    .replace(/^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+(?=[a-z]{3,9}\s+\d{1,2}\s+\d{4}$|\d{1,2}(?:st|nd|rd|th)?\s)/i, '')
    .replace(/^(\d{1,2})(?:st|nd|rd|th)\b/i, '$1');

  const c = CTIME.exec(text);
  if (c) {
    const mo = month(c[1]);
    if (mo === null) return null;
    return build([+c[8], mo, +c[2]], c, 3, c[7] ? (zoneOffset(c[7]) ?? 0) : (noteZone ?? 0));
  }
  const r = RFC2822.exec(text);
  if (r) {
    const mo = month(r[2]);
    if (mo === null) return null;
    return build([+r[3], mo, +r[1]], r, 4, r[8] ? (zoneOffset(r[8]) ?? 0) : (noteZone ?? 0));
  }
  for (const candidate of SHAPES) {
    const m = candidate.pattern.exec(text);
    if (!m) continue;
    const ymd = candidate.ymd(m);
    if (!ymd) return null;
    const zoneText = candidate.time === undefined ? undefined : m[candidate.time + 4];
    // A zone word we do not know is read as UTC, like no zone at all (documented above).
    const offset = zoneText !== undefined ? (zoneOffset(zoneText) ?? 0) : (noteZone ?? 0);
    return build(ymd, m, candidate.time, offset);
  }
  return null;
}

/** Minutes east of UTC for `Z`, `+02`, `+0200`, `-03:00`, `GMT+0:00`, or a known abbreviation. */
function zoneOffset(zone: string): number | null {
  const z = zone.trim();
  const numeric = /^(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(z);
  if (numeric) {
    const minutes = +numeric[2] * 60 + (numeric[3] ? +numeric[3] : 0);
    if (+numeric[2] > 14 || (numeric[3] && +numeric[3] > 59)) return null;
    return numeric[1] === '-' ? -minutes : minutes;
  }
  return ZONES[z.toLowerCase()] ?? null;
}

/** Date.UTC of the parts, checked, minus the zone offset; null when a part is out of range. */
function build([year, mo, day]: [number, number, number], m: RegExpExecArray, timeIndex: number | undefined, offsetMinutes: number): number | null {
  if (year < 1800 || year > 9999 || mo < 1 || mo > 12 || day < 1 || day > daysIn(year, mo)) return null;
  let hour = 0;
  let minute = 0;
  let second = 0;
  if (timeIndex !== undefined && m[timeIndex] !== undefined) {
    hour = +m[timeIndex];
    minute = +m[timeIndex + 1];
    second = m[timeIndex + 2] !== undefined ? +m[timeIndex + 2] : 0;
    if (hour > 23 || minute > 59 || second > 60) return null;
  }
  return Date.UTC(year, mo - 1, day, hour, minute, Math.min(second, 59)) - offsetMinutes * 60_000;
}

function daysIn(year: number, mo: number): number {
  return new Date(Date.UTC(year, mo, 0)).getUTCDate();
}

/** SPEC's form of an instant (ours): `YYYY-MM-DDTHH:MM:SSZ`, seconds precision. */
export function formatInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}
