/**
 * serve's connection limit under the open-files limit (src/cli/connection-limit.ts): the limit's
 * arithmetic, the /proc/self/limits reading, and the refusals counted and said on a real server.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectionLimit, limitConnections, openFilesInUse, openFilesLimit } from '../../src/cli/connection-limit.js';
import { countDroppedConnections } from '../../src/cli/serve.js';
import { CLI_PATH, cliEnv, createTempDirs } from './harness.js';

const MAXMIND_CITY = join(CLI_PATH, '../../test/fixtures/maxmind/GeoIP2-City-Test.mmdb');

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe('the open-files limit', () => {
  it('reads the soft limit from /proc/self/limits; unlimited, absent or unreadable is null', () => {
    expect(openFilesLimit(() => LIMITS)).toBe(1024);
    expect(openFilesLimit(() => LIMITS.replace('1024  ', 'unlimited'))).toBeNull();
    expect(openFilesLimit(() => 'Max cpu time unlimited unlimited seconds\n')).toBeNull();
    expect(
      openFilesLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeNull();
    // This machine's own (Linux, as CI's): a whole number.
    expect(openFilesLimit()).toBeGreaterThan(0);
  });

  it('keeps back the files open already and an eighth more (16 to 256) for lookups', () => {
    expect(connectionLimit(64, 27)).toBe(21);
    expect(connectionLimit(1024, 30)).toBe(866);
    expect(connectionLimit(1_048_576, 30)).toBe(1_048_290);
    expect(connectionLimit(40, 30)).toBe(1);
    // This process's own open files (Linux, as CI's): at least its standard streams.
    expect(openFilesInUse()).toBeGreaterThanOrEqual(3);
    expect(
      openFilesInUse(() => {
        throw new Error('ENOENT');
      }),
    ).toBe(0);
  });
});

describe('a server held to its connection limit', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((done) => server?.close(done));
  });

  /** Open `count` more connections and wait until the server has taken or dropped each. */
  async function openConnections(port: number, count: number, settled: () => number): Promise<void> {
    const before = settled();
    for (let i = 0; i < count; i++) sockets.push(connect(port, '127.0.0.1').on('error', () => {}));
    while (settled() < before + count) await new Promise((done) => setTimeout(done, 5));
  }

  it('refuses connections past the limit, says the first at once and the rest once a minute with their count', async () => {
    let clock = 1_000_000;
    const lines: string[] = [];
    let accepted = 0;
    server = createServer(() => accepted++);
    const report = limitConnections(
      server,
      2,
      64,
      (line) => lines.push(line),
      () => clock,
    );
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };

    const settled = () => accepted + report.dropped;
    await openConnections(port, 5, settled);
    expect([accepted, report.dropped]).toEqual([2, 3]);
    // serve's metric reads the same count at each scrape.
    const registry = new Registry();
    await countDroppedConnections(registry, report);
    expect((await registry.getSingleMetricAsString('seclookup_connections_dropped_total')).split('\n').at(-1)).toBe('seclookup_connections_dropped_total 3');
    expect(lines).toEqual([
      'seclookup: warning: 1 connection(s) closed unanswered: serve holds 2 at once, its open-files limit (64) less a reserve for lookups; raise it (ulimit -n, systemd LimitNOFILE=)',
    ]);

    clock += 60_000;
    await openConnections(port, 1, settled);
    expect(report.dropped).toBe(4);
    expect(lines[1]).toMatch(/^seclookup: warning: 3 connection\(s\) closed unanswered/);
    report.flush(); // nothing left unsaid
    expect(lines).toHaveLength(2);
    await openConnections(port, 1, settled);
    report.flush(); // at shutdown: the one not said yet
    expect(lines[2]).toMatch(/^seclookup: warning: 1 connection\(s\) closed unanswered/);
  });
});

/**
 * Open `count` connections at once, each asking GET /healthz and kept open once answered (as a
 * keep-alive client keeps it), until every one is answered or closed unanswered.
 */
async function healthzBurst(port: number, count: number): Promise<{ answered: number; refused: number }> {
  const sockets: Socket[] = [];
  const outcomes = await Promise.all(
    Array.from({ length: count }, () => {
      return new Promise<'answered' | 'refused'>((settle) => {
        let received = '';
        const socket = connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'));
        sockets.push(socket);
        socket.on('data', (chunk) => {
          received += chunk;
          if (received.startsWith('HTTP/1.1 200 ') && received.includes('\r\n\r\n')) settle('answered');
        });
        socket.on('error', () => settle('refused'));
        socket.on('close', () => settle('refused'));
      });
    }),
  );
  for (const socket of sockets) socket.destroy();
  return { answered: outcomes.filter((o) => o === 'answered').length, refused: outcomes.filter((o) => o === 'refused').length };
}

describe('serve under a low open-files limit (ulimit -n 64)', () => {
  const temp = createTempDirs();
  afterAll(() => temp.cleanup());

  it('answers the connections it holds, closes the rest at once, says so, and answers on afterwards', async () => {
    const args = ['--nofile=64:64', process.execPath, CLI_PATH, 'serve', '--db', join(temp.make(), 's.db'), '--port', '0'];
    // A small MMDB: the default pair is 134 MB read at each start, and geoip is not what this tests.
    const child = spawn('prlimit', args, { env: cliEnv({ SECLOOKUP_GEOIP_DB: MAXMIND_CITY }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    let refused = 0;
    try {
      while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(stderr)) await new Promise((done) => setTimeout(done, 20));
      const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1]);
      expect(stderr).not.toContain('closed unanswered'); // nothing said before any refusal

      const burst = await healthzBurst(port, 150);
      refused += burst.refused;
      const held = Number(/serve holds (\d+) at once/.exec(stderr)![1]);
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(64);
      expect(burst).toEqual({ answered: held, refused: 150 - held });
      expect(stderr.match(/connection\(s\) closed unanswered/g)).toHaveLength(1);
      // With the burst gone, its connections are free again (once serve has seen them close).
      let after = await healthzBurst(port, 10);
      refused += after.refused;
      for (let tries = 0; after.answered < 10 && tries < 50; tries++) {
        await new Promise((done) => setTimeout(done, 20));
        after = await healthzBurst(port, 10);
        refused += after.refused;
      }
      expect(after).toEqual({ answered: 10, refused: 0 });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // At the stop, the refusals not said yet are said: the lines add up to every one.
    const said = [...stderr.matchAll(/warning: (\d+) connection\(s\) closed unanswered/g)].map((match) => Number(match[1]));
    expect(said.reduce((sum, n) => sum + n, 0)).toBe(refused);
  });
});
