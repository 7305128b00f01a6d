/**
 * Batch lookups: `POST /v1/geoip/batch` with 100 IPs against the same 100 IPs as single
 * `GET /v1/geoip/lookup?ip=` requests, both through `api.handle` on the SQLite meter (the
 * `serve` default) in this process. Rows count lookups per second, so the ratio is what a batch
 * saves per lookup: one key check, one meter call and one envelope instead of a hundred.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApi } from '../src/api/create-api.js';
import type { ApiRequest } from '../src/api/types.js';
import { createLookup } from '../src/lookup.js';
import { issueKeys } from '../src/metering/keys.js';
import { createSqliteMeter } from '../src/metering/sqlite/meter.js';
import { ratioRow, type BenchRow } from './harness.js';

const INPUTS = 100;
const ROUNDS = 3;
const DURATION_MS = 1_000;
const IPS = Array.from({ length: INPUTS }, (_, i) => `8.8.${i}.${((i * 7) % 250) + 1}`);

export async function run(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'seclookup-bench-'));
  const meter = createSqliteMeter(join(dir, 'meter.db'));
  const lookup = createLookup();
  try {
    await meter.setPlan({ slug: 'bench', product: '*', rateLimitPerMinute: 1_000_000_000, monthlyQuota: null });
    const { secretKey } = await issueKeys(meter, { product: 'geoip', plan: 'bench' });
    const api = createApi({ lookup, meter });
    const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
    const single = IPS.map((ip): ApiRequest => ({ method: 'GET', url: `/v1/geoip/lookup?ip=${ip}`, headers, remoteAddress: '127.0.0.1' }));
    const body = JSON.stringify({ inputs: IPS });
    const answered = async (request: ApiRequest) => {
      const response = await api.handle(request);
      if (response.status !== 200) throw new Error(`bench request answered ${response.status}: ${response.body.slice(0, 200)}`);
    };
    // Lookups per second: a hundred singles (all in flight, as a busy server has them), or one batch.
    const singles = () => Promise.all(single.map(answered));
    const batch = () => answered({ method: 'POST', url: '/v1/geoip/batch', headers, body, remoteAddress: '127.0.0.1' });
    let best = { batch: 0, singles: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      best = { singles: Math.max(best.singles, await lookupsPerSecond(singles)), batch: Math.max(best.batch, await lookupsPerSecond(batch)) };
    }
    return [
      ratioRow(
        {
          suite: 'batch',
          case: `POST /v1/geoip/batch, ${INPUTS} IPs per request (api.handle, SQLite meter), lookups/s`,
          baseline: `${INPUTS} concurrent GET /v1/geoip/lookup (same IPs, same API)`,
          opsPerSec: best.batch,
          baselineOpsPerSec: best.singles,
          target: '>= 1.00x',
        },
        1,
      ),
    ];
  } finally {
    await lookup.close();
    await meter.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lookups per second of `work`, which answers INPUTS lookups per call. */
async function lookupsPerSecond(work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await work();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < DURATION_MS) {
    await work();
    calls++;
  }
  return (calls * INPUTS) / ((performance.now() - start) / 1000);
}
