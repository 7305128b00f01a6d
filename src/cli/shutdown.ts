/**
 * Graceful stop of `seclookup serve` on SIGTERM, SIGINT, or SIGHUP on a terminal:
 *
 * 1. Stop accepting connections. Connections already open stay open: a request arriving on one
 *    is answered, with `Connection: close`, so the client learns to go elsewhere instead of
 *    having its request reset (requests pipelined behind it are answered first: the adapter
 *    leaves the close to the last, see adapters/node.ts). Connections still idle after a short
 *    grace are closed.
 * 2. At the deadline, cut whatever is still open. A lookup whose connection is cut is abandoned
 *    at once (its request's signal aborts) and its quota reservation given back: the engines
 *    take no signal, and whois alone may run 15 s, longer than the drain, so waiting for them
 *    would make the shutdown as long as the slowest upstream.
 * 3. Wait for every `api.handle` call to settle (their refunds reach the store), then close the
 *    database (which sends the commits still queued), then the log.
 */
import { Server as NetServer } from 'node:net';
import type { Server } from 'node:http';
import type { Api, ApiRequest, ApiResponse } from '../api/types.js';
import type { Meter } from '../metering/types.js';
import { isPromise } from '../lib/outcome.js';
import type { Lookup } from '../lookup.js';
import { EXIT_FAILURE, EXIT_OK } from './errors.js';
import type { ServeLog } from './log.js';
import { note } from './output.js';
import { cliIo, withIo, type CliHost, type StopSignal } from './io.js';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** In-flight requests get this long after the signal before their connections are cut. */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000;
/** An open connection that sends nothing for this long during the drain is closed. */
const IDLE_GRACE_MS = 1000;
/** After the cut, how long to wait for the cut requests' refunds before closing the database anyway. */
const SETTLE_AFTER_CUT_MS = 5000;

/** An Api that counts its unsettled `handle` calls and can mark every later answer `Connection: close`. */
export interface InFlightApi extends Api {
  readonly pending: number;
  /** From now on, every answer carries `Connection: close`, including those of requests already in flight. */
  drain(): void;
  /** Resolves once no `handle` call is pending. */
  settled(): Promise<void>;
}

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

export interface ShutdownOptions {
  server: Server;
  api: InFlightApi;
  meter: Meter;
  /** The other stores (captcha's single-use store, a shared cache): closed before the meter. */
  stores: readonly { close(): Promise<void> }[];
  /** The engines: closed with the meter (scamrisk's report database, geoip's file watch). */
  lookup: Pick<Lookup, 'close'>;
  log: ServeLog;
  deadlineMs: number;
  /** Where the stop signals come from. @default the process */
  signals?: CliHost['signals'];
  /**
   * Does SIGHUP stop serve? Yes on a terminal: it is the terminal closing. Elsewhere (nohup, a
   * service manager, a container) it is ignored: serve has nothing to reload, and Node's own
   * default, dying at once, overrides even nohup's. @default true
   */
  hangupStops?: boolean;
}

/** Installs the SIGTERM, SIGINT and SIGHUP handlers (see hangupStops); resolves with the exit code once everything is closed. */
export function untilSignal(options: ShutdownOptions): Promise<number> {
  const { server, api, signals = process } = options;
  // The handlers' messages go to serve's own stderr, whoever emits the signal.
  const io = cliIo();
  let stopping = false;
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) =>
      withIo(io, () => {
        if (stopping) {
          note(`${signal} again: closing open connections now`);
          server.closeAllConnections();
          return;
        }
        stopping = true;
        note(`${signal} received: finishing ${api.pending} in-flight request(s), then exiting`);
        void stopGracefully(options).then(resolve);
      });
    const ignore = (signal: NodeJS.Signals) =>
      withIo(io, () => note(`${signal} ignored: serve is not on a terminal and has nothing to reload (SIGTERM stops it)`));
    for (const signal of STOP_SIGNALS) signals.on(signal, signal === 'SIGHUP' && options.hangupStops === false ? ignore : stop);
  });
}

async function stopGracefully({ server, api, meter, stores, lookup, log, deadlineMs }: ShutdownOptions): Promise<number> {
  api.drain();
  const closed = stopAccepting(server);
  // Connections that carry a request get `Connection: close` on its answer and end after it;
  // the ones left idle are closed here. Sweeping again each grace period catches a connection
  // whose answer was already on its way when the drain began.
  const idleSweep = setInterval(() => server.closeIdleConnections(), IDLE_GRACE_MS);
  const deadline = setTimeout(() => {
    note(`requests still open after ${deadlineMs / 1000} s: closing their connections`);
    server.closeAllConnections();
  }, deadlineMs);
  await closed;
  clearInterval(idleSweep);
  clearTimeout(deadline);

  // A cut request may still be giving its quota back: that must reach the database before it closes.
  if (!(await settledWithin(api, SETTLE_AFTER_CUT_MS))) {
    note(`${api.pending} request(s) still unsettled after ${SETTLE_AFTER_CUT_MS / 1000} s: closing the database anyway`);
  }
  let code = EXIT_OK;
  try {
    await lookup.close();
    for (const store of stores) await store.close();
    await meter.close();
    note('seclookup stopped: database closed');
  } catch (error) {
    log.error(error, 'closing the database');
    code = EXIT_FAILURE;
  }
  await log.close();
  if (log.droppedLines > 0) note(`seclookup: ${log.droppedLines.toLocaleString('en-US')} log line(s) were dropped while the log's destination was behind`);
  return code;
}

/**
 * Stop listening and resolve once every connection has ended. Not `http.Server#close()`: since
 * Node 19 it also destroys every idle keep-alive connection at once, which resets requests that
 * clients are writing on them at that moment. `net.Server#close()` only stops accepting.
 */
function stopAccepting(server: Server): Promise<void> {
  return new Promise((resolve) => NetServer.prototype.close.call(server, () => resolve()));
}

function settledWithin(api: InFlightApi, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void api.settled().then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
