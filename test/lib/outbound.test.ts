/**
 * The outbound guard against a real loopback DNS server: every spelling of a private or
 * loopback target is refused, names are checked on every address they resolve to, and the
 * address a caller connects to is the one that was checked (no second resolution).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSeclookupError } from '../../src/errors.js';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { httpGet } from '../../src/lib/http-get.js';
import { createOutboundGuard } from '../../src/lib/outbound.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';

const ZONE: Zone = {
  'public.test': [
    { type: 'A', address: '93.184.215.14' },
    { type: 'AAAA', address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c' },
  ],
  'v6only.test': [{ type: 'AAAA', address: '2001:4860:4860::8888' }],
  'private.test': [{ type: 'A', address: '10.0.0.5' }],
  'loopback.test': [{ type: 'A', address: '127.0.0.1' }],
  'mixed.test': [
    { type: 'A', address: '93.184.215.14' },
    { type: 'A', address: '192.168.1.1' },
  ],
  'mapped.test': [{ type: 'AAAA', address: '::ffff:127.0.0.1' }],
  'ula.test': [{ type: 'AAAA', address: 'fd00::1' }],
  'cname.test': [{ type: 'CNAME', target: 'loopback.test' }],
  'metadata.test': [{ type: 'A', address: '169.254.169.254' }],
  'cgnat.test': [{ type: 'A', address: '100.64.1.1' }],
  'empty.test': [{ type: 'TXT', data: 'no addresses here' }],
};

let dns: DnsTestServer;
let silent: DnsTestServer;
beforeAll(async () => {
  dns = await startDnsServer({ zone: ZONE });
  silent = await startDnsServer({ zone: ZONE, behaviour: 'silent' });
});
afterAll(async () => {
  await dns.close();
  await silent.close();
});

function guardFor(server: DnsTestServer, allowPrivateTargets?: string[]) {
  const resolver = createDnsResolver({ servers: [server.address], timeouts: { connectMs: 200, totalMs: 300 }, attempts: 1 });
  return createOutboundGuard({ dns: () => resolver, allowPrivateTargets });
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    if (isSeclookupError(error)) return error.code;
    throw error;
  }
}

describe('IP literals', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '::1',
    '[::1]',
    '::',
    'fe80::1',
    'fd00::1',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '[::ffff:127.0.0.1]',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '0:0:0:0:0:ffff:7f00:0001',
    '2002:7f00:1::',
    '64:ff9b::7f00:1',
    '2001:db8::1',
    'fe80::1%lo',
    '[fe80::1%25lo]',
  ])('%s is refused', async (host) => {
    expect(await codeOf(guardFor(dns).check(host))).toBe('target_refused');
  });

  it.each([
    // Forms that inet_aton / some resolvers read as 127.0.0.1 or 10.0.0.1.
    '127.1',
    '127.0.1',
    '0x7f.0.0.1',
    '0x7f000001',
    '2130706433',
    '0177.0.0.1',
    '017700000001',
    '10.1',
    '0x0a.0x00.0x00.0x01',
    '127.0.0.1.',
  ])('the numeric form %s is refused without a DNS question', async (host) => {
    const before = dns.total();
    expect(await codeOf(guardFor(dns).check(host))).toBe('target_refused');
    expect(dns.total()).toBe(before);
  });

  it('lets a public literal through, normalized, with no DNS question', async () => {
    const before = dns.total();
    expect(await guardFor(dns).check('8.8.8.8')).toMatchObject({ host: '8.8.8.8', literal: true, address: '8.8.8.8', family: 4 });
    expect(await guardFor(dns).check('[2001:4860:4860:0:0:0:0:8888]')).toMatchObject({ literal: true, address: '2001:4860:4860::8888', family: 6 });
    expect(dns.total()).toBe(before);
  });
});

describe('names', () => {
  it.each(['private.test', 'loopback.test', 'LOOPBACK.test.', 'mixed.test', 'mapped.test', 'ula.test', 'cname.test', 'metadata.test', 'cgnat.test'])(
    '%s resolves to a non-public address and is refused',
    async (host) => {
      expect(await codeOf(guardFor(dns).check(host))).toBe('target_refused');
    },
  );

  it('names the address and the block in the message', async () => {
    await expect(guardFor(dns).check('mixed.test')).rejects.toThrow('mixed.test (192.168.1.1) is not a public address: private-use 192.168.0.0/16');
  });

  it('checks a public name on every address, IPv4 first', async () => {
    const target = await guardFor(dns).check('Public.Test');
    expect(target).toMatchObject({ host: 'public.test', literal: false, address: '93.184.215.14', family: 4 });
    expect(target.addresses).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    expect((await guardFor(dns).check('v6only.test')).address).toBe('2001:4860:4860::8888');
  });

  it('reports a name with no address, and a DNS server that never answers', async () => {
    expect(await codeOf(guardFor(dns).check('nxdomain.test'))).toBe('name_not_found');
    expect(await codeOf(guardFor(dns).check('empty.test'))).toBe('name_not_found');
    expect(await codeOf(guardFor(silent).check('public.test'))).toBe('timeout');
  });
});

describe('allowPrivateTargets (dangerous, for tests and deliberate operators)', () => {
  it('lets the listed ranges through and nothing else', async () => {
    const guard = guardFor(dns, ['127.0.0.0/8', '::1']);
    expect((await guard.check('loopback.test')).address).toBe('127.0.0.1');
    expect((await guard.check('::1')).address).toBe('::1');
    expect(await codeOf(guard.check('private.test'))).toBe('target_refused');
    expect(await codeOf(guard.check('127.1'))).toBe('target_refused');
  });

  it('refuses a CIDR with host bits at construction', () => {
    expect(() => guardFor(dns, ['127.0.0.1/8'])).toThrow(/host bits/);
  });
});

describe('connecting to the checked address', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => res.end(`host header ${req.headers.host}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('httpGet with pinnedLookup reaches the checked address, keeping the name in Host', async () => {
    const guard = guardFor(dns, ['127.0.0.0/8']);
    const target = await guard.check('loopback.test');
    const before = dns.total();
    // The name would not resolve through the system resolver at all: the pinned lookup is what connects.
    const response = await httpGet(`http://loopback.test:${port}/`, { lookup: guard.pinnedLookup(target) });
    expect(response.body.toString()).toBe(`host header loopback.test:${port}`);
    expect(dns.total()).toBe(before); // no second resolution
  });

  it('a name whose second resolution differs (DNS rebinding) still reaches only the checked address', async () => {
    const rebinding = await startDnsServer({ zone: { 'rebind.test': [{ type: 'A', address: '127.0.0.1', ttl: 0 }] } });
    try {
      const guard = guardFor(rebinding, ['127.0.0.0/8']);
      const target = await guard.check('rebind.test');
      // The name now points at the metadata address; a client that resolved again would follow it.
      rebinding.setZone({ 'rebind.test': [{ type: 'A', address: '169.254.169.254', ttl: 0 }] });
      const response = await httpGet(`http://rebind.test:${port}/`, { lookup: guard.pinnedLookup(target) });
      expect(response.body.toString()).toBe(`host header rebind.test:${port}`);
      expect(rebinding.total()).toBe(2); // A and AAAA, once: nothing asked after the check
      // And a fresh check of the name now refuses it.
      expect(await codeOf(guardFor(rebinding, ['127.0.0.0/8']).check('rebind.test'))).toBe('target_refused');
    } finally {
      await rebinding.close();
    }
  });

  it('pinnedLookup answers the all-addresses form too', async () => {
    const guard = guardFor(dns, ['127.0.0.0/8']);
    const target = await guard.check('loopback.test');
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        { host: 'loopback.test', port, lookup: guard.pinnedLookup(target), family: 0, hints: 0, ...({ autoSelectFamily: true } as object) },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe(`host header loopback.test:${port}`);
  });
});
