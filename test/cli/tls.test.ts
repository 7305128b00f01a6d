/**
 * `seclookup lookup tls` as a real child process, against a loopback TLS server whose name the
 * loopback DNS server resolves: `--dns`, `--allow-private-targets`, the `--port` flag and the
 * `--tls-timeout` setting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TlsResult } from '../../src/products/tls/types.js';
import { startDnsServer, type DnsTestServer } from '../servers/dns-server.js';
import {
  mintCertificate,
  startHostileServer,
  startTlsServer,
  type HostileTestServer,
  type TestCertificate,
  type TlsTestServer,
} from '../servers/tls-server.js';
import { runCli, runCliJson } from './harness.js';

let dns: DnsTestServer;
let server: TlsTestServer;
let silent: HostileTestServer;
let cert: TestCertificate;

beforeAll(async () => {
  dns = await startDnsServer({ zone: { 'cli.tls.test': [{ type: 'A', address: '127.0.0.1' }], 'private.tls.test': [{ type: 'A', address: '10.1.2.3' }] } });
  cert = mintCertificate({ subject: 'cli.tls.test', dnsNames: ['cli.tls.test', 'www.cli.tls.test'] });
  server = await startTlsServer({ certificate: cert, maxVersion: 'TLSv1.2' });
  silent = await startHostileServer('silent');
});
afterAll(async () => {
  await server.close();
  await silent.close();
  await dns.close();
});

const reach = () => ['--dns', dns.address, '--allow-private-targets', '127.0.0.0/8'];

async function lookupError(args: string[]): Promise<{ error_code: string; error: string }> {
  const result = await runCli(['lookup', 'tls', ...args]);
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  return JSON.parse(result.stderr) as { error_code: string; error: string };
}

describe('seclookup lookup tls', () => {
  it('prints the certificate of host:port as JSON', async () => {
    const result = await runCliJson<TlsResult>(['lookup', 'tls', `cli.tls.test:${server.port}`, ...reach()]);
    expect(result).toMatchObject({
      host: 'cli.tls.test',
      port: server.port,
      valid: true,
      subject: 'CN=cli.tls.test',
      issuer: 'CN=cli.tls.test',
      san: ['cli.tls.test', 'www.cli.tls.test'],
      protocol: 'TLSv1.2',
      fingerprint_sha256: cert.fingerprint256,
    });
  });

  it('takes a URL as INPUT and the port from --port', async () => {
    const result = await runCliJson<TlsResult>(['lookup', 'tls', 'https://CLI.tls.test/path?q=1', '--port', String(server.port), ...reach()]);
    expect(result).toMatchObject({ host: 'cli.tls.test', port: server.port });
  });

  it('refuses loopback and private targets without --allow-private-targets', async () => {
    expect(await lookupError([`cli.tls.test:${server.port}`, '--dns', dns.address])).toEqual({
      error_code: 'host_not_allowed',
      error: 'cli.tls.test (127.0.0.1) is not a public address: loopback 127.0.0.0/8',
    });
  });

  it('gives up on a server that never answers within --tls-timeout', async () => {
    const started = Date.now();
    const error = await lookupError([`cli.tls.test:${silent.port}`, '--tls-timeout', '400', ...reach()]);
    expect(error).toEqual({ error_code: 'lookup_failed', error: `cli.tls.test:${silent.port} (127.0.0.1): no TLS handshake within the check's 400 ms` });
    expect(Date.now() - started).toBeLessThan(3_000);
    const bad = await runCli(['lookup', 'tls', 'cli.tls.test', '--tls-timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--tls-timeout: tls-timeout must be a positive whole number of milliseconds (got "soon")');
  });

  it('--port belongs to tls only, and the help shows it', async () => {
    const other = await runCli(['lookup', 'webhookip', '140.82.115.10', '--port', '443']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--port applies to tls only');
    const help = await runCli(['lookup', '--help']);
    expect(help.stdout).toContain('tls only: the port to check');
    expect(help.stdout).toContain('seclookup lookup tls example.com:443');
  });
});
