/**
 * The other upstreams of the fuzz run, on 127.0.0.1, each answering at random right or wrong:
 * - RDAP: domain objects (good, every field of the wrong type, huge arrays, deep nesting, dates
 *   that are not dates), any JSON, not JSON, not UTF-8, any status, hostile redirects and
 *   registrar links, a hang, a body cut short or without end.
 * - WHOIS (port 43): registry text (a real sample, mutated), binary garbage, endless output, a
 *   close at once, silence, hostile referrals.
 * - HTTP (pwbreach's range API, riskscore's ipinfo): range text right and wrong, any JSON, any
 *   status, not UTF-8, a hang.
 * - TLS: a good server, certificates with unreadable times or odd fields, garbage after the
 *   handshake, and servers that never speak TLS (silent, garbage, banner, close, reset).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import fc from 'fast-check';
import { mintCertificate, startHostileServer, startTlsServer, type HostileBehaviour, type TestCertificate } from '../servers/tls-server.js';
import type { Random } from './random.js';

export interface Closable {
  close(): Promise<void>;
}

/** Any JSON value, drawn with fast-check from the run's random source. */
function anyJson(random: Random): unknown {
  return fc.sample(fc.jsonValue({ maxDepth: 4 }), { seed: random.int(2 ** 31), numRuns: 1 })[0];
}

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const NOT_DATES = ['yesterday', '2026-02-30T00:00:00Z', '99999-01-01T00:00:00Z', '', '0', '1e400', '2001-13-45', '\u0000', '-271821-04-20T00:00:00Z'];
const BAD_URLS = [
  'http://[::1',
  'http://',
  'http://127.0.0.1:99999/x',
  'ftp://127.0.0.1/',
  'javascript:alert(1)',
  '//',
  'http://%zz/',
  'https://a b/',
  '/rdap/domain/loop.com',
  'http://127.0.0.1:1/',
];

/** A domain object about `name`, its fields drawn from good values and any JSON. */
function domainObject(random: Random, name: string): Record<string, unknown> {
  const field = (good: () => unknown) => (random.chance(0.6) ? good() : anyJson(random));
  return {
    objectClassName: field(() => 'domain'),
    ldhName: field(() => (random.chance(0.9) ? name : name.toUpperCase() + '.')),
    status: field(() => Array.from({ length: random.int(5) }, () => random.pick(['active', 'client hold', 'server transfer prohibited', 'locked', '', ' ']))),
    events: field(() =>
      Array.from({ length: random.int(4) }, () => ({
        eventAction: random.pick(['registration', 'expiration', 'last changed', 'last update', 7, null]),
        eventDate: random.chance(0.5) ? new Date(Date.UTC(1990 + random.int(40), random.int(12), 1 + random.int(28))).toISOString() : random.pick(NOT_DATES),
      })),
    ),
    nameservers: field(() =>
      Array.from({ length: random.int(4) }, () => ({ ldhName: random.pick(['ns1.example.net', 'NS2.EXAMPLE.NET.', '127.0.0.1', '-', 'a..b']) })),
    ),
    entities: field(() => [
      {
        roles: ['registrar'],
        vcardArray: ['vcard', [['fn', {}, 'text', random.pick(['Example Registrar', 'REDACTED FOR PRIVACY', '', 5])]]],
        handle: random.pick(['292', 'REG-X', null]),
      },
    ]),
    links: field(() => [{ rel: 'related', type: 'application/rdap+json', href: random.pick(BAD_URLS) }]),
  };
}

function send(res: ServerResponse, status: number, body: string | Buffer, type = 'application/rdap+json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The shared misbehaviours of an HTTP upstream: a hang, a cut body, an endless one, any status. Null: none this time. */
function misbehave(random: Random, req: IncomingMessage, res: ServerResponse): boolean {
  switch (random.int(12)) {
    case 0:
      return true; // hang: the client's deadline ends it
    case 1:
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10_000 });
      res.write('{"objectClassName":"dom');
      setImmediate(() => req.socket.destroy());
      return true;
    case 2: {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return true;
    }
    case 3:
      send(res, random.pick([100 + random.int(500), 204, 304, 429, 500, 503]), random.bytes(random.int(100)));
      return true;
    case 4:
      req.socket.destroy();
      return true;
    default:
      return false;
  }
}

export async function startHostileRdap(random: Random): Promise<{ base: string } & Closable> {
  const server = createServer((req, res) => {
    const name = decodeURIComponent(/\/domain\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? 'x.com').toLowerCase();
    if (misbehave(random, req, res)) return;
    switch (random.int(10)) {
      case 0:
        return send(res, 200, JSON.stringify(anyJson(random)));
      case 1:
        return send(res, 200, random.chance(0.5) ? random.bytes(random.int(2_000)) : '{"objectClassName": "domain", "ldhName": "' + name + '", \xff\xfe');
      case 2:
        return send(res, 200, `{"objectClassName":"domain","ldhName":"${name}","status":${nested(random.pick([100, 10_000, 200_000]))}}`);
      case 3: {
        const many = Array.from({ length: 20_000 }, (_, i) => `s${i}`);
        return send(
          res,
          200,
          JSON.stringify({ objectClassName: 'domain', ldhName: name, status: many, nameservers: many.map((s) => ({ ldhName: `${s}.example.net` })) }),
        );
      }
      case 4: {
        res.writeHead(random.pick([301, 302, 303, 307, 308]), { location: random.pick(BAD_URLS), 'content-length': 0 });
        return res.end();
      }
      case 5:
        return send(
          res,
          200,
          Buffer.concat([Buffer.from(JSON.stringify(domainObject(random, name)).slice(0, -1)), Buffer.from(',"remarks":"\xe9\xff\xc3("}', 'latin1')]),
        );
      default:
        return send(res, random.chance(0.9) ? 200 : 404, JSON.stringify(domainObject(random, name)));
    }
  });
  return listen(server, (url) => ({ base: `${url}rdap/` }));
}

const WHOIS_SAMPLES = join(import.meta.dirname, '../fixtures/whois/whois');

export async function startHostileWhois(random: Random): Promise<{ address: string } & Closable> {
  const samples = readdirSync(WHOIS_SAMPLES).map((name) => readFileSync(join(WHOIS_SAMPLES, name)));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => {
      switch (random.int(10)) {
        case 0:
          return; // silence
        case 1:
          return void socket.end(); // closes without a word
        case 2:
          return void socket.end(random.bytes(random.int(4_096)));
        case 3: {
          const line = Buffer.from('Name Server: ns.example.net\r\nDomain Status: ok\r\n'.repeat(500));
          const pump = () => {
            while (!socket.destroyed && socket.write(line));
            if (!socket.destroyed) socket.once('drain', pump);
          };
          return pump();
        }
        case 4:
          return void socket.end(
            `Domain Name: x.xyz\r\nRegistrar WHOIS Server: ${random.pick(['127.0.0.1', '10.0.0.1', 'whois..example', '-', 'a'.repeat(300)])}\r\n`,
          );
        case 5:
          return void socket.end(Array.from({ length: 5_000 }, (_, i) => (i % 2 ? ' y' : `Registrar${i}`)).join('\n'));
        default: {
          // A real registry answer with a few bytes flipped.
          const sample = Buffer.from(random.pick(samples));
          for (let i = 0; i < random.int(20); i++) sample[random.int(sample.length)] = random.int(256);
          return void socket.end(sample);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** pwbreach's range API (`/range/{prefix}`) and riskscore's ipinfo (`/ipinfo/{ip}`) on one server. */
export async function startHostileHttp(random: Random): Promise<{ url: string } & Closable> {
  const server = createServer((req, res) => {
    if (misbehave(random, req, res)) return;
    if ((req.url ?? '').startsWith('/range/')) {
      const lines = Array.from({ length: random.int(50) }, () =>
        random.chance(0.7)
          ? `${random.bytes(18).toString('hex').toUpperCase().slice(0, 35)}:${random.pick(['1', '0', '-4', '99999999999999999999', 'x', ''])}`
          : random.bytes(random.int(60)).toString('latin1'),
      );
      return send(res, 200, lines.join(random.pick(['\r\n', '\n', '\r'])), 'text/plain');
    }
    const ipinfo = {
      ip: '8.8.8.8',
      country: random.pick(['US', '', 5, null]),
      loc: random.pick(['37.4,-122.0', 'x,y', '', 7]),
      org: random.pick(['AS15169 Google LLC', 'AS', '', {}]),
      privacy: random.chance(0.5) ? { vpn: true, proxy: 'yes', tor: null } : anyJson(random),
    };
    return send(res, 200, JSON.stringify(random.chance(0.6) ? ipinfo : anyJson(random)), 'application/json');
  });
  return listen(server, (url) => ({ url: url.replace(/\/$/, '') }));
}

/** `certificate` with its notBefore's 13 UTCTime bytes replaced (OpenSSL then prints `Bad time value`). */
export function withBrokenTime(certificate: TestCertificate, text = 'AAAAAAAAAAAAZ'): TestCertificate {
  const der = Buffer.from(certificate.der);
  // The validity: a SEQUENCE of 30 bytes holding two 13-byte UTCTimes. Two bytes alone (17 0d)
  // also turned up earlier, in the random serial number, in 2 of 3,000 certificates: the serial
  // was overwritten, and the certificate stayed valid.
  const at = der.indexOf(Buffer.from([0x30, 0x1e, 0x17, 0x0d]));
  if (at < 0) throw new Error('no UTCTime validity in the certificate');
  der.write(text, at + 4, 'latin1');
  const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  return { ...certificate, der, pem };
}

/** TLS servers right and wrong; `ports` are on 127.0.0.1. */
export async function startHostileTls(): Promise<{ ports: number[] } & Closable> {
  const servers: Closable[] = [];
  const ports: number[] = [];
  const add = (server: Closable & { port: number }) => {
    servers.push(server);
    ports.push(server.port);
  };
  add(await startTlsServer({ certificate: mintCertificate({ subject: 'good.fuzz.test', dnsNames: ['good.fuzz.test'] }) }));
  add(await startTlsServer({ certificate: withBrokenTime(mintCertificate({ subject: 'bad-time.fuzz.test' })) }));
  add(
    await startTlsServer({
      certificate: mintCertificate({
        subject: [
          { shortName: 'O', value: 'Odd, "Inc"\n\u0001' },
          { shortName: 'CN', value: '*.*.fuzz.test' },
        ],
        dnsNames: [...Array.from({ length: 500 }, (_, i) => `n${i}.fuzz.test`), 'a, b', 'x"y', ''],
        otherNames: [
          { type: 'ip', ip: '127.0.0.1' },
          { type: 'email', value: 'a@b' },
          { type: 'uri', value: 'javascript:alert(1)' },
        ],
        notBefore: new Date(Date.UTC(1950, 0, 1)),
        notAfter: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)),
      }),
    }),
  );
  add(await startTlsServer({ certificate: mintCertificate({ notBefore: new Date(Date.UTC(2030, 0, 1)), notAfter: new Date(Date.UTC(2020, 0, 1)) }) }));
  for (const behaviour of ['silent', 'garbage', 'banner', 'close', 'reset'] as HostileBehaviour[]) add(await startHostileServer(behaviour));
  // Garbage on the TCP connection once the handshake is done.
  const certificate = mintCertificate({ subject: 'garbage-after.fuzz.test' });
  const context = tls.createSecureContext({ cert: certificate.pem, key: certificate.key.pem });
  const sockets = new Set<net.Socket>();
  const garbage = net.createServer((raw) => {
    sockets.add(raw);
    raw.on('close', () => sockets.delete(raw));
    raw.on('error', () => {});
    const secure = new tls.TLSSocket(raw, { isServer: true, secureContext: context });
    secure.on('error', () => {});
    secure.once('secure', () => raw.write(Buffer.from('\u0000\u00ffHTTP/1.1 400 garbage\r\n\r\n'.repeat(50))));
  });
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  add({
    port: (garbage.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => garbage.close(() => resolve()));
    },
  });
  return { ports, close: async () => void (await Promise.all(servers.map((server) => server.close()))) };
}

async function listen<T>(server: ReturnType<typeof createServer>, shape: (url: string) => T): Promise<T & Closable> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    ...shape(url),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
