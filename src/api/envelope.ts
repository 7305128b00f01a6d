import { randomUUID } from 'node:crypto';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/** `req_` then 32 hex characters: unique per request, shaped like SPEC's scamrisk ids everywhere. */
export function newRequestId(): string {
  return 'req_' + randomUUID().replaceAll('-', '');
}

/** SPEC's `fetched_at` shape: `YYYY-MM-DD HH:MM:SS.mmm`, UTC. */
export function formatFetchedAt(date: Date): string {
  return date.toISOString().slice(0, 23).replace('T', ' ');
}

export interface SuccessMeta {
  requestId: string;
  cached?: boolean;
  fetchedAt?: Date;
}

/**
 * The success envelope: `success`, `request_id`, then `cached` and `fetched_at` when the
 * route carries them, then the resource's own fields.
 */
export function successBody(resource: object, meta: SuccessMeta): Record<string, unknown> {
  const envelope: Record<string, unknown> = { success: true, request_id: meta.requestId };
  if (meta.cached !== undefined) envelope.cached = meta.cached;
  if (meta.fetchedAt) envelope.fetched_at = formatFetchedAt(meta.fetchedAt);
  return Object.assign(envelope, resource);
}

/** The one place the error envelope is built. */
export function errorBody(code: ErrorCode, message: string, requestId: string): Record<string, unknown> {
  return { success: false, error: message, error_code: code, request_id: requestId };
}

export function errorStatus(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
