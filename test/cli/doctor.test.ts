/**
 * `seclookup doctor`, offline against loopback peers: a DNS server that answers and one that
 * does not, a TCP listener standing in for the WHOIS upstream and a closed port, a data folder
 * missing one product's dataset, and pwbreach on its bundled sample.
 */
import { cpSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { forgetSharedFileData } from '../../src/lib/shared-file-data.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { createTempDirs, runCli } from './harness.js';

interface DoctorJson {
  ok: boolean;
  products: { product: string; level: 'ok' | 'warn' | 'fail'; findings: { level: string; check: string; message: string }[] }[];
}

const dirs = createTempDirs();
/**
 * Doctor on the day this data was checked: data ages, and so what is stale, stay as they were
 * that day whatever the calendar says (the bundled data does not change by itself).
 */
const ON_THE_DAY = Date.parse('2026-11-29T12:00:00Z');
const doctor = (args: string[]) => runCli(args, { now: () => ON_THE_DAY });
let dns: DnsTestServer;
let silentDns: DnsTestServer;
let upstream: Server;
let upstreamPort: number;
let closedPort: number;

beforeAll(async () => {
  dns = await startDnsServer({ zone: { 'example.com': [{ type: 'A', address: '93.184.216.34' }], 'whois.probe.test': [{ type: 'A', address: '127.0.0.1' }] } });
  silentDns = await startDnsServer({ behaviour: 'silent' });
  upstream = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  await dns.close();
  await silentDns.close();
  upstream.close();
  dirs.cleanup();
});

function byProduct(report: DoctorJson, product: string) {
  const found = report.products.find((entry) => entry.product === product);
  if (!found) throw new Error(`no ${product} in ${JSON.stringify(report)}`);
  return found;
}

describe('seclookup doctor', () => {
  it('says every product can answer when the data loads, DNS answers and the upstream is reachable; pwbreach warns of its sample', async () => {
    const result = await doctor(['doctor', '--json', '--dns', `127.0.0.1:${dns.port}`, '--probe', `127.0.0.1:${upstreamPort}`]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(report.ok).toBe(true);
    expect(report.products.map((entry) => entry.product)).toContain('geoip');
    expect(report.products.every((entry) => entry.level !== 'fail')).toBe(true);
    expect(byProduct(report, 'geoip').findings[0]).toMatchObject({ level: 'ok', check: 'data' });
    expect(byProduct(report, 'dnsbl').findings).toContainEqual({ level: 'ok', check: 'dns', message: 'the DNS servers answer' });
    expect(byProduct(report, 'whois').findings).toContainEqual({ level: 'ok', check: 'outbound', message: `reached 127.0.0.1:${upstreamPort}` });
    const pwbreach = byProduct(report, 'pwbreach');
    expect(pwbreach.level).toBe('warn');
    expect(pwbreach.findings.find((finding) => finding.check === 'corpus')?.message).toMatch(/7,534-hash sample/);
    // Products that need neither DNS nor an upstream are checked for their data alone.
    expect(byProduct(report, 'useragent').findings.map((finding) => finding.check)).toEqual(['data']);
  });

  it('times the DNS check from when the engines are built, not across their build (a short --timeout on a cold start)', async () => {
    // The engines' data read afresh, as in a new process: building them holds the event loop for
    // hundreds of ms, which a DNS deadline started before the build used to run out in.
    forgetSharedFileData();
    const result = await doctor(['doctor', '--json', '--timeout', '300', '--dns', `127.0.0.1:${dns.port}`, '--probe', `127.0.0.1:${upstreamPort}`]);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(byProduct(report, 'dnsbl').findings).toContainEqual({ level: 'ok', check: 'dns', message: 'the DNS servers answer' });
    expect(result.code).toBe(0);
  });

  it('fails the DNS products when the DNS server does not answer, and whois when its upstream is closed; exit 1', async () => {
    const result = await doctor(['doctor', '--json', '--timeout', '300', '--dns', `127.0.0.1:${silentDns.port}`, '--probe', `127.0.0.1:${closedPort}`]);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(report.ok).toBe(false);
    for (const product of ['dnsbl', 'emailval', 'emailauth', 'domainrep', 'tls']) {
      expect(byProduct(report, product).level).toBe('fail');
      expect(byProduct(report, product).findings.find((finding) => finding.check === 'dns')?.message).toBe(
        'the DNS servers do not answer: no answer within 300 ms',
      );
    }
    const whois = byProduct(report, 'whois').findings.find((finding) => finding.check === 'outbound');
    expect(whois?.level).toBe('fail');
    expect(whois?.message).toContain(`cannot reach 127.0.0.1:${closedPort}: connect ECONNREFUSED`);
    expect(byProduct(report, 'geoip').level).toBe('ok');
  });

  it('names the product whose dataset is missing, in a table, and exits 1; --offline skips the network', async () => {
    // The bundled data, each product's folder linked rather than copied, but for webhookip's.
    const dataDir = dirs.make();
    for (const entry of readdirSync(bundledDataDir())) {
      if (entry !== 'webhookip') symlinkSync(join(bundledDataDir(), entry), join(dataDir, entry));
    }
    const result = await doctor(['doctor', '--offline', '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^PRODUCT\s+STATUS\s+DETAILS$/);
    const webhookip = lines.find((line) => line.startsWith('webhookip'));
    expect(webhookip).toMatch(/^webhookip\s+fail\s+data: cannot read dataset .*webhookip\/ranges\.json/);
    // geoip's database says when it was built; useragent's rules ship inside ua-parser-js (no data file, no age).
    expect(lines.find((line) => line.startsWith('geoip '))).toMatch(/^geoip\s+ok\s+data: loaded, \d+ days? old$/);
    expect(lines.find((line) => line.startsWith('useragent '))).toMatch(/^useragent\s+ok\s+data: loaded$/);
    expect(lines.find((line) => line.startsWith('dnsbl '))).toContain('dns: not checked (--offline)');
  });

  it("dates the data by what it records, not by the files' times: a copy made now (fresh clone, data init) reports the data as old as it is", async () => {
    // A copy whose files were all written just now, as a fresh clone or an untar leaves them.
    const dataDir = dirs.make();
    cpSync(bundledDataDir(), dataDir, { recursive: true, filter: (path) => !path.endsWith('.idx') });
    const ranges = join(dataDir, 'webhookip', 'ranges.json');
    expect(Date.now() - statSync(ranges).mtimeMs).toBeLessThan(60_000);
    const json = (path: string) => JSON.parse(readFileSync(join(dataDir, path), 'utf8'));
    const result = await doctor(['doctor', '--json', '--offline', '--data-dir', dataDir]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as DoctorJson;
    const data = (product: string) => byProduct(report, product).findings.find((finding) => finding.check === 'data')?.message;
    // Whole days since a date the data records, as doctor counts them.
    const daysSince = (date: string) => [Math.floor((ON_THE_DAY - Date.parse(date)) / 86_400_000)];
    const oneOf = (format: (days: number) => string, date: string) => daysSince(date).map((days) => format(days));
    const daysOld = (days: number) => `${days} day${days === 1 ? '' : 's'}`;

    expect(oneOf((days) => `loaded, ${daysOld(days)} old`, json('webhookip/ranges.json').generated)).toContain(data('webhookip'));
    expect(oneOf((days) => `loaded, ${daysOld(days)} old`, json('dnsbl/zones.json').generated)).toContain(data('dnsbl'));
    const disposableDate = /^# Date: (\S+)$/m.exec(readFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), 'utf8'))![1];
    expect(oneOf((days) => `loaded, ${daysOld(days)} old (undated: role-based-local-parts.tsv)`, disposableDate)).toContain(data('emailval'));
    // riskscore: each group's snapshot (the newest is what its answers' fetched_at say), newest to oldest.
    const snapshots = Object.values(json('riskscore/snapshots.json') as Record<string, string>).map(Date.parse);
    const [newest, oldest] = [Math.max(...snapshots), Math.min(...snapshots)].map((ms) => new Date(ms).toISOString());
    const riskscore = /^loaded, (\d+) to (\d+) days old$/.exec(data('riskscore') ?? '');
    expect(riskscore, data('riskscore')).not.toBeNull();
    expect(daysSince(newest)).toContain(Number(riskscore![1]));
    expect(daysSince(oldest)).toContain(Number(riskscore![2]));
    // A table that names its tzdata release and no date, and a breach sample with no date at all: undated, never "under an hour".
    expect(data('timezone')).toBe(`loaded, undated (tzdata ${json('timezone/abbreviations.json').tzdata})`);
    expect(data('pwbreach')).toBe('loaded, undated');
    // In --json, each dataset too: an undated one with nulls; a curated table with no limit never stale.
    const datasets = (product: string) => (byProduct(report, product) as unknown as { datasets: Record<string, unknown>[] }).datasets;
    expect(datasets('emailval')).toContainEqual({ dataset: 'role-based-local-parts.tsv', built_at: null, age_days: null, max_age_days: null, stale: false });
    expect(datasets('emailval')).toContainEqual({
      dataset: 'disposable-domains.txt',
      built_at: new Date(disposableDate).toISOString(),
      age_days: daysSince(disposableDate)[0],
      max_age_days: 90,
      stale: daysSince(disposableDate)[0] > 90,
    });
    expect(datasets('useragent')).toEqual([]);
    for (const product of ['webhookip', 'dnsbl', 'emailval', 'whois', 'scamrisk', 'domainrep', 'riskscore']) {
      expect(data(product), product).toMatch(/^loaded, \d+ (to \d+ )?days? old/);
    }
  });

  it('warns of data older than its source allows, naming each dataset, its age and limit, and the refresh; exit 0', async () => {
    // webhookip's folder copied, to be redated; every other product's linked (riskscore's compiled
    // lists then come from the bundled cache, not a rebuild).
    const dataDir = dirs.make();
    for (const folder of readdirSync(bundledDataDir())) {
      if (folder === 'webhookip') cpSync(join(bundledDataDir(), folder), join(dataDir, folder), { recursive: true });
      else symlinkSync(join(bundledDataDir(), folder), join(dataDir, folder));
    }
    const ranges = join(dataDir, 'webhookip', 'ranges.json');
    const redate = (daysBefore: number) => {
      const document = JSON.parse(readFileSync(ranges, 'utf8')) as { generated: string };
      document.generated = new Date(ON_THE_DAY - daysBefore * 86_400_000).toISOString().slice(0, 10);
      writeFileSync(ranges, JSON.stringify(document));
    };
    const webhookip = async () => {
      const result = await doctor(['doctor', '--json', '--offline', '--data-dir', dataDir]);
      expect(result.code).toBe(0);
      return byProduct(JSON.parse(result.stdout) as DoctorJson, 'webhookip');
    };
    // Dated in the future (a clock behind, or a wrong date): said, not taken for fresh (found by a reviewer).
    redate(-40);
    expect(await webhookip()).toMatchObject({
      level: 'warn',
      findings: [
        { level: 'ok', check: 'data' },
        { level: 'warn', check: 'data', message: "dated in the future: ranges.json 39 days ahead (this machine's clock, or the data's date, is wrong)" },
      ],
    });
    redate(90);
    expect(await webhookip()).toMatchObject({
      level: 'ok',
      datasets: [{ dataset: 'ranges.json', age_days: 90, max_age_days: 90, stale: false }],
    });
    redate(91);
    const builtAt = new Date(new Date(ON_THE_DAY - 91 * 86_400_000).toISOString().slice(0, 10)).toISOString();
    expect(await webhookip()).toMatchObject({
      level: 'warn',
      findings: [
        { level: 'ok', check: 'data', message: 'loaded, 91 days old' },
        // The folder checked is the one to refresh: a bare `data update` would refresh the bundled data (found by a reviewer).
        {
          level: 'warn',
          check: 'data',
          message: `stale: ranges.json 91 days old (over 90); refresh with seclookup data update webhookip --data-dir ${dataDir}`,
        },
      ],
      // The same for a script, without parsing the words.
      datasets: [{ dataset: 'ranges.json', built_at: builtAt, age_days: 91, max_age_days: 90, stale: true }],
    });
    // The bundled abuse lists, months old on that day: each named with its own limit.
    const table = (await doctor(['doctor', '--offline', '--data-dir', dataDir])).stdout;
    expect(table).toMatch(
      /^riskscore\s+warn\s+data: stale: tor \d+ days old \(over 30\), .*ipsum \d+ days old \(over 30\); refresh with seclookup data update riskscore --data-dir \S+$/m,
    );
    expect(table).toContain(`refresh with seclookup data update riskscore --data-dir ${dataDir}\n`);
    expect(table).toMatch(/^webhookip\s+warn\s+data: stale: ranges\.json 91 days old/m);
    expect(table).toMatch(/^useragent\s+ok\s+data: loaded$/m);
  });

  it('refuses a bad --probe with a usage error; a bad port is said to be the port', async () => {
    const result = await doctor(['doctor', '--probe', 'nowhere']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--probe must be HOST:PORT (got "nowhere")');
    const port = await doctor(['doctor', '--probe', '127.0.0.1:0']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--probe: the port must be a whole number from 1 to 65535 (got "127.0.0.1:0")');
    // Node's timers hold at most 2^31 - 1 ms; a longer one fires at once and fails every check.
    const timeout = await doctor(['doctor', '--timeout', '2147483648']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a whole number from 1 to 2147483647 (got "2147483648")');
  });

  it("finds an upstream's host through serve's DNS servers (--dns), not the system's resolver", async () => {
    // Neither name exists for the system's resolver: only the --dns server knows whois.probe.test.
    const found = JSON.parse(
      (await doctor(['doctor', '--json', '--dns', `127.0.0.1:${dns.port}`, '--probe', `whois.probe.test:${upstreamPort}`])).stdout,
    ) as DoctorJson;
    expect(byProduct(found, 'whois').findings).toContainEqual({ level: 'ok', check: 'outbound', message: `reached whois.probe.test:${upstreamPort}` });
    const result = await doctor(['doctor', '--json', '--dns', `127.0.0.1:${dns.port}`, '--probe', `nowhere.probe.test:${upstreamPort}`]);
    expect(result.code).toBe(1);
    const unknown = byProduct(JSON.parse(result.stdout) as DoctorJson, 'whois').findings.find((finding) => finding.check === 'outbound');
    expect(unknown).toEqual({
      level: 'fail',
      check: 'outbound',
      message: expect.stringMatching(/^cannot resolve nowhere\.probe\.test: the DNS servers know no address for it \(needs .+\)$/),
    });
  });

  it('reaches the host of an upstream API set for riskscore or pwbreach, naming host and port only', async () => {
    const settings = (riskscorePort: number, pwbreachPort: number) => [
      '--riskscore-provider',
      'ipinfo',
      '--riskscore-key',
      'KEY-NEVER-SHOWN',
      '--riskscore-url',
      `http://127.0.0.1:${riskscorePort}`,
      '--pwbreach-upstream',
      `http://user:PASSWORD@127.0.0.1:${pwbreachPort}/range/{prefix}`,
    ];
    const result = await doctor(['doctor', '--json', '--timeout', '300', '--dns', `127.0.0.1:${dns.port}`, ...settings(upstreamPort, closedPort)]);
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(byProduct(report, 'riskscore').findings).toContainEqual({ level: 'ok', check: 'upstream', message: `reached 127.0.0.1:${upstreamPort}` });
    const pwbreach = byProduct(report, 'pwbreach');
    expect(pwbreach.level).toBe('fail');
    expect(pwbreach.findings).toContainEqual({
      level: 'fail',
      check: 'upstream',
      message: expect.stringMatching(
        new RegExp(`^cannot reach 127\\.0\\.0\\.1:${closedPort}: connect ECONNREFUSED .* \\(needs the range API --pwbreach-upstream names\\)$`),
      ),
    });
    expect(result.code).toBe(1);
    const offline = JSON.parse((await doctor(['doctor', '--json', '--offline', ...settings(upstreamPort, upstreamPort)])).stdout) as DoctorJson;
    expect(byProduct(offline, 'riskscore').findings).toContainEqual({
      level: 'ok',
      check: 'upstream',
      message: `not checked (--offline); needs the ipinfo API riskscore asks (127.0.0.1:${upstreamPort})`,
    });
    for (const text of [result.stdout, JSON.stringify(offline)]) {
      expect(text).not.toContain('KEY-NEVER-SHOWN');
      expect(text).not.toContain('PASSWORD');
    }
    // The local provider calls no upstream: nothing to say.
    const local = JSON.parse((await doctor(['doctor', '--json', '--offline'])).stdout) as DoctorJson;
    expect(new Set(byProduct(local, 'riskscore').findings.map((finding) => finding.check))).toEqual(new Set(['data']));
  });
});
