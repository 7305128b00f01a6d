/**
 * `seclookup lookup geoip|timezone` and the geoip settings (--geoip-db, --geoip-asn-db,
 * --geoip-reverse-dns, and their $SECLOOKUP_ variables), run as the built CLI; then `serve`
 * with --geoip-db. The lookups exit on their own: the file watchers never keep a process alive.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../servers/dns-server.js';
import { CLI_PATH, cliEnv, createTempDirs, runCli, runCliJson } from './harness.js';

const FIXTURES = new URL('../fixtures/maxmind/', import.meta.url).pathname;
const CITY = join(FIXTURES, 'GeoIP2-City-Test.mmdb');
const ISP = join(FIXTURES, 'GeoIP2-ISP-Test.mmdb');
const temp = createTempDirs();
const dns = await startDnsServer({ zone: { '8.8.8.8.in-addr.arpa': [{ type: 'PTR', target: 'dns.google' }] } });
afterAll(async () => {
  temp.cleanup();
  await dns.close();
});

type Json = Record<string, unknown>;

describe('seclookup lookup geoip', () => {
  it('prints a full result with no set-up (the bundled DB-IP City Lite pair)', async () => {
    const result = await runCliJson<Json & { connection: Json }>(['lookup', 'geoip', '8.8.8.8']);
    expect(result).toMatchObject({
      ip: '8.8.8.8',
      provider: 'DB-IP City Lite',
      continent: 'North America',
      country: { code: 'US', name: 'United States' },
      region: 'California',
      city: 'Mountain View',
      postal: null,
      location: { latitude: 37.422, longitude: -122.085 },
      timezone: { id: 'America/Los_Angeles' },
      is_eu: false,
    });
    // isp / org / asn come from the asn product when it is installed; null without it.
    expect(Object.keys(result.connection).sort()).toEqual(['asn', 'domain', 'isp', 'org', 'type']);
    expect(result.connection).toMatchObject({ domain: null, type: 'IPv4' });
    expect(result.connection.asn === null || Number.isSafeInteger(result.connection.asn)).toBe(true);
  });

  it('--geoip-db FILE reads a MaxMind database; $SECLOOKUP_GEOIP_DB does the same', async () => {
    const london = {
      ip: '81.2.69.142',
      provider: 'MaxMind GeoIP2-City',
      city: 'London',
      country: { code: 'GB', name: 'United Kingdom' },
      timezone: { id: 'Europe/London' },
    };
    expect(await runCliJson(['lookup', 'geoip', '81.2.69.142', '--geoip-db', CITY])).toMatchObject(london);
    expect(await runCliJson(['lookup', 'geoip', '81.2.69.142'], { env: { SECLOOKUP_GEOIP_DB: CITY } })).toMatchObject(london);
  });

  it('--geoip-db IPV4_FILE,IPV6_FILE reads a pair', async () => {
    expect(await runCliJson(['lookup', 'geoip', '2001:218::1', '--geoip-db', `${CITY},${CITY}`])).toMatchObject({
      country: { code: 'JP' },
      connection: { type: 'IPv6' },
    });
  });

  it('--geoip-asn-db fills isp / org / asn from a GeoIP2-ISP file', async () => {
    const result = await runCliJson<Json>(['lookup', 'geoip', '1.128.0.1', '--geoip-asn-db', ISP]);
    expect(result.connection).toEqual({ isp: 'Telstra Internet', org: 'Telstra Pty Ltd', asn: 1221, domain: null, type: 'IPv4' });
  });

  it('--geoip-reverse-dns on asks the --dns server for the PTR', async () => {
    const result = await runCliJson<Json>(['lookup', 'geoip', '8.8.8.8', '--geoip-reverse-dns', '2000', '--dns', dns.address]);
    expect(result.connection).toMatchObject({ domain: 'dns.google' });
  });

  it('exits 1 with the error code for a private address', async () => {
    const result = await runCli(['lookup', 'geoip', '10.0.0.1']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ error_code: 'ip_not_routable' });
  });

  it('an IPv4 lookup reads only the IPv4 file: a broken IPv6 file does not stop it (serve would refuse it at start)', async () => {
    const notMmdb = join(temp.make(), 'not-a-database.mmdb');
    writeFileSync(notMmdb, 'this is not a MaxMind database\n');
    expect(await runCliJson(['lookup', 'geoip', '81.2.69.142', '--geoip-db', `${CITY},${notMmdb}`])).toMatchObject({ city: 'London' });
    const v6 = await runCli(['lookup', 'geoip', '2001:218::1', '--geoip-db', `${CITY},${notMmdb}`]);
    expect(v6.code).toBe(1);
    expect(v6.stderr).toContain(notMmdb);
  });

  it('exits 1 naming a database file that does not exist', async () => {
    const missing = join(tmpdir(), 'seclookup-cli-no-such.mmdb');
    const result = await runCli(['lookup', 'geoip', '8.8.8.8', '--geoip-db', missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(missing);
  });

  it.each([
    [['--geoip-db', 'a.mmdb,b.mmdb,c.mmdb'], '--geoip-db: expected FILE or IPV4_FILE,IPV6_FILE'],
    [['--geoip-reverse-dns', 'sometimes'], '--geoip-reverse-dns: expected on, off or a number of milliseconds'],
  ])('%j is a usage error (exit 2)', async (flags, message) => {
    const result = await runCli(['lookup', 'geoip', '8.8.8.8', ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('the help lists the settings with their variables', async () => {
    const help = await runCli(['lookup', '--help']);
    expect(help.stdout).toContain('--geoip-db VALUE');
    expect(help.stdout).toContain('$SECLOOKUP_GEOIP_DB');
    expect(help.stdout).toContain('$SECLOOKUP_GEOIP_REVERSE_DNS');
  });
});

describe('seclookup lookup timezone', () => {
  it('prints zone, offset and abbreviation from the bundled database', async () => {
    const result = await runCliJson<Json & { timezone: Json }>(['lookup', 'timezone', '1.1.1.1']);
    expect(result).toMatchObject({ ip: '1.1.1.1', country: { code: 'AU' }, city: 'Sydney', timezone: { id: 'Australia/Sydney' } });
    expect(['+10:00', '+11:00']).toContain(result.timezone.utc_offset);
    expect(['AEST', 'AEDT']).toContain(result.timezone.abbreviation);
  });

  it('reads the database --geoip-db points geoip at', async () => {
    expect(await runCliJson(['lookup', 'timezone', '81.2.69.142', '--geoip-db', CITY])).toMatchObject({ city: 'London', timezone: { id: 'Europe/London' } });
  });
});

describe('seclookup serve --geoip-db', () => {
  it('serves geoip and timezone from the file, and counts its nodes as database_records', async () => {
    const db = join(temp.make(), 'seclookup.db');
    const child = spawn(process.execPath, [CLI_PATH, 'serve', '--port', '0', '--db', db, '--geoip-db', CITY, '--log-level', 'warn'], {
      env: cliEnv(),
      cwd: tmpdir(),
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const baseUrl = await new Promise<string>((resolve, reject) => {
        const check = () => {
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
          if (match) resolve(match[1]);
        };
        child.stderr.on('data', check);
        child.on('close', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      const key = (product: string, kind: 'sec' | 'pub') =>
        new RegExp(`^${product}\\s+(\\w+_sec_[\\w-]+)\\s+(\\w+_pub_[\\w-]+)$`, 'm').exec(stderr)![kind === 'sec' ? 1 : 2];
      const get = async (path: string, token: string) => {
        const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
        return { status: response.status, body: (await response.json()) as Json };
      };
      expect(await get('/v1/geoip/status', key('geoip', 'pub'))).toMatchObject({ status: 200, body: { database_records: 1547 } });
      expect(await get(`/v1/geoip/lookup/${encodeURIComponent('::ffff:81.2.69.142')}`, key('geoip', 'sec'))).toMatchObject({
        status: 200,
        body: { ip: '81.2.69.142', city: 'London', provider: 'MaxMind GeoIP2-City', cached: true },
      });
      expect(await get('/v1/timezone/lookup?ip=81.2.69.142', key('timezone', 'sec'))).toMatchObject({
        status: 200,
        body: { timezone: { id: 'Europe/London' } },
      });
      expect(await get('/v1/geoip/lookup?ip=8.8.8.8', key('geoip', 'sec'))).toMatchObject({ status: 404, body: { error_code: 'ip_not_found' } });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
