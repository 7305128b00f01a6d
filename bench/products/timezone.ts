/**
 * timezone lookups (string in, result out: the geoip engine's record, then offset and
 * abbreviation for the clock) over the same kind of random public addresses as the geoip
 * bench, on the default DB-IP City Lite files; beside it the geoip lookup of the same
 * addresses, for scale. The clock advances a minute every 1,000 lookups (a server answering
 * 17 lookups a second; busier ones recompute less often), so each zone's offset is formatted
 * again with Intl once per 1,000 lookups.
 */
import { absoluteRow, compare, ratioRow, type BenchRow } from '../harness.js';
import { readyJsonRow } from '../json-row.js';
import { publicAddresses } from './geoip.js';
import { createGeoIpEngine } from '../../src/products/geoip/engine.js';
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
