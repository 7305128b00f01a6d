/**
 * The OpenAPI document: valid OpenAPI 3.1 (checked by a maintained validator), every schema a
 * valid JSON Schema 2020-12 (checked by ajv in strict mode), every route of the registry in it,
 * served at /v1/openapi.json without a key and printed by `seclookup openapi`.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';
import { BEYOND_SPEC, buildOpenApiDocument } from '../../src/openapi/document.js';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../../src/products/registry.js';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { createLookup } from '../../src/lookup.js';
import { PRODUCT_IDS, PRODUCTS } from '../../src/products/catalog.js';
import { createSiteKey } from '../../src/products/captcha/site-keys.js';
import { widgetDir } from '../../src/products/captcha/widget.js';
import { createMemoryReportStore } from '../../src/products/scamrisk/reports.js';
import { SOFT_SOURCES } from '../../src/products/scamrisk/types.js';
import { createApiStack, FROZEN_NOW, TEST_PLANS } from '../api/harness.js';
import { exchange, jsonOf } from '../adapters/raw-http.js';
import { runCli } from '../cli/harness.js';
import { checkResponse, DOCUMENT } from './check-response.js';

type Operation = { operationId: string; responses: Record<string, any>; security?: unknown[]; parameters?: any[]; [BEYOND_SPEC]?: boolean };
const operations = (): [string, string, Operation][] =>
  Object.entries(DOCUMENT.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, string, Operation] => [path, method, operation as Operation]),
  );

/** The error codes an operation lists, over all its statuses. */
function codesOf(operation: Operation): string[] {
  return Object.values(operation.responses).flatMap((response: any) => response.content?.['application/json']?.schema?.properties?.error_code?.enum ?? []);
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 by @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(DOCUMENT));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds only schemas that compile as JSON Schema 2020-12 in ajv strict mode', () => {
    const ajv = new Ajv2020({ strict: true });
    // ajv-formats is CommonJS: its default export arrives wrapped under ESM.
    (((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: 'doc', $defs: DOCUMENT.components.schemas });
    let compiled = 0;
    // Many routes hold the same schema (the error envelope, a shared result): each text is compiled once.
    const seen = new Set<string>();
    const visit = (node: unknown, key?: string): void => {
      if (!node || typeof node !== 'object') return;
      if (key === 'schema') {
        const text = JSON.stringify(node).replaceAll('"#/components/schemas/', '"doc#/$defs/');
        if (!seen.has(text)) ajv.compile(JSON.parse(text));
        seen.add(text);
        compiled += 1;
        return;
      }
      for (const [inner, value] of Object.entries(node)) visit(value, inner);
    };
    visit(DOCUMENT.paths);
    expect(compiled).toBeGreaterThan(100);
  });

  it('has every route of every product, each operation id once', () => {
    const ids = operations().map(([, , operation]) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of PRODUCT_IDS) expect(DOCUMENT.paths[`/v1/${id}/status`]?.get, id).toBeDefined();
    for (const module of PRODUCT_MODULES) {
      for (const route of [...module.routes, ...('extraRoutes' in module ? (module.extraRoutes ?? []) : [])]) {
        const path = `/v1/${module.id}/${route.path.replace(/:(\w+)/, '{$1}')}`;
        expect(DOCUMENT.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path}`).toBeDefined();
      }
    }
    for (const service of SERVICE_MODULES) {
      for (const route of service.routes)
        expect(DOCUMENT.paths[`/v1/${service.id}/${route.path}`]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('lists the shared codes on every lookup, and each code under its own status', () => {
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const code of response.content?.['application/json']?.schema?.properties?.error_code?.enum ?? []) {
          expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], `${method} ${path} ${code}`).toBe(Number(status));
        }
      }
      if (/\/lookup/.test(path)) {
        expect(codesOf(operation)).toEqual(
          expect.arrayContaining([
            'missing_credentials',
            'invalid_api_key',
            'wrong_key_type',
            'ip_not_allowed',
            'rate_limit_exceeded',
            'quota_exceeded',
            'internal_error',
          ]),
        );
        expect(operation.security).toEqual([{ bearer: [] }]);
        expect(operation.responses['429'].headers['Retry-After']).toBeDefined();
      }
    }
    // SPEC's product table, spot checks.
    expect(codesOf(DOCUMENT.paths['/v1/geoip/lookup'].get as Operation)).toEqual(
      expect.arrayContaining(['invalid_ip', 'ip_not_found', 'ip_not_routable', 'lookup_failed']),
    );
    expect(codesOf(DOCUMENT.paths['/v1/riskscore/lookup/{ip}'].get as Operation)).toContain('upstream_unconfigured');
    expect(codesOf(DOCUMENT.paths['/v1/useragent/lookup'].post as Operation)).toEqual(
      expect.arrayContaining(['invalid_user_agent', 'invalid_json', 'payload_too_large', 'unsupported_media_type']),
    );
  });

  it('marks the routes beyond the spec as ours', () => {
    const ours = operations()
      .filter(([, , operation]) => operation[BEYOND_SPEC])
      .map(([path, method]) => `${method.toUpperCase()} ${path}`);
    expect(ours).toEqual(expect.arrayContaining(['GET /healthz', 'GET /v1/openapi.json', 'GET /v1/pwbreach/range/{prefix}', 'GET /widget/{file}']));
    expect(ours.filter((route) => /\/lookup|\/status$|\/assess$/.test(route))).toEqual([]);
  });

  it('describes query and path parameters from the routes', () => {
    const query = (DOCUMENT.paths['/v1/webhookip/lookup'].get as Operation).parameters!;
    expect(query.map((p) => [p.name, p.in, p.required])).toEqual([
      ['ip', 'query', true],
      ['provider', 'query', false],
    ]);
    const pathForm = (DOCUMENT.paths['/v1/webhookip/lookup/{ip}'].get as Operation).parameters!;
    expect(pathForm.map((p) => [p.name, p.in, p.required])).toEqual([
      ['ip', 'path', true],
      ['provider', 'query', false],
    ]);
  });

  it("describes each batch input as the value itself, never with the query parameter's encoding", () => {
    const items = PRODUCT_MODULES.filter((module) => module.batch).map((module) => {
      const inputs = (DOCUMENT.paths[`/v1/${module.id}/batch`] as any).post.requestBody.content['application/json'].schema.properties.inputs;
      return [module.id, inputs.items] as const;
    });
    expect(items).toHaveLength(13);
    for (const [id, item] of items) {
      expect(item.type, id).toBe('string');
      expect(item.description, id).not.toMatch(/URL-encoded|query string|GET/);
    }
    const byId = Object.fromEntries(items);
    expect(byId.useragent.description).toMatch(/not percent-encoded/);
    expect(byId.emailval.description).toMatch(/a \+ is a plus/);
    expect(byId.pwbreach.pattern).toBe('^[0-9A-Fa-f]{40}$');
  });

  it("lists a batch item's error codes without those a batch cannot give (webhookip takes no provider in a batch)", () => {
    const itemCodes = (id: string) => {
      const ok = (DOCUMENT.paths[`/v1/${id}/batch`] as any).post.responses['200'].content['application/json'].schema.properties.results.items.oneOf;
      return ok[1].properties.error_code.enum as string[];
    };
    expect(itemCodes('webhookip')).toEqual(['internal_error', 'invalid_ip', 'ip_not_routable']);
    // The single lookup still lists it.
    expect(JSON.stringify((DOCUMENT.paths['/v1/webhookip/lookup'] as any).get.responses['400'])).toContain('invalid_provider');
    expect(itemCodes('geoip')).toContain('invalid_ip');
  });

  it('is served at GET /v1/openapi.json without a key (and HEAD); other methods are 405', async () => {
    const stack = await createApiStack();
    const reply = await stack.call('/v1/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    expect((await stack.call('/v1/openapi.json', { method: 'HEAD' })).status).toBe(200);
    const post = await stack.call('/v1/openapi.json', { method: 'POST', json: {} });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it("gives a batch route maxItems from the server's batchLimit", async () => {
    const batchItems = (doc: any) => doc.paths['/v1/geoip/batch'].post.requestBody.content['application/json'].schema.properties.inputs;
    expect(batchItems(DOCUMENT)).toMatchObject({ minItems: 1, maxItems: 100 });
    const stack = await createApiStack({ batchLimit: 7 });
    expect(batchItems((await stack.call('/v1/openapi.json')).body)).toMatchObject({ maxItems: 7 });
  });

  it('is printed by `seclookup openapi`', async () => {
    const result = await runCli(['openapi']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    const compact = await runCli(['openapi', '--compact']);
    expect(compact.stdout.trim().split('\n')).toHaveLength(1);
    expect((await runCli(['openapi', 'extra'])).code).toBe(2);
  });
});

/**
 * What the document says beside the body schemas: HEAD, headers (CORS, the widget's, the
 * limit headers only where they can be sent), parameters, fetched_at, the security of routes
 * taking a key elsewhere too, and request bodies exactly as strict as the server. Each answer
 * below also goes through checkResponse (the harness), headers included.
 */
describe('the OpenAPI document against the server', () => {
  const LIMIT = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Period', 'Retry-After'];
  const OFFLINE_SCAMRISK = { disable: [...SOFT_SOURCES] };

  it('says HEAD is answered on every GET operation, billed on lookups, without listing HEAD operations', async () => {
    const info = DOCUMENT.info as { description: string };
    expect(info.description).toMatch(/HEAD is answered on every GET operation/);
    expect(info.description).toMatch(/billed/);
    expect(operations().filter(([, method]) => method === 'head')).toEqual([]);
    const stack = await createApiStack();
    const { secretKey } = await stack.keys('useragent', { plan: TEST_PLANS.quota50.slug });
    const head = await stack.call('/v1/useragent/lookup?ua=curl/8.5.0', { key: secretKey, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.raw).toBe('');
    expect(head.headers['x-quota-remaining']).toBe('49');
  });

  it('declares the CORS headers of the captcha preflight and browser routes, and a preflight 204 has no Content-Type', async () => {
    const stack = await createApiStack();
    const key = await createSiteKey(stack.meter, { domains: ['example.com'] });
    const origin = { origin: 'https://example.com' };
    for (const route of ['challenge', 'verify', 'managed']) {
      const preflight = await stack.call(`/v1/captcha/${route}?sitekey=${key.siteKey}`, { method: 'OPTIONS', headers: origin });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['content-type']).toBeUndefined();
      expect(preflight.headers['access-control-allow-origin']).toBe('https://example.com');
      const declared = Object.keys((DOCUMENT.paths[`/v1/captcha/${route}`] as any).options.responses['204'].headers);
      expect(declared).toEqual(
        expect.arrayContaining([
          'Access-Control-Allow-Origin',
          'Access-Control-Allow-Methods',
          'Access-Control-Allow-Headers',
          'Access-Control-Max-Age',
          'Vary',
        ]),
      );
      expect(declared.filter((name) => LIMIT.includes(name))).toEqual([]);
      const refused = await stack.call(`/v1/captcha/${route}?sitekey=${key.siteKey}`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
      expect([refused.status, refused.headers.vary]).toEqual([403, 'Origin']);
    }
    const challenge = await stack.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=example.com`, { headers: origin });
    expect(challenge.status).toBe(200);
    expect([challenge.headers['access-control-allow-origin'], challenge.headers.vary]).toEqual(['https://example.com', 'Origin']);
    const refused = await stack.call(`/v1/captcha/challenge?sitekey=${key.siteKey}&hostname=evil.example`, { headers: origin });
    expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([403, 'https://example.com']);
  });

  it('declares the widget files: their content types, ETag, Cache-Control, CORP, CORS, and 304', async () => {
    const stack = await createApiStack();
    const seen = new Set<string>();
    for (const file of readdirSync(widgetDir())) {
      const reply = await stack.call(`/widget/${file}`);
      expect(reply.status, file).toBe(200);
      seen.add(reply.headers['content-type'].split(';')[0]);
      const again = await stack.call(`/widget/${file}`, { headers: { 'if-none-match': reply.headers.etag } });
      expect([again.status, again.raw], file).toEqual([304, '']);
    }
    expect([...seen].sort()).toEqual(['text/css', 'text/html', 'text/javascript']);
    expect((await stack.call('/widget/nope.js')).status).toBe(404);
    const responses = (DOCUMENT.paths['/widget/{file}'] as any).get.responses;
    expect(Object.keys(responses['200'].content).sort()).toEqual(['text/css', 'text/html', 'text/javascript']);
    expect(Object.keys(responses['200'].headers)).toEqual(
      expect.arrayContaining(['ETag', 'Cache-Control', 'Cross-Origin-Resource-Policy', 'Access-Control-Allow-Origin']),
    );
    expect(Object.keys(responses['404'].headers).filter((name) => LIMIT.includes(name))).toEqual([]);
  });

  it("gives tls's port no default: it is the host's :port when there is one, and another is 400", async () => {
    const port = (DOCUMENT.paths['/v1/tls/lookup'] as any).get.parameters.find((p: any) => p.name === 'port');
    expect(port.schema.default).toBeUndefined();
    expect(port.description).toMatch(/the port in host, else 443/);
    const stack = await createApiStack();
    const { secretKey } = await stack.keys('tls');
    const conflict = await stack.call('/v1/tls/lookup?host=example.com:8443&port=443', { key: secretKey });
    expect([conflict.status, conflict.body.error_code]).toEqual([400, 'invalid_host']);
  });

  it('requires fetched_at, YYYY-MM-DD HH:MM:SS.mmm, on the seven products that carry it', async () => {
    const schemas = DOCUMENT.components.schemas as Record<string, any>;
    for (const id of PRODUCT_IDS) {
      if (!PRODUCTS[id].hasFetchedAt) {
        expect(schemas[`${id}.Result`]?.properties?.fetched_at, id).toBeUndefined();
        continue;
      }
      for (const schema of [schemas[`${id}.Result`], schemas[`${id}.BatchItem`]]) {
        expect(schema.required, id).toContain('fetched_at');
        expect(schema.properties.fetched_at.pattern, id).toBeDefined();
      }
    }
    // Answers made offline (the harness checks each against the document, fetched_at included).
    const stack = await createApiStack();
    const emailval = await stack.keys('emailval');
    const invalid = await stack.call('/v1/emailval/lookup?email=not-an-email', { key: emailval.secretKey });
    expect(invalid.status).toBe(200);
    expect(String(invalid.body.fetched_at)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    const batch = await stack.call('/v1/emailval/batch', { key: emailval.secretKey, json: { inputs: ['not-an-email', 'a@'] } });
    expect(batch.status).toBe(200);
    const geoip = await stack.keys('geoip');
    expect((await stack.call('/v1/geoip/lookup?ip=8.8.8.8', { key: geoip.secretKey })).body.fetched_at).toMatch(/^\d{4}-/);
    expect(() => checkResponse({ ...seenOf(invalid, '/v1/emailval/lookup'), body: invalid.raw.replace(/,"fetched_at":"[^"]*"/, '') })).toThrow(/fetched_at/);
  });

  it("lists the Bearer scheme as an alternative on captcha's status and usage, which read it", async () => {
    for (const route of ['status', 'usage']) expect((DOCUMENT.paths[`/v1/captcha/${route}`] as any).get.security, route).toEqual([{}, { bearer: [] }]);
    for (const route of ['challenge', 'verify', 'managed', 'siteverify']) {
      const item = DOCUMENT.paths[`/v1/captcha/${route}`] as any;
      expect((item.get ?? item.post).security, route).toEqual([]);
    }
    const status = (DOCUMENT.paths['/v1/captcha/status'] as any).get.parameters;
    expect(status.find((p: any) => p.name === 'sitekey').description).toMatch(/tf_pub_.*tf_sec_/);
    const stack = await createApiStack();
    const key = await createSiteKey(stack.meter, { domains: ['example.com'] });
    for (const token of [key.siteKey, key.secretKey]) expect((await stack.call('/v1/captcha/status', { key: token })).status).toBe(200);
    expect((await stack.call(`/v1/captcha/status?sitekey=${key.secretKey}`)).status).toBe(200);
    expect((await stack.call('/v1/captcha/usage', { key: key.secretKey })).status).toBe(200);
    expect((await stack.call('/v1/captcha/usage', { key: key.siteKey })).body.error_code).toBe('wrong_key_type');
  });

  it('refuses exactly the request bodies the server refuses for their shape (scamrisk assess and report, pwbreach, useragent)', async () => {
    const lookup = createLookup({ now: () => FROZEN_NOW, scamrisk: { ...OFFLINE_SCAMRISK, reports: createMemoryReportStore() } });
    const stack = await createApiStack({ lookup });
    const ajv = new Ajv2020({ strict: false });
    const bodyOf = (path: string) => {
      const schema = (DOCUMENT.paths[path] as any).post.requestBody.content['application/json'].schema;
      return ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
    };
    ajv.addSchema(JSON.parse(JSON.stringify(DOCUMENT)), 'doc');
    const cases: [string, string, unknown[]][] = [
      [
        '/v1/scamrisk/assess',
        'scamrisk',
        [
          { type: 'username', value: 'someone' },
          { type: 'phone', value: '+14155550123', region: 'US' },
          { phone: '4155550123', region: 'US' },
          { username: 'someone' },
          { type: 'username', value: 'someone', extra: 1 },
          { type: 'username', value: 'someone', email: 'a@example.com' },
          { username: 'someone', email: 'a@example.com' },
          { username: 'someone', region: 'US' },
          { type: 'username', value: 'someone', region: 'US' },
          { type: 'username', value: '' },
          { username: '' },
          { type: 'nope', value: 'x' },
          { value: 'x' },
          {},
        ],
      ],
      [
        '/v1/scamrisk/report',
        'scamrisk',
        [
          { type: 'username', value: 'someone', category: 'scam' },
          { type: 'username', value: 'someone', category: 'scam', reporter: 'me', note: 'n' },
          { type: 'phone', value: '4155550123', category: 'scam', reporter: 'me', region: 'US' },
          { type: 'username', value: 'someone', category: 'scam', region: 'US' },
          { type: 'username', value: 'someone', category: 'scam', reporter: 'desk\nforged row' },
          { type: 'username', value: 'someone', category: 'scam', extra: true },
          { type: 'username', value: 'someone', category: 'scam', reporter: '   ' },
          { type: 'username', value: 'someone', category: 'nope' },
          { type: 'username', value: '', category: 'scam' },
        ],
      ],
      [
        '/v1/pwbreach/lookup',
        'pwbreach',
        [
          { password: 'hunter2' },
          { sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8' },
          { password: 'hunter2', sha1: '' },
          { password: null, sha1: '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8' },
          { password: 'hunter2', other: 1 },
          { password: 'hunter2', sha1: '5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8' },
          { sha1: 'abc' },
          { password: '' },
          { password: 5 },
          {},
        ],
      ],
      [
        '/v1/useragent/lookup',
        'useragent',
        [{ ua: 'curl/8.5.0' }, { user_agent: 'curl/8.5.0', other: 1 }, { ua: '', user_agent: 'curl/8.5.0' }, { ua: '' }, {}],
      ],
    ];
    for (const [path, product, bodies] of cases) {
      const { secretKey } = await stack.keys(product as never, { plan: TEST_PLANS.quota50.slug });
      const validate = bodyOf(path);
      for (const body of bodies) {
        const reply = await stack.call(path, { key: secretKey, json: body });
        expect({ path, body, valid: validate(body) }).toEqual({ path, body, valid: reply.status === 200 });
      }
    }
  });

  it("lists bad_request under every route's own 400, and answers Node's parser refuses match the document (a lookup and a batch route)", async () => {
    for (const [path, method, operation] of operations()) {
      const listed = operation.responses['400']?.content['application/json'].schema.properties.error_code.enum;
      if (listed) expect(listed, `${method} ${path}`).toContain('bad_request');
      expect(operation.responses.default, `${method} ${path}`).toBeDefined();
    }
    const stack = await createApiStack();
    const server = handleClientErrors(createServer(createListener(stack.api)), stack.api);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { secretKey } = await stack.keys('geoip');
      const badHeader = `Authorization: Bearer ${secretKey}\r\nX-Note: a\x01b\r\n`;
      const cases: [string, string, string, number, string][] = [
        ['GET', '/v1/geoip/lookup', `GET /v1/geoip/lookup?ip=8.8.8.8 HTTP/1.1\r\nHost: test\r\n${badHeader}\r\n`, 400, 'bad_request'],
        ['POST', '/v1/geoip/batch', `POST /v1/geoip/batch HTTP/1.1\r\nHost: test\r\n${badHeader}Content-Length: 2\r\n\r\n{}`, 400, 'bad_request'],
        // A status the route does not list: the answer is the default response's.
        [
          'GET',
          '/v1/geoip/lookup',
          `GET /v1/geoip/lookup?ip=8.8.8.8 HTTP/1.1\r\nHost: test\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
          431,
          'request_header_fields_too_large',
        ],
      ];
      for (const [method, path, bytes, status, code] of cases) {
        const [answer] = (await exchange(port, bytes)).responses;
        expect([answer?.status, jsonOf(answer).error_code], `${method} ${path}`).toEqual([status, code]);
        checkResponse({ method, path, status: answer.status, contentType: answer.headers['content-type'], headers: answer.headers, body: answer.body });
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('takes a status missing from an operation only from default, and there only a refusal of the parser', () => {
    const refusal = (status: number, code: string) => ({
      method: 'GET',
      path: '/healthz',
      status,
      contentType: 'application/json; charset=utf-8',
      headers: { 'x-request-id': 'req_1' },
      body: JSON.stringify({ success: false, error: 'refused', error_code: code, request_id: 'req_1' }),
    });
    expect(() => checkResponse(refusal(400, 'bad_request'))).not.toThrow();
    expect(() => checkResponse(refusal(408, 'request_timeout'))).not.toThrow();
    expect(() => checkResponse(refusal(400, 'invalid_ip'))).toThrow(/status not documented/);
    expect(() => checkResponse(refusal(422, 'ip_not_routable'))).toThrow(/status not documented/);
  });

  it('declares limit headers only on answers that can carry them: never on 401, on 403 ip_not_allowed, on a preflight or on the widget', () => {
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const codes: string[] = response.content?.['application/json']?.schema?.properties?.error_code?.enum ?? [];
        const early = status === '401' || (codes.length > 0 && codes.every((code) => code === 'ip_not_allowed'));
        if (early || method === 'options' || path === '/widget/{file}' || path === '/healthz' || path === '/v1/openapi.json')
          expect(
            Object.keys(response.headers ?? {}).filter((name) => LIMIT.includes(name)),
            `${method} ${path} ${status}`,
          ).toEqual([]);
      }
    }
    // A 400 of siteverify may be a bad body (before the key: no limit headers) or a bad token (after: with them).
    expect(Object.keys((DOCUMENT.paths['/v1/captcha/siteverify'] as any).post.responses['400'].headers)).toContain('X-RateLimit-Limit');
    expect(Object.keys((DOCUMENT.paths['/v1/geoip/lookup'] as any).get.responses['200'].headers)).toContain('X-RateLimit-Limit');
  });
});

function seenOf(reply: { status: number; headers: Record<string, string>; raw: string }, path: string) {
  return { method: 'GET', path, status: reply.status, contentType: reply.headers['content-type'], headers: reply.headers, body: reply.raw };
}
