/**
 * A DNS server on 127.0.0.1 (UDP and TCP, one port) that answers every question with a random
 * mix of right and wrong: good answers (addresses, blocklist codes, SPF/DMARC/DKIM and Team
 * Cymru TXT, MX, PTR), and hostile ones: a wrong id, a packet cut short, TC=1 then garbage over
 * TCP, records of another type, a huge TXT, RDATA whose length lies, flipped bits, any RCODE,
 * counts that overrun the message, a compression pointer to itself, a CNAME to itself, another
 * question, or silence. For the fuzz run (test/fuzz); test/servers/dns-server.ts is the exact
 * server unit tests use.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import type { Random } from './random.js';

export interface HostileDnsServer {
  /** `127.0.0.1:PORT`, as the resolver takes it. */
  address: string;
  /** Questions answered (or ignored), UDP and TCP. */
  questions(): number;
  close(): Promise<void>;
}

const TYPE = { A: 1, NS: 2, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28 } as const;

interface Question {
  id: number;
  /** The question section's bytes (name, type, class). */
  section: Buffer;
  type: number;
}

function readQuestion(message: Buffer): Question | null {
  if (message.length < 17) return null;
  let at = 12;
  while (at < message.length && message[at] !== 0) at += message[at] + 1;
  if (at + 5 > message.length) return null;
  return { id: message.readUInt16BE(0), section: message.subarray(12, at + 5), type: message.readUInt16BE(at + 1) };
}

function encodeName(name: string): Buffer {
  const parts = name
    .split('.')
    .filter(Boolean)
    .map((label) => Buffer.concat([Buffer.from([Math.min(label.length, 63)]), Buffer.from(label.slice(0, 63), 'latin1')]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

function txt(strings: Buffer[]): Buffer {
  return Buffer.concat(strings.flatMap((s) => [Buffer.from([Math.min(s.length, 255)]), s.subarray(0, 255)]));
}

const TEXTS = [
  'v=spf1 include:_spf.example.net ~all',
  'v=spf1 -all',
  'v=spf1 redirect=',
  'v=spf1 ip4:999.1.1.1/99 mx:%{ -all all all',
  'v=DMARC1; p=reject; rua=mailto:a@b',
  'v=DMARC1; p=; pct=-5; sp=quarantine;;;',
  'v=DMARC1',
  'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC',
  'v=DKIM1; p=',
  '15169 | 8.8.8.0/24 | US | arin | 1992-12-01',
  '15169 | 8.8.8.0/24 | US | arin |',
  '| | | |',
  '4294967296 | 1.2.3.4/99 | ZZZ | x | 9999-99-99',
  'AS15169 | US | arin | 2000-03-30 | GOOGLE, US',
  '',
];

/** One well-formed answer record for `type` (pointer 0xC00C to the question's name). */
function goodRecord(random: Random, type: number): Buffer {
  let rdata: Buffer;
  switch (type) {
    case TYPE.A:
      rdata = Buffer.from(random.chance(0.5) ? [127, random.pick([0, 0, 255]), random.int(256), random.int(256)] : [203, 0, 113, random.int(256)]);
      break;
    case TYPE.AAAA:
      rdata = random.bytes(16);
      break;
    case TYPE.TXT:
      rdata = txt(random.chance(0.8) ? [Buffer.from(random.pick(TEXTS), 'latin1')] : [random.bytes(random.int(255)), random.bytes(random.int(255))]);
      break;
    case TYPE.MX:
      rdata = Buffer.concat([
        Buffer.from([0, random.int(50)]),
        encodeName(random.pick(['mx.example.net', 'localhost', '.', 'a'.repeat(63) + '.b', '127.0.0.1'])),
      ]);
      break;
    default:
      rdata = encodeName(random.pick(['host.example.net', 'dynamic-1-2-3-4.isp.example', 'xn--zz.example', '']));
  }
  return record(type, rdata, random.int(86_400));
}

function record(type: number, rdata: Buffer, ttl: number, name = Buffer.from([0xc0, 0x0c])): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(ttl >>> 0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([name, fixed, rdata]);
}

function header(id: number, flags: number, counts: [number, number, number, number]): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(flags, 2);
  counts.forEach((count, i) => out.writeUInt16BE(count, 4 + i * 2));
  return out;
}

const RESPONSE = 0x8000 | 0x0400 | 0x0100; // QR, AA, RD

/** One answer to `question`, right or wrong; null for silence. */
function answer(random: Random, question: Question, overTcp: boolean): Buffer | null {
  const good = (count = 1 + random.int(3)) => Array.from({ length: count }, () => goodRecord(random, question.type));
  const message = (records: Buffer[], flags = RESPONSE, id = question.id, section = question.section) =>
    Buffer.concat([header(id, flags, [1, records.length, 0, 0]), section, ...records]);
  switch (random.int(18)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return message(good());
    case 4:
      return message([], RESPONSE | 3); // NXDOMAIN
    case 5:
      return message([]); // NODATA
    case 6:
      return message(good(), RESPONSE, question.id ^ 0x5a5a); // wrong id
    case 7: {
      const whole = message(good());
      return whole.subarray(0, random.int(whole.length)); // cut short
    }
    case 8:
      return overTcp ? random.bytes(random.int(64)) : message([], RESPONSE | 0x0200); // TC=1, then garbage over TCP
    case 9:
      return message(good().map(() => goodRecord(random, random.pick(Object.values(TYPE))))); // other types
    case 10: {
      const strings = Array.from({ length: overTcp ? 200 : 40 }, () => random.bytes(255));
      return message([record(TYPE.TXT, txt(strings), 60)]); // huge TXT
    }
    case 11: {
      const rdata = random.bytes(random.int(40));
      const lying = record(question.type, rdata, 60);
      lying.writeUInt16BE(random.int(65_536), 10); // RDLENGTH that lies
      return message([lying]);
    }
    case 12: {
      const whole = message(good());
      for (let i = 0; i < 1 + random.int(6); i++) whole[random.int(whole.length)] ^= 1 << random.int(8);
      return whole; // flipped bits
    }
    case 13:
      return message(random.chance(0.5) ? good() : [], RESPONSE | random.int(16)); // any RCODE
    case 14: {
      const whole = message(good(1));
      whole.writeUInt16BE(1 + random.int(65_535), 6); // ANCOUNT overruns the message
      return whole;
    }
    case 15: {
      const at = 12 + question.section.length;
      return message([record(question.type, Buffer.from([1, 2, 3, 4]), 60, Buffer.from([0xc0 | (at >> 8), at & 0xff]))]); // a name that points to itself
    }
    case 16:
      return random.chance(0.5)
        ? message([record(TYPE.CNAME, Buffer.from([0xc0, 0x0c]), 60)])
        : message(good(), RESPONSE, question.id, Buffer.concat([encodeName('other.example'), question.section.subarray(question.section.length - 4)]));
    default:
      return null; // silence
  }
}

/** UDP gets a free port, TCP takes the same one: rarely taken already, then try another. */
export async function startHostileDnsServer(random: Random): Promise<HostileDnsServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(random);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

async function startOnce(random: Random): Promise<HostileDnsServer> {
  let questions = 0;
  const udp = dgram.createSocket('udp4');
  udp.on('message', (message, peer) => {
    const question = readQuestion(message);
    if (!question) return;
    questions++;
    const reply = answer(random, question, false);
    if (reply) udp.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const port = udp.address().port;

  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const question = readQuestion(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
        buffered = buffered.subarray(2 + buffered.readUInt16BE(0));
        if (!question) continue;
        questions++;
        const reply = answer(random, question, true);
        if (!reply) continue;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(random.chance(0.1) ? random.int(65_536) : Math.min(reply.length, 65_535));
        socket.write(Buffer.concat([length, reply]));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', (error) => {
      udp.close();
      reject(error);
    });
    tcp.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${port}`,
    questions: () => questions,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
}
