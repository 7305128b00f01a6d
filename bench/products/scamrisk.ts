/**
 * scamrisk assessments per second, per identifier type, in-process: validation, normalization,
 * masking, the bundled lists, an in-memory report database (1,000 reports) and scoring. The
 * engine-backed sources (emailval MX, whois, emailauth, asn, dnsbl) are off: their own benches
 * measure them, and they answer from their caches when warm. Then the assessment cache: the
 * same identifiers repeated, cached against uncached, in the same run.
 */
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createMemoryCache, createProductCache } from '../../src/lib/cache.js';
import { absoluteRow, measureAsync, ratioRow, type BenchRow } from '../harness.js';
import { createScamriskEngine, SCAMRISK_CACHE_TTL_MS, type CachedScamrisk, type ScamriskEngine } from '../../src/products/scamrisk/engine.js';
import { loadScamLists } from '../../src/products/scamrisk/lists.js';
import { createMemoryReportStore } from '../../src/products/scamrisk/reports.js';
import { SOFT_SOURCES, type IdentifierType } from '../../src/products/scamrisk/types.js';

const SUITE = 'scamrisk engine';

const SAMPLES: Record<IdentifierType, string[]> = {
  email: ['alice@example.com', 'bob.smith@example.org', 'support@example.net', 'x@mail.example.co.uk'],
  phone: ['+1 415 555 2671', '+44 909 879 0000', '+44 7911 123456', '+1 800 555 0199'],
  ip: ['9.9.9.9', '8.8.8.8', '2606:4700::1111', '1.1.1.1'],
  username: ['@alice', 'telegram:bob', 'scammer_1', 'carol.d'],
  address: ['10 Downing Street, London SW1A 2AA', '1600 Pennsylvania Ave NW, Washington', '221B Baker Street, London', '1 Infinite Loop, Cupertino'],
  crypto: [
    '0x04DBA1194ee10112fE6C3207C0687DEf0e78baCf',
    'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
    '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
    'TBHTJqAy4DhHhmT3dNceJYNRz4SdLofLre',
  ],
  domain: ['community-optimism.org', 'example.com', 'login.paypal.com.secure-verify.xyz', 'xn--pypal-4ve.com'],
  url: ['https://community-optimism.org/claim', 'https://www.example.com/', 'http://paypal.com.account-check.xyz/login', 'https://user@example.org/a?b=c'],
};

async function newEngine(cached: boolean): Promise<ScamriskEngine> {
  const reports = createMemoryReportStore();
  const cache = cached ? createProductCache<CachedScamrisk>(createMemoryCache({ maxEntries: 10_000 }), { ttlMs: SCAMRISK_CACHE_TTL_MS }) : null;
  const engine = createScamriskEngine({
    lists: loadScamLists(bundledDataDir()),
    options: { reports, disable: [...SOFT_SOURCES] },
    now: Date.now,
    engine: () => null,
    cache,
  });
  for (let i = 0; i < 1000; i++) await engine.report({ type: 'username', value: `user${i}`, category: 'scam', source: `r${i % 7}` });
  return engine;
}

export async function run(): Promise<BenchRow[]> {
  const engine = await newEngine(false);
  const rows: BenchRow[] = [];
  for (const [type, values] of Object.entries(SAMPLES) as [IdentifierType, string[]][]) {
    const requests = values.map((value) => ({ type, value }));
    const ops = await measureAsync((i) => engine.lookup(engine.prepare(requests[i & 3])), { durationMs: 500, batch: 200, warmupBatches: 10 });
    rows.push(
      absoluteRow({ suite: SUITE, case: `${type}: prepare + assess, ${values.length} values rotating`, opsPerSec: ops, target: '>= 10,000/s' }, 10_000),
    );
  }

  // The cache: all 32 samples repeated (every one a hit after the first round), against the
  // same requests on an engine without a cache. Both still validate (prepare) every request.
  // Engine-backed sources are off here, so the uncached path is local work only: with them on,
  // a miss waits for DNS, whois and the other engines and the gap is far wider.
  const all = (Object.entries(SAMPLES) as [IdentifierType, string[]][]).flatMap(([type, values]) => values.map((value) => ({ type, value })));
  const cachedEngine = await newEngine(true);
  const options = { durationMs: 500, batch: 256, warmupBatches: 4 };
  const cached = await measureAsync((i) => cachedEngine.lookup(cachedEngine.prepare(all[i & 31])), options);
  const uncached = await measureAsync((i) => engine.lookup(engine.prepare(all[i & 31])), options);
  rows.push(
    ratioRow(
      {
        suite: SUITE,
        case: 'repeat within the TTL, 32 identifiers of every type (cached: true)',
        baseline: 'the same requests, no cache (lists, reports, scoring each time)',
        opsPerSec: cached,
        baselineOpsPerSec: uncached,
        target: '>= 1.00x',
      },
      1,
    ),
  );
  return rows;
}
