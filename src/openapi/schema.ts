/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) in a few helpers, so a product's result
 * schema reads like SPEC's field table. Objects list their fields as always present unless
 * named `optional`; the document leaves objects open to new fields, and the test suite checks
 * real answers with every object closed, so a field the code sends but the schema lacks fails.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

function described(schema: Record<string, unknown>, description?: string): JsonSchema {
  return description ? { ...schema, description } : schema;
}

export const str = (description?: string, extra: JsonSchema = {}): JsonSchema => described({ type: 'string', ...extra }, description);
export const int = (description?: string, extra: JsonSchema = {}): JsonSchema => described({ type: 'integer', ...extra }, description);
export const num = (description?: string, extra: JsonSchema = {}): JsonSchema => described({ type: 'number', ...extra }, description);
export const bool = (description?: string): JsonSchema => described({ type: 'boolean' }, description);

/** One of a fixed set of strings. */
export const oneOf = (values: readonly string[], description?: string): JsonSchema => described({ type: 'string', enum: [...values] }, description);

/** The schema, or null (SPEC's "string or null"). */
export function nullable(schema: JsonSchema): JsonSchema {
  const { type, enum: values, ...rest } = schema as { type?: string; enum?: unknown[] };
  if (typeof type !== 'string') return { anyOf: [schema, { type: 'null' }] };
  return { ...rest, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) };
}

export const list = (items: JsonSchema, description?: string): JsonSchema => described({ type: 'array', items }, description);

export interface ObjectOptions {
  /** Fields that may be absent (SPEC: "when available", "present only for"). */
  optional?: readonly string[];
  description?: string;
  /** No other fields: for a request body the server refuses unknown members of (400). */
  closed?: boolean;
}

/** An object with these fields, all required but the `optional` ones. */
export function obj(properties: Readonly<Record<string, JsonSchema>>, options: ObjectOptions = {}): JsonSchema {
  const optional = new Set(options.optional ?? []);
  for (const name of optional) if (!(name in properties)) throw new Error(`optional field ${name} is not a property`);
  const required = Object.keys(properties).filter((name) => !optional.has(name));
  return described(
    { type: 'object', properties, ...(required.length > 0 ? { required } : {}), ...(options.closed ? { additionalProperties: false } : {}) },
    options.description,
  );
}

/** An object of any keys, each value of this schema (a map). */
export const mapOf = (values: JsonSchema, description?: string): JsonSchema => described({ type: 'object', additionalProperties: values }, description);

/** The ISO 8601 shapes results use, as patterns: exact, and checked by any validator, format support or not. */
const ISO_TIME_PATTERNS = {
  /** SPEC's `YYYY-MM-DDThh:mm:ssZ` (tls, whois). */
  seconds: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$',
  /** `Date.toISOString()`: `YYYY-MM-DDThh:mm:ss.sssZ` (captcha). */
  millis: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  /** With an offset, fraction optional: `2026-11-26T10:00:00+00:00` (scamrisk). */
  offset: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$',
} as const;

/** SPEC's `fetched_at`: `YYYY-MM-DD HH:MM:SS.mmm`, UTC (src/lib/envelope.ts formatFetchedAt). */
export const FETCHED_AT_PATTERN = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d{3}$';

/** An ISO 8601 timestamp of one of the shapes results use. */
export const isoTime = (description: string, shape: keyof typeof ISO_TIME_PATTERNS): JsonSchema => str(description, { pattern: ISO_TIME_PATTERNS[shape] });

/** A public IPv4 or IPv6 address as we print it. */
export const ipString = (description = 'Normalized IP address.'): JsonSchema => str(description);
