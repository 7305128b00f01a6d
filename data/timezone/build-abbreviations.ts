/**
 * Builds data/timezone/abbreviations.json: for every zone and link of the tz database, the
 * abbreviation in force at each instant, read from the compiled TZif files that zic makes from
 * the tz source (Debian's tzdata package: /usr/share/zoneinfo; the version is the `# version`
 * line of its tzdata.zi). Run by hand, never by the tests or at run time:
 *
 *   npx tsx data/timezone/build-abbreviations.ts [zoneinfo-dir]
 *
 * Per zone the file keeps what `src/products/timezone/abbreviations.ts` reads:
 *
 * - `types`: [UT offset in seconds, abbreviation] of each local time type the zone uses;
 * - `at` / `type`: the transition instants (seconds since 1970, ascending) and the type in force
 *   from each one on; before the first, type 0 (RFC 8536, as zic writes it);
 * - `rule`: [[offset, abbreviation], ...] of the TZif footer's POSIX TZ string (standard time,
 *   then daylight time when it has one). From the last kept transition on, the zone's offset
 *   (which the engine takes from Intl) picks the abbreviation out of these. Trailing
 *   transitions that only alternate between the footer's own types are therefore dropped, as
 *   zic's `-b slim` does, which keeps the file small without losing any answer.
 *
 * Zones with identical data are written once; the others name it in `links`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ZONEINFO = process.argv[2] ?? '/usr/share/zoneinfo';
const OUT = new URL('./abbreviations.json', import.meta.url);

type LocalType = [offset: number, abbreviation: string];

export interface ZoneTable {
  types: LocalType[];
  at: number[];
  type: number[];
  rule: LocalType[];
}

/** The 64-bit (v2+) data block and footer of a TZif file (RFC 8536). */
export function readTzif(bytes: Buffer): { types: LocalType[]; at: number[]; type: number[]; footer: string } {
  if (bytes.toString('latin1', 0, 4) !== 'TZif') throw new Error('not a TZif file');
  const counts = (at: number) => [20, 24, 28, 32, 36, 40].map((o) => bytes.readUInt32BE(at + o));
  // Skip the v1 block (32-bit times) to the v2 header.
  const [isutc1, isstd1, leap1, time1, type1, char1] = counts(0);
  const v2 = 44 + time1 * 5 + type1 * 6 + char1 + leap1 * 8 + isstd1 + isutc1;
  if (bytes[4] < 0x32) throw new Error('TZif version 1 has no 64-bit data');
  const [isutc, isstd, leap, timecnt, typecnt, charcnt] = counts(v2);
  let p = v2 + 44;
  const at: number[] = [];
  for (let i = 0; i < timecnt; i++, p += 8) at.push(Number(bytes.readBigInt64BE(p)));
  const type = [...bytes.subarray(p, p + timecnt)];
  p += timecnt;
  const raw: Array<{ offset: number; index: number }> = [];
  for (let i = 0; i < typecnt; i++, p += 6) raw.push({ offset: bytes.readInt32BE(p), index: bytes[p + 5] });
  const chars = bytes.toString('latin1', p, p + charcnt);
  p += charcnt + leap * 12 + isstd + isutc;
  const types = raw.map(({ offset, index }): LocalType => [offset, chars.slice(index, chars.indexOf('\0', index))]);
  const footer = bytes.toString('latin1', p).split('\n')[1] ?? '';
  return { types, at, type, footer };
}

/** The names and offsets of a POSIX TZ string: `EST5EDT,M3.2.0,M11.1.0`, `<+09>-9`, `IST-1GMT0,...`. */
export function readPosixNames(tz: string): LocalType[] {
  const name = String.raw`(<[^>]+>|[A-Za-z]{3,})`;
  const offset = String.raw`([+-]?\d{1,3}(?::\d{1,2}){0,2})`;
  const match = new RegExp(`^${name}${offset}(?:${name}${offset}?)?(?:,|$)`).exec(tz);
  if (!match) return [];
  const [, stdName, stdOffset, dstName, dstOffset] = match;
  const seconds = (text: string) => {
    const sign = text.startsWith('-') ? -1 : 1;
    const [h, m = '0', s = '0'] = text.replace(/^[+-]/, '').split(':');
    // POSIX offsets are west of Greenwich: EST5 is UT-5.
    return -sign * (Number(h) * 3600 + Number(m) * 60 + Number(s));
  };
  const bare = (text: string) => text.replace(/^<|>$/g, '');
  const std: LocalType = [seconds(stdOffset), bare(stdName)];
  if (!dstName) return [std];
  return [std, [dstOffset ? seconds(dstOffset) : std[0] + 3600, bare(dstName)]];
}

/** A TZif file as a table, trailing transitions the footer's types cover dropped. */
export function tableOf(bytes: Buffer): ZoneTable {
  const { types, at, type, footer } = readTzif(bytes);
  const rule = readPosixNames(footer);
  const ruleOffsets = new Set(rule.map(([offset]) => offset));
  const byRule = (t: LocalType) => rule.some(([offset, abbreviation]) => offset === t[0] && abbreviation === t[1]);
  // Offset alone must say which of the footer's names is meant.
  let keep = at.length;
  if (rule.length > 0 && ruleOffsets.size === rule.length) {
    while (keep > 1 && byRule(types[type[keep - 1]]) && byRule(types[type[keep - 2]])) keep--;
  }
  const kept = { at: at.slice(0, keep), type: type.slice(0, keep) };
  // One entry per distinct [offset, abbreviation] still used, in order of first use (type 0 stays
  // first: it is the one in force before any transition). zic keeps types apart that differ only
  // in flags we do not need (is-DST, standard/wall).
  const key = (t: number) => types[t].join(' ');
  const used = [0, ...kept.type].map(key).filter((k, i, all) => all.indexOf(k) === i);
  return {
    types: used.map((k) => types.find((_, t) => key(t) === k)!),
    at: kept.at,
    type: kept.type.map((t) => used.indexOf(key(t))),
    rule: ruleOffsets.size === rule.length ? rule : [],
  };
}

function main(): void {
  const source = readFileSync(join(ZONEINFO, 'tzdata.zi'), 'latin1');
  const version = /^# version (\S+)/m.exec(source)?.[1];
  if (!version) throw new Error(`no "# version" line in ${ZONEINFO}/tzdata.zi`);
  // Zones before links, so that a zone's own name is the one written and its links point to it.
  const named = (pattern: RegExp) =>
    source
      .split('\n')
      .map((line) => pattern.exec(line)?.[1])
      .filter((name): name is string => name !== undefined)
      .sort();
  const names = [...named(/^Z (\S+)/), ...named(/^L \S+ (\S+)/)];
  const zones: Record<string, ZoneTable> = {};
  const links: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const name of names) {
    const table = tableOf(readFileSync(join(ZONEINFO, name)));
    const key = JSON.stringify(table);
    const same = seen.get(key);
    if (same) links[name] = same;
    else {
      seen.set(key, name);
      zones[name] = table;
    }
  }
  const lines = [
    '{',
    `"tzdata":${JSON.stringify(version)},`,
    `"source":${JSON.stringify(`IANA tz database ${version} (public domain), compiled TZif files of Debian's tzdata package; built by data/timezone/build-abbreviations.ts`)},`,
    `"links":${JSON.stringify(links)},`,
    '"zones":{',
    Object.entries(zones)
      .map(([name, table]) => `${JSON.stringify(name)}:${JSON.stringify(table)}`)
      .join(',\n'),
    '}}',
  ];
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`tzdata ${version}: ${Object.keys(zones).length} zones, ${Object.keys(links).length} links`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
