/**
 * The OpenAPI 3.1 document of the API, generated from the product registry: every route of
 * every module, with the parameters and results its `doc` describes, the error codes each
 * route can answer (the shared ones plus the product's), the Bearer scheme and the limit
 * headers. Served at `GET /v1/openapi.json` and printed by `seclookup openapi`.
 */
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { packageVersion } from '../lib/datasets.js';
import { PRODUCTS, type ProductId } from '../products/catalog.js';
import type { AnyProductModule } from '../products/module.js';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../products/registry.js';
import { DEFAULT_BATCH_LIMIT } from '../api/batch.js';
import { bool, FETCHED_AT_PATTERN, int, list, obj, str, type JsonSchema } from './schema.js';
import type { AssetsDoc, ExtraRouteDoc, HeaderDoc, ParamDoc, ProductDoc, ResultDoc, ServiceRouteDoc } from './types.js';

/** Marks an operation (and its tag) the spec does not have: ours. */
export const BEYOND_SPEC = 'x-seclookup-beyond-spec';

/** The path of the document itself. */
export const OPENAPI_PATH = '/v1/openapi.json';

/** Every lookup and status route can answer these (SPEC: codes common to all lookup products). */
const KEY_ERRORS: readonly ErrorCode[] = ['missing_credentials', 'invalid_api_key', 'ip_not_allowed', 'rate_limit_exceeded', 'internal_error'];
/** Answered before the meter counts the request (api/meter-gate.ts authenticate): no limit headers. */
const BEFORE_METER: readonly ErrorCode[] = ['missing_credentials', 'invalid_api_key', 'wrong_key_type', 'ip_not_allowed'];
const LOOKUP_ERRORS: readonly ErrorCode[] = [...KEY_ERRORS, 'wrong_key_type', 'quota_exceeded'];
/** What reading a request body can answer (api/body.ts). */
const BODY_ERRORS: readonly ErrorCode[] = ['invalid_json', 'payload_too_large', 'unsupported_media_type'];

const LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Period'];

type Operation = Record<string, unknown>;
type PathItem = Record<string, Operation>;

/** An OpenAPI 3.1 document, as plain JSON data. */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, PathItem>; components: Record<string, Record<string, unknown>> };

export interface OpenApiOptions {
  /** The server's `batchLimit` (maxItems of a batch's inputs). @default 100 */
  batchLimit?: number;
}

export function buildOpenApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const batchLimit = options.batchLimit ?? DEFAULT_BATCH_LIMIT;
  const products = PRODUCT_MODULES as readonly AnyProductModule[];
  const services = SERVICE_MODULES;
  const paths: Record<string, PathItem> = {};
  const schemas: Record<string, JsonSchema> = { ErrorEnvelope: errorEnvelope(Object.keys(ERROR_STATUS) as ErrorCode[]) };
  // Every operation also names the errors the server answers before any route runs.
  const add = (path: string, method: string, operation: Operation) => {
    operation.responses = withTransportErrors(operation.responses as Record<string, Response>);
    (paths[path] ??= {})[method.toLowerCase()] = operation;
  };

  add('/healthz', 'GET', {
    operationId: 'healthz',
    summary: 'Liveness: answers while the process serves requests',
    tags: ['service'],
    security: [],
    [BEYOND_SPEC]: true,
    responses: { 200: jsonResponse('The process is up', obj({ success: { const: true }, status: { const: 'ok' } })) },
  });
  add(OPENAPI_PATH, 'GET', {
    operationId: 'openapi',
    summary: 'This document',
    tags: ['service'],
    security: [],
    [BEYOND_SPEC]: true,
    responses: { 200: jsonResponse('The OpenAPI 3.1 document', { type: 'object' }) },
  });

  const tags: Record<string, unknown>[] = [{ name: 'service', description: 'Routes of the server itself, beyond the spec.', [BEYOND_SPEC]: true }];
  for (const module of products) {
    const { doc } = module;
    tags.push({ name: module.id, description: doc.summary });
    schemas[`${module.id}.Result`] = lookupAnswer(module.id, doc.result);
    add(`/v1/${module.id}/status`, 'GET', statusOperation(module.id, doc.status ?? {}));
    for (const route of module.routes) {
      const pathParam = route.path.split('/:')[1];
      const parameters = [
        ...(pathParam ? [parameter(pathParam, 'path', doc.query?.[pathParam] ?? { description: 'The value to look up (URL-encoded).' })] : []),
        ...(route.method === 'GET' ? queryParameters(doc.query, pathParam) : []),
      ];
      add(`/v1/${module.id}/${openApiPath(route.path)}`, route.method, {
        operationId: operationId(module.id, route.method, route.path),
        summary: `${route.method === 'POST' ? 'Look up (body)' : pathParam ? 'Look up (path form)' : 'Look up'}: ${module.id}`,
        tags: [module.id],
        security: SECRET,
        ...(parameters.length > 0 ? { parameters } : {}),
        ...(route.method === 'POST' && doc.body ? { requestBody: requestBody(doc.body) } : {}),
        responses: {
          200: jsonResponse('The lookup result', { $ref: `#/components/schemas/${module.id}.Result` }, LIMIT_HEADERS),
          ...errorResponses([...LOOKUP_ERRORS, route.inputError, ...doc.errors, ...(route.method === 'POST' ? BODY_ERRORS : [])], { early: BEFORE_METER }),
        },
      });
    }
    if (module.batch) {
      schemas[`${module.id}.BatchItem`] = lookupAnswer(module.id, doc.result, { requestId: false });
      add(`/v1/${module.id}/batch`, 'POST', batchOperation(module.id, module.batch.input, doc, batchLimit));
    }
    for (const route of module.extraRoutes ?? []) {
      const routeDoc = doc.extraRoutes?.[route.path];
      if (!routeDoc) throw new Error(`${module.id}: extra route ${route.path} has no doc`);
      add(`/v1/${module.id}/${openApiPath(route.path)}`, route.method, extraOperation(module.id, route, routeDoc));
    }
  }
  for (const service of services) {
    tags.push({ name: service.id, description: service.doc.summary });
    for (const route of service.routes) {
      const routeDoc = service.doc.routes[`${route.method} ${route.path}`];
      if (!routeDoc) throw new Error(`${service.id}: route ${route.method} ${route.path} has no doc`);
      add(`/v1/${service.id}/${route.path}`, route.method, serviceOperation(service.id, route.method, route.path, routeDoc));
    }
    if (service.assets && service.doc.assets) add(`${service.assets.mount}{file}`, 'GET', assetsOperation(service.id, service.doc.assets));
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'seclookup',
      version: packageVersion(),
      description:
        'Security lookups as JSON over HTTP: one auth scheme (a Bearer key per product), one error envelope, rate-limit and quota headers, a status route per product. ' +
        `Operations and tags marked \`${BEYOND_SPEC}: true\` are seclookup's own, beyond the API specification. ` +
        'Any route can also answer 404 not_found (no such route) and 405 method_not_allowed (with Allow), and the server refuses malformed HTTP with 400 bad_request, 408, 417 or 431 before any route runs. ' +
        'HEAD is answered on every GET operation (not listed separately): the same parameters and key, and the status and headers the GET would answer, with no body. A HEAD on a lookup route is a lookup, counted and billed as one.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/', description: "The service's root: where `seclookup serve` listens, or the prefix the API is mounted under." }],
    tags,
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "The product's key: `Authorization: Bearer <key>`. Lookups need the secret key (xx_sec_); status routes take either key.",
        },
      },
      headers: HEADERS,
      schemas,
    },
  };
}

const SECRET = [{ bearer: [] }];

/** A response object: what this file reads of one (an error response's `error_code` enum). */
interface Response {
  description?: string;
  content?: Record<string, { schema?: JsonSchema & { properties?: Record<string, JsonSchema & { enum?: unknown[] }> } }>;
  [field: string]: unknown;
}

/** What the server answers when Node's HTTP parser refuses a request, before any route runs (adapters/client-errors.ts), and why. */
export const TRANSPORT_REFUSALS: Readonly<Partial<Record<ErrorCode, string>>> = {
  bad_request: 'malformed HTTP',
  request_timeout: 'the request did not arrive in time',
  payload_too_large: 'chunk extensions over the limit',
  expectation_failed: 'an Expect other than 100-continue',
  request_header_fields_too_large: 'the request line and headers over the limit',
};

const TRANSPORT_ERRORS: Response = {
  description: `Refused before any route ran: ${Object.entries(TRANSPORT_REFUSALS)
    .map(([code, reason]) => `${ERROR_STATUS[code as ErrorCode]} ${code} (${reason})`)
    .join(', ')}`,
  headers: headerRefs([]),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
};

/**
 * The responses plus the parser's refusals. OpenAPI reads `default` only for a status the
 * operation does not list, so a listed status (every route's 400) names its refusal code itself.
 */
function withTransportErrors(responses: Readonly<Record<string, Response>>): Record<string, Response> {
  const out: Record<string, Response> = { ...responses };
  for (const code of Object.keys(TRANSPORT_REFUSALS) as ErrorCode[]) {
    const status = String(ERROR_STATUS[code]);
    if (out[status]) out[status] = withRefusalCode(out[status], code);
  }
  out.default = TRANSPORT_ERRORS;
  return out;
}

/** An error response (see `errorResponses`) that may also answer `code`, refused before any route ran. A copy: schemas may be a module's constants. */
function withRefusalCode(response: Response, code: ErrorCode): Response {
  const media = response.content?.['application/json'];
  const properties = media?.schema?.properties;
  const codes = properties?.error_code?.enum;
  if (!media || !properties || !Array.isArray(codes)) throw new Error(`a ${ERROR_STATUS[code]} answer with no error_code enum cannot list ${code}`);
  if (codes.includes(code)) return response;
  const errorCode = { ...properties.error_code, enum: [...codes, code].sort() };
  return {
    ...response,
    description: `${response.description}; and ${code} (${TRANSPORT_REFUSALS[code]}, refused before any route ran)`,
    content: { ...response.content, 'application/json': { ...media, schema: { ...media.schema, properties: { ...properties, error_code: errorCode } } } },
  };
}

/** Captcha's browser routes (SPEC Authentication 8). */
const CORS_HEADERS = ['Access-Control-Allow-Origin', 'Vary'];

const HEADERS: Record<string, unknown> = {
  'X-Request-Id': { description: 'The request id, as in the body.', required: true, schema: str() },
  'X-RateLimit-Limit': { description: "The key's requests per minute.", schema: int() },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: int() },
  'X-RateLimit-Reset': { description: 'When the current minute window ends, in Unix seconds.', schema: int() },
  'X-Quota-Limit': { description: 'Monthly lookups of the plan, or `unlimited`.', schema: str() },
  'X-Quota-Remaining': { description: 'Lookups left this UTC month, or `unlimited`.', schema: str() },
  'X-Quota-Period': { description: 'The quota month, YYYY-MM.', schema: str() },
  'Retry-After': { description: 'Seconds to wait before retrying (429).', schema: int() },
  'Access-Control-Allow-Origin': {
    description: "The request's Origin, reflected when its host is allowed for the site key (SPEC); absent otherwise.",
    schema: str(),
  },
  Vary: { description: '`Origin`: the answer depends on the Origin header.', schema: { const: 'Origin' } },
};

/** What a CORS preflight answers when the Origin is allowed (captcha service.ts preflight). */
const PREFLIGHT_HEADERS: Record<string, HeaderDoc> = {
  'Access-Control-Allow-Origin': { description: "The request's Origin, reflected.", required: true },
  'Access-Control-Allow-Methods': { description: 'The methods the browser may use.', schema: { const: 'GET, POST, OPTIONS' }, required: true },
  'Access-Control-Allow-Headers': { description: 'The request headers the browser may send.', schema: { const: 'Content-Type' }, required: true },
  'Access-Control-Max-Age': { description: 'Seconds the browser may cache this preflight.', schema: { const: 600, type: 'integer' }, required: true },
  Vary: { description: '`Origin`.', schema: { const: 'Origin' }, required: true },
};

/** Header objects by name: `$ref`s to the shared ones (X-Request-Id first, always), inline ones as given. */
function headerRefs(names: readonly string[], inline: Readonly<Record<string, HeaderDoc>> = {}): Record<string, unknown> {
  return {
    ...Object.fromEntries(['X-Request-Id', ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }])),
    ...Object.fromEntries(Object.entries(inline).map(([name, doc]) => [name, headerObject(doc)])),
  };
}

function headerObject(doc: HeaderDoc): Record<string, unknown> {
  return { description: doc.description, ...(doc.required ? { required: true } : {}), schema: doc.schema ?? str() };
}

/** `lookup/:ip` -> `lookup/{ip}` */
function openApiPath(path: string): string {
  return path.replace(/:([a-z_]+)/g, '{$1}');
}

function operationId(product: string, method: string, path: string): string {
  return `${product}_${method.toLowerCase()}_${path.replace(/[/:]+/g, '_')}`;
}

function parameter(name: string, where: 'path' | 'query' | 'header', doc: ParamDoc): Record<string, unknown> {
  return { name, in: where, required: where === 'path' ? true : (doc.required ?? false), description: doc.description, schema: doc.schema ?? str() };
}

function queryParameters(query: Readonly<Record<string, ParamDoc>> | undefined, inPath?: string): Record<string, unknown>[] {
  return Object.entries(query ?? {})
    .filter(([name]) => name !== inPath)
    .map(([name, doc]) => parameter(name, 'query', doc));
}

function requestBody(schema: JsonSchema, required = true): Record<string, unknown> {
  return { required, content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema } } };
}

function jsonResponse(description: string, schema: JsonSchema, headers: readonly string[] = []): Record<string, unknown> {
  return { description, headers: headerRefs(headers), content: { 'application/json': { schema } } };
}

/** The error envelope for these codes; `fields` are extra members some of them carry. */
function errorEnvelope(codes: readonly ErrorCode[], fields: Readonly<Record<string, JsonSchema>> = {}): JsonSchema {
  return obj(
    {
      success: { const: false },
      error: str('What went wrong, for people.'),
      error_code: { type: 'string', enum: [...new Set(codes)].sort() },
      request_id: str('As X-Request-Id.'),
      ...fields,
    },
    { optional: Object.keys(fields) },
  );
}

interface ErrorHeaders {
  /** Codes answered before the request was counted (and before any CORS header was set): their answers carry neither. */
  early?: readonly ErrorCode[];
  /** False when no answer of the route carries limit headers. @default true */
  metered?: boolean;
  /** The CORS headers of the answers past `early`. */
  cors?: readonly string[];
  fields?: Readonly<Record<string, JsonSchema>>;
}

/**
 * One response per status, each listing the codes the route answers with it. A status's
 * limit (and CORS) headers are declared when one of its codes is answered after the request was
 * counted: a 401 never carries them, a 400 that may be a bad body or bad input may.
 */
function errorResponses(codes: readonly ErrorCode[], options: ErrorHeaders = {}): Record<string, unknown> {
  const early = new Set(options.early ?? []);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => {
        const late = list.some((code) => !early.has(code));
        const limits = late && options.metered !== false ? (status === 429 ? [...LIMIT_HEADERS, 'Retry-After'] : LIMIT_HEADERS) : [];
        const cors = late ? (options.cors ?? []) : [];
        return [String(status), jsonResponse(`error_code: ${list.sort().join(', ')}`, errorEnvelope(list, options.fields), [...limits, ...cors])];
      }),
  );
}

/**
 * The success envelope's fields joined with a result's (SPEC: the resource's fields sit beside
 * `success`). `fetched_at` is on SPEC's seven products, always: each of their engines says when
 * its data was retrieved on every answer (api/create-api.ts envelope). An extra route answers
 * with its own outcome, which may not say: optional there.
 */
function lookupAnswer(product: ProductId, result: JsonSchema, options: { extraRoute?: boolean; requestId?: boolean } = {}): JsonSchema {
  const fetchedAt = options.extraRoute
    ? 'When the result was retrieved: YYYY-MM-DD HH:MM:SS.mmm, UTC; present when the route knows it.'
    : 'When the result was retrieved (the data behind it: a DNS answer, a registry record, the build of a local database): YYYY-MM-DD HH:MM:SS.mmm, UTC.';
  const envelope: Record<string, JsonSchema> = {
    success: { const: true },
    ...(options.requestId === false ? {} : { request_id: str('Unique id of this request (also X-Request-Id).') }),
    cached: bool('True when a recent result for the same lookup was already held.'),
    ...(PRODUCTS[product].hasFetchedAt ? { fetched_at: str(fetchedAt, { pattern: FETCHED_AT_PATTERN }) } : {}),
  };
  return merge(envelope, options.extraRoute ? ['cached', 'fetched_at'] : [], result);
}

function merge(envelope: Record<string, JsonSchema>, optional: readonly string[], result: JsonSchema): JsonSchema {
  const properties = { ...envelope, ...(result.properties as Record<string, JsonSchema>) };
  const required = [...Object.keys(envelope).filter((name) => !optional.includes(name)), ...((result.required as string[]) ?? [])];
  return { type: 'object', properties, required: [...new Set(required)] };
}

/** SPEC's status resource, with the product's own fields. */
export function statusSchema(extras: Readonly<Record<string, JsonSchema>>): JsonSchema {
  return obj({
    success: { const: true },
    request_id: str(),
    status: str("The key's state: `active`."),
    product: str('The product path segment.'),
    plan: str('Plan slug.'),
    rate_limit_per_minute: int('Requests per minute of the plan.'),
    monthly_quota: int('Monthly lookups of the plan; -1 when unlimited.'),
    quota_unlimited: bool(),
    quota_remaining: int('Lookups left this UTC month; -1 when unlimited.'),
    quota_period: str('YYYY-MM.'),
    ...extras,
  });
}

function statusOperation(product: ProductId, extras: Readonly<Record<string, JsonSchema>>): Operation {
  return {
    operationId: `${product}_status`,
    summary: `Key health and quota: ${product}`,
    tags: [product],
    security: SECRET,
    description: 'Takes the public or the secret key. Counts against the per-minute rate; never against the quota.',
    responses: { 200: jsonResponse('The status resource', statusSchema(extras), LIMIT_HEADERS), ...errorResponses(KEY_ERRORS, { early: BEFORE_METER }) },
  };
}

/** Beyond the spec: many inputs of a one-value product in one request (api/batch.ts). */
function batchOperation(product: ProductId, input: string, doc: ProductDoc, batchLimit: number): Operation {
  const notInBatch = new Set<ErrorCode>(doc.batchInput?.notInBatch);
  const itemCodes = [...new Set<ErrorCode>([...doc.errors, 'internal_error'])].filter((code) => !notInBatch.has(code));
  const itemError = obj({ success: { const: false }, error: str(), error_code: { type: 'string', enum: itemCodes.sort() } });
  return {
    operationId: `${product}_post_batch`,
    summary: `Look up many inputs in one request: ${product}`,
    description:
      `Up to ${batchLimit} inputs (this server's batch limit), each counted against the rate and billed like a single lookup; refused whole with 429 when they do not fit what is left of the minute or the month. ` +
      'Each input is the value itself, as the JSON string holds it (not percent-encoded as in a query). ' +
      "Answers one item per input, in order: the single lookup's envelope without request_id. Identical inputs are looked up once.",
    tags: [product],
    security: SECRET,
    [BEYOND_SPEC]: true,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: obj({
            inputs: {
              type: 'array',
              minItems: 1,
              maxItems: batchLimit,
              description: `The ${input} values to look up, each a JSON string holding the value itself (no percent-encoding).`,
              items: batchItem(input, doc),
            },
          }),
        },
      },
    },
    responses: {
      200: jsonResponse(
        'One item per input, in order',
        obj({ success: { const: true }, request_id: str(), results: list({ oneOf: [{ $ref: `#/components/schemas/${product}.BatchItem` }, itemError] }) }),
        LIMIT_HEADERS,
      ),
      ...errorResponses([...LOOKUP_ERRORS, 'invalid_request', ...BODY_ERRORS], { early: BEFORE_METER }),
    },
  };
}

/**
 * One of a batch's inputs: its own doc, never the lookup's query parameter (whose value arrives
 * percent-encoded); a product that has none gets a plain one.
 */
function batchItem(input: string, doc: ProductDoc): JsonSchema {
  const { description, schema } = doc.batchInput ?? { description: `One ${input}: the value itself, not percent-encoded.` };
  return { ...(schema ?? str()), description };
}

function isContentDoc(result: ResultDoc): result is { contentType: string; schema: JsonSchema; example?: string } {
  return typeof result.contentType === 'string';
}

function extraOperation(product: ProductId, route: { method: string; path: string; inputError: ErrorCode }, doc: ExtraRouteDoc): Operation {
  const pathParam = route.path.split('/:')[1];
  const parameters = [
    ...(pathParam ? [parameter(pathParam, 'path', doc.pathParam ?? { description: 'The value.' })] : []),
    ...queryParameters(doc.query),
    ...Object.entries(doc.headers ?? {}).map(([name, headerDoc]) => parameter(name, 'header', headerDoc)),
  ];
  const result = doc.result;
  const success = isContentDoc(result)
    ? {
        description: doc.summary,
        headers: headerRefs(LIMIT_HEADERS),
        content: { [result.contentType]: { schema: result.schema, ...(result.example ? { example: result.example } : {}) } },
      }
    : jsonResponse(doc.summary, lookupAnswer(product, result, { extraRoute: true }), LIMIT_HEADERS);
  return {
    operationId: operationId(product, route.method, route.path),
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [product],
    security: SECRET,
    [BEYOND_SPEC]: true,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body ? { requestBody: requestBody(doc.body) } : {}),
    responses: {
      200: success,
      ...errorResponses([...LOOKUP_ERRORS, route.inputError, ...doc.errors, ...(route.method === 'POST' ? BODY_ERRORS : [])], { early: BEFORE_METER }),
    },
  };
}

function serviceOperation(product: ProductId, method: string, path: string, doc: ServiceRouteDoc): Operation {
  const limits = doc.metered === false ? [] : LIMIT_HEADERS;
  const cors = doc.cors === 'reflect' ? CORS_HEADERS : [];
  const answers = Object.fromEntries(
    Object.entries(doc.answers).map(([status, schema]) => [
      status,
      schema === null
        ? { description: 'No body', headers: headerRefs([...limits, ...cors], doc.cors === 'preflight' ? PREFLIGHT_HEADERS : {}) }
        : jsonResponse(doc.summary, schema, [...limits, ...cors]),
    ]),
  );
  const where = doc.keyIn ? (doc.bearer === false ? ` only in ${doc.keyIn} (a Bearer header is not read)` : ` (as Bearer or in ${doc.keyIn})`) : '';
  const keyNote = doc.auth === 'none' ? '' : `Takes the ${doc.auth} key${where}.`;
  return {
    operationId: operationId(product, method, path),
    summary: doc.summary,
    ...(doc.description || keyNote ? { description: [keyNote, doc.description].filter(Boolean).join(' ') } : {}),
    tags: [product],
    // A key sent in the query or the body is not a security scheme OpenAPI can name: those
    // routes say where it goes in their description and parameters. One that also reads a
    // Bearer header lists the scheme as the alternative to none (`{}`: the key elsewhere).
    security: doc.auth === 'none' ? [] : doc.keyIn ? (doc.bearer === false ? [] : [{}, ...SECRET]) : SECRET,
    ...(doc.beyondSpec ? { [BEYOND_SPEC]: true } : {}),
    ...(doc.query ? { parameters: queryParameters(doc.query) } : {}),
    ...(doc.body ? { requestBody: requestBody(doc.body, doc.bodyRequired ?? true) } : {}),
    responses: {
      ...answers,
      ...errorResponses(doc.errors, {
        early: doc.early,
        metered: doc.metered,
        cors: doc.cors === 'reflect' ? CORS_HEADERS : doc.cors === 'preflight' ? ['Vary'] : [],
        fields: doc.errorFields,
      }),
    },
  };
}

/**
 * A service's static files (api/create-api.ts asset): each with a strong ETag, cached 5 minutes,
 * or a year under `?v=<version>`; 304 when If-None-Match matches. Never metered.
 */
function assetsOperation(service: ProductId, doc: AssetsDoc): Operation {
  const cacheControl: HeaderDoc = {
    description: '`public, max-age=31536000, immutable` when `v` is the current version, else `public, max-age=300`.',
    schema: { enum: ['public, max-age=31536000, immutable', 'public, max-age=300'] },
    required: true,
  };
  const fileHeaders: Record<string, HeaderDoc> = {
    ETag: { description: "The file's strong entity tag (quoted).", required: true },
    'Cache-Control': cacheControl,
    ...doc.headers,
  };
  return {
    operationId: `${service}_assets`,
    summary: doc.summary,
    tags: [service],
    security: [],
    [BEYOND_SPEC]: true,
    parameters: [
      parameter('file', 'path', { description: 'The file name.' }),
      parameter('v', 'query', {
        description: "The files' version (api.js puts it in the URLs it loads): the current one makes the answer cacheable for a year.",
      }),
      parameter('If-None-Match', 'header', { description: 'ETags held: 304 when one matches (compared weakly, or `*`).' }),
    ],
    responses: {
      200: {
        description: 'The file',
        headers: headerRefs([], fileHeaders),
        content: Object.fromEntries(doc.contentTypes.map((type) => [type, { schema: str() }])),
      },
      304: { description: 'Not modified (If-None-Match matched the ETag): the 200 headers, no body', headers: headerRefs([], fileHeaders) },
      ...errorResponses(['not_found'], { metered: false }),
    },
  };
}
