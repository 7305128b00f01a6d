/**
 * scamrisk assessments per second, per identifier type, in-process: validation, normalization,
 * masking, the bundled lists, an in-memory report database (1,000 reports) and scoring. The
 * engine-backed sources (emailval MX, whois, emailauth, asn, dnsbl) are off: their own benches
 * measure them, and they answer from their caches when warm.
 */
import { bundledDataDir } from '../../lib/datasets.js';
import { absoluteRow, measureAsync, type BenchRow } from '../../../bench/harness.js';
import { createScamriskEngine } from './engine.js';
import { loadScamLists } from './lists.js';
import { createMemoryReportStore } from './reports.js';
import { SOFT_SOURCES, type IdentifierType } from './types.js';

const SUITE = 'scamrisk engine';

const SAMPLES: Record<IdentifierType, string[]> = {
  email: ['alice@example.com', 'bob.smith@example.org', 'support@example.net', 'x@mail.example.co.uk'],
  phone: ['+1 415 555 2671', '+44 909 879 0000', '+44 7911 123456', '+1 800 555 0199'],
  ip: ['9.9.9.9', '8.8.8.8', '2606:4700::1111', '1.1.1.1'],
  username: ['@alice', 'telegram:bob', 'scammer_1', 'carol.d'],
  address: ['10 Downing Street, London SW1A 2AA', '1600 Pennsylvania Ave NW, Washington', '221B Baker Street, London', '1 Infinite Loop, Cupertino'],
  crypto: ['0x04DBA1194ee10112fE6C3207C0687DEf0e78baCf', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'TBHTJqAy4DhHhmT3dNceJYNRz4SdLofLre'],
  domain: ['community-optimism.org', 'example.com', 'login.paypal.com.secure-verify.xyz', 'xn--pypal-4ve.com'],
  url: ['https://community-optimism.org/claim', 'https://www.example.com/', 'http://paypal.com.account-check.xyz/login', 'https://user@example.org/a?b=c'],
};

export async function run(): Promise<BenchRow[]> {
  const reports = createMemoryReportStore();
  const engine = createScamriskEngine({ lists: loadScamLists(bundledDataDir()), options: { reports, disable: [...SOFT_SOURCES] }, now: Date.now, engine: () => null });
  for (let i = 0; i < 1000; i++) await engine.report({ type: 'username', value: `user${i}`, category: 'scam', source: `r${i % 7}` });
  const rows: BenchRow[] = [];
  for (const [type, values] of Object.entries(SAMPLES) as [IdentifierType, string[]][]) {
    const requests = values.map((value) => ({ type, value }));
    const ops = await measureAsync((i) => engine.assess(engine.prepare(requests[i & 3])), { durationMs: 500, batch: 200, warmupBatches: 10 });
    rows.push(absoluteRow({ suite: SUITE, case: `${type}: prepare + assess, ${values.length} values rotating`, opsPerSec: ops, target: '>= 10,000/s' }, 10_000));
  }
  return rows;
}
