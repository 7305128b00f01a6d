/**
 * riskscore local lookups (string in, result out: input checks, the one CidrTable answering
 * every list, the ASN sets, the asn and geoip engines, scoring) over a mix of public addresses,
 * 90% IPv4: a quarter from the bundled lists, the rest random, computed every time (result cache
 * off). Target 200,000/s warm. Then the
 * same mix through the result cache (every address seen before). Then the
 * list matching alone against the named baseline: one CidrTable per list file (45 of them),
 * each asked in turn, as a per-list design would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { absoluteRow, compare, measure, ratioRow, seededRandom, type BenchRow } from '../harness.js';
import { createCidrTable, type CidrTable } from '../../src/lib/cidr-table.js';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { parseIpInput, isRoutable, type IpInput } from '../../src/lib/ip-input.js';
import { createLookup } from '../../src/lookup.js';
import type { LookupOutcome } from '../../src/lib/outcome.js';
import type { RiskScoreEngine } from '../../src/products/riskscore/engine.js';
import { matchInput } from '../../src/products/riskscore/local.js';
import { LOCAL_SOURCES, parseSource } from '../../src/products/riskscore/sources.js';

const SUITE = 'riskscore engine';
const MIX_SIZE = 4096;

export async function run(): Promise<BenchRow[]> {
  const dataDir = bundledDataDir();
  const engine = createLookup({ riskscore: { cacheSize: 0 } }).engine('riskscore') as RiskScoreEngine;
  const cachedEngine = createLookup().engine('riskscore') as RiskScoreEngine;
  const local = engine.local!;
  const rand = seededRandom(7);

  // Per-list tables, the baseline, from the same files.
  const perList: { value: string; table: CidrTable<string> }[] = [];
  const listed: string[] = [];
  for (const source of LOCAL_SOURCES) {
    if (source.optional) continue;
    const parsed = parseSource(source, readFileSync(join(dataDir, 'riskscore', source.file), 'utf8'));
    if (parsed.ranges.length === 0) continue;
    perList.push({ value: source.id, table: createCidrTable(parsed.ranges) });
    for (let k = 0; k < 20; k++) listed.push(parsed.ranges[Math.floor(rand() * parsed.ranges.length)].cidr.split('/')[0]);
  }

  const mix: string[] = [];
  while (mix.length < MIX_SIZE) {
    let ip: string;
    if (rand() < 0.25) ip = listed[Math.floor(rand() * listed.length)];
    else if (rand() < 0.1) ip = `2a0${Math.floor(rand() * 10)}:${Math.floor(rand() * 65536).toString(16)}::${Math.floor(rand() * 65536).toString(16)}`;
    else ip = Array.from({ length: 4 }, () => Math.floor(rand() * 256)).join('.');
    const input = parseIpInput(ip);
    if (isRoutable(input)) mix.push(input.ip);
  }
  const inputs: IpInput[] = mix.map((ip) => parseIpInput(ip));

  const options = { durationMs: 1000, batch: 1000, warmupBatches: 50 };
  let best = 0;
  for (let round = 0; round < 3; round++)
    best = Math.max(
      best,
      measure((i) => engine.lookup(engine.prepare(mix[i & (MIX_SIZE - 1)])), options),
    );
  let bestCached = 0;
  for (let round = 0; round < 3; round++)
    bestCached = Math.max(
      bestCached,
      measure((i) => (cachedEngine.lookup(cachedEngine.prepare(mix[i & (MIX_SIZE - 1)])) as LookupOutcome<unknown>).json, options),
    );

  const perListMatch = (input: IpInput) => {
    const out: string[] = [];
    for (const { value, table } of perList) if ((input.version === 4 ? table.matchIPv4(input.value) : table.match(input.address)).length > 0) out.push(value);
    return out;
  };
  const versus = compare(
    (i) => matchInput(local.table, inputs[i & (MIX_SIZE - 1)]),
    (i) => perListMatch(inputs[i & (MIX_SIZE - 1)]),
    3,
    options,
  );
  const listedShare = Math.round((100 * inputs.filter((input) => matchInput(local.table, input).length > 0).length) / MIX_SIZE);
  return [
    absoluteRow(
      {
        suite: SUITE,
        case: `local lookups (string in, result out, geoip + asn + every list, computed each time): ${MIX_SIZE} public IPs, ~90% v4, ${listedShare}% on a list, ${local.records.toLocaleString('en-US')} entries`,
        opsPerSec: best,
        target: '>= 200,000/s',
      },
      200_000,
    ),
    absoluteRow(
      {
        suite: SUITE,
        case: `the same lookups from the result cache (each address seen before; the JSON the API sends)`,
        opsPerSec: bestCached,
        target: '(info)',
      },
      0,
    ),
    ratioRow(
      {
        suite: SUITE,
        case: `list matching only: one CidrTable for all ${perList.length} range lists`,
        baseline: `one CidrTable per list (${perList.length} binary searches)`,
        opsPerSec: versus.candidate,
        baselineOpsPerSec: versus.baseline,
        target: '>= 5x (informational)',
      },
      5,
    ),
  ];
}
