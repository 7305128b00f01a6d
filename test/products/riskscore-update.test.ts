/**
 * `data update riskscore` against recorded copies served on loopback (--mirror): every group
 * refreshed from its official URL's shape, a failing group keeps its files, Spamhaus DROP
 * installed with --source (private entries filtered at load) and then used by the engine.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataDir } from '../../src/lib/datasets.js';
import { viaMirror } from '../../src/lib/source-update.js';
import { createLookup } from '../../src/lookup.js';
import { LOCAL_SOURCES, TOR_URL, APPLE_RELAY_URL } from '../../src/products/riskscore/sources.js';
import { updateRiskScoreData } from '../../src/products/riskscore/update.js';
import { runCli } from '../cli/harness.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';

const pathOf = (url: string) => new URL(viaMirror(url, 'http://x')).pathname;
const recorded = (name: string) => readFileSync(new URL(`../fixtures/riskscore/${name}`, import.meta.url), 'utf8');

let server: HttpFixture;
let dataDir: string;

beforeAll(async () => {
  server = await startHttpFixture();
  dataDir = mkdtempSync(join(tmpdir(), 'seclookup-riskscore-'));
  cpSync(join(bundledDataDir(), 'riskscore'), join(dataDir, 'riskscore'), { recursive: true });
  // Recorded copies in each official format; small, with values of our choosing. The folder's
  // lists are made as small first (an update refuses a list less than half the size of the one on file).
  for (const source of LOCAL_SOURCES) {
    if (source.group === 'spamhaus-drop') continue;
    const body =
      source.url === TOR_URL
        ? 'fingerprint, ipaddr, port\nBBBB, 45.9.150.9, 443\nBBBB, 2a0e:1c80::9, 9001\n'
        : source.format === 'asn-lines'
          ? 'AS64496 # example\nAS13335 # Cloudflare\n'
          : source.format === 'ipsum'
            ? '# IPsum\n# Last update: test\n203.0.113.9\t9\n45.9.148.7\t8\n10.1.2.3\t9\n'
            : source.id.endsWith('ipv6')
              ? '2a0e:1c80::/29\n'
              : '45.9.149.0/24\n';
    writeFileSync(join(dataDir, 'riskscore', source.file), body);
    if (source.url !== TOR_URL && source.url !== APPLE_RELAY_URL) server.routes.set(pathOf(source.url), respond.text(body));
  }
  server.routes.set(
    pathOf(TOR_URL),
    respond.json({ version: '8.0', relays: [{ fingerprint: 'AAAA', or_addresses: ['45.9.150.1:443', '[2a0e:1c80::1]:9001'] }] }),
  );
  server.routes.set(pathOf(APPLE_RELAY_URL), respond.text('45.9.151.0/24,GB,GB-EN,London,\n2a0e:1c81::/48,GB,GB-EN,London,\n45.9.151.0/24,GB,GB-EN,London,\n'));
  for (const name of ['drop_v4.json', 'drop_v6.json', 'asndrop.json'])
    server.routes.set(pathOf(`https://www.spamhaus.org/drop/${name}`), respond.text(recorded(`spamhaus/${name}`)));
});

afterAll(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('riskscore data update via --mirror', () => {
  it('refreshes the bundled groups, keeps a group whose download fails, and the engine reads the new data', async () => {
    const ipsumBefore = readFileSync(join(dataDir, 'riskscore/abuse/ipsum.txt'), 'utf8');
    server.routes.set(pathOf('https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt'), respond.status(500));
    const progress: string[] = [];
    const report = await updateRiskScoreData({
      dataDir,
      mirror: server.url,
      timeoutMs: 2000,
      onProgress: (l) => progress.push(l),
      now: () => new Date('2026-12-01T10:00:00Z'),
    });
    expect(report.updated).toEqual(['tor', 'hosting-vpn', 'cloud', 'apple-private-relay']);
    expect(report.failed).toEqual([{ group: 'ipsum', reason: 'HTTP 500', kept: true }]);
    const dir = join(dataDir, 'riskscore');
    expect(readFileSync(join(dir, 'tor/tor-exits.csv'), 'utf8')).toBe('fingerprint, ipaddr, port\nAAAA, 45.9.150.1, 443\nAAAA, 2a0e:1c80::1, 9001\n');
    expect(readFileSync(join(dir, 'apple-private-relay/ipv4.txt'), 'utf8')).toBe('45.9.151.0/24\n');
    expect(readFileSync(join(dir, 'abuse/ipsum.txt'), 'utf8')).toBe(ipsumBefore);
    expect(JSON.parse(readFileSync(join(dir, 'snapshots.json'), 'utf8')).tor).toBe('2026-12-01T10:00:00Z');

    const lookup = createLookup({ dataDir });
    expect((await lookup.riskscore('45.9.150.1')).intelligence.flags.is_tor).toBe(true);
    expect((await lookup.riskscore('45.9.151.7')).intelligence.flags.is_relay).toBe(true);
  });

  it('installs Spamhaus DROP with --source spamhaus-drop; entries in private space are filtered at load', async () => {
    server.routes.set(pathOf('https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt'), respond.text('# IPsum\n203.0.113.9\t9\n45.9.148.7\t8\n'));
    const report = await updateRiskScoreData({ dataDir, mirror: server.url, timeoutMs: 2000, sources: ['spamhaus-drop', 'ipsum'] });
    expect(report).toMatchObject({ updated: ['spamhaus-drop', 'ipsum'], failed: [] });
    const lookup = createLookup({ dataDir });
    const r = await lookup.riskscore('45.9.148.7');
    expect(r.intelligence.tags).toEqual(expect.arrayContaining(['spamhaus_drop', 'ipsum:8']));
    expect(r.intelligence).toMatchObject({ verdict: 'malicious', flags: { is_malicious: true }, threat: { score: 100 } });
    expect((await lookup.riskscore('2a0e:fd40::1')).intelligence.tags).toContain('spamhaus_drop');
    const engine = lookup.engine('riskscore') as { local: { filtered: number } };
    expect(engine.local.filtered).toBeGreaterThanOrEqual(1); // 10.0.0.0/8 in the DROP copy
  });

  it('follows a feed that moved (a redirect) to its new address', async () => {
    server.routes.set(pathOf('https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt'), respond.redirect('/ipsum-moved.txt', 308));
    server.routes.set('/ipsum-moved.txt', respond.text('# IPsum\n203.0.113.9\t9\n45.9.148.7\t8\n'));
    const report = await updateRiskScoreData({ dataDir, mirror: server.url, timeoutMs: 2000, sources: ['ipsum'] });
    expect(report).toMatchObject({ updated: ['ipsum'], failed: [] });
    expect(readFileSync(join(dataDir, 'riskscore/abuse/ipsum.txt'), 'utf8')).toContain('45.9.148.7\t8');
  });

  it('refuses a download that does not read and keeps the old files', async () => {
    server.routes.set(pathOf('https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt'), respond.text('<html>not the feed</html>'));
    const before = readFileSync(join(dataDir, 'riskscore/abuse/ipsum.txt'), 'utf8');
    const report = await updateRiskScoreData({ dataDir, mirror: server.url, timeoutMs: 2000, sources: ['ipsum'] });
    expect(report.updated).toEqual([]);
    expect(report.failed[0].reason).toMatch(/ipsum.txt line 1/);
    expect(readFileSync(join(dataDir, 'riskscore/abuse/ipsum.txt'), 'utf8')).toBe(before);
  });

  it('refuses a list less than half the size of the one on file, counting distinct entries: a feed of one exit repeated keeps the Tor list', async () => {
    const tor = join(dataDir, 'riskscore/tor/tor-exits.csv');
    writeFileSync(tor, `fingerprint, ipaddr, port\n${[1, 2, 3, 4, 5, 6].map((n) => `DDDD, 45.9.150.${n}, 443\n`).join('')}`);
    const before = readFileSync(tor, 'utf8');
    const relays = Array.from({ length: 4 }, () => ({ fingerprint: 'CCCC', or_addresses: ['45.9.150.77:443'] }));
    server.routes.set(pathOf(TOR_URL), respond.json({ version: '8.0', relays }));
    const report = await updateRiskScoreData({ dataDir, mirror: server.url, timeoutMs: 2000, sources: ['tor'] });
    expect(report.failed).toEqual([
      {
        group: 'tor',
        reason: 'tor/tor-exits.csv: refusing the download: 1 entries, fewer than half of the 6 on file (a truncated or broken source?)',
        kept: true,
      },
    ]);
    expect(readFileSync(tor, 'utf8')).toBe(before);
  });

  it('a group whose files cannot all be written keeps every one of them as it was, and leaves no temporary file', async () => {
    const amazon = join(dataDir, 'riskscore/cloud/amazon/ipv4.txt');
    server.routes.set(pathOf(LOCAL_SOURCES.find((s) => s.file === 'cloud/amazon/ipv4.txt')!.url), respond.text('45.9.160.0/24\n45.9.161.0/24\n'));
    const before = readFileSync(amazon, 'utf8');
    // A later file of the group cannot be written: its folder is a regular file.
    const google = join(dataDir, 'riskscore/cloud/google');
    renameSync(google, `${google}.saved`);
    writeFileSync(google, '');
    try {
      const report = await updateRiskScoreData({ dataDir, mirror: server.url, timeoutMs: 2000, sources: ['cloud'] });
      expect(report.updated).toEqual([]);
      expect(report.failed).toEqual([{ group: 'cloud', reason: expect.stringMatching(/^E(EXIST|NOTDIR)/), kept: true }]);
      expect(readFileSync(amazon, 'utf8')).toBe(before);
      expect(readdirSync(join(dataDir, 'riskscore/cloud/amazon')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      rmSync(google);
      renameSync(`${google}.saved`, google);
    }
  });

  it('refuses a data folder without riskscore/ (a mistyped --data-dir) and creates nothing', async () => {
    const typo = join(tmpdir(), `seclookup-riskscore-typo-${process.pid}`);
    await expect(updateRiskScoreData({ dataDir: typo, mirror: server.url, timeoutMs: 2000 })).rejects.toMatchObject({
      code: 'dataset_missing',
      message: expect.stringContaining(`${join(typo, 'riskscore')} does not exist`),
    });
    expect(existsSync(typo)).toBe(false);
  });
});

describe('riskscore data update: snapshots.json', () => {
  const IPSUM_URL = 'https://raw.githubusercontent.com/stamparm/ipsum/master/ipsum.txt';
  const IPSUM = '# IPsum\n45.9.148.7\t8\n45.9.148.8\t3\n';

  /** A data folder of its own, with one-entry Tor and IPsum lists on file and no dates. */
  function freshDataDir(): string {
    const copy = mkdtempSync(join(tmpdir(), 'seclookup-riskscore-dates-'));
    cpSync(join(dataDir, 'riskscore'), join(copy, 'riskscore'), { recursive: true });
    writeFileSync(join(copy, 'riskscore/tor/tor-exits.csv'), 'fingerprint, ipaddr, port\nBBBB, 45.9.150.9, 443\n');
    writeFileSync(join(copy, 'riskscore/abuse/ipsum.txt'), '# IPsum\n45.9.148.7\t8\n');
    writeFileSync(join(copy, 'riskscore/snapshots.json'), '{}\n');
    return copy;
  }
  const snapshotsOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'riskscore/snapshots.json'), 'utf8'));

  it('two updates of different groups at once keep both dates (snapshots.json is read again under the write)', async () => {
    const dir = freshDataDir();
    // The Tor answer waits until the IPsum update has finished: the Tor update ends last.
    let release!: () => void;
    const ipsumDone = new Promise<void>((resolve) => (release = resolve));
    const tor = respond.json({ version: '8.0', relays: [{ fingerprint: 'AAAA', or_addresses: ['45.9.150.1:443'] }] });
    server.routes.set(pathOf(TOR_URL), (req, res) => void ipsumDone.then(() => tor(req, res)));
    server.routes.set(pathOf(IPSUM_URL), respond.text(IPSUM));
    try {
      const torUpdate = updateRiskScoreData({
        dataDir: dir,
        mirror: server.url,
        timeoutMs: 5000,
        sources: ['tor'],
        now: () => new Date('2026-12-02T08:00:00Z'),
      });
      const ipsum = await updateRiskScoreData({
        dataDir: dir,
        mirror: server.url,
        timeoutMs: 5000,
        sources: ['ipsum'],
        now: () => new Date('2026-12-03T09:00:00Z'),
      });
      expect(ipsum.updated).toEqual(['ipsum']);
      release();
      expect((await torUpdate).updated).toEqual(['tor']);
      expect(snapshotsOf(dir)).toEqual({ tor: '2026-12-02T08:00:00Z', ipsum: '2026-12-03T09:00:00Z' });
    } finally {
      release();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what was written when snapshots.json cannot be, never "update failed, dataset left unchanged"', async () => {
    const dir = freshDataDir();
    const snapshots = join(dir, 'riskscore/snapshots.json');
    // Once the update has started, snapshots.json becomes a folder: the files can be written, the dates not.
    const ipsum = respond.text(IPSUM);
    server.routes.set(pathOf(IPSUM_URL), (req, res) => {
      rmSync(snapshots);
      mkdirSync(snapshots);
      writeFileSync(join(snapshots, 'in-the-way'), '');
      ipsum(req, res);
    });
    try {
      const result = await runCli(['data', 'update', 'riskscore', '--source', 'ipsum', '--data-dir', dir, '--mirror', server.url, '--timeout', '5000']);
      expect(result.stdout).toBe(`riskscore: 1 updated (ipsum), 0 failed; ${join(dir, 'riskscore')}\n`);
      expect(result.stderr).toMatch(
        new RegExp(`^${snapshots}: not written \\(.*\\): the files of ipsum were updated, but it still gives their previous dates$`, 'm'),
      );
      expect(result.stderr).not.toContain('left unchanged');
      expect(result.code).toBe(0);
      expect(readFileSync(join(dir, 'riskscore/abuse/ipsum.txt'), 'utf8')).toBe(IPSUM);
      expect(readdirSync(join(dir, 'riskscore')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('riskscore data update: Tor exit addresses', () => {
  /** Exit relays whose exit traffic leaves from another address than their OR address, a relay exiting from its OR address, and one without the Exit flag. */
  const RELAYS = [
    { fingerprint: 'E1', flags: ['Exit', 'Fast', 'Running', 'Valid'], or_addresses: ['45.9.150.1:443'], exit_addresses: ['45.9.150.101'] },
    {
      fingerprint: 'E2',
      flags: ['Exit', 'Running'],
      or_addresses: ['[2a0e:1c80::2]:9001', '45.9.150.2:9001'],
      exit_addresses: ['45.9.150.2', '2a0e:1c80:0:0:0:0:0:102'],
    },
    { fingerprint: 'E3', flags: ['Exit', 'Running'], or_addresses: ['45.9.150.4:443'] },
    { fingerprint: 'G1', flags: ['Fast', 'Guard', 'Running'], or_addresses: ['45.9.150.3:443'], exit_addresses: ['45.9.150.103'] },
  ];
  const CSV = [
    'fingerprint, ipaddr, port',
    'E1, 45.9.150.1, 443',
    'E1, 45.9.150.101,',
    'E2, 2a0e:1c80::2, 9001',
    'E2, 45.9.150.2, 9001',
    'E2, 2a0e:1c80::102,',
    'E3, 45.9.150.4, 443',
    '',
  ].join('\n');

  /** Onionoo as it answers: the `flag` filter applied, each relay cut down to the `fields` asked for. */
  const onionoo = (requested: string[]) => (req: IncomingMessage, res: ServerResponse) => {
    requested.push(req.url ?? '');
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const fields = query.get('fields')?.split(',');
    const flag = query.get('flag');
    const relays = RELAYS.filter((r) => !flag || r.flags.includes(flag)).map((r) =>
      fields ? Object.fromEntries(Object.entries(r).filter(([k]) => fields.includes(k))) : r,
    );
    respond.json({ version: '8.0', relays })(req, res);
  };

  function torDataDir(): string {
    const copy = mkdtempSync(join(tmpdir(), 'seclookup-riskscore-tor-'));
    cpSync(join(dataDir, 'riskscore'), join(copy, 'riskscore'), { recursive: true });
    writeFileSync(join(copy, 'riskscore/tor/tor-exits.csv'), 'fingerprint, ipaddr, port\nBBBB, 45.9.150.9, 443\n');
    return copy;
  }

  it('asks Onionoo for exit_addresses and lists them beside the OR addresses, each once per relay; the engine flags an exit address', async () => {
    const dir = torDataDir();
    const requested: string[] = [];
    server.routes.set(pathOf(TOR_URL), onionoo(requested));
    try {
      const report = await updateRiskScoreData({ dataDir: dir, mirror: server.url, timeoutMs: 2000, sources: ['tor'] });
      expect(report).toMatchObject({ updated: ['tor'], failed: [] });
      expect(new URL(requested[0], 'http://x').searchParams.get('fields')?.split(',')).toEqual(
        expect.arrayContaining(['or_addresses', 'exit_addresses', 'flags']),
      );
      expect(readFileSync(join(dir, 'riskscore/tor/tor-exits.csv'), 'utf8')).toBe(CSV);
      const lookup = createLookup({ dataDir: dir });
      for (const ip of ['45.9.150.1', '45.9.150.101', '2a0e:1c80::102']) {
        const r = await lookup.riskscore(ip);
        expect(r.intelligence.flags.is_tor, ip).toBe(true);
        expect(r.intelligence.tags, ip).toContain('tor_exit');
      }
      expect((await lookup.riskscore('45.9.150.103')).intelligence.flags.is_tor).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a mirror that ignores the query (every relay, every field): relays without the Exit flag are left out', async () => {
    const dir = torDataDir();
    server.routes.set(pathOf(TOR_URL), respond.json({ version: '8.0', relays: RELAYS }));
    try {
      const report = await updateRiskScoreData({ dataDir: dir, mirror: server.url, timeoutMs: 2000, sources: ['tor'] });
      expect(report).toMatchObject({ updated: ['tor'], failed: [] });
      expect(readFileSync(join(dir, 'riskscore/tor/tor-exits.csv'), 'utf8')).toBe(CSV);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an exit address that does not read and keeps the old list', async () => {
    const dir = torDataDir();
    const before = readFileSync(join(dir, 'riskscore/tor/tor-exits.csv'), 'utf8');
    server.routes.set(
      pathOf(TOR_URL),
      respond.json({ version: '8.0', relays: [{ fingerprint: 'E9', flags: ['Exit'], or_addresses: ['45.9.150.9:443'], exit_addresses: ['45.9.150.300'] }] }),
    );
    try {
      const report = await updateRiskScoreData({ dataDir: dir, mirror: server.url, timeoutMs: 2000, sources: ['tor'] });
      expect(report.failed).toEqual([{ group: 'tor', reason: 'Onionoo exit_address "45.9.150.300" does not read', kept: true }]);
      expect(readFileSync(join(dir, 'riskscore/tor/tor-exits.csv'), 'utf8')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
