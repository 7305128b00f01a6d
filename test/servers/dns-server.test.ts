/**
 * The test DNS server against Node's own resolver (c-ares: UDP, then TCP on truncation) and against
 * raw UDP/TCP sockets where the misbehaviour is below what a resolver reports.
 */
import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import dns2 from 'dns2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countsFit, DKIM_KEYS, EMAIL_ZONE, frame, readFrames, startDnsServer, type DnsTestServer, type Zone } from './dns-server.js';

const { Packet } = dns2;
type DnsPacket = InstanceType<typeof Packet>;

/** Records the tests add to the email fixture. */
const TEST_ZONE: Zone = {
  ...EMAIL_ZONE,
  'www.chain.test': [{ type: 'CNAME', target: 'alias.chain.test' }],
  'alias.chain.test': [{ type: 'CNAME', target: 'host.chain.test' }],
  'host.chain.test': [{ type: 'A', address: '192.0.2.99', ttl: 42 }],
  'loop-a.test': [{ type: 'CNAME', target: 'loop-b.test' }],
  'loop-b.test': [{ type: 'CNAME', target: 'LOOP-A.test.' }],
  'strings.test': [{ type: 'TXT', data: ['first part;', ' second part'] }],
};

let server: DnsTestServer;

beforeAll(async () => {
  server = await startDnsServer({ zone: TEST_ZONE });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.setZone(TEST_ZONE);
  server.setBehaviour('normal');
  server.resetCounts();
});

// ---------------------------------------------------------------------------------------------
// Helpers (every wait bounded, every socket closed)

/** Node's resolver pointed at `target` only, one try. */
function resolverFor(target: DnsTestServer, timeout = 1_000): Resolver {
  const resolver = new Resolver({ timeout, tries: 1 });
  resolver.setServers([target.address]);
  return resolver;
}

/** The error code a lookup fails with (or 'resolved'). */
async function failure(lookup: Promise<unknown>): Promise<string> {
  try {
    await lookup;
    return 'resolved';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

/** A query message; `edns` adds an OPT record advertising that UDP payload size. */
function query(name: string, type: keyof typeof Packet.TYPE | number, options: { id?: number; edns?: number } = {}): Buffer {
  const packet = new Packet();
  packet.header.id = options.id ?? 0x1234;
  packet.header.rd = 1;
  packet.questions.push({ name, type: typeof type === 'number' ? type : Packet.TYPE[type], class: Packet.CLASS.IN } as DnsPacket['questions'][number]);
  if (options.edns) packet.additionals.push({ name: '', type: 41, class: options.edns, ttl: 0, rdata: [] } as unknown as DnsPacket['additionals'][number]);
  return packet.toBuffer();
}

/** Every UDP datagram that comes back to one query within `waitMs`. */
async function udpExchange(port: number, message: Buffer, waitMs = 1_000, untilFirst = true): Promise<{ replies: Buffer[]; firstAfterMs?: number }> {
  const socket = dgram.createSocket('udp4');
  const replies: Buffer[] = [];
  const started = performance.now();
  let firstAfterMs: number | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, waitMs);
      socket.on('error', reject);
      socket.on('message', (reply) => {
        firstAfterMs ??= performance.now() - started;
        replies.push(reply);
        if (untilFirst) {
          clearTimeout(timer);
          resolve();
        }
      });
      socket.send(message, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
  return { replies, firstAfterMs };
}

/** Send `chunks` on one TCP connection (pausing between them) and collect `expected` framed replies. */
async function tcpExchange(port: number, chunks: Buffer[], expected: number, waitMs = 1_000): Promise<Buffer[]> {
  const socket = net.connect(port, '127.0.0.1');
  const replies: Buffer[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, waitMs);
      socket.on('error', reject);
      socket.on(
        'data',
        readFrames((reply) => {
          replies.push(reply);
          if (replies.length === expected) {
            clearTimeout(timer);
            resolve();
          }
        }),
      );
      socket.once('connect', async () => {
        for (const [i, chunk] of chunks.entries()) {
          if (i > 0) await new Promise((r) => setTimeout(r, 20)); // separate reads on the server
          socket.write(chunk);
        }
      });
    });
  } finally {
    socket.destroy();
  }
  return replies;
}

/**
 * Parse a DNS message, refusing what dns2 silently accepts: records it could not decode. The counts
 * are checked first because dns2 takes seconds to give up on random bytes announcing many records.
 */
function strictParse(bytes: Buffer): DnsPacket {
  if (!countsFit(bytes)) throw new Error(`the header announces more records than ${bytes.length} bytes can hold`);
  const packet = Packet.parse(bytes);
  const { header } = packet;
  const counts = [packet.questions.length, packet.answers.length, packet.authorities.length, packet.additionals.length];
  if (counts.join() !== [header.qdcount, header.ancount, header.nscount, header.arcount].join()) {
    throw new Error(`records do not match the header counts: ${counts.join()}`);
  }
  return packet;
}

async function ask(name: string, type: keyof typeof Packet.TYPE, options: { edns?: number } = {}): Promise<DnsPacket> {
  const { replies } = await udpExchange(server.port, query(name, type, options));
  expect(replies).toHaveLength(1);
  return strictParse(replies[0]!);
}

// ---------------------------------------------------------------------------------------------

describe('answers from the zone (Node resolver)', () => {
  it('answers A, AAAA, MX, NS and PTR', async () => {
    const resolver = resolverFor(server);
    expect(await resolver.resolve4('mx1.example.test')).toEqual(['192.0.2.10']);
    expect(await resolver.resolve6('mx1.example.test')).toEqual(['2001:db8::10']);
    expect(await resolver.resolveMx('example.test')).toEqual([
      { exchange: 'mx2.example.test', priority: 20 },
      { exchange: 'mx1.example.test', priority: 10 },
      { exchange: 'mx-backup.example.test', priority: 30 },
    ]);
    expect(await resolver.resolveNs('example.test')).toEqual(['ns1.example.test', 'ns2.example.test']);
    expect(await resolver.reverse('192.0.2.10')).toEqual(['mx1.example.test']);
  });

  it('answers a null MX with an empty exchange', async () => {
    expect(await resolverFor(server).resolveMx('nullmx.test')).toEqual([{ exchange: '', priority: 0 }]);
  });

  it('answers TXT; Node hands back the character-strings of a long record, to be joined', async () => {
    const resolver = resolverFor(server);
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 include:_spf.example.net ~all'], ['example-site-verification=3f9a1c7e5b']]);
    const [key] = await resolver.resolveTxt('google._domainkey.example.test');
    expect(key!.map((part) => Buffer.byteLength(part))).toEqual([255, 155]);
    expect(key!.join('')).toBe(`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`);
    expect(await resolver.resolveTxt('strings.test')).toEqual([['first part;', ' second part']]);
  });

  it('follows CNAME chains within the zone', async () => {
    const resolver = resolverFor(server);
    expect(await resolver.resolve4('www.chain.test', { ttl: true })).toEqual([{ address: '192.0.2.99', ttl: 42 }]);
    expect(await resolver.resolveCname('www.chain.test')).toEqual(['alias.chain.test']);
    const [key] = await resolver.resolveTxt('selector1._domainkey.contoso.test');
    expect(key!.join('')).toBe(`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`);
  });

  it('puts the CNAME records before the target records, owner names as asked', async () => {
    const response = await ask('WWW.chain.test', 'A');
    expect(response.header).toMatchObject({ rcode: 0, aa: 1, qr: 1, tc: 0 });
    expect(response.answers.map((r) => [r.name, r.type, r.domain ?? r.address])).toEqual([
      ['WWW.chain.test', Packet.TYPE.CNAME, 'alias.chain.test'],
      ['alias.chain.test', Packet.TYPE.CNAME, 'host.chain.test'],
      ['host.chain.test', Packet.TYPE.A, '192.0.2.99'],
    ]);
  });

  it('matches names case-insensitively and counts them in lower case', async () => {
    expect(await resolverFor(server).resolve4('MX1.Example.TEST')).toEqual(['192.0.2.10']);
    expect(server.queries.get('mx1.example.test A')).toBe(1);
  });
});

describe('negative answers', () => {
  it('NXDOMAIN (ENOTFOUND) for an absent name, NODATA (ENODATA) for an absent type or an empty non-terminal', async () => {
    const resolver = resolverFor(server);
    expect(await failure(resolver.resolve4('nothing-here.test'))).toBe('ENOTFOUND');
    expect(await failure(resolver.resolveTxt('_dmarc.mail.sub.example.org'))).toBe('ENOTFOUND');
    expect(await failure(resolver.resolveMx('a-only.test'))).toBe('ENODATA');
    expect(await failure(resolver.resolveTxt('_domainkey.example.test'))).toBe('ENODATA');
  });

  it('carries the SOA whose TTL is min(SOA TTL, minimum)', async () => {
    const nxdomain = await ask('nothing-here.example.test', 'A');
    expect(nxdomain.header.rcode).toBe(3);
    expect(nxdomain.answers).toEqual([]);
    expect(nxdomain.authorities).toHaveLength(1);
    expect(nxdomain.authorities[0]).toMatchObject({ name: 'example.test', type: Packet.TYPE.SOA, ttl: 60, minimum: 60 });

    const nodata = await ask('a-only.test', 'MX');
    expect(nodata.header.rcode).toBe(0);
    expect(nodata.answers).toEqual([]);
    expect(nodata.authorities[0]).toMatchObject({ type: Packet.TYPE.SOA, ttl: 60 });
  });

  it('takes the default and negative TTLs from the options', async () => {
    const other = await startDnsServer({ zone: { 'ttl.test': [{ type: 'A', address: '192.0.2.1' }] }, defaultTtl: 20, negativeTtl: 30 });
    try {
      const resolver = resolverFor(other);
      expect(await resolver.resolve4('ttl.test', { ttl: true })).toEqual([{ address: '192.0.2.1', ttl: 20 }]);
      const { replies } = await udpExchange(other.port, query('nx.ttl.test', 'A'));
      expect(strictParse(replies[0]!).authorities[0]).toMatchObject({ ttl: 20, minimum: 30 });
    } finally {
      await other.close();
    }
  });

  it('answers NXDOMAIN after a CNAME to an absent name, and SERVFAIL for a CNAME loop', async () => {
    const dangling = await ask('selector2._domainkey.contoso.test', 'TXT');
    expect(dangling.header.rcode).toBe(3);
    expect(dangling.answers.map((r) => r.type)).toEqual([Packet.TYPE.CNAME]);
    expect(await failure(resolverFor(server).resolve4('loop-a.test'))).toBe('ESERVFAIL');
  });
});

describe('UDP size limit', () => {
  it('truncates an answer over 512 bytes for a client without EDNS, not for one that advertises more', async () => {
    const plain = await ask('selector1._domainkey.contoso.test', 'TXT');
    expect(plain.header.tc).toBe(1);
    expect(plain.answers).toEqual([]);

    const edns = await ask('selector1._domainkey.contoso.test', 'TXT', { edns: 1232 });
    expect(edns.header.tc).toBe(0);
    expect(edns.answers.map((r) => r.type)).toEqual([Packet.TYPE.CNAME, Packet.TYPE.TXT]);
    expect(edns.additionals.map((r) => r.type)).toEqual([41]); // OPT echoed
  });
});

describe('behaviours', () => {
  it('truncate: Node retries over TCP on the same port and gets the answer', async () => {
    server.setBehaviour('truncate');
    expect(await resolverFor(server).resolve4('mx1.example.test')).toEqual(['192.0.2.10']);
    expect(server.queries.get('mx1.example.test A')).toBe(2);
    expect(server.tcpQueries.get('mx1.example.test A')).toBe(1);

    const response = await ask('mx1.example.test', 'A');
    expect(response.header).toMatchObject({ tc: 1, rcode: 0 });
    expect(response.answers).toEqual([]);
  });

  it('servfail and refused: ESERVFAIL and EREFUSED', async () => {
    server.setBehaviour('servfail');
    expect(await failure(resolverFor(server).resolve4('mx1.example.test'))).toBe('ESERVFAIL');
    server.setBehaviour('refused');
    expect(await failure(resolverFor(server).resolve4('mx1.example.test'))).toBe('EREFUSED');
    expect((await ask('mx1.example.test', 'A')).header.rcode).toBe(5);
  });

  it('silent: counts the query and never answers, over UDP or TCP', async () => {
    server.setBehaviour('silent');
    const { replies } = await udpExchange(server.port, query('mx1.example.test', 'A'), 200);
    expect(replies).toEqual([]);
    expect(await tcpExchange(server.port, [frame(query('mx1.example.test', 'A'))], 1, 200)).toEqual([]);
    const malformed = Buffer.from(query('mx1.example.test', 'A'));
    malformed.writeUInt16BE(3, 4); // not even FORMERR
    expect((await udpExchange(server.port, malformed, 200)).replies).toEqual([]);
    expect(server.queries.get('mx1.example.test A')).toBe(2);
    expect(server.tcpQueries.get('mx1.example.test A')).toBe(1);
  });

  it('wrong-id: answers over UDP with another id only; over TCP with the right one', async () => {
    server.setBehaviour('wrong-id');
    const { replies } = await udpExchange(server.port, query('mx1.example.test', 'A', { id: 777 }), 200, false);
    expect(replies).toHaveLength(1);
    const response = strictParse(replies[0]!);
    expect(response.header.id).not.toBe(777);
    expect(response.answers.map((r) => r.address)).toEqual(['192.0.2.10']);

    const [overTcp] = await tcpExchange(server.port, [frame(query('mx1.example.test', 'A', { id: 777 }))], 1);
    expect(strictParse(overTcp!).header.id).toBe(777);
  });

  it('garbage: UDP answers are not DNS; TCP sends a length prefix then garbage', async () => {
    server.setBehaviour('garbage');
    for (let i = 0; i < 20; i++) {
      const { replies } = await udpExchange(server.port, query('mx1.example.test', 'A', { id: 4242 }));
      expect(replies).toHaveLength(1);
      expect(() => strictParse(replies[0]!)).toThrow();
      if (replies[0]!.length >= 2) expect(replies[0]!.readUInt16BE(0)).toBe(4242);
    }
    const [overTcp] = await tcpExchange(server.port, [frame(query('mx1.example.test', 'A'))], 1);
    expect(overTcp!.length).toBeGreaterThan(0);
    expect(() => strictParse(overTcp!)).toThrow();
  });

  it('slow: answers normally after the delay', async () => {
    server.setBehaviour('slow', 300);
    const { replies, firstAfterMs } = await udpExchange(server.port, query('mx1.example.test', 'A'), 2_000);
    expect(strictParse(replies[0]!).answers.map((r) => r.address)).toEqual(['192.0.2.10']);
    expect(firstAfterMs).toBeGreaterThanOrEqual(290); // timers may fire a hair early

    const started = performance.now();
    expect(await resolverFor(server, 2_000).resolve4('mx1.example.test')).toEqual(['192.0.2.10']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    // Far slower than the timeout: on a loaded machine a 300 ms answer can beat a 100 ms timer.
    server.setBehaviour('slow', 5_000);
    expect(await failure(resolverFor(server, 100).resolve4('mx1.example.test'))).toBe('ETIMEOUT');
  });

  it('setZone replaces the zone', async () => {
    server.setZone({ 'new.test': [{ type: 'A', address: '192.0.2.77' }] });
    const resolver = resolverFor(server);
    expect(await resolver.resolve4('new.test')).toEqual(['192.0.2.77']);
    expect(await failure(resolver.resolve4('mx1.example.test'))).toBe('ENOTFOUND');
  });
});

describe('counters', () => {
  it('counts by lower-case name and type mnemonic, UDP and TCP together, and resets', async () => {
    await udpExchange(server.port, query('Example.TEST.', 'MX'));
    await udpExchange(server.port, query('example.test', 'MX'));
    await udpExchange(server.port, query('example.test', 'CAA'));
    await udpExchange(server.port, query('example.test', 65));
    await tcpExchange(server.port, [frame(query('example.test', 'MX'))], 1);
    expect(Object.fromEntries(server.queries)).toEqual({ 'example.test MX': 3, 'example.test CAA': 1, 'example.test TYPE65': 1 });
    expect(Object.fromEntries(server.tcpQueries)).toEqual({ 'example.test MX': 1 });
    expect(server.total()).toBe(5);
    server.resetCounts();
    expect(server.total()).toBe(0);
    expect(server.tcpQueries.size).toBe(0);
  });

  it('answers a malformed query FORMERR without counting it, and ignores a too-short one', async () => {
    const malformed = Buffer.from(query('example.test', 'A'));
    malformed.writeUInt16BE(3, 4); // three questions announced, one present
    const { replies } = await udpExchange(server.port, malformed);
    expect(replies).toHaveLength(1);
    expect(Packet.parse(replies[0]!).header).toMatchObject({ id: 0x1234, qr: 1, rcode: 1 });
    expect((await udpExchange(server.port, Buffer.from([1, 2, 3]), 200)).replies).toEqual([]);
    expect(server.total()).toBe(0);
  });
});

describe('TCP framing', () => {
  it('answers two queries pipelined on one connection in one write', async () => {
    const both = Buffer.concat([frame(query('mx1.example.test', 'A', { id: 1 })), frame(query('mx2.example.test', 'A', { id: 2 }))]);
    const replies = (await tcpExchange(server.port, [both], 2)).map(strictParse);
    expect(replies.map((r) => [r.header.id, r.answers[0]!.address])).toEqual([
      [1, '192.0.2.10'],
      [2, '192.0.2.11'],
    ]);
  });

  it('reassembles a query split across reads, the length prefix included', async () => {
    const whole = frame(query('mx1.example.test', 'A', { id: 9 }));
    const replies = await tcpExchange(server.port, [whole.subarray(0, 1), whole.subarray(1, 10), whole.subarray(10)], 1);
    expect(replies.map((r) => strictParse(r).header.id)).toEqual([9]);
  });

  it('answers a long TXT in full over TCP', async () => {
    const [reply] = await tcpExchange(server.port, [frame(query('selector1._domainkey.contoso.test', 'TXT'))], 1);
    const txt = strictParse(reply!).answers[1]!;
    expect(txt.data).toEqual(characterStringsOf(`v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`));
  });
});

describe('the email fixture zone', () => {
  it('answers as documented', async () => {
    const resolver = resolverFor(server);
    expect(await resolver.resolveTxt('two-spf.test')).toHaveLength(2);
    expect((await resolver.resolveTxt('_dmarc.example.test'))[0]![0]).toMatch(/^v=DMARC1; p=reject/);
    expect((await resolver.resolveTxt('_dmarc.example.org'))[0]![0]).toMatch(/^v=DMARC1; p=quarantine/);
    for (const selector of ['default', 'google', 'selector1', 'k1']) {
      expect((await resolver.resolveTxt(`${selector}._domainkey.example.test`))[0]!.join('')).toMatch(/^v=DKIM1;/);
    }
    for (const selector of ['selector2', 's1', 's2', 'mail', 'smtp']) {
      expect(await failure(resolver.resolveTxt(`${selector}._domainkey.example.test`))).toBe('ENOTFOUND');
    }
    expect(await resolver.resolve4('a-only.test')).toEqual(['192.0.2.50']);
    expect(await resolver.resolve4('2.0.0.127.zen.spamhaus.test')).toEqual(['127.0.0.2']);
    expect(await resolver.resolveTxt('2.0.0.127.zen.spamhaus.test')).toHaveLength(1);
    expect(await resolver.resolve4('10.113.0.203.zen.spamhaus.test')).toEqual(['127.255.255.254']);
    expect(await failure(resolver.resolve4('1.0.0.127.zen.spamhaus.test'))).toBe('ENOTFOUND');
  });
});

describe('close()', () => {
  it('frees the UDP and TCP port, even with a silent connection open and a slow answer pending', async () => {
    const other = await startDnsServer({ zone: TEST_ZONE, behaviour: 'slow', delayMs: 5_000 });
    const socket = net.connect(other.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(frame(query('mx1.example.test', 'A')));
    await udpExchange(other.port, query('mx1.example.test', 'A'), 100);
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the TCP query arrive
    expect(other.total()).toBe(2);

    await other.close();
    await other.close(); // idempotent
    socket.destroy();

    const udp = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(other.port, '127.0.0.1', resolve);
    });
    udp.close();
    const tcp = net.createServer();
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(other.port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => tcp.close(resolve));
  });
});

/** The 255-byte character-strings dns2 decodes for a long TXT. */
function characterStringsOf(text: string): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += 255) parts.push(text.slice(i, i + 255));
  return parts;
}
