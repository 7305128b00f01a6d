/**
 * The openspf SPF test suites (test/fixtures/emailauth: rfc7208-tests and rfc4408-tests, see
 * SOURCES.md) run as record checks: each case's zone is served by the loopback DNS server, the
 * emailauth engine looks up the domain the case checks, and its SPF verdict is compared with the
 * result the suite expects. Shared by the test (emailauth-spf-suite.test.ts) and the bench.
 *
 * emailauth checks a record, it does not run check_host() for a sending IP, so a case's result
 * maps to a record-check verdict:
 * - `none`: no v=spf1 record, or a domain that cannot be checked (invalid_domain);
 * - `permerror`: several records, or one that breaks the grammar (`spf.valid: false`);
 * - `temperror`: the DNS query of the domain's TXT records failed (`lookup_failed`);
 * - `pass`, `fail`, `softfail`, `neutral`: exactly one well-formed record (`spf.valid: true`).
 * A case whose permerror or temperror comes from evaluating a well-formed record (an include or
 * redirect target, DNS lookup limits, a DNS failure elsewhere) is not applicable: SPF_SUITE_EXCLUDED
 * lists each with its kind, and for those the record itself must still come out valid.
 */
import { readFileSync } from 'node:fs';
import { isLookupError } from '../../src/errors.js';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { createEmailAuthEngine } from '../../src/products/emailauth/engine.js';
import type { DnsRecord, DnsTestServer, Zone } from '../servers/dns-server.js';

export type SuiteName = 'rfc7208' | 'rfc4408';
export type SpfResultName = 'none' | 'neutral' | 'pass' | 'fail' | 'softfail' | 'temperror' | 'permerror';
/** What the emailauth record check can say about a domain's SPF. */
export type RecordVerdict = 'none' | 'permerror' | 'temperror' | 'valid';

interface SuiteCase {
  spec: string;
  description?: string;
  helo: string;
  host: string;
  mailfrom: string;
  result: SpfResultName | SpfResultName[];
}
type ZoneEntry = 'TIMEOUT' | Record<string, string | string[] | [number, string]>;
interface Scenario {
  description: string;
  tests: Record<string, SuiteCase>;
  zonedata?: Record<string, ZoneEntry[]>;
}

export interface CaseRun {
  suite: SuiteName;
  scenario: string;
  name: string;
  spec: string;
  domain: string;
  expected: SpfResultName[];
  verdict: RecordVerdict;
  /** The engine's spf.error, or the LookupError code. */
  detail: string | null;
  /** Why the case is not applicable (SPF_SUITE_EXCLUDED), or null. */
  excluded: ExclusionKind | null;
  /** The verdict is the one the case calls for (for an excluded case: the record is valid). */
  ok: boolean;
}

/** Why a case does not apply to a record check. */
export type ExclusionKind =
  /** permerror raised while evaluating a well-formed record: an include or redirect target with no or a bad record, the 10-lookup or void-lookup limits, a macro expanding to an over-long name. */
  | 'evaluation-permerror'
  /** temperror from a DNS failure on a name other than the checked domain (an include target, an A or MX lookup). */
  | 'evaluation-temperror';

/**
 * Cases that are not record checks, by `suite/case`. Every one was read in the suite: its
 * comment, zone and expected result; each line says which name or limit causes the result.
 */
export const SPF_SUITE_EXCLUDED: Record<string, ExclusionKind> = {
  ...bothSuites({
    // 5.2/9: `include:ip8.example.com`, and ip8.example.com times out.
    'include-temperror': 'evaluation-temperror',
    // 5.2/9: `include:e6.example.com`, whose record is a permerror.
    'include-permerror': 'evaluation-permerror',
    // 5.2/9: `include:erehwon.example.com`, which has no record.
    'include-none': 'evaluation-permerror',
    // 6.1/4: `redirect=erehwon.example.com`, which has no record.
    'redirect-none': 'evaluation-permerror',
    // 4.6.4: `redirect=e1.example.com` to itself: the 10-lookup limit.
    'redirect-loop': 'evaluation-permerror',
    // 4.6.4: e2 includes e3, which includes e2: the 10-lookup limit.
    'include-loop': 'evaluation-permerror',
    // 4.6.4: 11 lookup terms before the sender matches one (`a mx a mx ... a ptr a`): the limit is
    // hit only by a sender the first ten do not match.
    'mech-over-limit': 'evaluation-permerror',
    // 4.6.4: `a include:inc.example.com a`, and inc.example.com's record has more lookups.
    'include-over-limit': 'evaluation-permerror',
  }),
  // 5/8: `exists:err.example.com`, which times out (RFC 4408's suite also accepts fail).
  'rfc7208/exists-dnserr': 'evaluation-temperror',
  // 4.6.4/2: `mx` with 11 MX hosts: over 10 MX names looked up (RFC 4408's suite also accepts neutral or pass).
  'rfc7208/mx-limit': 'evaluation-permerror',
  // 4.6.4/7: three `a:` targets with no address: over two void lookups.
  'rfc7208/void-over-limit': 'evaluation-permerror',
};

function bothSuites(cases: Record<string, ExclusionKind>): Record<string, ExclusionKind> {
  return Object.fromEntries(
    Object.entries(cases).flatMap(([name, kind]) => [
      [`rfc7208/${name}`, kind],
      [`rfc4408/${name}`, kind],
    ]),
  );
}

const FIXTURES = new URL('../fixtures/emailauth/', import.meta.url);

export function loadSuite(suite: SuiteName): Scenario[] {
  return JSON.parse(readFileSync(new URL(`${suite}-tests.json`, FIXTURES), 'utf8')) as Scenario[];
}

/**
 * A scenario's zone as the suite's own driver (pyspf's testspf.py) serves it: SPF-type records
 * become TXT records at names that have no TXT of their own (`TXT: NONE` blocks that), and a
 * name marked TIMEOUT before any TXT record fails its TXT query. Here such a name is a CNAME
 * into a loop, which the server answers with SERVFAIL for that name alone: the engine reports it
 * as it does a timeout (lookup_failed), and no test waits for one.
 */
export function scenarioZone(scenario: Scenario): Zone {
  const zone: Zone = { ...TIMEOUT_LOOP };
  for (const [name, entries] of Object.entries(scenario.zonedata ?? {})) {
    const records: DnsRecord[] = [];
    const spfRecords: DnsRecord[] = [];
    let hasTxt = false;
    let timesOut = false;
    for (const entry of entries) {
      if (entry === 'TIMEOUT') {
        timesOut ||= !records.some((r) => r.type === 'TXT');
        continue;
      }
      for (const [type, value] of Object.entries(entry)) {
        if (type === 'TXT' || type === 'SPF') {
          if (type === 'TXT') hasTxt = true;
          if (value === 'NONE') continue;
          const data = Array.isArray(value) ? (value as string[]) : (value as string);
          (type === 'TXT' ? records : spfRecords).push({ type: 'TXT', data });
        } else if (type === 'A' || type === 'AAAA') records.push({ type, address: value as string });
        else if (type === 'MX') {
          const [priority, exchange] = value as [number, string];
          records.push({ type: 'MX', priority, exchange });
        } else if (type === 'PTR' || type === 'CNAME') records.push({ type, target: value as string });
      }
    }
    if (!hasTxt) records.push(...spfRecords);
    if (validZoneName(name)) zone[name] = timesOut ? [{ type: 'CNAME', target: 'timeout-a.loop.invalid' }] : records;
  }
  return zone;
}

/** Two names pointing at each other: a CNAME into them gets SERVFAIL. */
const TIMEOUT_LOOP: Zone = {
  'timeout-a.loop.invalid': [{ type: 'CNAME', target: 'timeout-b.loop.invalid' }],
  'timeout-b.loop.invalid': [{ type: 'CNAME', target: 'timeout-a.loop.invalid' }],
};

/** Names the suite lists that DNS cannot carry (a label over 63 octets, an empty label) are left out of the zone. */
function validZoneName(name: string): boolean {
  const labels = name.replace(/\.$/, '').split('.');
  return labels.every((label) => label.length > 0 && label.length <= 63);
}

/** The domain a case checks: the MAIL FROM domain, or the HELO name for an empty MAIL FROM (RFC 7208 2.4). */
export function checkedDomain(test: SuiteCase): string {
  if (test.mailfrom === '') return test.helo;
  return test.mailfrom.slice(test.mailfrom.lastIndexOf('@') + 1);
}

/** Whether a record-check verdict is one of the results the suite accepts. */
export function verdictMatches(verdict: RecordVerdict, expected: SpfResultName[]): boolean {
  if (verdict === 'valid') return expected.some((r) => r === 'pass' || r === 'fail' || r === 'softfail' || r === 'neutral');
  return expected.includes(verdict);
}

/** Run every case of a suite against `server` (its zone and behaviours are replaced per scenario). */
export async function runSuite(suite: SuiteName, server: DnsTestServer): Promise<CaseRun[]> {
  const runs: CaseRun[] = [];
  for (const scenario of loadSuite(suite)) {
    server.setZone(scenarioZone(scenario));
    // A fresh resolver and no result cache per scenario: the suites reuse names with other records.
    const engine = createEmailAuthEngine({ dns: createDnsResolver({ servers: [server.address] }), cache: null });
    for (const [name, test] of Object.entries(scenario.tests)) {
      const domain = checkedDomain(test);
      let verdict: RecordVerdict;
      let detail: string | null = null;
      try {
        const { result } = await engine.lookup(engine.prepare(domain));
        verdict = !result.spf.found ? 'none' : result.spf.valid ? 'valid' : 'permerror';
        detail = result.spf.error;
      } catch (error) {
        if (!isLookupError(error)) throw error;
        verdict = error.code === 'invalid_domain' ? 'none' : 'temperror';
        detail = error.code;
      }
      const expected = Array.isArray(test.result) ? test.result : [test.result];
      const excluded = SPF_SUITE_EXCLUDED[`${suite}/${name}`] ?? null;
      const ok = excluded ? verdict === 'valid' : verdictMatches(verdict, expected);
      runs.push({ suite, scenario: scenario.description, name, spec: test.spec, domain, expected, verdict, detail, excluded, ok });
    }
  }
  return runs;
}

/** Pass rate over the applicable cases, in percent. */
export function passRate(runs: CaseRun[]): { applicable: number; passed: number; percent: number } {
  const applicable = runs.filter((r) => !r.excluded);
  const passed = applicable.filter((r) => r.ok).length;
  return { applicable: applicable.length, passed, percent: (100 * passed) / applicable.length };
}
