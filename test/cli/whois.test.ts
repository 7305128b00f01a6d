/**
 * `seclookup lookup whois` and `seclookup data update whois` as an operator runs them, against
 * loopback servers: --dns names the test DNS server, --allow-private-targets lets the lookup
 * reach loopback, and the whois settings (--whois-rdap-servers, --whois-servers, or their
 * $SECLOOKUP_ variables) point it at the test RDAP and WHOIS servers.
 */
import { cpSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viaMirror } from '../../src/lib/source-update.js';
import { createLookup } from '../../src/lookup.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import { respond, startHttpFixture, type HttpFixture } from '../servers/http-fixture.js';
import { rdapAnswer, startRdapServer, type RdapTestServer } from '../servers/rdap-server.js';
import { startWhoisServer, whoisAnswer, type WhoisTestServer } from '../servers/whois-server.js';
import { createTempDirs, REPO_ROOT, runCli } from './harness.js';

let dns: DnsTestServer;
let rdap: RdapTestServer;
let whois: WhoisTestServer;
let mirror: HttpFixture;
const temp = createTempDirs();
const BOOTSTRAP = JSON.parse(readFileSync(join(REPO_ROOT, 'data/whois/rdap-bootstrap.json'), 'utf8')) as {
  publication: string;
  services: [string[], string[]][];
};

beforeAll(async () => {
  dns = await startDnsServer({ zone: { 'rdap.registry.test': [{ type: 'A', address: '127.0.0.1' }] } });
  rdap = await startRdapServer({ 'example.com': rdapAnswer.file('synthetic/lookup_with_redaction.example.com.json') });
  whois = await startWhoisServer({
    answer: (query) => (query === 'amazon.co.uk' ? whoisAnswer.sample('amazon.co.uk') : whoisAnswer.text(`No match for "${query}".\r\n`)),
  });
  mirror = await startHttpFixture({});
});
afterAll(async () => {
  await Promise.all([dns?.close(), rdap?.close(), whois?.close(), mirror?.close()]);
  temp.cleanup();
});

const rdapFlag = () => `com=http://rdap.registry.test:${new URL(rdap.url).port}/rdap/`;
const loopback = () => ['--dns', dns.address, '--allow-private-targets', '127.0.0.0/8'];

describe('seclookup lookup whois', () => {
  it('looks up example.com over RDAP on the loopback server and prints the result', async () => {
    const result = await runCli(['lookup', 'whois', 'example.com', ...loopback(), '--whois-rdap-servers', rdapFlag()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      domain: 'example.com',
      registrar: 'Example Registrar Inc.',
      created_at: '1997-06-03T00:00:00Z',
      updated_at: '2020-05-28T01:35:00Z',
      expires_at: '2021-06-03T04:00:00Z',
      status: ['serverDeleteProhibited', 'serverUpdateProhibited', 'serverTransferProhibited', 'clientTransferProhibited'],
      nameservers: ['ns1.example.com', 'ns2.example.com'],
      source: 'rdap',
    });
  });

  it('takes the settings from $SECLOOKUP_ variables, and asks a port-43 server for a TLD routed to WHOIS', async () => {
    const env = { SECLOOKUP_WHOIS_RDAP_SERVERS: 'uk=none', SECLOOKUP_WHOIS_SERVERS: `uk=${whois.address}` };
    const result = await runCli(['lookup', 'whois', 'www.amazon.co.uk', ...loopback()], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ domain: 'amazon.co.uk', expires_at: '2020-12-05T00:00:00Z', source: 'whois' });
  });

  it('exits 1 with the error code on stderr: not found, invalid input, no network', async () => {
    const notFound = await runCli(['lookup', 'whois', 'nosuch-example.com', ...loopback(), '--whois-rdap-servers', rdapFlag()]);
    expect([notFound.code, JSON.parse(notFound.stderr).error_code]).toEqual([1, 'domain_not_found']);
    const invalid = await runCli(['lookup', 'whois', '192.0.2.1']);
    expect([invalid.code, JSON.parse(invalid.stderr).error_code]).toEqual([1, 'invalid_domain']);
    // Without --allow-private-targets the loopback RDAP server is refused: a clean 502.
    const refused = await runCli(['lookup', 'whois', 'example.com', '--dns', dns.address, '--whois-rdap-servers', rdapFlag()]);
    expect([refused.code, JSON.parse(refused.stderr).error_code]).toEqual([1, 'lookup_failed']);
    expect(JSON.parse(refused.stderr).error).toContain('is not a public address');
  });

  it('exits 2 for a malformed setting, naming the flag', async () => {
    const result = await runCli(['lookup', 'whois', 'example.com', '--whois-servers', 'uk=whois.example:99999']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--whois-servers');
    const help = await runCli(['lookup', '--help']);
    expect(help.stdout).toContain('--whois-rdap-servers VALUE');
    expect(help.stdout).toContain('seclookup lookup whois example.com');
  });
});

describe('seclookup data update whois', () => {
  const path = viaMirror('https://data.iana.org/rdap/dns.json', '');
  const copyOfData = () => {
    const dir = temp.make();
    cpSync(join(REPO_ROOT, 'data'), dir, { recursive: true });
    return dir;
  };

  it('rewrites the bootstrap from the mirror when IANA published new services', async () => {
    const fresh = { ...BOOTSTRAP, publication: '2026-11-20T17:00:00Z', services: [...BOOTSTRAP.services, [['example'], ['https://rdap.example.net/']]] };
    mirror.routes.set(path, respond.json(fresh));
    const dataDir = copyOfData();
    const result = await runCli(['data', 'update', 'whois', '--data-dir', dataDir, '--mirror', mirror.url]);
    const file = join(dataDir, 'whois', 'rdap-bootstrap.json');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`whois: RDAP bootstrap updated (1190 -> 1191 TLDs), published 2026-11-20T17:00:00Z; wrote ${file}`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(fresh);
    // The rewritten file loads, and the new TLD counts in the status route's database_records.
    expect(createLookup({ dataDir }).engine('whois').knownTlds).toBe(createLookup().engine('whois').knownTlds + 1);
  });

  it('leaves the file alone when nothing changed, and refuses garbage, a shrunken or padded list, an older file or one from the future (exit 1)', async () => {
    const dataDir = copyOfData();
    const file = join(dataDir, 'whois', 'rdap-bootstrap.json');
    const before = statSync(file).mtimeMs;

    mirror.routes.set(path, respond.json(BOOTSTRAP));
    const same = await runCli(['data', 'update', 'whois', '--data-dir', dataDir, '--mirror', mirror.url]);
    expect([same.code, same.stdout.trim()]).toEqual([0, `whois: RDAP bootstrap unchanged (1190 TLDs), published 2025-06-27T17:00:02Z; ${file} not changed`]);

    for (const [handler, reason] of [
      [respond.text('<html>maintenance</html>'), 'not valid JSON'],
      [respond.json({ ...BOOTSTRAP, services: BOOTSTRAP.services.slice(0, 10) }), 'fewer than half'],
      [respond.json({ ...BOOTSTRAP, publication: '2024-01-01T00:00:00Z', services: BOOTSTRAP.services.slice(1) }), 'before the file on disk'],
      // One TLD 5,000 times: counted once. Accepted, it would have refused every genuine answer after it.
      [respond.json({ ...BOOTSTRAP, services: [[Array(5_000).fill('com'), ['https://rdap.example.net/']]] }), 'lists 1 TLDs, fewer than half of the 1190'],
      // A date ahead of the clock would make every genuine answer after it look older.
      [respond.json({ ...BOOTSTRAP, publication: '2099-01-01T00:00:00Z' }), 'published 2099-01-01T00:00:00Z, in the future'],
    ] as const) {
      mirror.routes.set(path, handler);
      const refused = await runCli(['data', 'update', 'whois', '--data-dir', dataDir, '--mirror', mirror.url]);
      expect([refused.code, refused.stdout]).toEqual([1, expect.stringContaining(reason)]);
      expect(refused.stderr).toContain('unchanged and valid');
    }
    expect(statSync(file).mtimeMs).toBe(before);
  });
});
