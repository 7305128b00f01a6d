import { randomBytes } from 'node:crypto';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

const REQUEST_ID_BYTES = 16;
/** Random bytes drawn at once and spent 16 per id: one CSPRNG call per 256 requests. */
const ID_POOL_BYTES = REQUEST_ID_BYTES * 256;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

/** `req_` then 32 hex characters (128 random bits): unique per request, shaped like SPEC's scamrisk ids everywhere. */
export function newRequestId(): string {
  if (idPoolOffset + REQUEST_ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_POOL_BYTES);
    idPoolOffset = 0;
  }
  const id = 'req_' + idPool.toString('hex', idPoolOffset, idPoolOffset + REQUEST_ID_BYTES);
  idPoolOffset += REQUEST_ID_BYTES;
  return id;
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
  return JSON.stringify({ success: false, error: message, error_code: code, ...fields });
}

/** The one place the error envelope is built, as JSON text. */
export function errorBody(code: ErrorCode, message: string, requestId: string, fields?: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ success: false, error: message, error_code: code, ...fields, request_id: requestId });
}

export function errorStatus(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
