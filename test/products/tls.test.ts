/**
 * The tls engine against real loopback TLS servers (test/servers/tls-server.ts), names resolved
 * by the loopback DNS server: certificates of every kind, protocols, SNI, IDN, hostile servers
 * and their deadlines, the outbound guard, the cache, and the HTTP forms through the API.
 */
import { type AddressInfo, connect as connectNet, createServer as createNetServer, type Socket } from 'node:net';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLookupError } from '../../src/errors.js';
import { createLookup, type LookupOptions } from '../../src/lookup.js';
import { DAY_MS } from '../../src/products/tls/certificate.js';
import { createApiStack } from '../api/harness.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import {
  closedPort,
  generateKey,
  mintCertificate,
  startHostileServer,
  startTlsServer,
  type HostileBehaviour,
  type TestCertificate,
  type TlsServerOptions,
  type TlsTestServer,
} from '../servers/tls-server.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const LOOPBACK = ['127.0.0.0/8', '::1'];
const FAST = { connectMs: 300, totalMs: 600 };
/** A short handshake deadline inside a long total one, to tell which of the two cut a check. */
const CONNECT_CUT = { connectMs: 300, totalMs: 2_000 };
/** Long deadlines, to show a failure came at once rather than at a deadline. */
const PATIENT = { connectMs: 2_000, totalMs: 3_000 };

const ZONE: Zone = {
  'valid.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'other.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'mtls.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'sni-a.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'sni-b.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'xn--bcher-kva.tls.test': [{ type: 'A', address: '127.0.0.1' }],
  'v6.tls.test': [{ type: 'AAAA', address: '::1' }],
  'dual.tls.test': [
    { type: 'A', address: '127.0.0.1' },
    { type: 'AAAA', address: '::1' },
  ],
  'mixed-loop.tls.test': [
    { type: 'A', address: '127.0.0.1' },
    { type: 'A', address: '127.0.0.1' },
  ],
  'dead.tls.test': [
    { type: 'A', address: '127.0.0.2' },
    { type: 'A', address: '127.0.0.3' },
  ],
  'private.tls.test': [{ type: 'A', address: '10.0.0.5' }],
  'mixed.tls.test': [
    { type: 'A', address: '127.0.0.1' },
    { type: 'A', address: '192.168.1.1' },
  ],
  'metadata.tls.test': [{ type: 'A', address: '169.254.169.254' }],
  'mapped.tls.test': [{ type: 'AAAA', address: '::ffff:127.0.0.1' }],
};

let dns: DnsTestServer;
let silentDns: DnsTestServer;
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  dns = await startDnsServer({ zone: ZONE });
  silentDns = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await dns.close();
  await silentDns.close();
});

async function serve(options: TlsServerOptions): Promise<TlsTestServer> {
  const server = await startTlsServer(options);
  servers.push(server);
  return server;
}

async function hostile(behaviour: HostileBehaviour, options?: Parameters<typeof startHostileServer>[1]) {
  const server = await startHostileServer(behaviour, options);
  servers.push(server);
  return server;
}

/** A lookup that reaches loopback servers through the test DNS zone, with a fixed clock. */
function lookupFor(options: LookupOptions = {}) {
  return createLookup({ dns: { servers: [dns.address] }, outbound: { allowPrivateTargets: LOOPBACK }, now: () => NOW, ...options });
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isLookupError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the lookup succeeded');
}

// Certificates, minted once.
const ca = mintCertificate({
  subject: [
    { shortName: 'C', value: 'US' },
    { shortName: 'O', value: 'Seclookup Tests' },
    { shortName: 'CN', value: 'Seclookup Test CA' },
  ],
  ca: true,
  keyType: 'rsa',
  notBefore: new Date(NOW - 365 * DAY_MS),
  notAfter: new Date(NOW + 3650 * DAY_MS),
});
const leaf = (name: string, options: Partial<Parameters<typeof mintCertificate>[0]> = {}): TestCertificate =>
  mintCertificate({
    subject: [
      { shortName: 'O', value: 'Example Org' },
      { shortName: 'CN', value: name },
    ],
    dnsNames: [name],
    issuer: ca,
    notBefore: new Date(NOW - 10 * DAY_MS),
    notAfter: new Date(NOW + 80 * DAY_MS + 3_600_000),
    ...options,
  });

describe('certificates', () => {
  it('reads an RSA certificate signed by a CA: every field', async () => {
    const cert = leaf('valid.tls.test', { keyType: 'rsa', dnsNames: ['valid.tls.test', 'www.valid.tls.test'] });
    const server = await serve({ certificate: cert, chain: [ca] });
    const outcome = await lookupFor().detailed.tls(`valid.tls.test:${server.port}`);
    expect(outcome.cached).toBe(false);
    expect(outcome.fetchedAt).toBeUndefined();
    expect(outcome.result).toEqual({
      host: 'valid.tls.test',
      port: server.port,
      valid: true,
      issuer: 'CN=Seclookup Test CA, O=Seclookup Tests, C=US',
      subject: 'CN=valid.tls.test, O=Example Org',
      not_before: new Date(NOW - 10 * DAY_MS).toISOString().replace('.000', ''),
      not_after: new Date(NOW + 80 * DAY_MS + 3_600_000).toISOString().replace('.000', ''),
      days_remaining: 80,
      san: ['valid.tls.test', 'www.valid.tls.test'],
      protocol: 'TLSv1.3',
      fingerprint_sha256: cert.fingerprint256,
    });
    expect(outcome.result.fingerprint_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(outcome.json!)).toEqual(outcome.result);
    await server.settled();
    expect(server.servernames).toEqual(['valid.tls.test']);
  });

  it('reads an ECDSA certificate', async () => {
    const cert = leaf('valid.tls.test', { keyType: 'ec' });
    const server = await serve({ certificate: cert, chain: [ca] });
    const result = await lookupFor().tls('valid.tls.test', { port: server.port });
    expect(result).toMatchObject({ valid: true, fingerprint_sha256: cert.fingerprint256, issuer: 'CN=Seclookup Test CA, O=Seclookup Tests, C=US' });
  });

  it('reports an expired certificate as not valid, with negative days', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test', { notBefore: new Date(NOW - 100 * DAY_MS), notAfter: new Date(NOW - 1.5 * DAY_MS) }) });
    expect(await lookupFor().tls(`valid.tls.test:${server.port}`)).toMatchObject({ valid: false, days_remaining: -2 });
  });

  it('reports a certificate that is not valid yet', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test', { notBefore: new Date(NOW + 2 * DAY_MS), notAfter: new Date(NOW + 92 * DAY_MS) }) });
    expect(await lookupFor().tls(`valid.tls.test:${server.port}`)).toMatchObject({ valid: false, days_remaining: 92 });
  });

  it('valid is about the validity window only: self-signed and mismatched names still count as valid', async () => {
    const selfSigned = mintCertificate({
      subject: 'valid.tls.test',
      dnsNames: ['valid.tls.test'],
      keyType: 'rsa',
      notBefore: new Date(NOW - DAY_MS),
      notAfter: new Date(NOW + DAY_MS),
    });
    const own = await serve({ certificate: selfSigned });
    expect(await lookupFor().tls(`valid.tls.test:${own.port}`)).toMatchObject({ valid: true, issuer: 'CN=valid.tls.test', subject: 'CN=valid.tls.test' });
    const mismatch = await serve({ certificate: leaf('somewhere-else.example', { dnsNames: ['somewhere-else.example'] }), chain: [ca] });
    expect(await lookupFor().tls(`valid.tls.test:${mismatch.port}`)).toMatchObject({ valid: true, san: ['somewhere-else.example'] });
  });

  it('lists many DNS SANs in order, and only DNS SANs', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `n${i}.many.tls.test`);
    const cert = leaf('valid.tls.test', {
      dnsNames: names,
      otherNames: [
        { type: 'ip', ip: '127.0.0.1' },
        { type: 'email', value: 'a@b.test' },
        { type: 'uri', value: 'https://u.test/' },
      ],
    });
    const server = await serve({ certificate: cert });
    expect((await lookupFor().tls(`valid.tls.test:${server.port}`)).san).toEqual(names);
  });
});

describe('protocols', () => {
  it.each([
    ['TLSv1.3', { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }],
    ['TLSv1.2', { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }],
    // Old servers' certificates can be read too (the client allows down to TLS 1.0).
    ['TLSv1', { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' }],
  ] as const)('reports %s from a server that speaks only it', async (protocol, versions) => {
    const server = await serve({ certificate: leaf('valid.tls.test', { keyType: 'rsa' }), ...versions });
    expect((await lookupFor().tls(`valid.tls.test:${server.port}`)).protocol).toBe(protocol);
  });
});

/**
 * A real but old TLS server: node-forge's TLS 1.1 (TLS_RSA with AES-CBC), which, as servers from
 * before 2010 do, knows nothing of RFC 5746 secure renegotiation.
 */
async function legacyServer(certificate: TestCertificate): Promise<{ port: number; handshakes: () => number }> {
  const key = certificate.key.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  let handshakes = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const connection = forge.tls.createConnection({
      server: true,
      caStore: [],
      sessionCache: {},
      cipherSuites: [forge.tls.CipherSuites.TLS_RSA_WITH_AES_128_CBC_SHA],
      verifyClient: false,
      getCertificate: () => certificate.pem,
      getPrivateKey: () => key,
      connected: () => {
        handshakes++;
        socket.end();
      },
      tlsDataReady: (c) => void socket.write(Buffer.from(c.tlsData.getBytes(), 'binary')),
      dataReady: () => {},
      closed: () => socket.end(),
      error: () => socket.destroy(),
    });
    socket.on('data', (data: Buffer) => connection.process(data.toString('binary')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return { port: (server.address() as AddressInfo).port, handshakes: () => handshakes };
}

describe('an old server without RFC 5746 secure renegotiation', () => {
  it('is read like any other (OpenSSL 3 refuses it unless told, as s_client -legacy_server_connect); it was a 502 (found by a reviewer)', async () => {
    const cert = leaf('valid.tls.test', { keyType: 'rsa' });
    const server = await legacyServer(cert);
    const result = await lookupFor({ tls: { timeouts: PATIENT } }).tls(`valid.tls.test:${server.port}`);
    expect(result).toMatchObject({ host: 'valid.tls.test', valid: true, subject: 'CN=valid.tls.test, O=Example Org', fingerprint_sha256: cert.fingerprint256 });
    expect(result.protocol).toMatch(/^TLSv1(\.1)?$/);
    expect(server.handshakes()).toBe(1);
  });
});

describe('a server that demands a client certificate (mTLS)', () => {
  it.each(['TLSv1.2', 'TLSv1.3'] as const)('%s: reports the certificate it presented before refusing ours', async (protocol) => {
    const cert = leaf('mtls.tls.test');
    const server = await serve({ certificate: cert, minVersion: protocol, maxVersion: protocol, requireClientCertificate: true });
    expect(await lookupFor().tls(`mtls.tls.test:${server.port}`)).toMatchObject({
      host: 'mtls.tls.test',
      san: ['mtls.tls.test'],
      fingerprint_sha256: cert.fingerprint256,
      protocol,
    });
  });

  it('only that refusal: garbage after the certificate is a failed handshake (502), as it was (found by a reviewer)', async () => {
    const real = await serve({ certificate: leaf('mtls.tls.test'), minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    // Between client and server: the server's first flight (its certificate) goes through; once
    // the client answers it, what the server sends next is replaced by bytes that are not TLS.
    const proxy = createNetServer((client) => {
      const upstream = connectNet(real.port, '127.0.0.1');
      let clientChunks = 0;
      let cut = false;
      client.on('data', (chunk) => {
        if (++clientChunks === 2) {
          cut = true;
          client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk) => void (cut || client.write(chunk)));
      for (const socket of [client, upstream]) socket.on('error', () => {}).on('close', () => (client.destroy(), upstream.destroy()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => proxy.close(() => resolve())) });
    const port = (proxy.address() as AddressInfo).port;
    expect(await failure(lookupFor().tls(`mtls.tls.test:${port}`))).toMatchObject({ code: 'lookup_failed' });
  });
});

describe('SNI', () => {
  const certA = leaf('sni-a.tls.test');
  const certB = leaf('sni-b.tls.test', { key: generateKey('ec') });
  const fallback = leaf('default.tls.test');

  it('sends the name asked for, and gets the certificate for that name', async () => {
    const server = await serve({ certificate: fallback, sni: { 'sni-a.tls.test': certA, 'sni-b.tls.test': certB } });
    const lookup = lookupFor();
    expect(await lookup.tls(`sni-a.tls.test:${server.port}`)).toMatchObject({
      host: 'sni-a.tls.test',
      san: ['sni-a.tls.test'],
      fingerprint_sha256: certA.fingerprint256,
    });
    expect(await lookup.tls(`SNI-B.tls.test.:${server.port}`)).toMatchObject({
      host: 'sni-b.tls.test',
      san: ['sni-b.tls.test'],
      fingerprint_sha256: certB.fingerprint256,
    });
    expect(await lookup.tls(`other.tls.test:${server.port}`)).toMatchObject({ fingerprint_sha256: fallback.fingerprint256 });
    await server.settled();
    expect(server.servernames).toEqual(['sni-a.tls.test', 'sni-b.tls.test', 'other.tls.test']);
  });

  it('sends no SNI for an IP address', async () => {
    const server = await serve({ certificate: fallback, sni: { 'sni-a.tls.test': certA } });
    expect(await lookupFor().tls(`127.0.0.1:${server.port}`)).toMatchObject({ host: '127.0.0.1', fingerprint_sha256: fallback.fingerprint256 });
    await server.settled();
    expect(server.servernames).toEqual([false]);
  });

  it('converts an IDN to punycode: the result host, the DNS question and the SNI name', async () => {
    const idn = leaf('xn--bcher-kva.tls.test');
    const server = await serve({ certificate: fallback, sni: { 'xn--bcher-kva.tls.test': idn } });
    const result = await lookupFor().tls(`https://Bücher.tls.test:${server.port}/katalog`);
    expect(result).toMatchObject({ host: 'xn--bcher-kva.tls.test', san: ['xn--bcher-kva.tls.test'], fingerprint_sha256: idn.fingerprint256 });
    await server.settled();
    expect(server.servernames).toEqual(['xn--bcher-kva.tls.test']);
    expect(dns.queries.get('xn--bcher-kva.tls.test A')).toBeGreaterThan(0);
  });

  it('reaches IPv6 servers, by address and by name', async () => {
    const server = await serve({ certificate: fallback, host: '::1' });
    const lookup = lookupFor();
    expect(await lookup.tls(`[::1]:${server.port}`)).toMatchObject({ host: '::1', port: server.port });
    expect(await lookup.tls(`https://v6.tls.test:${server.port}/`)).toMatchObject({ host: 'v6.tls.test' });
    await server.settled();
    expect(server.servernames).toEqual([false, 'v6.tls.test']);
  });
});

describe('a name with several addresses', () => {
  it('tries the next address when one refuses, as openssl s_client and curl do; it was a 502 (found by a reviewer)', async () => {
    // Served on ::1 only: the name's IPv4 address (tried first) refuses the connection.
    const cert = leaf('dual.tls.test');
    const server = await serve({ certificate: cert, host: '::1' });
    const result = await lookupFor({ tls: { timeouts: PATIENT } }).tls(`dual.tls.test:${server.port}`);
    expect(result).toMatchObject({ host: 'dual.tls.test', port: server.port, fingerprint_sha256: cert.fingerprint256 });
    await server.settled();
    expect(server.servernames).toEqual(['dual.tls.test']);
  });

  it('fails with the last address when every one refuses', async () => {
    const port = await closedPort();
    const { code, message } = await failure(lookupFor({ tls: { timeouts: PATIENT } }).tls(`dead.tls.test:${port}`));
    expect(code).toBe('lookup_failed');
    expect(message).toBe(`dead.tls.test:${port} (127.0.0.3): connection refused`);
  });

  it('does not try another address after a TLS failure: the host answered', async () => {
    const server = await hostile('garbage');
    const { message } = await failure(lookupFor({ tls: { timeouts: PATIENT } }).tls(`mixed-loop.tls.test:${server.port}`));
    expect(message).toContain(`mixed-loop.tls.test:${server.port} (127.0.0.1): the server does not speak TLS on this port`);
    expect(server.connections()).toBe(1);
  });
});

describe('servers that fail: 502 lookup_failed within the deadline', () => {
  it.each(['garbage', 'banner', 'close', 'reset'] as const)('%s fails at once', async (behaviour) => {
    const server = await hostile(behaviour);
    const started = Date.now();
    const { code, message } = await failure(lookupFor({ tls: { timeouts: PATIENT } }).tls(`valid.tls.test:${server.port}`));
    expect(code).toBe('lookup_failed');
    expect(message).toContain(`valid.tls.test:${server.port} (127.0.0.1): `);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.connections()).toBe(1);
  });

  it('says what went wrong', async () => {
    const lookup = lookupFor({ tls: { timeouts: FAST } });
    expect((await failure(lookup.tls(`valid.tls.test:${(await hostile('garbage')).port}`))).message).toMatch(/does not speak TLS on this port/);
    expect((await failure(lookup.tls(`valid.tls.test:${(await hostile('close')).port}`))).message).toMatch(/closed the connection during the TLS handshake/);
    expect((await failure(lookup.tls(`valid.tls.test:${(await hostile('reset')).port}`))).message).toMatch(/reset/);
    const port = await closedPort();
    expect(await failure(lookup.tls(`127.0.0.1:${port}`))).toEqual({ code: 'lookup_failed', message: `127.0.0.1:${port}: connection refused` });
  });

  it('cuts a server that never finishes the handshake at the connect deadline', async () => {
    const server = await hostile('silent');
    const started = Date.now();
    const { code, message } = await failure(lookupFor({ tls: { timeouts: CONNECT_CUT } }).tls(`valid.tls.test:${server.port}`));
    const elapsed = Date.now() - started;
    expect(code).toBe('lookup_failed');
    expect(message).toContain('no TLS handshake within 300 ms');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_200);
  });

  it('waits for a slow server inside the deadline, and cuts it beyond', async () => {
    const target = await serve({ certificate: leaf('valid.tls.test') });
    const slow = await hostile('slow', { target, delayMs: 100 });
    expect(await lookupFor({ tls: { timeouts: CONNECT_CUT } }).tls(`valid.tls.test:${slow.port}`)).toMatchObject({ valid: true });
    const slower = await hostile('slow', { target, delayMs: 3_000 });
    const started = Date.now();
    expect((await failure(lookupFor({ tls: { timeouts: CONNECT_CUT } }).tls(`valid.tls.test:${slower.port}`))).code).toBe('lookup_failed');
    expect(Date.now() - started).toBeLessThan(1_200);
  });

  it('bounds name resolution by the total deadline', async () => {
    const lookup = createLookup({ dns: { servers: [silentDns.address] }, outbound: { allowPrivateTargets: LOOPBACK }, tls: { timeouts: FAST } });
    const started = Date.now();
    expect(await failure(lookup.tls('valid.tls.test'))).toEqual({ code: 'lookup_failed', message: 'could not resolve valid.tls.test (timeout); retry later' });
    expect(Date.now() - started).toBeLessThan(1_500); // the resolver alone would wait 2 x 2 s
  });

  it('answers 502 for a name with no address', async () => {
    expect(await failure(lookupFor().tls('nxdomain.tls.test'))).toEqual({
      code: 'lookup_failed',
      message: 'nxdomain.tls.test has no IPv4 or IPv6 address; nothing to connect to',
    });
  });

  it('never caches a failure', async () => {
    const server = await hostile('close');
    const lookup = lookupFor();
    await failure(lookup.tls(`valid.tls.test:${server.port}`));
    await failure(lookup.tls(`valid.tls.test:${server.port}`));
    expect(server.connections()).toBe(2);
  });
});

describe('the outbound guard (no allowPrivateTargets): 422 host_not_allowed, nothing connected', () => {
  let server: TlsTestServer;
  beforeAll(async () => {
    server = await serve({ certificate: leaf('valid.tls.test') });
  });
  const guarded = () => createLookup({ dns: { servers: [dns.address] } });

  it.each([
    (port: number) => `127.0.0.1:${port}`,
    (port: number) => `https://127.0.0.1:${port}/`,
    (port: number) => `[::1]:${port}`,
    (port: number) => `[::ffff:127.0.0.1]:${port}`,
    (port: number) => `valid.tls.test:${port}`,
    (port: number) => `mixed.tls.test:${port}`,
    (port: number) => `mapped.tls.test:${port}`,
    (port: number) => `localhost:${port}`,
    (port: number) => `www.localhost:${port}`,
    (port: number) => `127.1:${port}`,
    (port: number) => `0x7f.1:${port}`,
  ])('%s', async (host) => {
    const before = server.connections();
    expect((await failure(guarded().tls(host(server.port)))).code).toBe('host_not_allowed');
    expect(server.connections()).toBe(before);
  });

  it.each([
    'https://10.0.0.1/path',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '[fd00::1]:443',
    '[fe80::1]',
    'private.tls.test',
    'metadata.tls.test',
    '0.0.0.0',
    '2001:db8::1',
  ])('%s', async (host) => {
    expect((await failure(guarded().tls(host))).code).toBe('host_not_allowed');
  });

  it('names the address and its block', async () => {
    expect((await failure(guarded().tls('private.tls.test'))).message).toBe('private.tls.test (10.0.0.5) is not a public address: private-use 10.0.0.0/8');
  });

  it('allowPrivateTargets opens only the listed ranges', async () => {
    const lookup = createLookup({ dns: { servers: [dns.address] }, outbound: { allowPrivateTargets: ['127.0.0.0/8'] } });
    expect(await lookup.tls(`valid.tls.test:${server.port}`)).toMatchObject({ valid: true });
    expect((await failure(lookup.tls(`[::1]:${server.port}`))).code).toBe('host_not_allowed');
    expect((await failure(lookup.tls(`mixed.tls.test:${server.port}`))).code).toBe('host_not_allowed');
    expect((await failure(lookup.tls('private.tls.test'))).code).toBe('host_not_allowed');
  });
});

describe('cache', () => {
  it('answers a repeated lookup from the cache, whatever the spelling, with no handshake', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test') });
    const lookup = lookupFor();
    const first = await lookup.detailed.tls(`valid.tls.test:${server.port}`);
    for (const spelling of [`https://VALID.tls.test.:${server.port}/a?b`, 'valid.tls.test']) {
      const again = await lookup.detailed.tls(spelling, { port: server.port });
      expect(again.cached).toBe(true);
      expect(again.json).toBe(first.json);
      expect(again.result).toEqual(first.result);
    }
    expect(server.connections()).toBe(1);
    // A different port is a different entry.
    await failure(lookup.tls(`valid.tls.test:${await closedPort()}`));
  });

  it('hands out copies: a caller cannot change the cached result', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test') });
    const lookup = lookupFor();
    const first = await lookup.tls(`valid.tls.test:${server.port}`);
    first.san.push('tampered.example');
    first.valid = false;
    expect(await lookup.tls(`valid.tls.test:${server.port}`)).toMatchObject({ valid: true, san: ['valid.tls.test'] });
  });

  it('keeps nothing with cacheSize 0', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test') });
    const lookup = lookupFor({ tls: { cacheSize: 0 } });
    expect((await lookup.detailed.tls(`valid.tls.test:${server.port}`)).cached).toBe(false);
    expect((await lookup.detailed.tls(`valid.tls.test:${server.port}`)).cached).toBe(false);
    expect(server.connections()).toBe(2);
  });

  it('lets concurrent lookups of one target share one handshake', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test') });
    const lookup = lookupFor({ tls: { cacheSize: 0 } });
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => lookup.detailed.tls(`valid.tls.test:${server.port}`)));
    expect(new Set(outcomes.map((o) => o.json)).size).toBe(1);
    expect(server.connections()).toBe(1);
  });

  it('never keeps a result past cacheTtlMs', async () => {
    const server = await serve({ certificate: leaf('valid.tls.test') });
    // The result cache runs on createLookup's clock: moved on, not waited for.
    let now = NOW;
    const lookup = lookupFor({ tls: { cacheTtlMs: 50 }, now: () => now });
    await lookup.tls(`valid.tls.test:${server.port}`);
    expect((await lookup.detailed.tls(`valid.tls.test:${server.port}`)).cached).toBe(true);
    now += 80;
    expect((await lookup.detailed.tls(`valid.tls.test:${server.port}`)).cached).toBe(false);
  });

  it('never keeps a result past a change of days_remaining', async () => {
    // 60 ms before days_remaining drops from 5 to 4, by the engine's clock.
    const server = await serve({ certificate: leaf('valid.tls.test', { notAfter: new Date(NOW + 5 * DAY_MS + 1_000) }) });
    let now = NOW + 1_000 - 60;
    const lookup = lookupFor({ now: () => now });
    expect(await lookup.tls(`valid.tls.test:${server.port}`)).toMatchObject({ days_remaining: 5 });
    expect((await lookup.detailed.tls(`valid.tls.test:${server.port}`)).cached).toBe(true);
    now += 90;
    const later = await lookup.detailed.tls(`valid.tls.test:${server.port}`);
    expect(later).toMatchObject({ cached: false, result: { days_remaining: 4 } });
  });
});

describe('prepare', () => {
  it('gives the same target for the same input, and throws again for bad input', () => {
    const engine = lookupFor().engine('tls');
    expect(engine.prepare('https://Example.com:8443/x')).toEqual({ host: 'example.com', literal: false, port: 8443, key: 'example.com:8443' });
    expect(engine.prepare('https://Example.com:8443/x')).toBe(engine.prepare('https://Example.com:8443/x'));
    expect(engine.prepare('example.com', { port: 8443 })).toEqual(engine.prepare('example.com', { port: '8443' }));
    expect(engine.prepare('example.com', { port: 8443 }).port).not.toBe(engine.prepare('example.com').port);
    for (let i = 0; i < 2; i++) expect(() => engine.prepare('example.com:8443', { port: 443 })).toThrow('give one');
    expect(() => engine.prepare('example.com', { port: null as unknown as number })).toThrow('port must be a number or decimal text');
    expect(Object.isFrozen(engine.prepare('example.com'))).toBe(true);
  });
});

describe('options', () => {
  it('refuses bad options at construction', () => {
    for (const tls of [{ cacheSize: -1 }, { cacheSize: 1.5 }, { cacheTtlMs: 0 }, { timeouts: { totalMs: 0 } }, { timeouts: { connectMs: -5 } }]) {
      expect(() => createLookup({ tls }).engine('tls'), JSON.stringify(tls)).toThrow(TypeError);
    }
  });
});

describe('HTTP', () => {
  let server: TlsTestServer;
  let refusing: number;
  beforeAll(async () => {
    server = await serve({ certificate: leaf('valid.tls.test') });
    refusing = await closedPort();
  });

  async function stack() {
    const s = await createApiStack({ lookup: lookupFor({ tls: { timeouts: FAST } }) });
    const { secretKey } = await s.keys('tls', { plan: 'test-quota50' });
    const call = (path: string) => s.call(path, { key: secretKey });
    return { ...s, call };
  }

  it('answers the query and path forms, port as a parameter or in the host, without fetched_at', async () => {
    const { call } = await stack();
    const encoded = encodeURIComponent(`https://valid.tls.test:${server.port}/some/path?q=1`);
    for (const path of [
      `/v1/tls/lookup?host=valid.tls.test&port=${server.port}`,
      `/v1/tls/lookup?host=valid.tls.test:${server.port}`,
      `/v1/tls/lookup?host=${encoded}`,
      `/v1/tls/lookup/valid.tls.test:${server.port}`,
      `/v1/tls/lookup/valid.tls.test?port=${server.port}`,
      `/v1/tls/lookup/${encoded}`,
      `/v1/tls/lookup/https://valid.tls.test:${server.port}/some/path`,
      `/v1/tls/lookup/${encodeURIComponent(`[::ffff:127.0.0.1]:${server.port}`)}`,
    ]) {
      const reply = await call(path);
      expect(reply.status, path).toBe(200);
      expect(reply.body, path).toMatchObject({ success: true, port: server.port, valid: true, fingerprint_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(reply.body, path).not.toHaveProperty('fetched_at');
      expect(Object.keys(reply.body).slice(0, 4)).toEqual(['success', 'request_id', 'cached', 'host']);
    }
  });

  it('refuses a port of another type with invalid_host, before any handshake, from JavaScript too', async () => {
    const lookup = lookupFor();
    for (const port of [Symbol('443'), 443n, { valueOf: () => 443 }, [443]]) {
      const refused = await lookup.tls('valid.tls.test', { port } as never).catch((error: unknown) => error);
      expect(isLookupError(refused) && refused.code, String(typeof port)).toBe('invalid_host');
    }
  });

  it('flags a cached answer', async () => {
    const { call } = await stack();
    expect((await call(`/v1/tls/lookup?host=valid.tls.test:${server.port}`)).body.cached).toBe(false);
    expect((await call(`/v1/tls/lookup?host=valid.tls.test&port=${server.port}`)).body.cached).toBe(true);
  });

  it.each([
    ['no host', '/v1/tls/lookup', 400, 'invalid_host'],
    ['an empty host', '/v1/tls/lookup?host=', 400, 'invalid_host'],
    ['a malformed host', '/v1/tls/lookup?host=exa%20mple.com', 400, 'invalid_host'],
    ['credentials', `/v1/tls/lookup?host=${encodeURIComponent('https://u:p@valid.tls.test/')}`, 400, 'invalid_host'],
    ['two ports', '/v1/tls/lookup?host=valid.tls.test:8443&port=443', 400, 'invalid_host'],
    ['port 0', '/v1/tls/lookup?host=valid.tls.test&port=0', 400, 'invalid_host'],
    ['port 70000', '/v1/tls/lookup/valid.tls.test:70000', 400, 'invalid_host'],
    ['broken percent-encoding in the path', '/v1/tls/lookup/valid%ZZ', 400, 'invalid_host'],
    ['localhost', '/v1/tls/lookup?host=localhost', 422, 'host_not_allowed'],
    ['a private address', `/v1/tls/lookup?host=${encodeURIComponent('https://10.0.0.1/path')}`, 422, 'host_not_allowed'],
    ['a name resolving to a private address', '/v1/tls/lookup/private.tls.test', 422, 'host_not_allowed'],
  ])('%s: %d %s, not billed', async (_name, path, status, code) => {
    const { call } = await stack();
    const reply = await call(path);
    expect(reply.status).toBe(status);
    expect(reply.body).toMatchObject({ success: false, error_code: code });
    expect(reply.headers['x-quota-remaining']).toBe('50');
  });

  it('bills a success once, and gives the unit back after a 422 from the guard or a 502', async () => {
    const s = await createApiStack({
      lookup: createLookup({ dns: { servers: [dns.address] }, outbound: { allowPrivateTargets: ['127.0.0.0/8'] }, tls: { timeouts: FAST } }),
    });
    const { secretKey } = await s.keys('tls', { plan: 'test-quota50' });
    const call = (path: string) => s.call(path, { key: secretKey });
    expect((await call(`/v1/tls/lookup?host=valid.tls.test:${server.port}`)).headers['x-quota-remaining']).toBe('49');
    const refused = await call(`/v1/tls/lookup?host=${encodeURIComponent(`[::1]:${server.port}`)}`); // ::1 is not in this allow list
    expect(refused).toMatchObject({ status: 422, body: { error_code: 'host_not_allowed' } });
    expect(refused.headers['x-quota-remaining']).toBe('49');
    const failed = await call(`/v1/tls/lookup?host=127.0.0.1&port=${refusing}`);
    expect(failed).toMatchObject({ status: 502, body: { error_code: 'lookup_failed', error: `127.0.0.1:${refusing}: connection refused` } });
    expect(failed.headers['x-quota-remaining']).toBe('49');
    const status = await s.call('/v1/tls/status', { key: secretKey });
    expect(status.body).toMatchObject({ product: 'tls', quota_remaining: 49 });
    expect(s.errors).toEqual([]);
  });
});
