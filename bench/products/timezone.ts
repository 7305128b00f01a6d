/**
 * timezone lookups (string in, result out: the geoip engine's record, then offset and
 * abbreviation for the clock) over the same kind of random public addresses as the geoip
 * bench, on the default DB-IP City Lite files; beside it the geoip lookup of the same
 * addresses, for scale. The clock advances a minute every 1,000 lookups (a server answering
 * 17 lookups a second; busier ones recompute less often), so each zone's offset is formatted
 * again with Intl once per 1,000 lookups.
 */
import { readFileSync } from 'node:fs';
import { absoluteRow, compare, ratioRow, type BenchRow } from '../harness.js';
import { readyJsonRow } from '../json-row.js';
import { publicAddresses } from './geoip.js';
import { createGeoIpEngine } from '../../src/products/geoip/engine.js';
import { bundledAbbreviations } from '../../src/products/timezone/abbreviations.js';
import { createZoneClocks, offsetText } from '../../src/products/timezone/clock.js';
import { createTimezoneEngine } from '../../src/products/timezone/engine.js';

const SUITE = 'timezone engine';
const SIZE = 1024;

export async function run(): Promise<BenchRow[]> {
  const geoip = createGeoIpEngine({
    options: { asn: false, watch: false },
    dns: () => {
      throw new Error('no DNS in this bench');
    },
    engine: () => null,
  });
  let calls = 0;
  const start = Date.UTC(2026, 0, 15, 12);
  const timezone = createTimezoneEngine({ geoip, now: () => start + Math.floor(calls++ / 1000) * 60_000 });
  const ips = publicAddresses(SIZE, 7, (ip) => geoip.locate(geoip.prepare(ip)) !== null);

  const options = { durationMs: 1000, batch: 1000, warmupBatches: 50 };
  const versus = compare(
    (i) => timezone.lookup(timezone.prepare(ips[i & (SIZE - 1)])),
    (i) => geoip.lookup(geoip.prepare(ips[i & (SIZE - 1)])),
    3,
    options,
  );
  const readyJson = readyJsonRow(
    SUITE,
    `${SIZE} public IPs repeated, clock moving a minute per 1,000`,
    (i) => timezone.lookup(timezone.prepare(ips[i & (SIZE - 1)])),
    options,
  );
  const withZone = ips.filter((ip) => timezone.lookup(timezone.prepare(ip)).result.timezone.id !== null).length;
  return [
    ...accuracyRows(),
    absoluteRow(
      {
        suite: SUITE,
        case: `lookups: ${SIZE} public IPs repeated (90% v4 / 10% v6), ${withZone} with a zone, clock moving a minute per 1,000`,
        opsPerSec: versus.candidate,
        target: '>= 100,000/s',
      },
      100_000,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: 'same addresses vs the geoip lookup it is built on',
        baseline: 'geoip engine lookup',
        opsPerSec: versus.candidate,
        baselineOpsPerSec: versus.baseline,
        target: '(info)',
      },
      0,
    ),
    readyJson,
  ];
}

/**
 * Accuracy, not speed (ops/s holds the count right, baseline ops/s the count checked):
 *
 * - offsets: every zone Intl knows, at each offset change of 2026 (found day by day, then to the
 *   minute), one minute before, at, and one minute after it, against a fresh Intl formatter;
 * - abbreviations: every zone and link of the bundled tz table at three instants, against
 *   glibc on the same tzdata release (test/fixtures/timezone/tz-abbreviations.tsv).
 */
export function accuracyRows(): BenchRow[] {
  const clocks = createZoneClocks();
  const DAY = 86_400_000;
  const start = Date.UTC(2026, 0, 1);
  let offsetCases = 0;
  let offsetsRight = 0;
  for (const zone of Intl.supportedValuesOf('timeZone')) {
    const reference = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' });
    const offsetAt = (ms: number) => offsetText(reference.formatToParts(ms).find((part) => part.type === 'timeZoneName')?.value ?? '');
    for (let day = start; day < start + 365 * DAY; day += DAY) {
      if (offsetAt(day) === offsetAt(day + DAY)) continue;
      let lo = day;
      let hi = day + DAY; // offsetAt(lo) differs from offsetAt(hi): narrow to the first minute of the new offset
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (offsetAt(mid) === offsetAt(lo)) lo = mid;
        else hi = mid;
      }
      for (const ms of [hi - 60_000, hi - 1, hi, hi + 60_000]) {
        offsetCases++;
        if (clocks.at(zone, ms).utcOffset === offsetAt(ms)) offsetsRight++;
      }
    }
  }
  const fixture = readFileSync(new URL('../../test/fixtures/timezone/tz-abbreviations.tsv', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('Factory\t')) // Factory: not a zone ICU knows
    .map((line) => line.split('\t'));
  const abbreviationsRight = fixture.filter(([zone, instant, abbreviation]) => clocks.at(zone, Date.parse(instant)).abbreviation === abbreviation).length;
  const share = (right: number, all: number) => `${right.toLocaleString('en-US')} / ${all.toLocaleString('en-US')} (${((100 * right) / all).toFixed(2)}%)`;
  return [
    ratioRow(
      {
        suite: SUITE,
        case: `accuracy: UTC offsets at every 2026 offset change of ${Intl.supportedValuesOf('timeZone').length} zones (-1 min, -1 ms, 0, +1 min): ${share(offsetsRight, offsetCases)}`,
        baseline: 'a fresh Intl formatter (counts, not ops/s)',
        opsPerSec: offsetsRight,
        baselineOpsPerSec: offsetCases,
        target: '100%',
      },
      1,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `accuracy: abbreviations of every zone and link at 3 instants vs the tz source (glibc, tzdata ${bundledAbbreviations().version}): ${share(abbreviationsRight, fixture.length)}`,
        baseline: 'glibc date on the same tzdata (counts, not ops/s)',
        opsPerSec: abbreviationsRight,
        baselineOpsPerSec: fixture.length,
        target: '100%',
      },
      1,
    ),
  ];
}
