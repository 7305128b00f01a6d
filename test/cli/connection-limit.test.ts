/**
 * serve's connection limit under the open-files limit (src/cli/connection-limit.ts): the limit's
 * split, the /proc/self/limits reading, the refusals counted and said on a real server, and a
 * burst of lookups to a silent host answered 502 under a low limit (the outbound socket cap).
 */
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectionLimit, limitConnections, lookupFiles, openFilesInUse, openFilesLimit, withLookupFiles } from '../../src/cli/connection-limit.js';
import { countDroppedConnections } from '../../src/cli/serve.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import { startSilentServer, type SilentServer } from '../servers/silent-tcp-server.js';
import { CLI_PATH, cliEnv, createTempDirs, runCliJson } from './harness.js';

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

  it('splits the limit: a margin, DNS exchanges, outbound sockets, and the rest for connections', () => {
    expect(lookupFiles(1024)).toEqual({ margin: 32, dns: 128, outbound: 108 });
    expect(lookupFiles(65_536)).toEqual({ margin: 64, dns: 256, outbound: 8152 });
    expect(lookupFiles(64)).toEqual({ margin: 16, dns: 8, outbound: 5 });
    expect(connectionLimit(1024, 30)).toBe(726);
    expect(connectionLimit(65_536, 30)).toBe(57_034);
    expect(connectionLimit(64, 27)).toBe(8);
    expect(connectionLimit(40, 30)).toBe(1);
    // What serve builds the engines with: the DNS resolver's and the outbound guard's caps.
    expect(withLookupFiles({ dns: { servers: ['127.0.0.1:53'] }, outbound: { allowPrivateTargets: ['127.0.0.0/8'] } }, lookupFiles(1024))).toEqual({
      dns: { servers: ['127.0.0.1:53'], maxInFlight: 128 },
      outbound: { allowPrivateTargets: ['127.0.0.0/8'], maxSockets: 108 },
    });
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
    await countDroppedConnections(registry, { api: report });
    expect((await registry.getSingleMetricAsString('seclookup_connections_dropped_total')).split('\n').at(-1)).toBe(
      'seclookup_connections_dropped_total{server="api"} 3',
    );
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

  it('answers the connections it holds, closes the rest at once, says so, and answers on afterwards; a flood on the metrics port leaves the API be', async () => {
    const args = ['--nofile=64:64', process.execPath, CLI_PATH, 'serve', '--db', join(temp.make(), 's.db'), '--port', '0', '--metrics-port', '0'];
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
      const again = Math.min(10, held);
      let after = await healthzBurst(port, again);
      refused += after.refused;
      for (let tries = 0; after.answered < again && tries < 50; tries++) {
        await new Promise((done) => setTimeout(done, 20));
        after = await healthzBurst(port, again);
        refused += after.refused;
      }
      expect(after).toEqual({ answered: again, refused: 0 });

      // The metrics port holds 8: a flood of idle connections on it is refused past those (a
      // reviewer's flood used every file, and the API's clients were closed unanswered).
      while (!/metrics at http:\/\/127\.0\.0\.1:\d+/.test(stderr)) await new Promise((done) => setTimeout(done, 20));
      const metricsPort = Number(/metrics at http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1]);
      const idle = Array.from({ length: 30 }, () => connect(metricsPort, '127.0.0.1').on('error', () => {}));
      let closedByServe = 0;
      for (const socket of idle) socket.on('close', () => closedByServe++);
      for (let tries = 0; closedByServe < 22 && tries < 250; tries++) await new Promise((done) => setTimeout(done, 20));
      expect(closedByServe).toBe(22);
      expect(await healthzBurst(port, 1)).toEqual({ answered: 1, refused: 0 });
      for (const socket of idle) socket.destroy();
      // A scrape before serve has seen the flood's connections close is refused too, and counted.
      let scrape = await getOnce(metricsPort, '/metrics', '');
      let refusedScrapes = 0;
      for (let tries = 0; scrape.status !== 200 && tries < 50; tries++) {
        refusedScrapes++;
        await new Promise((done) => setTimeout(done, 20));
        scrape = await getOnce(metricsPort, '/metrics', '');
      }
      expect(scrape.body).toContain(`seclookup_connections_dropped_total{server="metrics"} ${22 + refusedScrapes}`);
      expect(scrape.body).toContain(`seclookup_connections_dropped_total{server="api"} ${refused}`);
      expect(stderr).toContain('connection(s) closed unanswered: the metrics port holds 8 at once');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // At the stop, the refusals not said yet are said: the lines add up to every one.
    const said = [...stderr.matchAll(/warning: (\d+) connection\(s\) closed unanswered: serve holds/g)].map((match) => Number(match[1]));
    expect(said.reduce((sum, n) => sum + n, 0)).toBe(refused);
  });
});

/** GET `path` on its own connection: the status and body, or the socket error's code (a reset). */
function getOnce(port: number, path: string, key: string): Promise<{ status: number | string; body: string }> {
  return new Promise((settle) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => settle({ status: response.statusCode ?? 0, body }));
      response.on('error', (error: Error & { code?: string }) => settle({ status: error.code ?? 'error', body: '' }));
    });
    request.on('error', (error: Error & { code?: string }) => settle({ status: error.code ?? 'error', body: '' }));
    request.end();
  });
}

describe('serve under a low open-files limit (ulimit -n 256), a burst of tls lookups to a silent host', () => {
  const temp = createTempDirs();
  const LOOKUPS = 100;
  let dns: DnsTestServer;
  let silent: SilentServer;
  beforeAll(async () => {
    const zone: Zone = Object.fromEntries(Array.from({ length: LOOKUPS }, (_, i) => [`h${i}.tls.test`, [{ type: 'A' as const, address: '127.0.0.1' }]]));
    dns = await startDnsServer({ zone });
    silent = await startSilentServer();
  });
  afterAll(async () => {
    await silent.close();
    await dns.close();
    temp.cleanup();
  });

  it('answers every one 502 lookup_failed: no connection reset, no 500', async () => {
    const db = join(temp.make(), 's.db');
    // A plan whose rate limit (3000 a minute) lets the whole burst through.
    const { secret_key: key } = await runCliJson<{ secret_key: string }>(['keys', 'create', '--product', 'tls', '--plan', 'enterprise', '--json', '--db', db]);
    const args = [
      '--nofile=256:256',
      process.execPath,
      CLI_PATH,
      'serve',
      '--db',
      db,
      '--port',
      '0',
      '--dns',
      dns.address,
      '--allow-private-targets',
      '127.0.0.0/8',
      '--tls-timeout',
      '1000',
    ];
    const child = spawn('prlimit', args, { env: cliEnv({ SECLOOKUP_GEOIP_DB: MAXMIND_CITY }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    try {
      while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(stderr)) await new Promise((done) => setTimeout(done, 20));
      const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1]);

      const answers = await Promise.all(Array.from({ length: LOOKUPS }, (_, i) => getOnce(port, `/v1/tls/lookup?host=h${i}.tls.test:${silent.port}`, key)));
      const statuses: Record<string, number> = {};
      for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
      expect(statuses).toEqual({ 502: LOOKUPS });
      expect(new Set(answers.map(({ body }) => (JSON.parse(body) as { error_code: string }).error_code))).toEqual(new Set(['lookup_failed']));
      // Each connected and was cut at its deadline, or waited for a socket and gave up at it. How
      // many connected depends on how fast the burst arrives; how many at once never passes the
      // outbound cap (plus one or two closes the server has not seen yet when serve's socket is gone).
      expect(silent.accepted()).toBeGreaterThan(0);
      expect(silent.peakOpen()).toBeLessThanOrEqual(lookupFiles(256).outbound + 2);
      expect(stderr).not.toContain('closed unanswered');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
