/**
 * An Api that knows its unsettled calls: what a graceful stop waits for before closing the
 * meter, so the refunds of failed or cut lookups (and the commits of the last answers) reach the
 * store. `seclookup serve` stops with it (src/cli/shutdown.ts); an app embedding an adapter does
 * the same (docs/mounting.md).
 */
import { isPromise } from '../lib/outcome.js';
import type { Api, ApiRequest, ApiResponse } from './types.js';

/** An Api that counts its unsettled `handle` calls and can mark every later answer `Connection: close`. */
export interface InFlightApi extends Api {
  readonly pending: number;
  /** From now on, every answer carries `Connection: close`, including those of requests already in flight. */
  drain(): void;
  /** Resolves once no `handle` call is pending. */
  settled(): Promise<void>;
}

/**
 * `api`, counting its unsettled `handle`/`respond` calls.
 *
 * @example
 * const api = trackInFlight(createApi({ lookup, meter }));
 * // on SIGTERM:
 * server.close();
 * server.closeIdleConnections();
 * await api.settled(); // refunds of failed or cut lookups are in the store now
 * await meter.close();
 * await lookup.close();
 */
export function trackInFlight(api: Api): InFlightApi {
  let pending = 0;
  let draining = false;
  const waiters: Array<() => void> = [];

  function settle(): void {
    pending--;
    if (pending === 0 && waiters.length > 0) for (const wake of waiters.splice(0)) wake();
  }

  // Its settle callbacks, made once: per request the hot path pays one promise and one microtask.
  function answered(response: ApiResponse): ApiResponse {
    settle();
    if (draining) response.headers.connection = 'close';
    return response;
  }
  function failed(error: unknown): never {
    settle();
    throw error;
  }

  function respond(request: ApiRequest): ApiResponse | Promise<ApiResponse> {
    pending++;
    let answer: ApiResponse | Promise<ApiResponse>;
    try {
      answer = api.respond ? api.respond(request) : api.handle(request);
    } catch (error) {
      return failed(error);
    }
    return isPromise(answer) ? answer.then(answered, failed) : answered(answer);
  }

  return {
    handle: async (request) => respond(request),
    respond,
    assetMounts: api.assetMounts,
    owns: (path) => api.owns(path),
    refuse: (code, message, request) => api.refuse(code, message, request),
    get pending() {
      return pending;
    },
    drain() {
      draining = true;
    },
    settled() {
      return pending === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}
