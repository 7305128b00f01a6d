/**
 * A real authoritative DNS server on 127.0.0.1 (UDP and TCP on the same random port) for tests of
 * DNS code: answers from an in-memory zone, or misbehaves on purpose (silent, SERVFAIL, REFUSED,
 * truncation, wrong ids, garbage, slowness). No test may reach the internet's DNS; use this.
 *
 * dns2 is used only for the wire format; the sockets are ours so that ids, flags and truncation are
 * under our control. Whatever the behaviour (silent excepted), a malformed query (not one question,
 * not opcode QUERY, counts that overrun the message) gets a bare FORMERR/NOTIMP header at once, and
 * fewer than 12 bytes get nothing.
 *
 * @example
 * const server = await startDnsServer({ zone: EMAIL_ZONE });
 * const resolver = new Resolver();
 * resolver.setServers([server.address]);
 * await resolver.resolveMx('example.test');
 * server.setBehaviour('servfail');
 * await server.close();
 */
import { randomBytes, randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;
type DnsPacket = InstanceType<typeof Packet>;
type Resource = DnsPacket['answers'][number];

export type DnsRecord =
  | { type: 'A' | 'AAAA'; address: string; ttl?: number }
  | { type: 'MX'; exchange: string; priority: number; ttl?: number }
  /** A string over 255 bytes is split into 255-byte character-strings on the wire. */
  | { type: 'TXT'; data: string | string[]; ttl?: number }
  | { type: 'CNAME' | 'NS' | 'PTR'; target: string; ttl?: number };

/** Records by owner name (case-insensitive, no trailing dot), e.g. { 'example.com': [{ type: 'MX', ... }] }. */
export type Zone = Record<string, DnsRecord[]>;

export type DnsBehaviour =
  /**
   * Authoritative answers (AA=1, RA=0). NXDOMAIN (rcode 3, SOA in authority) for names absent from
   * the zone with no zone name below them; NODATA (rcode 0, no answers, SOA in authority) for names
   * present without the asked type, and for empty non-terminals (`_domainkey.example.test` when
   * `s1._domainkey.example.test` exists, RFC 8020). CNAME chains are followed within the zone (answer
   * holds the CNAME records then the target's records; a chain ending on an absent name is NXDOMAIN,
   * RFC 6604; a loop is SERVFAIL). Over UDP an answer larger than the client's EDNS payload size (512
   * without EDNS) is sent truncated (TC=1, no records), as a real server would.
   */
  | 'normal'
  /** Receives and counts queries, never answers (UDP and TCP). */
  | 'silent'
  /** Answers rcode 2 (UDP and TCP). */
  | 'servfail'
  /** Answers rcode 5 (UDP and TCP). */
  | 'refused'
  /** Over UDP answers TC=1 with no records; over TCP answers normally. */
  | 'truncate'
  /** Answers over UDP with a different query id (and never with the right one); over TCP normally. */
  | 'wrong-id'
  /**
   * Answers UDP with 1 to 64 random bytes; TCP: a length prefix then such bytes. The first two bytes
   * are the query's id (so a client cannot drop it by id alone) and, from 12 bytes on, the question
   * count is over 65280 (so no strict parser can accept it).
   */
  | 'garbage'
  /** Answers normally after `delayMs` (default 500), UDP and TCP. */
  | 'slow'
  /**
   * As 'normal', but a CNAME loop in the zone is answered with the loop's records (`a CNAME b`,
   * `b CNAME a`, NOERROR), as a broken authoritative server sends it, instead of SERVFAIL.
   */
  | 'loop-answer';

export interface DnsServerOptions {
  zone?: Zone;
  behaviour?: DnsBehaviour;
  /** Delay of the 'slow' behaviour, in ms: 500. */
  delayMs?: number;
  /** Default TTL when a record has none: 300. */
  defaultTtl?: number;
  /** Negative-caching SOA minimum: 60. */
  negativeTtl?: number;
  /**
   * Behaviours for names at or under a suffix (`{ 'multi.surbl.org': 'silent' }`), winning over
   * `behaviour` for those names: one zone can be silent or broken while the others answer.
   */
  behaviours?: Record<string, DnsBehaviour>;
}

export interface DnsTestServer {
  /** `127.0.0.1:PORT`, the form the resolver takes. */
  address: string;
  port: number;
  /** Queries received, by `NAME TYPE` (lower-case name, no trailing dot, type mnemonic), UDP and TCP together. */
  queries: Map<string, number>;
  /** Queries received over TCP only, same keys. */
  tcpQueries: Map<string, number>;
  /** Total queries received (well-formed ones: a malformed query gets FORMERR and is not counted). */
  total(): number;
  /** Answers the 'slow' behaviour holds, not sent yet. */
  delayedAnswers(): number;
  /** Forget every query counted so far (`queries`, `tcpQueries`, `total()`). */
  resetCounts(): void;
  /** Replace the zone or behaviour between tests. */
  setZone(zone: Zone): void;
  /** `delayMs` sets the 'slow' delay; left out, the previous delay stays. */
  setBehaviour(behaviour: DnsBehaviour, delayMs?: number): void;
  /** Replace the per-suffix behaviours (see DnsServerOptions.behaviours). */
  setBehaviours(behaviours: Record<string, DnsBehaviour>): void;
  close(): Promise<void>;
}

const DEFAULT_TTL = 300;
const NEGATIVE_TTL = 60;
const DEFAULT_DELAY_MS = 500;
const MAX_CNAME_CHAIN = 16;
/** RFC 1035 4.2.1: the UDP payload limit for a client that sent no EDNS OPT record. */
const CLASSIC_UDP_LIMIT = 512;
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const TYPE_OPT = 41;

// ---------------------------------------------------------------------------------------------
// The server

export async function startDnsServer(options: DnsServerOptions = {}): Promise<DnsTestServer> {
  const settings = {
    zone: normalizeZone(options.zone ?? {}),
    behaviour: options.behaviour ?? ('normal' as DnsBehaviour),
    delayMs: options.delayMs ?? DEFAULT_DELAY_MS,
    defaultTtl: options.defaultTtl ?? DEFAULT_TTL,
    negativeTtl: options.negativeTtl ?? NEGATIVE_TTL,
    behaviours: normalizeBehaviours(options.behaviours),
  };
  const queries = new Map<string, number>();
  const tcpQueries = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const connections = new Set<net.Socket>();
  const { udp, tcp, port } = await bindSamePort();

  function count(query: DnsPacket, transport: 'udp' | 'tcp'): void {
    const key = queryKey(query.questions[0]);
    queries.set(key, (queries.get(key) ?? 0) + 1);
    if (transport === 'tcp') tcpQueries.set(key, (tcpQueries.get(key) ?? 0) + 1);
  }

  /** Decide the reply to one message; undefined means say nothing. */
  function reply(message: Buffer, transport: 'udp' | 'tcp'): { bytes: Buffer; delayMs: number } | undefined {
    const query = parseQuery(message);
    if (!query) return settings.behaviour === 'silent' ? undefined : formatError(message);
    count(query, transport);
    const now = (bytes: Buffer) => ({ bytes, delayMs: 0 });
    switch (behaviourFor(settings, query.questions[0]!.name)) {
      case 'silent':
        return undefined;
      case 'servfail':
        return now(finish(query, errorResponse(query, RCODE.SERVFAIL)));
      case 'refused':
        return now(finish(query, errorResponse(query, RCODE.REFUSED)));
      case 'garbage':
        return now(garbage(query.header.id));
      case 'truncate':
        if (transport === 'udp') return now(finish(query, truncated(query)));
        break;
      case 'wrong-id':
        if (transport === 'udp') return now(withOtherId(answerFromZone(query, settings, transport)));
        break;
      case 'slow':
        return { bytes: answerFromZone(query, settings, transport), delayMs: settings.delayMs };
      case 'loop-answer':
        return now(answerFromZone(query, { ...settings, loopAnswers: true }, transport));
    }
    return now(answerFromZone(query, settings, transport));
  }

  /** Run `send` now, or later for the slow behaviour (a timer that close() cancels). */
  function schedule(delayMs: number, send: () => void): void {
    if (delayMs <= 0) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, delayMs);
    timers.add(timer);
  }

  udp.on('message', (message, peer) => {
    const answer = reply(message, 'udp');
    if (answer) schedule(answer.delayMs, () => udp.send(answer.bytes, peer.port, peer.address, () => {}));
  });

  tcp.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => {}); // a client resetting the connection is not our failure
    socket.on(
      'data',
      readFrames((message) => {
        const answer = reply(message, 'tcp');
        if (answer) schedule(answer.delayMs, () => socket.writable && socket.write(frame(answer.bytes)));
      }),
    );
  });

  let closing: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    tcpQueries,
    total: () => [...queries.values()].reduce((sum, n) => sum + n, 0),
    delayedAnswers: () => timers.size,
    resetCounts() {
      queries.clear();
      tcpQueries.clear();
    },
    setZone(zone) {
      settings.zone = normalizeZone(zone);
    },
    setBehaviour(behaviour, delayMs) {
      settings.behaviour = behaviour;
      if (delayMs !== undefined) settings.delayMs = delayMs;
    },
    setBehaviours(behaviours) {
      settings.behaviours = normalizeBehaviours(behaviours);
    },
    close() {
      closing ??= closeAll(udp, tcp, connections, timers);
      return closing;
    },
  };
}

/** Per-suffix behaviours, longest suffix first. */
function normalizeBehaviours(behaviours: Record<string, DnsBehaviour> = {}): [string, DnsBehaviour][] {
  return Object.entries(behaviours)
    .map(([suffix, behaviour]): [string, DnsBehaviour] => [canonical(suffix), behaviour])
    .sort((a, b) => b[0].length - a[0].length);
}

/** The behaviour for a question name: the longest matching suffix's, else the server's. */
function behaviourFor(settings: { behaviour: DnsBehaviour; behaviours: [string, DnsBehaviour][] }, name: string): DnsBehaviour {
  const key = canonical(name);
  for (const [suffix, behaviour] of settings.behaviours) if (key === suffix || key.endsWith(`.${suffix}`)) return behaviour;
  return settings.behaviour;
}

// ---------------------------------------------------------------------------------------------
// Sockets

/** UDP on a random port, then TCP on the same one; retry with a new UDP port if TCP's is taken. */
async function bindSamePort(attempts = 5): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => {
        udp.off('error', reject);
        resolve();
      });
    });
    udp.on('error', () => {}); // e.g. ICMP port unreachable for a reply to a client that left
    const port = udp.address().port;
    const tcp = net.createServer({ noDelay: true });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, tcp, port };
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= attempts) throw error;
    }
  }
}

/**
 * A `data` listener that reassembles RFC 1035 4.2.2 frames (2-byte length, then the message) from
 * reads that may hold part of a frame or several frames, and calls `onMessage` for each.
 */
export function readFrames(onMessage: (message: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 2) {
      const length = pending.readUInt16BE(0);
      if (pending.length < 2 + length) break;
      const message = pending.subarray(2, 2 + length);
      pending = pending.subarray(2 + length);
      onMessage(message);
    }
  };
}

/** Prefix a message with its 2-byte length for TCP. */
export function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}

async function closeAll(udp: dgram.Socket, tcp: net.Server, connections: Set<net.Socket>, timers: Set<NodeJS.Timeout>) {
  for (const timer of timers) clearTimeout(timer);
  timers.clear();
  for (const socket of connections) socket.destroy(); // silent/slow connections would keep tcp.close() waiting
  await Promise.all([
    new Promise<void>((resolve) => udp.close(() => resolve())),
    new Promise<void>((resolve, reject) => tcp.close((error) => (error ? reject(error) : resolve()))),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Messages

/**
 * Whether the header's record counts fit in the message (a question takes at least 5 bytes, a
 * record 11). Checked before dns2's Packet.parse, which tries every announced record and swallows
 * each failure: 64 random bytes announcing ~200 000 records block it for one to two seconds.
 */
export function countsFit(message: Buffer): boolean {
  if (message.length < 12) return false;
  const records = message.readUInt16BE(6) + message.readUInt16BE(8) + message.readUInt16BE(10);
  return 12 + 5 * message.readUInt16BE(4) + 11 * records <= message.length;
}

/**
 * The query if `message` is one we can answer: dns2's Packet.parse throws only when the header is
 * short and silently drops records it cannot decode, so the counts are checked here.
 */
function parseQuery(message: Buffer): DnsPacket | undefined {
  if (!countsFit(message)) return undefined;
  let packet: DnsPacket;
  try {
    packet = Packet.parse(message);
  } catch {
    return undefined;
  }
  const header = packet.header;
  if (header.qr !== 0 || header.opcode !== 0 || header.qdcount !== 1 || packet.questions.length !== 1) return undefined;
  return packet;
}

/**
 * FORMERR (NOTIMP for an opcode other than QUERY) for a message with a readable header, as a bare
 * header (RFC 1035 4.1.1); nothing for shorter junk, nor for a response (that would start a loop).
 */
function formatError(message: Buffer): { bytes: Buffer; delayMs: number } | undefined {
  if (message.length < 12 || (message[2]! & 0x80) !== 0) return undefined;
  const opcode = (message[2]! >> 3) & 0x0f;
  const bytes = Buffer.alloc(12);
  message.copy(bytes, 0, 0, 2); // id
  bytes[2] = 0x80 | (message[2]! & 0x79); // QR, then the query's opcode and RD
  bytes[3] = opcode === 0 ? RCODE.FORMERR : RCODE.NOTIMP;
  return { bytes, delayMs: 0 };
}

/** `name TYPE` for the counters: lower case, no trailing dot, mnemonic (or RFC 3597 `TYPE123`). */
function queryKey(question: { name: string; type: number }): string {
  const name = question.name.toLowerCase().replace(/\.$/, '') || '.';
  return `${name} ${typeName(question.type)}`;
}

const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, code]) => [code, name]));
TYPE_NAMES.set(TYPE_OPT, 'OPT'); // dns2 calls it EDNS

function typeName(code: number): string {
  return TYPE_NAMES.get(code) ?? `TYPE${code}`;
}

/** A response to `query` with the header flags of an authoritative, non-recursive server. */
function emptyResponse(query: DnsPacket, rcode: number): DnsPacket {
  const response = Packet.createResponseFromRequest(query);
  response.header.aa = 1;
  response.header.ra = 0;
  response.header.rcode = rcode;
  return response;
}

function errorResponse(query: DnsPacket, rcode: number): DnsPacket {
  const response = emptyResponse(query, rcode);
  response.header.aa = 0;
  return response;
}

function truncated(query: DnsPacket): DnsPacket {
  const response = emptyResponse(query, RCODE.NOERROR);
  response.header.tc = 1;
  return response;
}

/** Echo an OPT record when the client sent one (RFC 6891 6.1.1), then encode. */
function finish(query: DnsPacket, response: DnsPacket): Buffer {
  if (ednsPayloadSize(query) !== undefined) {
    response.additionals.push({ name: '', type: TYPE_OPT, class: 1232, ttl: 0, rdata: [] } as unknown as Resource);
  }
  return response.toBuffer();
}

/** The UDP payload size the client advertised in its OPT record, if it sent one. */
function ednsPayloadSize(query: DnsPacket): number | undefined {
  const opt = query.additionals.find((record) => record?.type === TYPE_OPT);
  return opt ? opt.class : undefined;
}

function withOtherId(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeUInt16BE((bytes.readUInt16BE(0) + randomInt(1, 0x10000)) & 0xffff, 0);
  return copy;
}

/** Random bytes that no strict DNS parser accepts, but that carry the query's id. */
function garbage(id: number): Buffer {
  const bytes = randomBytes(randomInt(1, 65));
  if (bytes.length >= 2) bytes.writeUInt16BE(id, 0);
  if (bytes.length >= 6) bytes[4] = 0xff; // QDCOUNT >= 0xff00: far more questions than bytes
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Answers from the zone

type ZoneIndex = Map<string, DnsRecord[]>;
interface ZoneSettings {
  zone: ZoneIndex;
  defaultTtl: number;
  negativeTtl: number;
  /** A CNAME loop is answered with its records ('loop-answer'), else SERVFAIL. */
  loopAnswers?: boolean;
}

/** The normal answer as bytes: TC=1 and no records over UDP if it does not fit the client's limit. */
function answerFromZone(query: DnsPacket, settings: ZoneSettings, transport: 'udp' | 'tcp'): Buffer {
  const bytes = finish(query, lookup(query, settings));
  if (transport === 'tcp') return bytes;
  const limit = Math.max(CLASSIC_UDP_LIMIT, ednsPayloadSize(query) ?? 0);
  return bytes.length > limit ? finish(query, truncated(query)) : bytes;
}

/** Resolve the question within the zone, following CNAMEs. */
function lookup(query: DnsPacket, settings: ZoneSettings): DnsPacket {
  const question = query.questions[0]!;
  const wantsCname = question.type === Packet.TYPE.CNAME;
  const response = emptyResponse(query, RCODE.NOERROR);
  const seen = new Set<string>();
  let name = question.name; // owner names keep the asker's spelling
  for (;;) {
    const key = canonical(name);
    const records = settings.zone.get(key);
    if (!records) {
      if (!hasNameBelow(settings.zone, key)) response.header.rcode = RCODE.NXDOMAIN;
      return withNegativeSoa(response, name, settings);
    }
    const matching = records.filter((record) => question.type === Packet.TYPE.ANY || typeCode(record) === question.type);
    const cname = records.find((record) => record.type === 'CNAME');
    if (matching.length || !cname || wantsCname) {
      response.answers.push(...matching.map((record) => toResource(name, record, settings.defaultTtl)));
      return matching.length ? response : withNegativeSoa(response, name, settings);
    }
    response.answers.push(toResource(name, cname, settings.defaultTtl));
    seen.add(key);
    name = (cname as { target: string }).target;
    if (seen.has(canonical(name)) && settings.loopAnswers) return response;
    if (seen.has(canonical(name)) || seen.size >= MAX_CNAME_CHAIN) return errorResponse(query, RCODE.SERVFAIL);
  }
}

/** Whether some zone name lies below `name`, which then exists as an empty non-terminal. */
function hasNameBelow(zone: ZoneIndex, name: string): boolean {
  const suffix = `.${name}`;
  for (const owner of zone.keys()) if (owner.endsWith(suffix)) return true;
  return false;
}

/** Add the SOA whose TTL tells resolvers how long to cache the negative answer (RFC 2308 3, 5). */
function withNegativeSoa(response: DnsPacket, name: string, settings: ZoneSettings): DnsPacket {
  const apex = zoneApex(settings.zone, canonical(name));
  response.authorities.push({
    name: apex,
    type: Packet.TYPE.SOA,
    class: Packet.CLASS.IN,
    ttl: Math.min(settings.defaultTtl, settings.negativeTtl),
    primary: `ns1.${apex}`,
    admin: `hostmaster.${apex}`,
    serial: 2024010101,
    refresh: 7200,
    retry: 3600,
    expiration: 1209600,
    minimum: settings.negativeTtl,
  } as Resource);
  return response;
}

/** The nearest name at or above `name` with NS records, else its last two labels. */
function zoneApex(zone: ZoneIndex, name: string): string {
  const labels = name.split('.');
  for (let i = 0; i < labels.length; i++) {
    const candidate = labels.slice(i).join('.');
    if (zone.get(candidate)?.some((record) => record.type === 'NS')) return candidate;
  }
  return labels.slice(-2).join('.');
}

function typeCode(record: DnsRecord): number {
  return Packet.TYPE[record.type];
}

/** One zone record as a dns2 resource (dns2's field names differ by type). */
function toResource(owner: string, record: DnsRecord, defaultTtl: number): Resource {
  const base = { name: owner, type: typeCode(record), class: Packet.CLASS.IN, ttl: record.ttl ?? defaultTtl };
  switch (record.type) {
    case 'A':
    case 'AAAA':
      return { ...base, address: record.address } as Resource;
    case 'MX':
      return { ...base, exchange: record.exchange, priority: record.priority } as Resource;
    case 'TXT':
      return { ...base, data: characterStrings(record.data) } as unknown as Resource;
    case 'NS':
      return { ...base, ns: record.target } as Resource;
    case 'CNAME':
    case 'PTR':
      return { ...base, domain: record.target } as Resource;
  }
}

/**
 * TXT data as <character-string>s of at most 255 bytes (RFC 1035 3.3.14): dns2 writes each given
 * string's length into one byte, so a longer one would be corrupted rather than split.
 */
function characterStrings(data: string | string[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (const text of Array.isArray(data) ? data : [data]) {
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length === 0) chunks.push(bytes);
    for (let start = 0; start < bytes.length; start += 255) chunks.push(bytes.subarray(start, start + 255));
  }
  return chunks;
}

function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Index the zone by canonical name and reject records dns2 would encode wrongly, with a clear message. */
function normalizeZone(zone: Zone): ZoneIndex {
  const index: ZoneIndex = new Map();
  for (const [owner, records] of Object.entries(zone)) {
    const name = canonical(owner);
    const list = index.get(name) ?? [];
    for (const record of records) list.push(checkRecord(name, record));
    index.set(name, list);
  }
  return index;
}

function checkRecord(owner: string, record: DnsRecord): DnsRecord {
  const fail = (why: string) => new Error(`dns-server zone: ${owner} ${record.type}: ${why}`);
  switch (record.type) {
    case 'A':
      if (!net.isIPv4(record.address)) throw fail(`not an IPv4 address: ${record.address}`);
      return record;
    case 'AAAA':
      if (!net.isIPv6(record.address)) throw fail(`not an IPv6 address: ${record.address}`);
      // dns2 cannot encode the dotted form (::ffff:192.0.2.1); the URL parser rewrites it in hex groups
      return { ...record, address: new URL(`http://[${record.address}]`).hostname.slice(1, -1) };
    case 'MX':
      if (!Number.isInteger(record.priority) || record.priority < 0 || record.priority > 0xffff) throw fail(`bad priority ${record.priority}`);
      return record;
    case 'TXT':
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return record;
    default:
      throw fail('unsupported record type');
  }
}

export { DKIM_KEYS, EMAIL_ZONE } from './email-zone.js';
