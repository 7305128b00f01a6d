/**
 * `seclookup data update scamrisk` against a real loopback HTTP server standing in for the
 * official URLs (through --mirror). The server answers with copies of the bundled files, each
 * changed a little (a phishing domain, a scam address, a sanctioned address added), built here
 * from data/; the update goes into a copy of the bundled data, and the scamrisk engine made with
 * `createLookup({ dataDir })` must see the new entries. Hostile answers (garbage, 500, a hang, a
 * wrong shape, an implausibly short list) must leave their file byte for byte as it was while
 * the other files still update. Then the same through the built CLI.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { viaMirror } from '../../src/lib/source-update.js';
import { createLookup } from '../../src/lookup.js';
import scamriskModule from '../../src/products/scamrisk/index.js';
import { LIST_DATES, loadScamLists } from '../../src/products/scamrisk/lists.js';
import { SOFT_SOURCES, type ScamriskRequest, type ScamriskResult } from '../../src/products/scamrisk/types.js';
import {
  METAMASK_CONFIG_URL,
  ofacListUrl,
  parseScamriskSources,
  POLKADOT_ADDRESS_URL,
  POLKADOT_ALL_URL,
  updateScamriskData,
  type ScamriskUpdateOptions,
} from '../../src/products/scamrisk/update.js';
import { runCli } from '../cli/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const BUNDLED = bundledDataDir();
const bundled = (file: string) => readFileSync(join(BUNDLED, file), 'utf8');
const pathOf = (url: string) => viaMirror(url, '');

const METAMASK = 'phishing/metamask/config.json';
const POLKADOT_ALL = 'phishing/polkadot/all.json';
const ADDRESSES = 'scamrisk/polkadot/address.json';
const ofacFile = (asset: string) => `scamrisk/ofac/sanctioned_addresses_${asset}.txt`;
const OFAC_ASSETS = readdirSync(join(BUNDLED, 'scamrisk', 'ofac'))
  .map((name) => /^sanctioned_addresses_([A-Z0-9]+)\.txt$/.exec(name)?.[1])
  .filter((asset): asset is string => asset !== undefined)
  .sort();
const ALL_FILES = [METAMASK, POLKADOT_ALL, ADDRESSES, ...OFAC_ASSETS.map(ofacFile)];

/** New entries only the mirror knows about. */
const NEW_METAMASK_DOMAIN = 'claim-airdrop-wallet-check.com';
const NEW_POLKADOT_DOMAIN = 'polkadot-staking-bonus.app';
const NEW_CAMPAIGN = 'new-campaign.example';
const NEW_SANCTIONED_ETH = '0x7e57000000000000000000000000000000000001';
/** The updater's clock: the date snapshots.json records for each list fetched. */
const NOW = '2026-12-01T10:00:00.000Z';
const NOW_SEEN = '2026-12-01T10:00:00.000+00:00';

const metamaskDoc = () => JSON.parse(bundled(METAMASK)) as { blacklist: string[]; whitelist: string[]; fuzzylist: string[]; tolerance: number };
const polkadotDoc = () => JSON.parse(bundled(POLKADOT_ALL)) as { deny: string[]; allow: string[] };
const addressDoc = () => JSON.parse(bundled(ADDRESSES)) as Record<string, string[]>;
/** An address of the bundled polkadot list, filed under the new campaign on the mirror. */
const SCAM_ADDRESS = Object.values(addressDoc())[0][0];

/** The mirror's answers: the bundled files with the new entries (JSON re-serialized, so every JSON file changes). */
function served(): Record<string, string> {
  const metamask = metamaskDoc();
  metamask.blacklist.push(NEW_METAMASK_DOMAIN);
  const polkadot = polkadotDoc();
  polkadot.deny.unshift(NEW_POLKADOT_DOMAIN);
  const addresses = { ...addressDoc(), [NEW_CAMPAIGN]: [SCAM_ADDRESS] };
  const out: Record<string, string> = {
    [METAMASK]: JSON.stringify(metamask, null, 2),
    [POLKADOT_ALL]: JSON.stringify(polkadot),
    [ADDRESSES]: JSON.stringify(addresses, null, 2),
  };
  for (const asset of OFAC_ASSETS) out[ofacFile(asset)] = bundled(ofacFile(asset));
  out[ofacFile('ETH')] += `${NEW_SANCTIONED_ETH}\n`;
  return out;
}

const URLS: Record<string, string> = {
  [METAMASK]: METAMASK_CONFIG_URL,
  [POLKADOT_ALL]: POLKADOT_ALL_URL,
  [ADDRESSES]: POLKADOT_ADDRESS_URL,
  ...Object.fromEntries(OFAC_ASSETS.map((asset) => [ofacFile(asset), ofacListUrl(asset)])),
};

let server: HttpFixture;
let dataDir: string;
let progress: string[];
let answers: Record<string, string>;

const onFile = (file: string) => readFileSync(join(dataDir, file), 'utf8');
const routeOf = (file: string) => pathOf(URLS[file]);

function serveAll(): void {
  answers = served();
  server.routes.clear();
  for (const [file, body] of Object.entries(answers))
    server.routes.set(routeOf(file), respond.text(body, { contentType: file.endsWith('.json') ? 'application/json' : 'text/plain' }));
  server.hits.clear();
}

/** A timeout no answering mirror misses on a loaded machine (2 s failed there); the hang's own test sets a short one. */
function update(options: Partial<ScamriskUpdateOptions> = {}) {
  return updateScamriskData({
    dataDir,
    mirror: server.url,
    timeoutMs: 15_000,
    onProgress: (line) => progress.push(line),
    now: () => new Date(NOW),
    ...options,
  });
}

/** scamrisk on the data folder as it is now (the lists are read when the engine is made), every engine-backed (networked) source off. */
function engineOnData(): (request: ScamriskRequest) => Promise<ScamriskResult> {
  const lookup = createLookup({ dataDir, scamrisk: { disable: [...SOFT_SOURCES] } });
  return (request) => lookup.scamrisk(request);
}
const signals = (result: ScamriskResult) => result.signals.map((s) => `${s.source}:${s.code}:${s.detail ?? ''}`);
/** The signals that come from the lists this command updates. */
const listed = (result: ScamriskResult) => signals(result).filter((s) => /:(phishing_domain|sanctioned_address|scam_address):/.test(s));

beforeAll(async () => {
  server = await startHttpFixture();
});
afterAll(() => server.close());

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'seclookup-scamrisk-update-'));
  for (const dir of ['phishing', 'scamrisk']) cpSync(join(BUNDLED, dir), join(dataDir, dir), { recursive: true });
  progress = [];
  serveAll();
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('updateScamriskData from the mirror', () => {
  it('rewrites the changed files as served, leaves the others, and the engine reads the new entries', async () => {
    // Before: none of the new entries is known.
    let assess = engineOnData();
    expect(listed(await assess({ domain: NEW_METAMASK_DOMAIN }))).toEqual([]);
    expect(listed(await assess({ type: 'crypto', value: NEW_SANCTIONED_ETH }))).toEqual([]);

    const report = await update();
    expect(report).toEqual({
      dataDir,
      updated: [METAMASK, POLKADOT_ALL, ADDRESSES, ofacFile('ETH')],
      unchanged: OFAC_ASSETS.filter((a) => a !== 'ETH').map(ofacFile),
      failed: [],
      dated: ['metamask', 'polkadot', 'polkadotAddresses', 'ofac'],
    });
    for (const file of ALL_FILES) expect(onFile(file), file).toBe(answers[file]);
    // Each official URL asked once, and nothing else.
    expect(Object.fromEntries(server.hits)).toEqual(Object.fromEntries(ALL_FILES.map((file) => [routeOf(file), 1])));
    const mm = metamaskDoc();
    expect(progress).toContain(
      `${METAMASK}: ${mm.blacklist.length + 1} blacklist, ${mm.whitelist.length} whitelist, ${mm.fuzzylist.length} fuzzylist (updated, was ${mm.blacklist.length} blacklist, ${mm.whitelist.length} whitelist, ${mm.fuzzylist.length} fuzzylist)`,
    );
    expect(progress).toContain(`${ofacFile('XBT')}: ${bundled(ofacFile('XBT')).trim().split('\n').length} addresses (unchanged)`);
    // No temporary file left beside a rewritten one.
    expect(readdirSync(join(dataDir, 'phishing', 'metamask')).sort()).toEqual(['LICENSE', 'config.json']);
    expect(readdirSync(join(dataDir, 'scamrisk', 'ofac')).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    assess = engineOnData();
    expect(signals(await assess({ domain: NEW_METAMASK_DOMAIN }))).toContain(`metamask:phishing_domain:listed: ${NEW_METAMASK_DOMAIN}`);
    expect(signals(await assess({ type: 'url', value: `https://app.${NEW_POLKADOT_DOMAIN}/stake` }))).toContain(
      `polkadot:phishing_domain:listed: ${NEW_POLKADOT_DOMAIN}`,
    );
    const sanctioned = await assess({ type: 'crypto', value: NEW_SANCTIONED_ETH });
    expect(sanctioned.signals).toContainEqual(expect.objectContaining({ code: 'sanctioned_address', source: 'ofac', detail: 'asset: ETH' }));
    expect(sanctioned.assessment.risk_level).toBe('critical');
    expect(signals(await assess({ type: 'crypto', value: SCAM_ADDRESS }))).toContain(`polkadot:scam_address:campaign: ${NEW_CAMPAIGN}`);

    // Each list's signals are dated from this run (snapshots.json), not the bundled snapshot.
    expect(JSON.parse(onFile('scamrisk/snapshots.json'))).toEqual({ metamask: NOW_SEEN, polkadot: NOW_SEEN, polkadotAddresses: NOW_SEEN, ofac: NOW_SEEN });
    expect(sanctioned.signals.find((s) => s.code === 'sanctioned_address')!.last_seen).toBe(NOW_SEEN);
  });

  it('a second run with the same answers changes nothing', async () => {
    await update();
    const report = await update();
    expect(report.updated).toEqual([]);
    expect(report.unchanged).toEqual(ALL_FILES);
  });
});

describe('failing sources keep their previous file', () => {
  it('garbage, HTTP 500, a hang (short timeout) and a too-short list each fail alone; the rest still updates', async () => {
    server.routes.set(routeOf(METAMASK), respond.text('<html><body>Just a moment...</body></html>', { contentType: 'text/html' }));
    server.routes.set(routeOf(POLKADOT_ALL), respond.status(500));
    server.routes.set(routeOf(ADDRESSES), respond.hang());
    const xbt = bundled(ofacFile('XBT')).split('\n').slice(0, 3).join('\n'); // 3 of 483 addresses
    server.routes.set(routeOf(ofacFile('XBT')), respond.text(xbt));
    const before = Object.fromEntries(ALL_FILES.map((file) => [file, onFile(file)]));

    // Long enough that the answering mirror is never cut off on a loaded machine; the hang is
    // cut at it (the reason says so), and a hang the timeout missed would hit the test's own.
    const report = await update({ timeoutMs: 1_500 });
    const xbtOnFile = before[ofacFile('XBT')].trim().split('\n').length;
    expect(report.failed).toEqual([
      { file: METAMASK, source: 'phishing', reason: 'response is not valid JSON' },
      { file: POLKADOT_ALL, source: 'phishing', reason: 'HTTP 500' },
      { file: ADDRESSES, source: 'polkadot-addresses', reason: 'timeout after 1500 ms' },
      {
        file: ofacFile('XBT'),
        source: 'ofac',
        reason: `refusing the download: 3 addresses, fewer than half of the ${xbtOnFile} on file (a truncated or broken source?)`,
      },
    ]);
    expect(report.updated).toEqual([ofacFile('ETH')]);
    expect(report.dated).toEqual([]); // every list had a failed file (OFAC: XBT)
    expect(readdirSync(join(dataDir, 'scamrisk'))).not.toContain('snapshots.json');
    expect(progress).toContain(`${POLKADOT_ALL}: failed (HTTP 500), previous file kept`);
    for (const file of [METAMASK, POLKADOT_ALL, ADDRESSES, ofacFile('XBT')]) expect(onFile(file), file).toBe(before[file]);
    expect(onFile(ofacFile('ETH'))).toBe(answers[ofacFile('ETH')]);

    // The data still loads, with the old lists and the new sanctioned address.
    const assess = engineOnData();
    expect(listed(await assess({ domain: NEW_METAMASK_DOMAIN }))).toEqual([]);
    expect(signals(await assess({ type: 'crypto', value: NEW_SANCTIONED_ETH }))).toContain('ofac:sanctioned_address:asset: ETH');
  });

  it('wrong shapes are refused: missing or non-array lists, non-string entries, a line that is not an address', async () => {
    const { fuzzylist: _gone, ...noFuzzy } = metamaskDoc();
    server.routes.set(routeOf(METAMASK), respond.json(noFuzzy));
    server.routes.set(routeOf(POLKADOT_ALL), respond.json({ deny: polkadotDoc().deny, allow: 'none' }));
    server.routes.set(routeOf(ADDRESSES), respond.json({ ...addressDoc(), broken: [SCAM_ADDRESS, 42] }));
    server.routes.set(routeOf(ofacFile('ETH')), respond.text(`${bundled(ofacFile('ETH'))}<!doctype html>\n`));
    server.routes.set(routeOf(ofacFile('XMR')), respond.json([bundled(ofacFile('XMR'))]));
    const before = Object.fromEntries(ALL_FILES.map((file) => [file, onFile(file)]));

    const report = await update();
    expect(Object.fromEntries(report.failed.map((f) => [f.file, f.reason]))).toEqual({
      [METAMASK]: 'unexpected shape: "fuzzylist" is missing',
      [POLKADOT_ALL]: 'unexpected shape: "allow" is not an array',
      [ADDRESSES]: 'unexpected shape: "broken" is not an array of strings',
      [ofacFile('ETH')]: `line ${before[ofacFile('ETH')].split('\n').length} is not an address: "<!doctype html>"`,
      [ofacFile('XMR')]: expect.stringMatching(/^line 1 is not an address: "\[/),
    });
    for (const file of ALL_FILES) expect(onFile(file), file).toBe(before[file]);
  });

  it('an implausibly short phishing list is refused; an unreachable mirror fails every file', async () => {
    const mm = metamaskDoc();
    server.routes.set(routeOf(METAMASK), respond.json({ ...mm, blacklist: mm.blacklist.slice(0, 100) }));
    const short = await update({ sources: ['phishing'] });
    expect(short.failed).toEqual([
      {
        file: METAMASK,
        source: 'phishing',
        reason: `refusing the download: 100 blacklist, fewer than half of the ${mm.blacklist.length} on file (a truncated or broken source?)`,
      },
    ]);
    expect(onFile(METAMASK)).toBe(bundled(METAMASK));

    const closed = await startHttpFixture();
    await closed.close();
    const dead = await update({ mirror: closed.url });
    expect(dead.updated).toEqual([]);
    expect(dead.failed).toHaveLength(ALL_FILES.length);
    expect(dead.failed[0].reason).toBe('request failed: ECONNREFUSED');
  });
});

describe('a download padded with copies of one entry', () => {
  it('counts each entry once: a list of one address, one host or one campaign address repeated is refused, not written', async () => {
    const xbt = bundled(ofacFile('XBT')).trim().split('\n');
    server.routes.set(routeOf(ofacFile('XBT')), respond.text(`${Array(xbt.length).fill(xbt[0]).join('\n')}\n`));
    const mm = metamaskDoc();
    server.routes.set(routeOf(METAMASK), respond.json({ ...mm, blacklist: mm.blacklist.map(() => 'ONE-host.example.') }));
    const addresses = addressDoc();
    const [site] = Object.keys(addresses);
    server.routes.set(routeOf(ADDRESSES), respond.json({ [site]: Array(50_000).fill(SCAM_ADDRESS) }));
    const before = Object.fromEntries(ALL_FILES.map((file) => [file, onFile(file)]));

    const report = await update();
    expect(Object.fromEntries(report.failed.map((f) => [f.file, f.reason]))).toEqual({
      [METAMASK]: expect.stringMatching(/^refusing the download: 1 blacklist, fewer than half of the \d+ on file/),
      [ADDRESSES]: expect.stringMatching(/^refusing the download: 1 addresses, fewer than half of the \d+ on file/),
      [ofacFile('XBT')]: `refusing the download: 1 addresses, fewer than half of the ${new Set(xbt).size} on file (a truncated or broken source?)`,
    });
    for (const file of [METAMASK, ADDRESSES, ofacFile('XBT')]) expect(onFile(file), file).toBe(before[file]);
  });
});

describe('--source', () => {
  it('updates only the chosen sources and asks nothing else', async () => {
    const report = await update({ sources: ['ofac', 'polkadot-addresses'] });
    expect(report.updated).toEqual([ADDRESSES, ofacFile('ETH')]);
    expect(report.failed).toEqual([]);
    expect(report.dated).toEqual(['polkadotAddresses', 'ofac']);
    // The phishing lists keep their bundled dates.
    const dates = JSON.parse(onFile('scamrisk/snapshots.json'));
    expect([dates.polkadotAddresses, dates.ofac]).toEqual([NOW_SEEN, NOW_SEEN]);
    expect(dates.metamask).toBe(LIST_DATES.metamask);
    expect(server.hits.has(routeOf(METAMASK))).toBe(false);
    expect(server.hits.has(routeOf(POLKADOT_ALL))).toBe(false);
    expect(onFile(METAMASK)).toBe(bundled(METAMASK));
  });

  it('ofac refreshes the assets on file; an empty file adds an asset', async () => {
    writeFileSync(join(dataDir, ofacFile('SOL')), '');
    const sol = 'So1anaSanct1onedAddre55Examp1eXXXXXXXXXXXX';
    server.routes.set(pathOf(ofacListUrl('SOL')), respond.text(`${sol}\n`));
    const report = await update({ sources: ['ofac'] });
    expect(report.updated).toEqual([ofacFile('ETH'), ofacFile('SOL')]);
    expect(report.unchanged).toHaveLength(OFAC_ASSETS.length - 1);
    expect(onFile(ofacFile('SOL'))).toBe(`${sol}\n`);
    expect(loadScamLists(dataDir).sanctioned(sol)).toEqual(['SOL']);
  });

  it('parses the names; an unknown name is refused with the list of sources', async () => {
    expect(parseScamriskSources(' phishing,ofac,phishing ')).toEqual(['phishing', 'ofac']);
    expect(() => parseScamriskSources('phishing,domains')).toThrow('unknown scamrisk source "domains"; sources: phishing, polkadot-addresses, ofac');
    expect(() => parseScamriskSources(',')).toThrow('--source needs one or more of phishing, polkadot-addresses, ofac');
    // Through the product's dataset, before any download.
    await expect(scamriskModule.dataset!.update!({ dataDir, mirror: server.url, source: 'nosuch', onProgress: () => {} })).rejects.toMatchObject({
      code: 'invalid_option',
      message: expect.stringContaining('unknown scamrisk source "nosuch"'),
    });
    expect(server.hits.size).toBe(0);
  });
});

describe('seclookup data update scamrisk (built CLI)', () => {
  it('updates from the mirror, reports failures and the next steps, and the lookup sees the new data', async () => {
    server.routes.set(routeOf(POLKADOT_ALL), respond.status(500));
    const result = await runCli(['data', 'update', 'scamrisk', '--data-dir', dataDir, '--mirror', server.url, '--timeout', '2000']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      `scamrisk: 3 updated (${METAMASK}, ${ADDRESSES}, ${ofacFile('ETH')}), ${OFAC_ASSETS.length - 1} unchanged, 1 failed; ${dataDir}`,
    );
    expect(result.stderr).toContain(`${POLKADOT_ALL}: failed (HTTP 500), previous file kept`);
    expect(result.stderr).toContain(`${POLKADOT_ALL} (HTTP 500): previous data kept.`);
    expect(result.stderr).toContain('Restart `seclookup serve` to load the new data.');
    expect(result.stderr).toContain('node data/domainrep/build-tld-risk.mjs');
    expect(onFile(POLKADOT_ALL)).toBe(bundled(POLKADOT_ALL));

    const lookup = await runCli([
      'lookup',
      'scamrisk',
      '--type',
      'crypto',
      NEW_SANCTIONED_ETH,
      '--data-dir',
      dataDir,
      '--scamrisk-disable',
      SOFT_SOURCES.join(','),
    ]);
    expect(lookup.code).toBe(0);
    expect(JSON.parse(lookup.stdout).signals).toContainEqual(expect.objectContaining({ code: 'sanctioned_address', detail: 'asset: ETH' }));
  });

  it('refuses an unknown --source as a usage error (exit 2), and exits 1 when every file fails', async () => {
    const unknown = await runCli(['data', 'update', 'scamrisk', '--data-dir', dataDir, '--mirror', server.url, '--source', 'phishing,nosuch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown scamrisk source "nosuch"; sources: phishing, polkadot-addresses, ofac');
    expect(server.hits.size).toBe(0);

    server.routes.set(routeOf(ADDRESSES), respond.hang());
    const failed = await runCli([
      'data',
      'update',
      'scamrisk',
      '--data-dir',
      dataDir,
      '--mirror',
      server.url,
      '--timeout',
      '300',
      '--source',
      'polkadot-addresses',
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stdout.trim()).toBe(`scamrisk: 0 updated, 0 unchanged, 1 failed; ${dataDir}`);
    expect(failed.stderr).toContain(`${ADDRESSES} (timeout after 300 ms): previous data kept.`);
    expect(onFile(ADDRESSES)).toBe(bundled(ADDRESSES));
  });
});
