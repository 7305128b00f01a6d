/**
 * Checks a real answer of the API against the OpenAPI document: the route must list the
 * status, the content type, and the body must validate against the route's schema with every
 * object closed (a field the code sends but the document lacks fails, as does a missing one).
 * The conformance suite and the API harness call it on every answer they see.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document.js';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

type Schema = Record<string, unknown>;

export const DOCUMENT: OpenApiDocument = buildOpenApiDocument();
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
ajv.addKeyword('example');

/** Path templates as regular expressions, fixed paths first (so `/v1/x/lookup` is never taken for a template); a path value may be empty, as the router allows. */
const ROUTES = Object.keys(DOCUMENT.paths)
  .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
  .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '.*')}$`) }));

const compiled = new Map<unknown, ValidateFunction>();

function validator(schema: Schema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(closed(resolve(schema)))));
  return validate;
}

/** Inline `#/components/...` references (the document has no recursive ones). */
function resolve(value: unknown): any {
  if (Array.isArray(value)) return value.map(resolve);
  if (!value || typeof value !== 'object') return value;
  const ref = (value as Schema).$ref;
  if (typeof ref === 'string') {
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<any>((node, key) => node?.[key], DOCUMENT);
    if (!target) throw new Error(`unresolved ${ref}`);
    return resolve(target);
  }
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, resolve(inner)]));
}

/** Every object schema with listed properties and no word on others refuses others. */
function closed(value: any): any {
  if (Array.isArray(value)) return value.map(closed);
  if (!value || typeof value !== 'object') return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, closed(inner)]));
  if (copy.properties && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

export interface SeenResponse {
  method: string;
  /** The request path, without the query. */
  path: string;
  status: number;
  contentType: string | null;
  body: string;
}

/** Throws, naming the route and what differs, when the answer is not what the document says. */
export function checkResponse(seen: SeenResponse): void {
  // Paths outside the API are the application's (an adapter passes them on).
  if (!/^\/(v1\/|healthz$|widget\/)/.test(seen.path)) return;
  const method = seen.method.toUpperCase();
  const where = `${method} ${seen.path} -> ${seen.status}`;
  const route = ROUTES.find(({ pattern }) => pattern.test(seen.path));
  const operation = route ? (DOCUMENT.paths[route.template] as Record<string, any>)[method === 'HEAD' ? 'get' : method.toLowerCase()] : undefined;
  if (!operation) {
    // No such route or method: the generic envelope with the generic codes.
    const expected = route ? 405 : 404;
    if (seen.status !== expected && !(method === 'OPTIONS' && !route))
      throw new Error(`${where}: the document has no such operation, so ${expected} was expected`);
    if (method !== 'HEAD') checkBody(DOCUMENT.components.schemas.ErrorEnvelope as Schema, seen, where);
    return;
  }
  const response = operation.responses[String(seen.status)];
  if (!response) throw new Error(`${where}: status not documented for ${route!.template} (documented: ${Object.keys(operation.responses).join(', ')})`);
  if (method === 'HEAD' || !response.content) return;
  const type = (seen.contentType ?? '').split(';')[0].trim();
  const media = response.content[type];
  if (!media) throw new Error(`${where}: content type ${type} not documented (documented: ${Object.keys(response.content).join(', ')})`);
  if (type === 'application/json') checkBody(media.schema, seen, where);
}

function checkBody(schema: Schema, seen: SeenResponse, where: string): void {
  let body: unknown;
  try {
    body = JSON.parse(seen.body);
  } catch {
    throw new Error(`${where}: body is not JSON: ${seen.body.slice(0, 200)}`);
  }
  const validate = validator(schema);
  if (!validate(body)) {
    const problems = (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
    throw new Error(`${where}: body does not match the document:\n  ${problems.join('\n  ')}\n${seen.body.slice(0, 800)}`);
  }
}
