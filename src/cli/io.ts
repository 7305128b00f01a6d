/**
 * What a command reads from and writes to its process: stdout, stderr, the environment and the
 * working directory. `main(argv, io)` runs a command with the io given (the tests run the CLI in
 * process this way); the binary passes the process's own. Commands reach it through `cliIo()`,
 * which follows the command's async calls, so two commands running at once each see their own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';

/** Where output goes: a stream's `write`, or anything that takes text. */
export interface CliWriter {
  /** Writes `text`; a writer that takes `callback` calls it once the text is written, with the error if it could not be. */
  write(text: string, callback?: (error?: Error | null) => void): unknown;
  /** Set on a terminal (progress bars are drawn only there). */
  isTTY?: boolean;
}

export interface CliIo {
  stdout: CliWriter;
  stderr: CliWriter;
  /** The environment the command reads its `SECLOOKUP_*` fallbacks from. */
  env: Readonly<Record<string, string | undefined>>;
  /** The folder relative paths (`--db seclookup.db`, `--data-dir data`) are resolved against. */
  cwd: string;
  /**
   * For `serve` run in a process it does not own (the tests): where its stop signals come from
   * and what its exit does. Given, `serve` leaves the process alone: no signal or crash handler,
   * no `process.exit`, and its JSON log goes to `stdout` above instead of file descriptor 1.
   * @default the process itself
   */
  host?: CliHost;
  /** The clock `doctor` dates the data against (tests fix it, so ages do not drift with the calendar). @default Date.now */
  now?: () => number;
}

/**
 * The signals that stop `serve` gracefully. SIGHUP is among them when serve runs on a terminal:
 * it is what a closing terminal sends, and Node's default for it is to die at once, losing the
 * log's buffer and the answers not yet committed (see ShutdownOptions.hangupStops).
 */
export type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/**
 * The signals `serve` handles: its stop signals, SIGUSR1 (reopen the log file, as nginx does;
 * Node's default would open its debugger, on which any local user could run code in serve) and
 * SIGUSR2 (ignored; Node's default would kill it at once, losing the log's buffer).
 */
export type ServeSignal = StopSignal | 'SIGUSR1' | 'SIGUSR2';

/** The signals and the exit `serve` would otherwise take from its process. */
export interface CliHost {
  /** Emits 'SIGTERM', 'SIGINT' and 'SIGHUP' (an EventEmitter the caller emits on); `off`, when there, lets serve take its listeners back. */
  signals: {
    on(signal: ServeSignal, listener: (signal: NodeJS.Signals) => void): unknown;
    off?(signal: ServeSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  };
  /** Called with serve's exit code once it has stopped (where the binary would end the process). */
  exit(code: number): void;
}

const current = new AsyncLocalStorage<CliIo>();

/** The process's own io. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Run `work` (and every async call it makes) with `io`. */
export function withIo<T>(io: CliIo, work: () => T): T {
  return current.run(io, work);
}

/** The io of the command running now (the process's own outside `withIo`). */
export function cliIo(): CliIo {
  return current.getStore() ?? processIo();
}

/** The environment of the command running now. */
export function cliEnv(): Readonly<Record<string, string | undefined>> {
  return cliIo().env;
}

/** A path from the command line, absolute: relative ones are taken from the command's working directory. */
export function cliPath(path: string): string {
  return resolve(cliIo().cwd, path);
}
