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
import { isatty } from 'node:tty';
import type { InFlightApi } from '../api/in-flight.js';
import type { Meter } from '../metering/types.js';
import type { Lookup } from '../lookup.js';
import { EXIT_FAILURE, EXIT_OK } from './errors.js';
import type { ServeLog } from './log.js';
import { note } from './output.js';
import { cliIo, withIo, type CliHost, type ServeSignal, type StopSignal } from './io.js';

const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** In-flight requests get this long after the signal before their connections are cut. */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000;
/** An open connection that sends nothing for this long during the drain is closed. */
const IDLE_GRACE_MS = 1000;
/** After the cut, how long to wait for the cut requests' refunds before closing the database anyway. */
const SETTLE_AFTER_CUT_MS = 5000;

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
}

/**
 * serve's stop signals, caught from before its slow start (loading its modules and engines,
 * opening the database): without a handler, a SIGTERM then would kill the process with no word
 * (exit 143) where the docs promise a clean stop and exit 0. While serve starts, a stop signal
 * is only remembered (`received`), and serve gives up at its next step; once it listens,
 * `untilSignal` stops it gracefully, at once if a signal came in the meantime.
 */
export interface StopSignals {
  /** The first stop signal received, or null. */
  readonly received: NodeJS.Signals | null;
  /** Resolves with the exit code once serve has stopped gracefully after a stop signal. */
  untilSignal(options: ShutdownOptions): Promise<number>;
  /** Stop listening for the signals (serve gave up before it listened). */
  release(): void;
  /**
   * Stop gracefully, as on SIGTERM, for a reason of serve's own (said on stderr first), and exit
   * with `code`. Nothing once a stop has begun, or before serve listens.
   */
  stopFor(reason: string, code: number): void;
}

/** The catcher of each signal source (the process, or a test's emitter), so the one made before serve's modules load is the one serve uses. */
const catchers = new WeakMap<object, StopSignals>();

/**
 * Catch the stop signals of the command running now (its io's host, else the process): SIGTERM,
 * SIGINT, and SIGHUP when it is a closing terminal (elsewhere SIGHUP is ignored, with a line on
 * stderr: serve has nothing to reload, and Node's default, dying at once, overrides even nohup's).
 * And the two Node would otherwise act on: SIGUSR1 reopens the log file (log rotation), never
 * Node's debugger (which would let any local user run code in serve), and SIGUSR2 is ignored
 * (Node's default kills at once). Called again for the same source before `release`, it returns
 * the same catcher.
 */
export function catchStopSignals(): StopSignals {
  const io = cliIo();
  const signals: SignalSource = io.host?.signals ?? process;
  const existing = catchers.get(signals);
  if (existing) return existing;
  // SIGHUP is a closing terminal only when there is one (else nohup, systemd or a container).
  const hangupStops = io.host !== undefined || [0, 1, 2].some((fd) => isatty(fd));
  let received: NodeJS.Signals | null = null;
  let stopping = false;
  let running: { options: ShutdownOptions; resolve: (code: number) => void } | null = null;

  const beginStop = (signal: NodeJS.Signals) => {
    const { options, resolve } = running!;
    stopping = true;
    note(`${signal} received: finishing ${options.api.pending} in-flight request(s), then exiting`);
    void stopGracefully(options).then(resolve);
  };
  // The handlers' messages go to serve's own stderr, whoever emits the signal.
  const stop = (signal: NodeJS.Signals) =>
    withIo(io, () => {
      received ??= signal;
      if (!running) return; // still starting: serve sees `received` at its next step
      if (stopping) {
        note(`${signal} again: closing open connections now`);
        running.options.server.closeAllConnections();
        return;
      }
      beginStop(signal);
    });
  const ignore = (signal: NodeJS.Signals) =>
    withIo(io, () => note(`${signal} ignored: serve is not on a terminal and has nothing to reload (SIGTERM stops it)`));
  const reopenLog = (signal: NodeJS.Signals) =>
    withIo(io, () => {
      if (!running || stopping) return note(`${signal}: the log is not open yet or is closing: nothing to reopen`);
      const reopened = running.options.log.reopen();
      if (reopened instanceof Error) note(`${signal}: cannot reopen the log file (${reopened.message}): still writing to the file it had open`);
      else if (reopened === null)
        note(`${signal} ignored: the log is not a file opened by name (a pipe, a terminal, or a file stderr shares without >>): nothing to reopen`);
      else note(`${signal}: reopening the log file ${reopened}`);
    });
  const ignoreUser2 = (signal: NodeJS.Signals) => withIo(io, () => note(`${signal} ignored (SIGUSR1 reopens the log file, SIGTERM stops serve)`));
  const listeners: (readonly [ServeSignal, (signal: NodeJS.Signals) => void])[] = [
    ...STOP_SIGNALS.map((signal) => [signal, signal === 'SIGHUP' && !hangupStops ? ignore : stop] as const),
    ['SIGUSR1', reopenLog],
    ['SIGUSR2', ignoreUser2],
  ];
  for (const [signal, listener] of listeners) signals.on(signal, listener);

  const catcher: StopSignals = {
    get received() {
      return received;
    },
    untilSignal(options) {
      return new Promise((resolve) => {
        running = { options, resolve };
        if (received) withIo(io, () => beginStop(received!));
      });
    },
    release() {
      catchers.delete(signals);
      for (const [signal, listener] of listeners) signals.off?.(signal, listener);
    },
    stopFor(reason, code) {
      withIo(io, () => {
        if (!running || stopping) return;
        const { options, resolve } = running;
        stopping = true;
        note(`${reason}: finishing ${options.api.pending} in-flight request(s), then exiting`);
        void stopGracefully(options).then((exit) => resolve(exit === EXIT_OK ? code : exit));
      });
    },
  };
  catchers.set(signals, catcher);
  return catcher;
}

type SignalSource = CliHost['signals'];

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
  if (log.droppedLines > 0)
    note(`seclookup: ${log.droppedLines.toLocaleString('en-US')} log line(s) were dropped (the log's destination was behind, or its reader gone)`);
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
