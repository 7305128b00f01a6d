/**
 * The openspf RFC 7208 and RFC 4408 test suites as record checks (emailauth-spf-suite.ts says how
 * a case maps to `spf.found` / `spf.valid` and which cases do not apply): every case's zone is
 * served by the loopback DNS server and looked up through the emailauth engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../servers/dns-server.js';
import { type CaseRun, checkedDomain, loadSuite, passRate, runSuite, SPF_SUITE_EXCLUDED, type SuiteName } from './emailauth-spf-suite.js';

const SUITES: SuiteName[] = ['rfc7208', 'rfc4408'];
const server = await startDnsServer();
afterAll(() => server.close());

const runs = new Map<string, CaseRun>();
beforeAll(async () => {
  for (const suite of SUITES) for (const run of await runSuite(suite, server)) runs.set(`${suite}/${run.name}`, run);
}, 120_000);

describe.each(SUITES)('%s suite', (suite) => {
  const cases = loadSuite(suite).flatMap((scenario) => Object.entries(scenario.tests).map(([name, test]) => ({ name, domain: checkedDomain(test) })));

  it.each(cases)('$name ($domain)', ({ name }) => {
    const run = runs.get(`${suite}/${name}`);
    expect(run).toBeDefined();
    // An applicable case gets a verdict the suite accepts; an excluded one (its result comes from
    // evaluating other names) must still find its own record well formed.
    expect(run?.ok, `verdict ${run?.verdict} (${run?.detail}), suite expects ${run?.expected.join(' or ')}`).toBe(true);
  });

  it('passes every applicable case (goal >= 99.5%), with the exclusions the table lists and no more', () => {
    const suiteRuns = [...runs.values()].filter((r) => r.suite === suite);
    const excluded = Object.keys(SPF_SUITE_EXCLUDED).filter((key) => key.startsWith(`${suite}/`));
    // Every exclusion names a real case, so the table cannot hide a renamed or dropped one.
    for (const key of excluded) expect(runs.has(key), key).toBe(true);
    const rate = passRate(suiteRuns);
    expect(rate.applicable).toBe(suiteRuns.length - excluded.length);
    expect(rate.percent).toBeGreaterThanOrEqual(99.5);
  });
});

describe('the suites', () => {
  it('hold the cases the docs count (rfc7208: 203, 11 excluded; rfc4408: 191, 8 excluded)', () => {
    const count = (suite: SuiteName) => [...runs.values()].filter((r) => r.suite === suite);
    expect([count('rfc7208').length, passRate(count('rfc7208')).applicable]).toEqual([203, 192]);
    expect([count('rfc4408').length, passRate(count('rfc4408')).applicable]).toEqual([191, 183]);
  });
});
