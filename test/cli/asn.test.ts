/**
 * `seclookup lookup asn` through the built CLI: the default data, and the product's settings
 * (`--asn-db`, `--asn-csv`, `--asn-index-dir`, `--asn-cymru`) with their `$SECLOOKUP_ASN_*`
 * fallbacks. The DNS source is left off here (the CLI would ask the system's DNS); its behaviour
 * is tested against loopback servers in test/products/asn-dns.test.ts.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, REPO_ROOT, runCli, runCliJson } from './harness.js';

const temp = createTempDirs();
afterAll(() => temp.cleanup());

const ASN_TEST_DB = join(REPO_ROOT, 'test/fixtures/maxmind/GeoLite2-ASN-Test.mmdb');

describe('seclookup lookup asn', () => {
  it('looks up 8.8.8.8 in the bundled npm data', async () => {
    expect(await runCliJson(['lookup', 'asn', '8.8.8.8'])).toEqual({
      ip: '8.8.8.8',
      asn: 15169,
      as_org: 'Google LLC',
      network: '8.8.8.0/24',
      country_code: null,
      registry: null,
      allocated: null,
      network_type: 'unknown',
    });
  });

  it('reads a MaxMind database from --asn-db, or from $SECLOOKUP_ASN_DB', async () => {
    const expected = { ip: '1.128.0.1', asn: 1221, as_org: 'Telstra Pty Ltd', network: '1.128.0.0/11', network_type: 'unknown' };
    expect(await runCliJson(['lookup', 'asn', '1.128.0.1', '--asn-db', ASN_TEST_DB])).toMatchObject(expected);
    expect(await runCliJson(['lookup', 'asn', '1.128.0.1'], { env: { SECLOOKUP_ASN_DB: ASN_TEST_DB } })).toMatchObject(expected);
    // Not in the test database, though the npm data knows it: the database was used.
    expect(await runCliJson(['lookup', 'asn', '8.8.8.8', '--asn-db', ASN_TEST_DB])).toMatchObject({ asn: null, network: null });
  });

  it('reads CSV files from --asn-csv and writes their index to --asn-index-dir', async () => {
    const dir = temp.make();
    const v4 = join(dir, 'v4.csv');
    const v6 = join(dir, 'v6.csv');
    writeFileSync(v4, '9.9.9.0,9.9.9.255,19281,"Quad9, Test"\n');
    writeFileSync(v6, '2620:fe::,2620:fe::ffff,19281,"Quad9, Test"\n');
    const indexDir = join(dir, 'index');
    expect(await runCliJson(['lookup', 'asn', '2620:fe::fe', '--asn-csv', `${v4},${v6}`, '--asn-index-dir', indexDir])).toMatchObject({
      asn: 19281,
      as_org: 'Quad9, Test',
      network: '2620:fe::/112',
    });
    expect(readdirSync(indexDir).filter((name) => name.endsWith('.idx'))).toHaveLength(1);
  });

  it.each([
    [['10.1.2.3'], 'ip_not_routable'],
    [['::1'], 'ip_not_routable'],
    [['1.2.3'], 'invalid_ip'],
    [['010.1.1.1'], 'invalid_ip'],
  ])('%j exits 1 with {error_code: %s} on stderr', async (args, code) => {
    const result = await runCli(['lookup', 'asn', ...args]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect((JSON.parse(result.stderr) as { error_code: string }).error_code).toBe(code);
  });

  it('exits 1 naming the file when --asn-db is not an ASN database', async () => {
    const broken = join(REPO_ROOT, 'test/fixtures/maxmind/MaxMind-DB-test-broken-search-tree-24.mmdb');
    const result = await runCli(['lookup', 'asn', '8.8.8.8', '--asn-db', broken]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot load the lookup engines');
    expect(result.stderr).toContain(broken);
  });

  it('refuses a bad --asn-cymru value with exit 2, and lists the settings in the help', async () => {
    const bad = await runCli(['lookup', 'asn', '8.8.8.8', '--asn-cymru', 'sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--asn-cymru');
    const help = await runCli(['lookup', '--help']);
    for (const flag of ['--asn-db', '--asn-csv', '--asn-index-dir', '--asn-cymru']) expect(help.stdout).toContain(flag);
    expect(help.stdout).toContain('$SECLOOKUP_ASN_DB');
  });
});
