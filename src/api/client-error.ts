import type { ErrorCode } from '../errors.js';
import { formatIp, parseIp } from '../lib/ip.js';
import { baseHeaders, errorBody, errorStatus, newRequestId } from './envelope.js';
import type { ApiResponse, RequestLogEvent } from './types.js';

/** What is known of a request the HTTP layer refused before the core saw it. */
export interface RefusedRequest {
  /** The method, when the request line could be read; logged as `-` otherwise. */
  method?: string;
  /** The socket's peer address (no header is trusted: they may be what was malformed). */
  remoteAddress?: string;
}

/**
 * The answer to a request refused by the HTTP layer itself (malformed bytes, headers too
 * large, an unsupported `Expect`): the API's error envelope with a fresh request id, and one
 * line in the request log with route `unmatched`, so these look like every other refusal.
 * `api.refuse` calls it with `createApi`'s own `onResponse`.
 */
export function refuseRequest(code: ErrorCode, message: string, request: RefusedRequest, onResponse?: (event: RequestLogEvent) => void): ApiResponse {
  const requestId = newRequestId();
  const status = errorStatus(code);
  const peer = request.remoteAddress ? parseIp(request.remoteAddress) : null;
  onResponse?.({
    time: new Date().toISOString(),
    request_id: requestId,
    method: request.method ?? '-',
    route: 'unmatched',
    product: null,
    status,
    error_code: code,
    latency_ms: 0,
    client_ip: peer ? formatIp(peer) : null,
  });
  return {
    status,
    headers: baseHeaders(requestId),
    body: errorBody(code, message, requestId),
  };
}
