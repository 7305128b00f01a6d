/**
 * seclookup_dataset_age_seconds dates the data the watched lookup loaded by what the data
 * records (`"generated"`, snapshot dates, publication dates, MMDB build times), never by the
 * files' modification times: a copy made now reports the data as old as it is, and a
 * `data update` under a running lookup changes nothing until a lookup loads the new files.
 * In process, as `serve` wires it (createMetrics with its data folder, then watchDatasets).
 */
import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { createLookup } from '../../src/lookup.js';
import { datasetAges } from '../../src/metrics/datasets.js';
import { createMetrics } from '../../src/metrics/index.js';
import { LIST_DATES } from '../../src/products/scamrisk/lists.js';
import { createTempDirs, runCli } from '../cli/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';
import { sample } from './scrape.js';

const DAY_S = 86_400;
const dirs = createTempDirs();
let mirror: HttpFixture;

beforeAll(async () => {
  mirror = await startHttpFixture();
});
afterAll(async () => {
  await mirror.close();
  dirs.cleanup();
});

/** `product`'s folders of the bundled data (all of it by default) copied now: every file's modification time is the copy's. */
function freshCopy(products?: string[]): string {
  const dataDir = dirs.make();
  if (products) for (const product of products) cpSync(join(bundledDataDir(), product), join(dataDir, product), { recursive: true });
  else cpSync(bundledDataDir(), dataDir, { recursive: true, filter: (path) => !path.endsWith('.idx') });
  expect(Date.now() - statSync(join(dataDir, 'webhookip', 'ranges.json')).mtimeMs).toBeLessThan(60_000);
  return dataDir;
}

const readJson = (dataDir: string, path: string) => JSON.parse(readFileSync(join(dataDir, path), 'utf8'));
const age = (text: string, product: string, dataset: string) => sample(text, 'seclookup_dataset_age_seconds', { product, dataset });
const seconds = (from: string, to: number) => Math.round((to - Date.parse(from)) / 1000);

describe('seclookup_dataset_age_seconds', () => {
  it("reports the age the data records, not the files' times: a copy made now reports the data as old as it is", async () => {
    const dataDir = freshCopy();
    const generated: string = readJson(dataDir, 'webhookip/ranges.json').generated;
    const now = Date.parse(generated) + 30 * DAY_S * 1000;
    const metrics = createMetrics({ dataDir, now: () => now });
    const lookup = createLookup({ dataDir });
    try {
      metrics.watchDatasets(lookup);
      const text = await metrics.metrics();
      expect(age(text, 'webhookip', 'ranges.json')).toBe(30 * DAY_S);
      expect(age(text, 'dnsbl', 'zones.json')).toBe(seconds(readJson(dataDir, 'dnsbl/zones.json').generated, now));
      expect(age(text, 'domainrep', 'tld-risk.json')).toBe(seconds(readJson(dataDir, 'domainrep/tld-risk.json').generated, now));
      expect(age(text, 'whois', 'rdap-bootstrap.json')).toBe(seconds(readJson(dataDir, 'whois/rdap-bootstrap.json').publication, now));
      const disposableDate = /^# Date: (\S+)$/m.exec(readFileSync(join(dataDir, 'emailval', 'disposable-domains.txt'), 'utf8'))![1];
      expect(age(text, 'emailval', 'disposable-domains.txt')).toBe(seconds(disposableDate, now));
      // riskscore: each group's snapshot date (snapshots.json), as its answers' fetched_at says.
      for (const [group, date] of Object.entries(readJson(dataDir, 'riskscore/snapshots.json') as Record<string, string>)) {
        expect(age(text, 'riskscore', group), group).toBe(seconds(date, now));
      }
      // scamrisk: each list's date as its signals' last_seen says it (no snapshots.json bundled: the bundled snapshot's).
      expect(age(text, 'scamrisk', 'ofac')).toBe(seconds(LIST_DATES.ofac, now));
      expect(age(text, 'scamrisk', 'phishing/metamask')).toBe(seconds(LIST_DATES.metamask, now));
      // Data that records no date has no series (doctor says "undated"): no age is made up for it.
      expect(text).not.toMatch(/product="timezone"|product="pwbreach"|role-based-local-parts/);
      // Never the documentation, licences or compiled indexes beside the data.
      expect(text).not.toMatch(/SOURCES\.md|LICENSE|\.idx/);
    } finally {
      await lookup.close();
    }
  });

  it('after `data update` of the running lookup’s folder, still reports the data it loaded; a lookup started after reports the new data', async () => {
    const dataDir = freshCopy(['webhookip']);
    const file = join(dataDir, 'webhookip', 'ranges.json');
    // Ranges dated long before any day this test runs on, so the update's new date differs.
    writeFileSync(file, JSON.stringify({ ...readJson(dataDir, 'webhookip/ranges.json'), generated: '2026-01-01' }, null, 2));
    const now = Date.parse('2026-01-01') + 40 * DAY_S * 1000;
    const metrics = createMetrics({ dataDir, now: () => now });
    const running = createLookup({ dataDir });
    try {
      running.load('webhookip'); // as serve does at its start
      metrics.watchDatasets(running);
      expect(age(await metrics.metrics(), 'webhookip', 'ranges.json')).toBe(40 * DAY_S);

      // GitHub's feed with one more range: the file is rewritten, dated today.
      const meta = JSON.parse(readFileSync(new URL('../fixtures/webhookip/github-meta.json', import.meta.url), 'utf8'));
      mirror.routes.set('/api.github.com/meta', respond.json({ ...meta, hooks: [...meta.hooks, '20.201.28.148/32'] }));
      const update = await runCli(['data', 'update', 'webhookip', '--data-dir', dataDir, '--mirror', mirror.url, '--timeout', '2000']);
      expect(update.stdout + update.stderr).toContain('github');
      const updated: string = JSON.parse(readFileSync(file, 'utf8')).generated;
      expect(updated).not.toBe('2026-01-01');

      // The running lookup answers from what it loaded: so does the metric.
      await expect(running.webhookip('20.201.28.148')).resolves.toMatchObject({ matched: false });
      expect(age(await metrics.metrics(), 'webhookip', 'ranges.json')).toBe(40 * DAY_S);

      // A lookup built now (a restart) loads the new file, and its metric says so.
      const restarted = createLookup({ dataDir });
      try {
        const fresh = createMetrics({ dataDir, now: () => Date.parse(updated) + DAY_S * 1000 });
        fresh.watchDatasets(restarted);
        expect(age(await fresh.metrics(), 'webhookip', 'ranges.json')).toBe(DAY_S);
        await expect(restarted.webhookip('20.201.28.148')).resolves.toMatchObject({ matched: true });
      } finally {
        await restarted.close();
      }
    } finally {
      await running.close();
    }
  });

  it('an MMDB whose build_epoch is 0 (written without a build time) is undated: no series, and doctor says so, not "56 years old"', async () => {
    const file = join(dirs.make(), 'undated.mmdb');
    writeFileSync(file, withBuildEpochZero(readFileSync(new URL('../fixtures/maxmind/GeoIP2-Country-Test.mmdb', import.meta.url))));
    const lookup = createLookup({ geoip: { database: file } });
    try {
      expect(datasetAges(lookup).filter((entry) => entry.product === 'geoip')).toEqual([{ product: 'geoip', dataset: 'mmdb-both', builtAtMs: null }]);
      const metrics = createMetrics({ now: () => Date.parse('2026-11-29') });
      metrics.watchDatasets(lookup);
      expect(await metrics.metrics()).not.toMatch(/product="geoip"/);
    } finally {
      await lookup.close();
    }
    const doctor = await runCli(['doctor', '--offline', '--json', '--geoip-db', file]);
    const geoip = (JSON.parse(doctor.stdout) as { products: { product: string; findings: { message: string }[] }[] }).products.find(
      (p) => p.product === 'geoip',
    )!;
    expect(geoip.findings[0].message).toBe('loaded, undated');
  });

  it('without a watched lookup reports no dataset, whatever folder it is given (it cannot know what a process loaded)', async () => {
    const dataDir = dirs.make();
    mkdirSync(join(dataDir, 'webhookip'));
    cpSync(join(bundledDataDir(), 'webhookip', 'ranges.json'), join(dataDir, 'webhookip', 'ranges.json'));
    expect(await createMetrics({ dataDir }).metrics()).not.toMatch(/^seclookup_dataset_age_seconds\{/m);
  });
});

/** The MMDB with its metadata's build_epoch (an unsigned integer) set to 0, its size kept. */
function withBuildEpochZero(mmdb: Buffer): Buffer {
  const copy = Buffer.from(mmdb);
  const metadata = copy.lastIndexOf(Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'));
  const key = copy.indexOf('build_epoch', metadata, 'latin1');
  // After the key: an extended-type control byte (its low 5 bits the size), the type byte, then the bytes.
  const size = copy[key + 'build_epoch'.length] & 0x1f;
  copy.fill(0, key + 'build_epoch'.length + 2, key + 'build_epoch'.length + 2 + size);
  return copy;
}

describe('datasetAges from an engine source that is not a createLookup', () => {
  it('reports nothing for engines it cannot read, rather than failing the whole scrape', () => {
    // EngineSource is any object with engine(id): here one whose engines have none of the fields.
    const ages = datasetAges({ engine: () => ({}) });
    // The modules that read nothing off the engine still answer; the others (geoip's reads its
    // database's metadata) are left out, where they threw through the scrape.
    expect(ages.map((age) => age.product)).not.toContain('geoip');
    for (const age of ages) expect(age).toMatchObject({ product: expect.any(String), dataset: expect.any(String) });
  });
});
