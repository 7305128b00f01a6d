/**
 * Each built product's HTTP request forms (SPEC's tables), tried once through `api.handle`:
 * every form reaches the engine with the same input, and each product's input errors come out
 * with the spec's codes. The adapter conformance suite covers the transport.
 */
import { describe, expect, it } from 'vitest';
import { createApiStack } from '../api/harness.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CHROME_RESULT = {
  user_agent: CHROME,
  browser: { name: 'Chrome', version: '131.0.0.0' },
  os: { name: 'Windows', version: '10' },
  device_type: 'desktop',
  is_bot: false,
  engine: 'Blink',
};
const GITHUB = { id: 'github', name: 'GitHub' };

const stack = await createApiStack();
const ua = await stack.keys('useragent');
const hooks = await stack.keys('webhookip');

describe('useragent forms', () => {
  it.each([
    ['GET ?ua=', `/v1/useragent/lookup?ua=${encodeURIComponent(CHROME)}`, {}],
    ['GET ?user_agent=', `/v1/useragent/lookup?user_agent=${encodeURIComponent(CHROME)}`, {}],
    ['GET ?ua= empty then ?user_agent=', `/v1/useragent/lookup?ua=&user_agent=${encodeURIComponent(CHROME)}`, {}],
    ['GET ?ua= empty then ?ua=', `/v1/useragent/lookup?ua=&ua=${encodeURIComponent(CHROME)}`, {}],
    ['GET ?user_agent= before ?ua= (the first given wins)', `/v1/useragent/lookup?user_agent=${encodeURIComponent(CHROME)}&ua=curl/8`, {}],
    ['GET /lookup/{ua}', `/v1/useragent/lookup/${encodeURIComponent(CHROME)}`, {}],
    ['GET /lookup/?ua= (a trailing slash)', `/v1/useragent/lookup/?ua=${encodeURIComponent(CHROME)}`, {}],
    ['POST JSON ua', '/v1/useragent/lookup', { json: { ua: CHROME } }],
    ['POST JSON user_agent', '/v1/useragent/lookup', { json: { user_agent: CHROME } }],
    ['POST JSON empty ua then user_agent', '/v1/useragent/lookup', { json: { ua: '', user_agent: CHROME } }],
    ['POST form', '/v1/useragent/lookup', { body: `ua=${encodeURIComponent(CHROME)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
  ])('%s parses the User-Agent', async (_form, path, options) => {
    const reply = await stack.call(path, { key: ua.secretKey, ...options });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, ...CHROME_RESULT });
    expect(typeof reply.body.cached).toBe('boolean');
    expect(reply.body).not.toHaveProperty('fetched_at');
  });

  it.each([
    ['no parameter', '/v1/useragent/lookup', {}],
    ['an empty ua', '/v1/useragent/lookup?ua=', {}],
    ['both empty', '/v1/useragent/lookup?ua=&user_agent=', {}],
    ['whitespace only', '/v1/useragent/lookup?ua=%20%09', {}],
    ['a non-string in JSON', '/v1/useragent/lookup', { json: { ua: 7 } }],
    ['an empty JSON object', '/v1/useragent/lookup', { json: {} }],
    ['broken percent-encoding in the path', '/v1/useragent/lookup/Mozilla%E0%A4%A', {}],
    ['percent-encoded bytes that are not UTF-8 in the path', '/v1/useragent/lookup/%FF%FE', {}],
  ])('answers 400 invalid_user_agent to %s', async (_name, path, options) => {
    const reply = await stack.call(path, { key: ua.secretKey, ...options });
    expect([reply.status, reply.body.error_code]).toEqual([400, 'invalid_user_agent']);
    if (path.includes('/lookup/')) expect(reply.body.error).toBe('the path value is not valid percent-encoded UTF-8');
  });
});

describe('webhookip forms', () => {
  it.each([
    ['GET ?ip=', '/v1/webhookip/lookup?ip=140.82.112.5', '140.82.112.5'],
    ['GET /lookup/{ip}', '/v1/webhookip/lookup/140.82.112.5', '140.82.112.5'],
    ['GET ?ip= empty then ?ip=', '/v1/webhookip/lookup?ip=&ip=140.82.112.5', '140.82.112.5'],
    ['GET /lookup/?ip= (a trailing slash)', '/v1/webhookip/lookup/?ip=140.82.112.5', '140.82.112.5'],
    ['GET /lookup/{IPv6, encoded}', `/v1/webhookip/lookup/${encodeURIComponent('2a0a:a440::1')}`, '2a0a:a440::1'],
    ['GET ?ip= IPv4-mapped IPv6', `/v1/webhookip/lookup?ip=${encodeURIComponent('::ffff:140.82.112.5')}`, '140.82.112.5'],
  ])('%s matches GitHub', async (_form, path, ip) => {
    const reply = await stack.call(path, { key: hooks.secretKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: true, request_id: reply.body.request_id, cached: false, ip, matched: true, providers: [GITHUB] });
  });

  it('restricts matching with ?provider= on both forms', async () => {
    for (const path of ['/v1/webhookip/lookup?ip=140.82.112.5&provider=stripe', '/v1/webhookip/lookup/140.82.112.5?provider=stripe']) {
      expect((await stack.call(path, { key: hooks.secretKey })).body).toMatchObject({ matched: false, providers: [] });
    }
    expect((await stack.call('/v1/webhookip/lookup?ip=140.82.112.5&provider=stripe,GitHub', { key: hooks.secretKey })).body).toMatchObject({ matched: true });
    // An empty first copy does not drop the restriction given after it (nor read as "every provider").
    expect((await stack.call('/v1/webhookip/lookup?ip=140.82.112.5&provider=&provider=stripe', { key: hooks.secretKey })).body).toMatchObject({
      matched: false,
      providers: [],
    });
  });

  it.each([
    ['no ip', '/v1/webhookip/lookup', 400, 'invalid_ip'],
    ['a malformed ip', '/v1/webhookip/lookup?ip=1.2.3', 400, 'invalid_ip'],
    ['an unknown provider', '/v1/webhookip/lookup?ip=140.82.112.5&provider=nosuch', 400, 'invalid_provider'],
    ['a private ip', '/v1/webhookip/lookup?ip=10.0.0.1', 422, 'ip_not_routable'],
    ['an IPv6 loopback in the path', `/v1/webhookip/lookup/${encodeURIComponent('::1')}`, 422, 'ip_not_routable'],
  ])('answers %s with %i %s, unbilled', async (_name, path, status, code) => {
    const before = await stack.meter.quota(hooks.subscriptionId, 10_000, Date.now());
    const reply = await stack.call(path, { key: hooks.secretKey });
    expect([reply.status, reply.body.error_code]).toEqual([status, code]);
    expect(await stack.meter.quota(hooks.subscriptionId, 10_000, Date.now())).toEqual(before);
  });
});
