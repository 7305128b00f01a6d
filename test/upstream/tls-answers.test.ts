/**
 * A TLS server's certificate is input too. One whose validity time does not parse (OpenSSL
 * prints `Bad time value`) fails the check with 502 `lookup_failed`, never a 500; a server that
 * sends garbage once the handshake is done, and certificates with odd but valid fields (years
 * 1950 and 9999, a thousand SANs, control characters in names), are read as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tls from 'node:tls';
import net, { type AddressInfo } from 'node:net';
import { createLookup } from '../../src/lookup.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { withBrokenTime } from '../fuzz/hostile-upstreams.js';
import { mintCertificate, startTlsServer, type TestCertificate, type TlsTestServer } from '../servers/tls-server.js';

const servers: { close(): Promise<void> }[] = [];
let stack: ApiStack;
let key: string;

async function serve(certificate: TestCertificate): Promise<number> {
  const server: TlsTestServer = await startTlsServer({ certificate });
  servers.push(server);
  return server.port;
}

/** A server that completes the TLS handshake, then writes raw garbage (no TLS record) on the TCP connection. */
async function garbageAfterHandshake(certificate: TestCertificate): Promise<number> {
  const context = tls.createSecureContext({ cert: certificate.pem, key: certificate.key.pem });
  const server = net.createServer((raw) => {
    raw.on('error', () => {});
    const secure = new tls.TLSSocket(raw, { isServer: true, secureContext: context });
    secure.on('error', () => {});
    secure.once('secure', () => raw.write(Buffer.from('\u0000\u00ffHTTP/1.1 400 garbage\r\n\r\n'.repeat(50))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  stack = await createApiStack({
    lookup: createLookup({ outbound: { allowPrivateTargets: ['127.0.0.0/8'] }, tls: { timeouts: { connectMs: 3_000, totalMs: 5_000 } } }),
  });
  key = (await stack.keys('tls', { plan: 'enterprise' })).secretKey;
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function check(port: number) {
  const errorsBefore = stack.errors.length;
  const reply = await stack.call(`/v1/tls/lookup?host=127.0.0.1&port=${port}`, { key });
  expect(stack.errors.slice(errorsBefore)).toEqual([]);
  return reply;
}

describe('hostile certificates and servers', () => {
  it.each(['991399999999Z', 'AAAAAAAAAAAAZ', '25010100000+0', '250101000000\u0000'])('answers 502 lookup_failed for a notBefore of %j', async (time) => {
    const port = await serve(withBrokenTime(mintCertificate({ subject: 'odd.test', dnsNames: ['odd.test'] }), time));
    const reply = await check(port);
    expect([reply.status, reply.body.error_code]).toEqual([502, 'lookup_failed']);
    expect(reply.body.error).toContain('unreadable certificate time "Bad time value"');
  });

  it('reads the certificate of a server that sends garbage once the handshake is done', async () => {
    const certificate = mintCertificate({ subject: 'garbage.test', dnsNames: ['garbage.test'] });
    const reply = await check(await garbageAfterHandshake(certificate));
    expect([reply.status, reply.body.fingerprint_sha256, reply.body.san]).toEqual([200, certificate.fingerprint256, ['garbage.test']]);
  });

  it('reads odd but valid fields as they are: extreme years, a thousand SANs, control characters', async () => {
    const dnsNames = Array.from({ length: 1_000 }, (_, i) => `n${i}.odd.test`);
    const certificate = mintCertificate({
      subject: [
        { shortName: 'O', value: 'Odd, "Inc"\n\u0001' },
        { shortName: 'CN', value: 'odd.test' },
      ],
      dnsNames: [...dnsNames, 'a, b', 'x"y'],
      notBefore: new Date(Date.UTC(1950, 0, 1)),
      notAfter: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)),
    });
    const reply = await check(await serve(certificate));
    expect(reply.status).toBe(200);
    expect([reply.body.not_before, reply.body.not_after, reply.body.valid]).toEqual(['1950-01-01T00:00:00Z', '9999-12-31T23:59:59Z', true]);
    expect(reply.body.san).toEqual([...dnsNames, 'a, b', 'x"y']);
    expect(reply.body.subject).toMatch(/^CN=odd\.test, O=Odd/);
  });
});
