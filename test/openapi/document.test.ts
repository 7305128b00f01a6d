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
import { PRODUCT_IDS } from '../../src/products/catalog.js';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../../src/products/registry.js';
import { createApiStack } from '../api/harness.js';
import { runCli } from '../cli/harness.js';
import { DOCUMENT } from './check-response.js';

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
    const visit = (node: unknown, key?: string): void => {
      if (!node || typeof node !== 'object') return;
      if (key === 'schema') {
        const text = JSON.stringify(node).replaceAll('"#/components/schemas/', '"doc#/$defs/');
        ajv.compile(JSON.parse(text));
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
