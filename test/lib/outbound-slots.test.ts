/**
 * The cap on outbound sockets (src/lib/outbound-slots.ts), shared through the outbound guard:
 * a tls engine held to it against a real loopback server that accepts and never speaks, the
 * waiting queue bounded and each wait cut at its lookup's deadline, and whois (port 43) and
 * RDAP (httpGet) taking the same slots.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/lib/dns/index.js';
import { httpGet } from '../../src/lib/http-get.js';
import { createOutboundGuard, type OutboundGuard } from '../../src/lib/outbound.js';
import { createLookup } from '../../src/lookup.js';
import { createTlsEngine } from '../../src/products/tls/engine.js';
import { whoisQuery, type CallContext } from '../../src/products/whois/fetch.js';
import { startDnsServer, type DnsTestServer, type Zone } from '../servers/dns-server.js';
import { startSilentServer } from '../servers/silent-tcp-server.js';

const NAMES = 24;
const ZONE: Zone = Object.fromEntries(Array.from({ length: NAMES }, (_, i) => [`h${i}.slots.test`, [{ type: 'A' as const, address: '127.0.0.1' }]]));

async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((done) => setTimeout(done, 5));
}

/** What a lookup ended with: its error code and message. */
function settle(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  return promise.then(
    () => ({ code: 'answered', message: '' }),
    (error: Error & { code?: string }) => ({ code: error.code ?? 'thrown', message: error.message }),
  );
}

let dns: DnsTestServer;
beforeAll(async () => {
  dns = await startDnsServer({ zone: ZONE });
});
afterAll(async () => {
  await dns.close();
});

function guardWith(maxSockets: number): OutboundGuard {
  const resolver = createDnsResolver({ servers: [dns.address] });
  return createOutboundGuard({ dns: () => resolver, allowPrivateTargets: ['127.0.0.0/8'], maxSockets });
}

function tlsEngine(guard: OutboundGuard, timeouts: { connectMs: number; totalMs: number }) {
  return createTlsEngine({ outbound: () => guard, cache: null, now: Date.now }, { timeouts, cacheSize: 0 });
}

describe('a tls engine held to a socket cap', () => {
  it('opens at most the cap at once against a silent server; the others wait, and a slot passes on when a handshake ends', async () => {
    const silent = await startSilentServer();
    const guard = guardWith(2);
    const engine = tlsEngine(guard, { connectMs: 60_000, totalMs: 60_000 });
    try {
      const lookups = Array.from({ length: 5 }, (_, i) => settle(Promise.resolve(engine.lookup(engine.prepare(`h${i}.slots.test:${silent.port}`)))));
      // Every lookup is either connected or waiting for a slot.
      await until(() => silent.accepted() + (guard.slots?.waiting ?? 0) >= 5);
      expect(silent.peakOpen()).toBe(2);
      expect([silent.accepted(), guard.slots.inUse, guard.slots.waiting]).toEqual([2, 2, 3]);

      // One handshake ends (the server closes it): its slot goes to the first waiter.
      silent.closeOldest();
      await until(() => silent.accepted() === 3);
      expect(silent.peakOpen()).toBe(2);
      expect([guard.slots.inUse, guard.slots.waiting]).toEqual([2, 2]);

      silent.closeAll();
      const outcomes = await Promise.all(lookups);
      expect(outcomes.map((outcome) => outcome.code)).toEqual(Array(5).fill('lookup_failed'));
      expect(outcomes[0].message).toContain('closed the connection during the TLS handshake');
      expect(silent.peakOpen()).toBe(2);
      await until(() => guard.slots.inUse === 0);
      expect(silent.accepted()).toBe(5);
    } finally {
      silent.closeAll();
      await silent.close();
    }
  });

  it("lookup.close() refuses the lookups waiting for a slot at once: none connects after it (a reviewer's saw sockets opened after close)", async () => {
    const silent = await startSilentServer();
    const lookup = createLookup({
      dns: { servers: [dns.address] },
      outbound: { maxSockets: 1, allowPrivateTargets: ['127.0.0.0/8'] },
      tls: { timeouts: { connectMs: 30_000, totalMs: 30_000 }, cacheSize: 0 },
    });
    try {
      const first = settle(lookup.tls(`h0.slots.test:${silent.port}`));
      const waiting = [1, 2].map((i) => settle(lookup.tls(`h${i}.slots.test:${silent.port}`)));
      await until(() => silent.accepted() === 1);
      await lookup.close();
      const refused = await Promise.all(waiting);
      expect(refused.map((outcome) => outcome.code)).toEqual(['lookup_failed', 'lookup_failed']);
      expect(refused[0].message).toContain('the lookup was closed: no new outbound connection');
      // The first holds its slot until its socket closes; nothing else connected meanwhile, nor after.
      silent.closeAll();
      expect((await first).code).toBe('lookup_failed');
      expect(silent.accepted()).toBe(1);
      await expect(lookup.tls(`h3.slots.test:${silent.port}`)).rejects.toMatchObject({ code: 'lookup_failed' });
      expect(silent.accepted()).toBe(1);
    } finally {
      silent.closeAll();
      await silent.close();
    }
  });

  it('fails lookups past the waiting queue at once and the waiting ones at their deadline, all lookup_failed', async () => {
    const silent = await startSilentServer();
    const guard = guardWith(1);
    const totalMs = 400;
    const engine = tlsEngine(guard, { connectMs: 300, totalMs });
    // The only slot, held as another product's socket would hold it: the cap is the guard's, for all.
    const held = await guard.slots.acquire(1);
    try {
      expect(guard.slots.maxWaiting).toBe(8);
      const started = performance.now();
      const lookups = Array.from({ length: 10 }, (_, i) => settle(Promise.resolve(engine.lookup(engine.prepare(`h${i}.slots.test:${silent.port}`)))));
      await until(() => guard.slots.waiting === 8);
      const outcomes = await Promise.all(lookups);
      const waited = performance.now() - started;
      expect(outcomes.map((outcome) => outcome.code)).toEqual(Array(10).fill('lookup_failed'));
      const messages = outcomes.map((outcome) => outcome.message.replace(/^h\d+\.slots\.test:\d+ \(127\.0\.0\.1\): /, '').replace(/\d+ ms/, 'N ms'));
      expect(messages.filter((m) => m === 'too many outbound connections at once (1 open, 8 waiting, the most allowed); retry later')).toHaveLength(2);
      expect(messages.filter((m) => m === 'no outbound connection free within N ms (1 open at once, the most allowed); retry later')).toHaveLength(8);
      // The waits ended at the lookups' own deadline, not before.
      expect(waited).toBeGreaterThanOrEqual(totalMs - 20);
      expect(silent.accepted()).toBe(0);
      expect(guard.slots.waiting).toBe(0);

      // With the slot back, a lookup connects again.
      held.release();
      expect(guard.slots.inUse).toBe(0);
      silent.closeAll();
      expect(await settle(Promise.resolve(engine.lookup(engine.prepare(`h0.slots.test:${silent.port}`))))).toMatchObject({ code: 'lookup_failed' });
      expect(silent.accepted()).toBe(1);
    } finally {
      held.release();
      silent.closeAll();
      await silent.close();
    }
  });

  it('is unlimited unless set, and createLookup checks outbound.maxSockets', () => {
    expect(guardWith(Number.POSITIVE_INFINITY).slots.limit).toBe(Number.POSITIVE_INFINITY);
    expect(createOutboundGuard({ dns: () => createDnsResolver() }).slots.limit).toBe(Number.POSITIVE_INFINITY);
    expect(() => createLookup({ outbound: { maxSockets: 0 } })).toThrow(
      'createLookup: outbound.maxSockets must be a whole number of sockets >= 1, or Infinity (got 0)',
    );
    expect(() => createLookup({ outbound: { maxSockets: 1.5 } })).toThrow(/outbound\.maxSockets/);
  });
});

describe('whois and RDAP take the same slots', () => {
  let http: HttpServer;
  let httpPort = 0;
  beforeAll(async () => {
    http = createHttpServer((_request, response) => response.end('{}'));
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    httpPort = (http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((done) => http.close(done));
  });

  it('waits within the call deadline, fails as an upstream timeout when none frees, and holds a slot until the socket closes', async () => {
    const guard = guardWith(1);
    const held = await guard.slots.acquire(1);
    const ctx: CallContext = { guard, connectMs: 200, totalMs: 300, maxBytes: 1024, maxRedirects: 0, deadline: performance.now() + 300 };
    const whois = await settle(whoisQuery({ host: '127.0.0.1', port: httpPort }, 'example.test', ctx));
    expect(whois).toEqual({ code: 'timeout', message: expect.stringMatching(/^no outbound connection free within \d+ ms \(1 open at once/) });
    const rdap = await settle(httpGet(`http://127.0.0.1:${httpPort}/domain/example.test`, { slots: guard.slots, timeouts: { connectMs: 200, totalMs: 300 } }));
    expect(rdap).toEqual({ code: 'timeout', message: 'no outbound connection free within 300 ms (1 open at once, the most allowed); retry later' });

    held.release();
    const answer = await httpGet(`http://127.0.0.1:${httpPort}/domain/example.test`, { slots: guard.slots });
    expect(answer.body.toString()).toBe('{}');
    // Answered; the slot comes back once the socket has closed.
    await until(() => guard.slots.inUse === 0);
  });
});

describe('the upstream APIs (pwbreach ranges, riskscore providers) take the same slots', () => {
  /** An HTTP server that holds each request 100 ms, counting how many it holds at once. */
  let slow: HttpServer;
  let slowUrl = '';
  let open = 0;
  let peak = 0;
  beforeAll(async () => {
    slow = createHttpServer((request, response) => {
      open++;
      peak = Math.max(peak, open);
      setTimeout(() => {
        open--;
        const ip = request.url!.split('/').pop()!;
        if (request.url!.startsWith('/range/')) response.end('0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n');
        else response.end(JSON.stringify({ ip, privacy: { vpn: false, proxy: false, tor: false, relay: false, hosting: false } }));
      }, 100);
    });
    await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done));
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => slow.close(done));
  });

  it('with one socket allowed, concurrent lookups reach the upstream one at a time, and each is answered within its deadline', async () => {
    const timeouts = { connectMs: 2_000, totalMs: 2_000 };
    const lookup = createLookup({
      outbound: { maxSockets: 1 },
      pwbreach: { upstream: { url: `${slowUrl}/range/{prefix}`, timeouts, attempts: 1 } },
      riskscore: { provider: 'ipinfo', url: `${slowUrl}/ipinfo`, key: 'k', timeouts },
    });
    try {
      peak = 0;
      const sha1s = ['00000', '11111', '22222'].map((prefix) => `${prefix}${'0'.repeat(35)}`);
      const ips = ['8.8.8.8', '8.8.4.4', '1.1.1.1'];
      const answers = await Promise.allSettled([...sha1s.map((sha1) => lookup.pwbreach({ sha1 })), ...ips.map((ip) => lookup.riskscore(ip))]);
      expect(peak).toBe(1);
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill('fulfilled'));
    } finally {
      await lookup.close();
    }
  });
});
