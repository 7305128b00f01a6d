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

let fetchedMs = Number.NaN;
let fetchedText = '';

/**
 * SPEC's `fetched_at` shape: `YYYY-MM-DD HH:MM:SS.mmm`, UTC. The last one is remembered: a
 * cached result answers with the same time request after request.
 */
export function formatFetchedAt(date: Date): string {
  const ms = date.getTime();
  if (ms !== fetchedMs) {
    fetchedMs = ms;
    fetchedText = date.toISOString().slice(0, 23).replace('T', ' ');
  }
  return fetchedText;
}

export interface SuccessMeta {
  requestId: string;
  cached?: boolean;
  fetchedAt?: Date;
}

/**
 * The success envelope as JSON text: `success`, `request_id`, then `cached` and `fetched_at`
 * when the route carries them, then the resource's own fields. `resourceJson`, when the engine
 * kept one, is `JSON.stringify(resource)` already made: serializing a result costs more than
 * the rest of a cached lookup, so it is spliced in rather than serialized again.
 */
export function successBody(resource: object, meta: SuccessMeta, resourceJson?: string): string {
  return withResource(`{"success":true,"request_id":${JSON.stringify(meta.requestId)}`, meta, resource, resourceJson);
}

/**
 * One result of a batch (`results[i]`): the single lookup's success envelope without
 * `request_id`, which the batch's own envelope carries once.
 */
export function batchItemSuccess(resource: object, meta: Omit<SuccessMeta, 'requestId'>, resourceJson?: string): string {
  return withResource('{"success":true', meta, resource, resourceJson);
}

/** `head` then `cached` and `fetched_at` when the route carries them, then the resource's own fields. */
function withResource(head: string, meta: Omit<SuccessMeta, 'requestId'>, resource: object, resourceJson: string | undefined): string {
  if (meta.cached !== undefined) head += `,"cached":${meta.cached}`;
  if (meta.fetchedAt) head += `,"fetched_at":"${formatFetchedAt(meta.fetchedAt)}"`;
  const fields = (resourceJson ?? JSON.stringify(resource)).slice(1, -1);
  return fields.length === 0 ? `${head}}` : `${head},${fields}}`;
}

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
