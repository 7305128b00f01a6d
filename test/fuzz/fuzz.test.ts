/**
 * A slice of the fuzz run (`npm run fuzz`, test/fuzz/run.ts) in the normal suite: 50 hostile
 * requests on every route, against hostile upstreams on loopback. A 500, a hang, a malformed
 * error answer or a leaked upstream key fails it.
 */
import { describe, expect, it } from 'vitest';
import { runFuzz } from './run.js';

describe('fuzz slice', () => {
  it('answers 50 hostile requests per route, with hostile upstreams, without a 500, a hang or a leak', async () => {
    const report = await runFuzz({ perRoute: 50, seed: 20_261_127, hangMs: 60_000 });
    const failures = report.routes
      .filter((row) => row.internalErrors + row.hangs + row.badEnvelopes + row.leaks > 0)
      .map((row) => ({ route: row.route, examples: row.examples }));
    expect({ failures, reportedErrors: report.reportedErrors }).toEqual({ failures: [], reportedErrors: [] });
    expect(report.routes.length).toBeGreaterThanOrEqual(60);
    expect(report.requests).toBe(report.routes.length * 50);
    // The upstreams were reached and failed: every upstream route answered some 502s.
    for (const route of ['GET /v1/whois/lookup/{domain}', 'GET /v1/riskscore/lookup/{ip}', 'GET /v1/pwbreach/lookup']) {
      expect(report.routes.find((row) => row.route === route)?.statuses[502], route).toBeGreaterThan(0);
    }
  }, 600_000);
});
