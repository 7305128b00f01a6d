import { randomHex } from '../lib/random-hex.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/** `req_` then 32 hex characters (128 random bits): unique per request, shaped like SPEC's scamrisk ids everywhere. */
export function newRequestId(): string {
  return `req_${randomHex(16)}`;
}

/** The headers every answer of the API starts with. */
export function baseHeaders(requestId: string): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': requestId };
}

// The success bodies are pure text builders that service routes (captcha) use too: they live
// below both layers, in src/lib/envelope.ts.
export { batchItemSuccess, formatFetchedAt, successBody, type SuccessMeta } from '../lib/envelope.js';

/** One failed input of a batch: the single lookup's error envelope without `request_id`. */
export function batchItemError(code: ErrorCode, message: string, fields?: Readonly<Record<string, unknown>>): string {
  return `${errorHead(code, message, fields)}}`;
}

/** The one place the error envelope is built, as JSON text. */
export function errorBody(code: ErrorCode, message: string, requestId: string, fields?: Readonly<Record<string, unknown>>): string {
  return `${errorHead(code, message, fields)},"request_id":"${requestId}"}`;
}

/**
 * The text JSON.stringify makes of `{ success: false, error, error_code, ...fields }`, open at
 * the end, written by hand: a spread object is slow to stringify, and refusals are what a flood
 * of bad requests costs. Codes and request ids are ours, [a-z0-9_], with nothing to escape;
 * fields never use the envelope's own names.
 */
function errorHead(code: ErrorCode, message: string, fields: Readonly<Record<string, unknown>> | undefined): string {
  const head = `{"success":false,"error":${JSON.stringify(message)},"error_code":"${code}"`;
  if (fields === undefined) return head;
  const extra = frozenFieldsJson.get(fields) ?? fieldsJson(fields);
  return extra === '' ? head : `${head},${extra}`;
}

/**
 * The JSON members of frozen fields objects (constants shared by every refusal of a kind, as
 * captcha's Turnstile codes): they cannot change, so their text is made once.
 */
const frozenFieldsJson = new WeakMap<object, string>();

/** The fields' JSON members, without the braces ('' for none). */
function fieldsJson(fields: Readonly<Record<string, unknown>>): string {
  const text = JSON.stringify(fields).slice(1, -1);
  if (isDeepFrozen(fields)) frozenFieldsJson.set(fields, text);
  return text;
}

/** Frozen, and so is every object inside it: nothing in it can change. */
function isDeepFrozen(value: unknown): boolean {
  return typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));
}

export function errorStatus(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
