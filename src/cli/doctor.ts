/**
 * `seclookup doctor`: can each product answer here, and if not, why. Per product: does its
 * engine build (its data present and valid) and how old is that data (the date the data records,
 * never the files' modification times, which a copy or a checkout renews); do the DNS servers answer
 * (products that resolve names); can the host reach the upstream it needs (whois); what the
 * engine says of itself (pwbreach answering from the small bundled sample). Exits 1 when a
 * product cannot answer, so it can gate a deployment.
 */
import { connect, isIP } from 'node:net';
import { MAX_TIMER_MS } from '../lib/deadline.js';
import { createDnsResolver, type DnsResolver } from '../lib/dns/index.js';
import { isSeclookupError } from '../errors.js';
import { datasetAges, type DatasetAge } from '../metrics/datasets.js';
import type { AnyProductModule, DoctorFinding } from '../products/module.js';
import { PRODUCT_MODULES } from '../products/registry.js';
import { expectPositionals, parseCommand, parseInteger } from './args.js';
import { redactUserinfo } from '../lib/redact-url.js';
import { engineOptions, lookupOptionsFrom, tidyEngineLine } from './engines.js';
import { createLookup, type LookupOptions } from '../lookup.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { formatTable, out, printJson } from './output.js';
import { cliIo } from './io.js';
import { shellWord } from './shell-word.js';

const MODULES = PRODUCT_MODULES as readonly AnyProductModule[];
const DEFAULT_TIMEOUT_MS = 3000;
/** A name every resolver can answer (with a record or NXDOMAIN): only "did it answer" matters. */
const DNS_PROBE_NAME = 'example.com';

export const DOCTOR_HELP = `Usage:
  seclookup doctor [--json] [--offline] [--timeout MS] [--data-dir DIR] [--dns HOST:PORT]
                   [--probe HOST:PORT] [--allow-private-targets CIDR,...] [product settings]

Says, per product, whether it can answer on this machine and why not: its dataset is
present and valid (and how old, by the date the data records; "undated" when it records
none), the DNS servers answer (products that resolve names),
the upstream it connects to is reachable (whois: TCP port 43; the host of an upstream API
set for pwbreach or riskscore), and what the engine reports of itself (pwbreach: answering
from the 7,534-hash sample).

  --json             one JSON document on stdout instead of the table
  --offline          skip the network checks (DNS and upstreams are reported unchecked)
  --timeout MS       per network check (default ${DEFAULT_TIMEOUT_MS})
  --probe HOST:PORT  try this address instead of each product's upstream (a proxy or a
                     test server)
  --data-dir DIR, --dns HOST:PORT, --allow-private-targets CIDR,... and the product settings:
                     as for serve
  -h, --help         show this help

Exit codes: 0 every product can answer (warnings allowed), 1 at least one cannot,
            2 usage error.`;

/** One product's verdict. */
export interface DoctorReport {
  product: string;
  /** The worst level of its findings. */
  level: DoctorFinding['level'];
  findings: DoctorFinding[];
  /** Its datasets' dates, for a script to read (the findings say the same in words). */
  datasets: DoctorDataset[];
}

/** One dataset a product loaded, as `doctor --json` gives it. */
export interface DoctorDataset {
  dataset: string;
  /** When the data says it was built or published (ISO 8601), or null when it records no date. */
  built_at: string | null;
  /** Whole days since then, at the check; null when undated. */
  age_days: number | null;
  /** The age past which doctor warns (the product's limit for it), or null for data that does not go stale. */
  max_age_days: number | null;
  stale: boolean;
}

export async function runDoctor(argv: string[]): Promise<number> {
  const command = 'doctor';
  const { values, positionals } = parseCommand(
    argv,
    { json: { type: 'boolean' }, offline: { type: 'boolean' }, timeout: { type: 'string' }, probe: { type: 'string' }, ...engineOptions(MODULES) },
    command,
  );
  if (values.help) {
    out(DOCTOR_HELP);
    return EXIT_OK;
  }
  expectPositionals(positionals, [], command);
  const timeoutMs = values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseInteger(values.timeout, '--timeout', command, { min: 1, max: MAX_TIMER_MS });
  const probe = values.probe === undefined ? undefined : parseProbe(values.probe, command);
  const options = lookupOptionsFrom(MODULES, values, command);
  let lookup: ReturnType<typeof createLookup>;
  try {
    lookup = createLookup(options);
  } catch (error) {
    // Options a product refuses (a malformed --riskscore-url): the operator's to fix, in one line.
    throw new CommandError(`cannot check the products: ${tidyEngineLine(error instanceof Error ? error.message : String(error))}`, { cause: error });
  }
  const network = !values.offline;
  const reports: DoctorReport[] = [];
  const ages = new Map<string, DatasetAge[]>();
  for (const age of datasetAges(lookup)) ages.set(age.product, [...(ages.get(age.product) ?? []), age]);
  const checkedAt = (cliIo().now ?? Date.now)();
  // Asked once the engines are built (datasetAges builds them, holding the event loop for
  // hundreds of ms): a deadline started before would run out with the answer unread.
  // The DNS servers serve resolves names with (--dns, else the system's): upstream hosts are found through them too.
  const resolver = network ? doctorResolver(options.dns, timeoutMs) : undefined;
  const dns = resolver && MODULES.some((module) => module.doctor?.dns) ? dnsCheck(resolver, timeoutMs) : undefined;
  try {
    for (const module of MODULES) {
      const findings: DoctorFinding[] = [];
      findings.push(...engineFindings(module, lookup.engine.bind(lookup) as (id: string) => unknown, ages.get(module.id) ?? [], checkedAt, values['data-dir']));
      if (module.doctor?.dns) findings.push(dns ? await dns : { level: 'ok', check: 'dns', message: 'not checked (--offline)' });
      const upstream = module.doctor?.upstream?.((options as Record<string, unknown>)[module.id] as Record<string, unknown> | undefined);
      if (upstream) findings.push(await reachUpstream(upstream, probe, resolver, timeoutMs));
      const outbound = module.doctor?.outbound;
      if (outbound) {
        const target = probe ?? outbound;
        findings.push(
          resolver
            ? await reach(target.host, target.port, outbound.why, resolver, timeoutMs)
            : { level: 'ok', check: 'outbound', message: `not checked (--offline); needs ${outbound.why}` },
        );
      }
      reports.push({ product: module.id, level: worst(findings), findings, datasets: datasetDates(module, ages.get(module.id) ?? [], checkedAt) });
    }
  } finally {
    await lookup.close();
  }

  if (values.json) printJson({ ok: reports.every((report) => report.level !== 'fail'), products: reports });
  else
    out(
      formatTable(
        ['PRODUCT', 'STATUS', 'DETAILS'],
        reports.map((report) => [report.product, report.level, summary(report)]),
      ),
    );
  return reports.some((report) => report.level === 'fail') ? EXIT_FAILURE : EXIT_OK;
}

function engineFindings(
  module: AnyProductModule,
  engineOf: (id: string) => unknown,
  ages: readonly DatasetAge[],
  now: number,
  dataDirFlag: string | undefined,
): DoctorFinding[] {
  let engine: unknown;
  try {
    engine = engineOf(module.id);
  } catch (error) {
    const message = redactUserinfo(tidyEngineLine(error instanceof Error ? error.message : String(error)));
    return [{ level: 'fail', check: 'data', message }];
  }
  const findings: DoctorFinding[] = [{ level: 'ok', check: 'data', message: `loaded${describeAges(ages, now)}` }];
  const stale = staleness(module, ages, now, dataDirFlag);
  if (stale) findings.push(stale);
  const future = ages.filter((age) => age.builtAtMs !== null && age.builtAtMs - now > 86_400_000);
  if (future.length > 0)
    findings.push({
      level: 'warn',
      check: 'data',
      message: `dated in the future: ${future.map((age) => `${age.dataset} ${formatAge(age.builtAtMs! - now)} ahead`).join(', ')} (this machine's clock, or the data's date, is wrong)`,
    });
  if (module.doctor?.check) findings.push(...module.doctor.check(engine as never));
  return findings;
}

/** Each dataset's date, age and limit, as `doctor --json` gives them. */
function datasetDates(module: AnyProductModule, ages: readonly DatasetAge[], now: number): DoctorDataset[] {
  return ages.map((age) => {
    const limit = module.doctor?.freshness?.maxAgeDays[age.dataset] ?? null;
    const days = age.builtAtMs === null ? null : Math.floor((now - age.builtAtMs) / 86_400_000);
    return {
      dataset: age.dataset,
      built_at: age.builtAtMs === null ? null : new Date(age.builtAtMs).toISOString(),
      age_days: days,
      max_age_days: limit,
      stale: days !== null && limit !== null && days > limit,
    };
  });
}

/**
 * A warning naming the datasets older than their product allows (`freshness`), each with its
 * age and limit, and how to refresh them; null when none is. Answers still come, from old data.
 * The folder checked with `--data-dir DIR` is the one to refresh: `data update` without it
 * would refresh $SECLOOKUP_DATA_DIR or the bundled data instead.
 */
function staleness(module: AnyProductModule, ages: readonly DatasetAge[], now: number, dataDirFlag: string | undefined): DoctorFinding | null {
  const stale = datasetDates(module, ages, now).filter((date) => date.stale);
  if (stale.length === 0) return null;
  const named = stale.map((date) => `${date.dataset} ${date.age_days} days old (over ${date.max_age_days})`);
  const refresh = `${module.doctor!.freshness!.refresh}${dataDirFlag === undefined ? '' : ` --data-dir ${shellWord(dataDirFlag)}`}`;
  return { level: 'warn', check: 'data', message: `stale: ${named.join(', ')}; refresh with ${refresh}` };
}

/** The resolver serve would build from `given`, each query one try within `timeoutMs`; the error when it cannot be built. */
function doctorResolver(given: LookupOptions['dns'], timeoutMs: number): DnsResolver | Error {
  try {
    return isResolver(given)
      ? given
      : createDnsResolver({ ...given, attempts: 1, timeouts: { totalMs: timeoutMs, connectMs: timeoutMs }, cache: { maxEntries: 0 } });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Any answer, NXDOMAIN included, proves a server answers; a timeout or a refusal does not. */
async function dnsCheck(resolver: DnsResolver | Error, timeoutMs: number): Promise<DoctorFinding> {
  if (resolver instanceof Error) return { level: 'fail', check: 'dns', message: resolver.message };
  try {
    await resolver.resolve(DNS_PROBE_NAME, 'A');
    return { level: 'ok', check: 'dns', message: 'the DNS servers answer' };
  } catch (error) {
    const why = isSeclookupError(error, 'timeout') ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
    return { level: 'fail', check: 'dns', message: `the DNS servers do not answer: ${why}` };
  }
}

function isResolver(value: unknown): value is DnsResolver {
  return typeof (value as DnsResolver | undefined)?.resolve === 'function';
}

/** An upstream API's host, reached over TCP (or `--probe` in its place); said by host and port only, never the URL. */
async function reachUpstream(
  upstream: { url: string; why: string },
  probe: { host: string; port: number } | undefined,
  resolver: DnsResolver | Error | undefined,
  timeoutMs: number,
): Promise<DoctorFinding> {
  let target = probe;
  if (!target) {
    const url = new URL(upstream.url);
    target = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
  }
  if (!resolver) return { level: 'ok', check: 'upstream', message: `not checked (--offline); needs ${upstream.why} (${target.host}:${target.port})` };
  return { ...(await reach(target.host, target.port, upstream.why, resolver, timeoutMs)), check: 'upstream' };
}

/**
 * Connect to `host` as serve would: a name is looked up through serve's DNS servers (A, then
 * AAAA), not the system's getaddrinfo, whose verdict can differ either way (a container whose
 * only working resolver is --dns).
 */
async function reach(host: string, port: number, why: string, resolver: DnsResolver | Error, timeoutMs: number): Promise<DoctorFinding> {
  let address = host;
  if (isIP(host) === 0) {
    try {
      address = await firstAddress(host, resolver);
    } catch (error) {
      return { level: 'fail', check: 'outbound', message: `cannot resolve ${host}: ${error instanceof Error ? error.message : String(error)} (needs ${why})` };
    }
  }
  return connectOnce(host, address, port, why, timeoutMs);
}

async function firstAddress(host: string, resolver: DnsResolver | Error): Promise<string> {
  if (resolver instanceof Error) throw resolver;
  for (const type of ['A', 'AAAA'] as const) {
    const answer = await resolver.resolve(host, type);
    if (answer.records.length > 0) return answer.records[0];
  }
  throw new Error('the DNS servers know no address for it');
}

function connectOnce(host: string, address: string, port: number, why: string, timeoutMs: number): Promise<DoctorFinding> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    const done = (finding: DoctorFinding) => {
      socket.destroy();
      resolve(finding);
    };
    socket.setTimeout(timeoutMs, () =>
      done({ level: 'fail', check: 'outbound', message: `cannot reach ${host}:${port} within ${timeoutMs} ms (needs ${why})` }),
    );
    socket.once('connect', () => done({ level: 'ok', check: 'outbound', message: `reached ${host}:${port}` }));
    socket.once('error', (error) => done({ level: 'fail', check: 'outbound', message: `cannot reach ${host}:${port}: ${error.message} (needs ${why})` }));
  });
}

function parseProbe(value: string, command: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value);
  if (!match) throw new UsageError(`--probe must be HOST:PORT (got ${JSON.stringify(value)})`, command);
  const port = Number(match[2]);
  if (!Number.isSafeInteger(port) || port < 1 || port > 65_535)
    throw new UsageError(`--probe: the port must be a whole number from 1 to 65535 (got ${JSON.stringify(value)})`, command);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

const LEVELS: readonly DoctorFinding['level'][] = ['ok', 'warn', 'fail'];
function worst(findings: readonly DoctorFinding[]): DoctorFinding['level'] {
  return findings.reduce<DoctorFinding['level']>((level, finding) => (LEVELS.indexOf(finding.level) > LEVELS.indexOf(level) ? finding.level : level), 'ok');
}

/** The findings worth reading first: failures and warnings, else every check in one line. */
function summary(report: DoctorReport): string {
  const notable = report.findings.filter((finding) => finding.level !== 'ok');
  return (notable.length > 0 ? notable : report.findings).map((finding) => `${finding.check}: ${finding.message}`).join('; ');
}

/**
 * How old the loaded data is, by the dates it records: `, 12 days old`, or `, 5 to 98 days old`
 * when its datasets differ (newest to oldest); `, undated` when none records a date (with the
 * release it names, if any); datasets without a date beside dated ones are named. Empty for a
 * product without datasets (its rules ship in code or a package).
 */
function describeAges(ages: readonly DatasetAge[], now: number): string {
  if (ages.length === 0) return '';
  const dated = ages.flatMap((age) => (age.builtAtMs === null ? [] : [age.builtAtMs]));
  const undated = ages.filter((age) => age.builtAtMs === null);
  const versions = undated.flatMap((age) => (age.version === undefined ? [] : [age.version]));
  if (dated.length === 0) return `, undated${versions.length > 0 ? ` (${versions.join(', ')})` : ''}`;
  const newest = formatAge(now - Math.max(...dated));
  const oldest = formatAge(now - Math.min(...dated));
  let text = newest === oldest ? `, ${oldest} old` : `, ${ageRange(newest, oldest)} old`;
  if (undated.length > 0) text += ` (undated: ${undated.map((age) => age.dataset).join(', ')})`;
  return text;
}

/** `5 to 98 days` rather than `5 days to 98 days`. */
function ageRange(newest: string, oldest: string): string {
  const unit = / (days?|h)$/.exec(newest)?.[1];
  const sameUnit = unit !== undefined && oldest.endsWith(` ${unit === 'day' ? 'days' : unit}`);
  return sameUnit ? `${newest.replace(/ (days?|h)$/, '')} to ${oldest}` : `${newest} to ${oldest}`;
}

function formatAge(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  if (days >= 1) return `${days} day${days === 1 ? '' : 's'}`;
  const hours = Math.floor(ms / 3_600_000);
  return hours >= 1 ? `${hours} h` : 'under an hour';
}
