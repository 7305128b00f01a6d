/**
 * Checks a real answer of the API against the OpenAPI document: the route must list the
 * status, the content type, and the body must validate against the route's schema with every
 * object closed (a field the code sends but the document lacks fails, as does a missing one).
 * Its headers too: each of the API's own headers it carries must be declared on that response,
 * and each header declared `required` must be there.
 * The conformance suite and the API harness call it on every answer they see.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors.js';
import { buildOpenApiDocument, type OpenApiDocument, TRANSPORT_REFUSALS } from '../../src/openapi/document.js';

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
  /** The response headers, names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
}

/**
 * The headers the API itself sets (beside Content-Type, Content-Length and Cache-Control, which
 * every answer has and the document leaves to HTTP): an answer carrying one must declare it.
 * What an adapter's framework adds (Date, Connection, Keep-Alive) is not the document's.
 */
const API_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-quota-limit',
  'x-quota-remaining',
  'x-quota-period',
  'retry-after',
  'access-control-allow-origin',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
  'vary',
  'etag',
  'cross-origin-resource-policy',
  'cross-origin-embedder-policy',
  'content-security-policy',
  'x-content-type-options',
];

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
  const response = responseFor(operation, route!.template, seen, where);
  checkHeaders(response, seen, where);
  if (!response.content) {
    // Bodiless (204, 304): no body, and no Content-Type describing none.
    if (seen.body !== '') throw new Error(`${where}: the document declares no body, but one was sent: ${seen.body.slice(0, 200)}`);
    if (seen.status === 204 && seen.contentType) throw new Error(`${where}: a 204 carries Content-Type ${seen.contentType}`);
    return;
  }
  if (method === 'HEAD') return;
  const type = (seen.contentType ?? '').split(';')[0].trim();
  const media = response.content[type];
  if (!media) throw new Error(`${where}: content type ${type} not documented (documented: ${Object.keys(response.content).join(', ')})`);
  if (type === 'application/json') checkBody(media.schema, seen, where);
}

/**
 * The operation's response for the answer's status, as OpenAPI reads it: its own entry, else
 * `default`, which describes only the refusals of Node's parser. Any other status missing, or
 * another code under `default`, is undocumented.
 */
function responseFor(operation: { responses: Record<string, any> }, template: string, seen: SeenResponse, where: string): Record<string, any> {
  const own = operation.responses[String(seen.status)];
  if (own) return own;
  const code = errorCodeOf(seen.body);
  const refusal = code !== undefined && code in TRANSPORT_REFUSALS && ERROR_STATUS[code as ErrorCode] === seen.status;
  if (refusal && operation.responses.default) return operation.responses.default;
  throw new Error(`${where}: status not documented for ${template} (documented: ${Object.keys(operation.responses).join(', ')})`);
}

function errorCodeOf(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error_code?: unknown }).error_code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

const declaredByResponse = new WeakMap<Schema, Map<string, Schema>>();

/** The response's declared headers (names in lower case), `$ref`s resolved; made once per response (the validators are kept by schema). */
function declaredHeaders(response: Schema): Map<string, Schema> {
  let declared = declaredByResponse.get(response);
  if (!declared) {
    const headers = (response.headers ?? {}) as Record<string, Schema>;
    declared = new Map(Object.entries(headers).map(([name, header]) => [name.toLowerCase(), resolve(header) as Schema]));
    declaredByResponse.set(response, declared);
  }
  return declared;
}

function checkHeaders(response: Schema, seen: SeenResponse, where: string): void {
  const declared = declaredHeaders(response);
  const problems: string[] = [];
  for (const name of API_HEADERS) {
    const value = seen.headers[name];
    if (value !== undefined && !declared.has(name)) problems.push(`${name}: ${value} is sent but not declared`);
  }
  for (const [name, header] of declared) {
    const value = seen.headers[name];
    if (value === undefined) {
      if (header.required) problems.push(`${name} is declared required but not sent`);
      continue;
    }
    const schema = header.schema as Schema;
    const typed = schema.type === 'integer' || typeof schema.const === 'number' ? (/^-?\d+$/.test(value) ? Number(value) : value) : value;
    const validate = validator(schema);
    if (!validate(typed)) problems.push(`${name}: ${value} does not match ${JSON.stringify(schema)}`);
  }
  if (problems.length > 0) throw new Error(`${where}: headers differ from the document:\n  ${problems.join('\n  ')}`);
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
