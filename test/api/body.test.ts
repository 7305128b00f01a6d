import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseBody, readRawBody } from '../../src/api/body.js';
import { LookupError } from '../../src/errors.js';

const json = { 'content-type': 'application/json' };

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LookupError);
  return (error as LookupError).code;
}

describe('request bodies', () => {
  it('parses JSON objects from bytes, text and streams', async () => {
    expect(await parseBody('{"ua":"x"}', json, 100)).toEqual({ ua: 'x' });
    expect(await parseBody(Buffer.from('{"ua":"y"}'), json, 100)).toEqual({ ua: 'y' });
    expect(await parseBody(Readable.from([Buffer.from('{"ua":'), Buffer.from('"z"}')]), json, 100)).toEqual({ ua: 'z' });
  });

  it('treats a body without Content-Type as JSON and an empty body as no fields', async () => {
    expect(await parseBody('{"a":1}', {}, 100)).toEqual({ a: 1 });
    expect(await parseBody(undefined, json, 100)).toEqual({});
  });

  it('parses HTML form bodies', async () => {
    expect(await parseBody('ua=Mozilla%2F5.0&x=1', { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, 100)).toEqual({
      ua: 'Mozilla/5.0',
      x: '1',
    });
  });

  it('uses a body a framework already parsed', async () => {
    expect(await parseBody({ parsed: { ua: 'p' } }, json, 100)).toEqual({ ua: 'p' });
  });

  it('rejects malformed JSON and non-object JSON with invalid_json', async () => {
    expect(await codeOf(parseBody('{"ua":', json, 100))).toBe('invalid_json');
    expect(await codeOf(parseBody('[1,2]', json, 100))).toBe('invalid_json');
    expect(await codeOf(parseBody('"text"', json, 100))).toBe('invalid_json');
  });

  it('refuses a JSON null as any other non-object, and keeps an empty body as no fields', async () => {
    expect(await codeOf(parseBody('null', json, 100))).toBe('invalid_json');
    expect(await codeOf(parseBody(' null ', {}, 100))).toBe('invalid_json');
    expect(await codeOf(parseBody({ parsed: null }, json, 100))).toBe('invalid_json');
    expect(await codeOf(parseBody({ parsed: 123 }, json, 100))).toBe('invalid_json');
    // No bytes at all, sent or parsed: no fields, as before.
    expect(await parseBody('', json, 100)).toEqual({});
    expect(await parseBody(Buffer.alloc(0), {}, 100)).toEqual({});
    expect(await parseBody({ parsed: undefined }, json, 100)).toEqual({});
  });

  it('reads a repeated form field as its first non-empty value, as a repeated query parameter', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(await parseBody('password=123456&password=x', form, 100)).toEqual({ password: '123456' });
    expect(await parseBody('ua=&ua=curl%2F8&ua=wget&x=1&x=', form, 100)).toEqual({ ua: 'curl/8', x: '1' });
    expect(await parseBody('ua=&ua=', form, 100)).toEqual({ ua: '' });
    // Names that are also Object.prototype's own are fields like any other.
    expect(await parseBody('constructor=a&constructor=b&__proto__=c', form, 100)).toEqual(
      Object.fromEntries([
        ['constructor', 'a'],
        ['__proto__', 'c'],
      ]),
    );
  });

  it("reads a form parser's repeated fields (arrays) as their first non-empty value, without changing its object", async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
    const parsed = { password: ['', '123456', 'x'], ua: 'curl/8', empty: ['', ''], nested: [{ a: '1' }] };
    expect(await parseBody({ parsed }, form, 1000)).toEqual({ password: '123456', ua: 'curl/8', empty: '', nested: [{ a: '1' }] });
    expect(parsed.password).toEqual(['', '123456', 'x']);
    // A JSON array is a value, not a repeated field.
    expect(await parseBody({ parsed: { inputs: ['', 'a'] } }, json, 1000)).toEqual({ inputs: ['', 'a'] });
  });

  it('holds a body a framework parsed to the limit by its declared length', async () => {
    const parsed = { ua: 'x' };
    expect(await codeOf(parseBody({ parsed }, { ...json, 'content-length': '101' }, 100))).toBe('payload_too_large');
    expect(await parseBody({ parsed }, { ...json, 'content-length': '100' }, 100)).toEqual(parsed);
  });

  it('holds a parsed chunked or inflated body to the limit by its content, never refusing one that fit', async () => {
    const big = { ua: 'x'.repeat(200) };
    // No Content-Length (chunked): the bytes of its keys and strings are counted.
    expect(await codeOf(parseBody({ parsed: big }, json, 100))).toBe('payload_too_large');
    expect(await codeOf(parseBody({ parsed: { inputs: Array(60).fill('ab') } }, json, 100))).toBe('payload_too_large');
    // '{"ua":"<95 x>"}' is 104 bytes as JSON; its content, 97, is what is held to the limit.
    const near = { ua: 'x'.repeat(95) };
    expect(await parseBody({ parsed: near }, json, 100)).toEqual(near);
    // A compressed body's declared length counts compressed bytes: its content is counted too.
    expect(await codeOf(parseBody({ parsed: big }, { ...json, 'content-length': '40', 'content-encoding': 'gzip' }, 100))).toBe('payload_too_large');
    expect(await parseBody({ parsed: big }, { ...json, 'content-length': '40', 'content-encoding': 'identity' }, 100)).toEqual(big);
    // Nested far deeper than a recursive walk could go: counted (one byte a level) without overflowing.
    let deep: unknown = 'end';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(await codeOf(parseBody({ parsed: { deep } }, json, 100_000))).toBe('payload_too_large');
    expect((await parseBody({ parsed: { deep } }, json, 1_000_000)).deep).toBe(deep);
  });

  it('rejects other media types with unsupported_media_type', async () => {
    expect(await codeOf(parseBody('ua', { 'content-type': 'text/plain' }, 100))).toBe('unsupported_media_type');
    expect(await codeOf(parseBody('ua', { 'content-type': 'application/jsonx' }, 100))).toBe('unsupported_media_type');
  });

  it('holds to its media types on a body an app parser read for any type (express.json({ type: "*/*" }))', async () => {
    expect(await codeOf(parseBody({ parsed: { ua: 'curl' } }, { 'content-type': 'text/plain' }, 100))).toBe('unsupported_media_type');
    expect(await parseBody({ parsed: { ua: 'curl' } }, { 'content-type': 'application/json' }, 100)).toEqual({ ua: 'curl' });
  });

  it('refuses a compressed body it would read as its compressed bytes with unsupported_media_type, not invalid_json', async () => {
    const gzipped = gzipSync('{"ua":"curl"}');
    expect(await codeOf(parseBody(gzipped, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, 100))).toBe('unsupported_media_type');
    expect(await codeOf(parseBody(gzipped, { 'content-type': 'application/json', 'content-encoding': ' GZIP ' }, 100))).toBe('unsupported_media_type');
    expect(await parseBody('{"ua":"curl"}', { 'content-type': 'application/json', 'content-encoding': 'identity' }, 100)).toEqual({ ua: 'curl' });
  });

  it('reads JSON under any spelling of its media type: parameters, case, spaces, +json', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', ' application/json ;x=1', 'application/problem+json']) {
      expect(await parseBody('{"a":1}', { 'content-type': type }, 100), type).toEqual({ a: 1 });
    }
  });

  it('refuses an oversized declared length before reading, and an oversized stream while reading', async () => {
    let pulled = 0;
    const endless = (async function* () {
      for (;;) {
        pulled++;
        yield Buffer.alloc(64);
      }
    })();
    expect(await codeOf(readRawBody(endless, undefined, 1000))).toBe('payload_too_large');
    expect(pulled).toBe(16); // stopped right after crossing 1000 bytes, not at the end of the stream
    expect(await codeOf(readRawBody(Readable.from([]), '5000', 1000))).toBe('payload_too_large');
    expect(await codeOf(readRawBody('x'.repeat(1001), undefined, 1000))).toBe('payload_too_large');
  });

  // Node streams (an IncomingMessage) are read by their events, not an async iterator.
  it('reads a Node stream to its end, and stops one over the limit as soon as it passes it', async () => {
    const chunks = [Buffer.from('ab'), 'cd', Buffer.from('ef')];
    expect(
      (
        await readRawBody(
          new Readable({
            read() {
              this.push(chunks.shift() ?? null);
            },
          }),
          undefined,
          6,
        )
      ).toString(),
    ).toBe('abcdef');

    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled++;
        this.push(Buffer.alloc(64));
      },
    });
    expect(await codeOf(readRawBody(endless, undefined, 1000))).toBe('payload_too_large');
    expect(endless.destroyed).toBe(true);
    // A read may already be under way when the limit is passed, never more.
    expect(pulled).toBeLessThanOrEqual(17);
    expect((await readRawBody(Readable.from([]), undefined, 10)).length).toBe(0);
  });

  it('refuses a Node stream that fails or closes before its end with client_closed_request', async () => {
    const failing = new Readable({ read() {} });
    const failed = codeOf(readRawBody(failing, undefined, 100));
    failing.push('{"a":');
    failing.destroy(new Error('socket hang up'));
    expect(await failed).toBe('client_closed_request');

    const cut = new Readable({ read() {} });
    const closed = codeOf(readRawBody(cut, undefined, 100));
    cut.push('{"a":');
    cut.destroy();
    expect(await closed).toBe('client_closed_request');
    // Already gone before the read began.
    expect(await codeOf(readRawBody(cut, undefined, 100))).toBe('client_closed_request');
  });

  it('keeps a body read whole when its stream closes or fails afterwards, as an answered request does', async () => {
    // Not destroyed at its end, as a request is not until its answer is written.
    const whole = new Readable({ read() {}, autoDestroy: false });
    const read = readRawBody(whole, undefined, 100);
    whole.push('{"a":1}');
    whole.push(null);
    const bytes = await read;
    // The stream's end settles the read; a later close or error changes nothing and is not abandoned.
    whole.emit('close');
    expect(whole.destroyed).toBe(false);
    whole.destroy(new Error('socket closed after the answer'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(bytes.toString()).toBe('{"a":1}');
    expect(await parseBody(Readable.from([Buffer.from('{"b":2}')]), json, 100)).toEqual({ b: 2 });
  });
});
