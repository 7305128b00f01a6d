/**
 * siteverify takes multipart/form-data, as Turnstile's does: Cloudflare's own server-side
 * example posts a FormData. Text fields only, within the body limit; a body that does not parse
 * or holds a file is 400 in siteverify's Turnstile format, never 500. The other POST routes keep
 * their media types (415). Through a real loopback server, with fetch() building the bodies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListener } from '../../adapters/node.js';
import { MAX_MULTIPART_PARTS } from '../../src/api/body.js';
import { createApiStack, type ApiStack } from '../api/harness.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { solvePow, type PowParams } from '../../src/products/captcha/puzzles/pow.js';

const HOST = 'shop.example.com';

let stack: ApiStack;
let server: Server;
let url: string;

beforeAll(async () => {
  stack = await createApiStack();
  server = createServer(createListener(stack.api));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const newSiteKey = () => createSiteKey(stack.meter, { domains: ['example.com'] });

/** A site key, and a proof for it from a solved pow challenge. */
async function siteKeyAndProof(): Promise<{ siteKey: string; secretKey: string; proof: string }> {
  const key = await newSiteKey();
  const challenge = await stack.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=${HOST}`);
  const token = `${challenge.body.challenge}.${solvePow(challenge.body.params as PowParams)}`;
  const verified = await stack.call('/v1/captcha/verify', { json: { sitekey: key.siteKey, hostname: HOST, token } });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  return { ...key, proof: String(verified.body.proof) };
}

function formOf(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

async function post(path: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', ...init });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('captcha siteverify: multipart/form-data', () => {
  it('a FormData of secret and response (Cloudflare example) verifies the proof once', async () => {
    const { secretKey, proof } = await siteKeyAndProof();
    const first = await post('/v1/captcha/siteverify', { body: formOf({ secret: secretKey, response: proof, remoteip: '203.0.113.9' }) });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ success: true, hostname: HOST, 'error-codes': [] });
    const replay = await post('/v1/captcha/siteverify', { body: formOf({ secret: secretKey, response: proof }) });
    expect([replay.status, replay.body.error_code, replay.body['error-codes']]).toEqual([400, 'token_already_used', ['timeout-or-duplicate']]);
  });

  it('its fields are checked as any body: a bad remoteip and a bad idempotency_key are 400 bad-request', async () => {
    const { secretKey } = await newSiteKey();
    const proof = 'checked-after-the-fields';
    const badIp = await post('/v1/captcha/siteverify', { body: formOf({ secret: secretKey, response: proof, remoteip: 'nope' }) });
    expect([badIp.status, badIp.body.error_code, badIp.body['error-codes']]).toEqual([400, 'invalid_request', ['bad-request']]);
    const badKey = await post('/v1/captcha/siteverify', { body: formOf({ secret: secretKey, response: proof, idempotency_key: 'x' }) });
    expect([badKey.status, badKey.body['error-codes']]).toEqual([400, ['bad-request']]);
  });

  it.each([
    ['a body that is no multipart at all', 'multipart/form-data; boundary=xyz', 'garbage'],
    ['a part cut short', 'multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="secret"\r\n\r\ntf_sec_'],
    ['no boundary', 'multipart/form-data', '--xyz\r\nContent-Disposition: form-data; name="secret"\r\n\r\nx\r\n--xyz--\r\n'],
  ])('%s: 400 invalid_request with Turnstile error-codes, not 500', async (_name, contentType, body) => {
    const reply = await post('/v1/captcha/siteverify', { headers: { 'content-type': contentType }, body });
    expect([reply.status, reply.body.success, reply.body.error_code, reply.body['error-codes']]).toEqual([400, false, 'invalid_request', ['bad-request']]);
    expect(reply.body.error).toBe('request body is not valid multipart/form-data');
  });

  it('a file part is refused: 400 bad-request, the proof unspent', async () => {
    const { secretKey, proof } = await siteKeyAndProof();
    const form = formOf({ secret: secretKey, response: proof });
    form.append('upload', new Blob(['data']), 'a.txt');
    const reply = await post('/v1/captcha/siteverify', { body: form });
    expect([reply.status, reply.body.error_code, reply.body['error-codes']]).toEqual([400, 'invalid_request', ['bad-request']]);
    expect(reply.body.error).toBe('multipart part "upload" is a file: send text fields only');
    const again = await post('/v1/captcha/siteverify', { body: formOf({ secret: secretKey, response: proof }) });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it(`more than ${MAX_MULTIPART_PARTS} parts (a thousand empty files, 40-60 ms for the parser) are refused before the parser runs; ${MAX_MULTIPART_PARTS} verify`, async () => {
    const { secretKey, proof } = await siteKeyAndProof();
    const files = '--b\r\nContent-Disposition: form-data; name="a"; filename="x"\r\n\r\n\r\n'.repeat(1_000);
    const many = await post('/v1/captcha/siteverify', { headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: `${files}--b--\r\n` });
    expect([many.status, many.body.error_code, many.body['error-codes']]).toEqual([400, 'invalid_request', ['bad-request']]);
    // The part limit, not the parser's refusal of a file: the parser never ran.
    expect(many.body.error).toBe(`a multipart body may have at most ${MAX_MULTIPART_PARTS} parts`);
    const form = formOf({ secret: secretKey, response: proof });
    for (let i = 2; i < MAX_MULTIPART_PARTS; i++) form.append(`extra${i}`, 'x');
    const atTheLimit = await post('/v1/captcha/siteverify', { body: form });
    expect(atTheLimit.status, JSON.stringify(atTheLimit.body)).toBe(200);
    form.append('one-more', 'x');
    expect((await post('/v1/captcha/siteverify', { body: form })).body.error).toBe(`a multipart body may have at most ${MAX_MULTIPART_PARTS} parts`);
  });

  it('a multipart body over the body limit is 413 with Turnstile error-codes', async () => {
    const reply = await post('/v1/captcha/siteverify', { body: formOf({ secret: 'tf_sec_x', response: 'A'.repeat(70_000) }) });
    expect([reply.status, reply.body.error_code, reply.body['error-codes']]).toEqual([413, 'payload_too_large', ['bad-request']]);
  });

  it('multipart fields an app parser read before the API (multer, `{ parsed }`) verify too', async () => {
    const { secretKey, proof } = await siteKeyAndProof();
    const headers = { 'content-type': 'multipart/form-data; boundary=xyz' };
    const reply = await stack.call('/v1/captcha/siteverify', { headers, body: { parsed: { secret: secretKey, response: [proof, 'second'] } } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.success).toBe(true);
  });

  it('the other POST routes still refuse multipart: 415 unsupported_media_type', async () => {
    const { siteKey } = await newSiteKey();
    const verify = await post('/v1/captcha/verify', { body: formOf({ sitekey: siteKey, hostname: HOST, token: 'x.1' }) });
    expect([verify.status, verify.body.error_code]).toEqual([415, 'unsupported_media_type']);
    const ua = await stack.keys('useragent');
    const lookup = await post('/v1/useragent/lookup', { headers: { authorization: `Bearer ${ua.secretKey}` }, body: formOf({ ua: 'curl/8' }) });
    expect([lookup.status, lookup.body.error_code]).toEqual([415, 'unsupported_media_type']);
  });
});
