/**
 * The wire decoder against an independent encoder (dns2's Packet), on random messages, and on
 * random garbage: it must decode what dns2 writes, and reject anything else with WireError,
 * quickly, never with another exception.
 */
import dns2 from 'dns2';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeQuery, RECORD_TYPES, WireError } from '../../../src/lib/dns/wire.js';

const { Packet } = dns2;

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
const name = fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join('.'));
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
const record = fc.oneof(
  fc.record({ kind: fc.constant('A' as const), name, ttl: fc.nat(100_000), address: ipv4 }),
  fc.record({ kind: fc.constant('MX' as const), name, ttl: fc.nat(100_000), priority: fc.nat(65_535), exchange: name }),
  fc.record({
    kind: fc.constant('TXT' as const),
    name,
    ttl: fc.nat(100_000),
    data: fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('CNAME' as const), name, ttl: fc.nat(100_000), target: name }),
);

type Generated = typeof record extends fc.Arbitrary<infer R> ? R : never;

function toDns2(r: Generated) {
  const base = { name: r.name, class: Packet.CLASS.IN, ttl: r.ttl };
  switch (r.kind) {
    case 'A':
      return { ...base, type: Packet.TYPE.A, address: r.address };
    case 'MX':
      return { ...base, type: Packet.TYPE.MX, priority: r.priority, exchange: r.exchange };
    case 'TXT':
      return { ...base, type: Packet.TYPE.TXT, data: r.data };
    case 'CNAME':
      return { ...base, type: Packet.TYPE.CNAME, domain: r.target };
  }
}

function expected(r: Generated) {
  const data = r.kind === 'A' ? r.address : r.kind === 'MX' ? { priority: r.priority, exchange: r.exchange } : r.kind === 'TXT' ? r.data : r.target;
  return { name: r.name, type: RECORD_TYPES[r.kind], ttl: r.ttl, data };
}

describe('wire decoder', () => {
  it('decodes every message dns2 encodes, name compression included', () => {
    fc.assert(
      fc.property(fc.nat(65_535), name, fc.array(record, { maxLength: 6 }), fc.boolean(), fc.nat(5), (id, qname, records, truncated, rcode) => {
        const packet = new Packet();
        packet.header.id = id;
        packet.header.qr = 1;
        packet.header.tc = truncated ? 1 : 0;
        packet.header.rcode = rcode;
        // dns2's typings want class instances; its encoder takes plain objects.
        packet.questions.push({ name: qname, type: Packet.TYPE.TXT, class: Packet.CLASS.IN } as never);
        packet.answers.push(...(records.map(toDns2) as never[]));
        const message = decodeMessage(packet.toBuffer());
        expect(message).toEqual({ id, truncated, rcode, question: { name: qname, type: RECORD_TYPES.TXT }, answers: records.map(expected), authorities: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('rejects random bytes with WireError only, and quickly', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        try {
          decodeMessage(Buffer.from(bytes));
        } catch (error) {
          expect(error).toBeInstanceOf(WireError);
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('rejects a name pointer that loops, and one that points forwards', () => {
    const query = encodeQuery(7, 'a.test', RECORD_TYPES.A);
    const looping = Buffer.from(query);
    looping[2] |= 0x80; // QR: a response
    looping.writeUInt16BE(0xc00c, 12); // the question name points at itself
    expect(() => decodeMessage(looping)).toThrow(WireError);
  });

  it('encodes a query dns2 reads back as one question with recursion desired and EDNS0', () => {
    const query = Packet.parse(encodeQuery(4242, 'Example.TEST', RECORD_TYPES.MX));
    expect(query.header).toMatchObject({ id: 4242, qr: 0, rd: 1, qdcount: 1, arcount: 1 });
    expect(query.questions[0]).toMatchObject({ name: 'Example.TEST', type: Packet.TYPE.MX, class: Packet.CLASS.IN });
    expect(query.additionals[0]).toMatchObject({ type: Packet.TYPE.EDNS, class: 1232 });
  });
});
