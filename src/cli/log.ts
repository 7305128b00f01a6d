/**
 * The JSON log of `seclookup serve`, written with pino: one object per line, request lines at
 * `info`, unexpected errors at `error`, a crash at `fatal`. Lines go to pino's asynchronous
 * destination (sonic-boom), which buffers them in memory and writes them from libuv's thread
 * pool, so the event loop never waits on the disk or the pipe. A synchronous
 * `process.stdout.write` per request cost about 40% of the service's throughput.
 *
 * The price of buffering is that lines can be lost if the process dies without flushing: `close`
 * flushes on a clean stop, `flushOnFatal` on a crash. A destination that stops taking lines (a
 * stalled reader, a full disk, a closed terminal) is given at most BACKLOG_BYTES; later lines are
 * dropped and counted, so the service neither grows without bound nor stops.
 */
import { EventEmitter } from 'node:events';
import { closeSync, fstatSync, openSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { pino, type Logger } from 'pino';
// A CommonJS module: its default import is `module.exports`, which carries the class by name too.
import sonicBoom from 'sonic-boom';
import type { RequestLogEvent } from '../api/types.js';
import { describeError } from '../lib/describe-error.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Bytes of lines gathered before they are handed to the file or pipe (see createLineBatch):
 * under load, about 200 lines leave in one thread-pool write. Each `fs.write` call cost 20-35 µs
 * of main-thread time on the 2-core VM (waking a pool thread), so fewer, larger writes matter.
 * It stays below sonic-boom's largest single write (MAX_WRITE_BYTES), so a chunk leaves in one
 * write. When traffic is light, FLUSH_INTERVAL_MS bounds how long a line waits.
 */
const MIN_WRITE_BYTES = 48 * 1024;
/** sonic-boom's largest single write, raised from its 16 KiB so a write can carry MIN_WRITE_BYTES and more. */
const MAX_WRITE_BYTES = 64 * 1024;
/** The buffer lines are written into: a handed-over batch (at most this) leaves in one write. */
const BATCH_BYTES = MAX_WRITE_BYTES;
/** Longest a buffered line waits before it is written, so `tail -f` stays current at low traffic. */
const FLUSH_INTERVAL_MS = 1000;
/** How long `close` waits for the buffer to reach the file or pipe (a stalled reader must not hold up exit forever). */
const CLOSE_TIMEOUT_MS = 5000;
/**
 * Bytes of lines held for a destination that is not taking them (a stalled reader, a full disk):
 * about 80,000 request lines, two seconds of a busy server. Lines beyond are dropped and counted.
 * It was unbounded: with stdout on a full disk, serve grew by 140 MiB per 600,000 requests.
 */
const BACKLOG_BYTES = 16 * 1024 * 1024;

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** The log as `serve` uses it; pino stays behind this interface. */
export interface ServeLog {
  /** False when the level leaves request lines out, so the API need not build them at all. */
  readonly logsRequests: boolean;
  request(event: RequestLogEvent): void;
  /** An unexpected error; `context` is the request id or a short label. */
  error(error: unknown, context: string): void;
  fatal(error: unknown, context: string): void;
  /** Write out everything buffered and close the destination. Resolves within `timeoutMs` even if the reader is stuck. */
  close(timeoutMs?: number): Promise<void>;
  /** Lines dropped so far: the destination held BACKLOG_BYTES it had not taken, or its reader went away. */
  readonly droppedLines: number;
  /**
   * Open the log file again by its name (after a rotation renamed it: SIGUSR1) and write there
   * from now on: its path; null when the log is not a file opened by name (a pipe, a terminal,
   * shared with stderr); or, when the name cannot be opened now, the error, the log going on in
   * the file it has open.
   */
  reopen(): string | null | Error;
}

export interface ServeLogOptions {
  level: LogLevel;
  /** A file descriptor, a file path, or a writer that takes each batch of lines (serve run in process). @default 1 (stdout) */
  dest?: number | string | { write(text: string): unknown };
  /** Called once if the destination fails (other than a reader that went away), for an operator message. */
  onWriteError?: (error: Error) => void;
  /** Called once, when the first line is dropped because the destination is that far behind. */
  onBacklogFull?: (backlogBytes: number) => void;
  /** Called once, when the log's reader has gone away (EPIPE): no line is written after. */
  onReaderGone?: () => void;
  /** @internal the backlog's size, smaller in tests. @default BACKLOG_BYTES */
  backlogBytes?: number;
}

export function createServeLog({ level, dest = 1, onWriteError, onBacklogFull, onReaderGone, backlogBytes = BACKLOG_BYTES }: ServeLogOptions): ServeLog {
  // stdout redirected to a file is opened by its name: in append mode, and again on reopen.
  const target = dest === 1 ? (stdoutFile() ?? 1) : dest;
  const destination =
    typeof target === 'object' ? writerDestination(target) : fileDestination(target, backlogBytes, (bytes) => (droppedLines += countLines(bytes)));
  // A writer (serve in process) gets each turn's lines at once; a file or pipe, 48 KiB at a time.
  const batch = createLineBatch(destination, typeof dest === 'object' ? 0 : MIN_WRITE_BYTES);
  let reportedWriteError = false;
  let reportedReaderGone = false;
  let droppedLines = 0;
  let closing: Promise<void> | undefined;
  // A gone log reader (EPIPE) must not stop the service, as `main` does for stdout: the
  // destination stops writing. Any other failure (a full disk, a closed terminal) is reported
  // once, and writing is tried again with the next lines: a disk that frees up gets them.
  destination.on('error', (error: NodeJS.ErrnoException) => {
    if (destination.readerGone()) {
      if (!reportedReaderGone) onReaderGone?.();
      reportedReaderGone = true;
      return;
    }
    if (reportedWriteError) return;
    reportedWriteError = true;
    onWriteError?.(error);
  });
  destination.on('drop', (bytes: Buffer) => {
    if (droppedLines === 0) onBacklogFull?.(backlogBytes);
    droppedLines += countLines(bytes);
  });

  const logger: Logger = pino(
    {
      level,
      // No pid and hostname: one service per process, and the collector knows the host.
      base: null,
      // Every line brings its own ISO `time`: the request event has one already, and
      // formatting a second would cost time and give the line two clocks.
      timestamp: false,
      formatters: { level: (label) => ({ level: label }) },
    },
    batch,
  );

  const logsRequests = logger.isLevelEnabled('info');
  return {
    logsRequests,
    // The hot path: request lines skip pino's generic serializer (see requestLine).
    request: (event) => {
      if (logsRequests) batch.write(requestLine(event));
    },
    error: (error, context) => logger.error({ time: new Date().toISOString(), context, error: describeError(error) }),
    fatal: (error, context) => logger.fatal({ time: new Date().toISOString(), context, error: describeError(error) }),
    close(timeoutMs = CLOSE_TIMEOUT_MS) {
      closing ??= new Promise<void>((resolve) => {
        // Nobody is reading any more: nothing to wait for (what is still gathered is counted as dropped).
        if (destination.readerGone()) {
          batch.end();
          return resolve();
        }
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        destination.once('close', done).once('error', done);
        // Writes what is buffered (after a write in progress), then closes.
        batch.end();
        destination.end();
      });
      return closing;
    },
    get droppedLines() {
      return droppedLines;
    },
    reopen() {
      if (typeof target !== 'string' || closing) return null;
      // Tried first: sonic-boom's reopen of a name it cannot open reports it once, then keeps
      // a listener per failed try that closes the old descriptor when one finally succeeds.
      try {
        closeSync(openSync(target, 'a'));
      } catch (error) {
        return error as Error;
      }
      (destination as ReturnType<typeof fileDestination>).reopen();
      return target;
    },
  };
}

/**
 * Where file descriptor 1 leads when it is a regular file, by name (Linux's /proc), so the log
 * opens the file itself: in append mode, so a `copytruncate` rotation (the file truncated under
 * serve) leaves no run of NUL bytes up to serve's old offset as a shell's `>` would; and by name
 * again on SIGUSR1, so a rename-and-signal rotation moves the log to the new file. Null for a
 * pipe or a terminal, a deleted file, a file this process cannot open, or no /proc; and for a
 * file stderr shares without append mode (`> file 2>&1`): stderr would go on writing at its own
 * offset, over the lines the log appended (found by a reviewer).
 */
export function stdoutFile(): string | null {
  try {
    const stdout = fstatSync(1);
    if (!stdout.isFile()) return null;
    if (sameFile(fstatSync(2), stdout) && !appendMode(2)) return null;
    const path = readlinkSync('/proc/self/fd/1');
    if (!sameFile(statSync(path), stdout)) return null;
    closeSync(openSync(path, 'a'));
    return path;
  } catch {
    return null;
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** Whether a file descriptor was opened in append mode (O_APPEND, octal 02000 in /proc's `flags`). */
function appendMode(fd: number): boolean {
  const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
  return flags !== undefined && (Number.parseInt(flags, 8) & 0o2000) !== 0;
}

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

/**
 * A request line, the same bytes pino writes for `logger.info(event)`, built directly: measured
 * at half the cost of `JSON.stringify(event)` and a third of pino's serializer, per request.
 * Every field but `method` and `route` is JSON-safe by construction (an ISO time, `req_` and
 * hex, a product id, an error code, an IP address, numbers); those two are quoted properly.
 */
export function requestLine(e: RequestLogEvent): string {
  return `{"level":"info","time":"${e.time}","request_id":"${e.request_id}",${lineMiddle(e)}${e.latency_ms},"client_ip":${quoted(e.client_ip)}}\n`;
}

/** The text from `"method"` to `"latency_ms":`, for one route: its method, product, status and error code. */
interface LineMiddle {
  method: string;
  product: string | null;
  status: number;
  errorCode: string | null;
  text: string;
}

/**
 * Each route's last line middle: a server answers the same method, product, status and error on
 * a route request after request, so the line is a few joins instead of a dozen (each a string
 * node that the batch's join then walks). Bounded like the quoted texts: routes are the
 * router's patterns, but a caller could log any text.
 */
const lineMiddles = new Map<string, LineMiddle>();

function lineMiddle(e: RequestLogEvent): string {
  const known = lineMiddles.get(e.route);
  if (known !== undefined && known.method === e.method && known.status === e.status && known.errorCode === e.error_code && known.product === e.product)
    return known.text;
  // Joined, not added: one flat string, copied as one piece into every line that uses it.
  const text = [
    '"method":',
    jsonText(e.method),
    ',"route":',
    jsonText(e.route),
    ',"product":',
    quoted(e.product),
    ',"status":',
    e.status,
    ',"error_code":',
    quoted(e.error_code),
    ',"latency_ms":',
  ].join('');
  if (known !== undefined || lineMiddles.size < QUOTED_TEXTS_MAX)
    lineMiddles.set(e.route, { method: e.method, product: e.product, status: e.status, errorCode: e.error_code, text });
  return text;
}

/** Methods and route patterns quoted as JSON, remembered: a server sees few of them, request after request. */
const quotedTexts = new Map<string, string>();
const QUOTED_TEXTS_MAX = 256;

function jsonText(value: string): string {
  let text = quotedTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    // Methods are the client's text: bounded, so odd ones cannot grow the memo.
    if (quotedTexts.size < QUOTED_TEXTS_MAX) quotedTexts.set(value, text);
  }
  return text;
}

function quoted(value: string | null): string {
  return value === null ? 'null' : `"${value}"`;
}

/**
 * sonic-boom, the asynchronous destination pino's own `pino.destination` builds, fed about
 * MIN_WRITE_BYTES at a time (see createLineBatch), each written at once. Built here rather than
 * by pino: pino's build flushes synchronously at exit, and sonic-boom 4's synchronous flush
 * retries a failing write forever (ENOSPC, EIO), so serve hung after "stopped" when its stdout
 * was a full disk or a closed terminal. sonic-boom 5 fixes that loop, and nothing flushes at
 * exit but `close`.
 */
function fileDestination(dest: number | string, backlogBytes: number, onSkipped: (bytes: Buffer) => void) {
  const sonic = new sonicBoom.SonicBoom({
    dest,
    sync: false,
    minLength: 0,
    maxWrite: MAX_WRITE_BYTES,
    maxLength: backlogBytes,
    // Buffers, not strings: in string mode sonic-boom measures its whole pending text
    // (`Buffer.byteLength`) on every write and encodes each written chunk twice.
    contentMode: 'buffer',
  });
  let readerGone = false;
  // What was handed over and not yet written (`writtenOfFirst` bytes of the first are): when the
  // reader goes, those lines are lost too, and counted with the ones skipped after.
  const unwritten: Buffer[] = [];
  let writtenOfFirst = 0;
  sonic.on('write', (bytes: number) => {
    for (let left = bytes; left > 0 && unwritten.length > 0; ) {
      const rest = unwritten[0].length - writtenOfFirst;
      if (left < rest) {
        writtenOfFirst += left;
        return;
      }
      left -= rest;
      unwritten.shift();
      writtenOfFirst = 0;
    }
  });
  // A chunk over the backlog is dropped at once (counted by the log as such): never written.
  sonic.on('drop', (bytes: Buffer) => {
    const at = unwritten.lastIndexOf(bytes);
    if (at !== -1) unwritten.splice(at, 1);
  });
  sonic.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' || readerGone) return;
    readerGone = true;
    if (unwritten.length > 0) onSkipped(Buffer.concat([unwritten[0].subarray(writtenOfFirst), ...unwritten.slice(1)]));
    unwritten.length = 0;
  });
  return Object.assign(sonic, {
    readerGone: () => readerGone,
    // sonic-boom's types know only strings; in buffer mode it takes buffers.
    writeBytes: (bytes: Buffer) => {
      if (readerGone) return onSkipped(bytes);
      unwritten.push(bytes);
      sonic.write(bytes as unknown as string);
    },
  });
}

/** A writer seen as the part of a sonic-boom destination the log uses: lines are written at once, `end` closes. */
function writerDestination(writer: { write(text: string): unknown }) {
  const events = new EventEmitter();
  return Object.assign(events, {
    readerGone: () => false,
    writeBytes(bytes: Buffer): void {
      writer.write(bytes.toString('utf8'));
    },
    end(): void {
      queueMicrotask(() => events.emit('close'));
    },
  });
}

/**
 * Lines written as UTF-8 into a buffer as they come, and the filled part handed to the
 * destination: once it holds `holdBytes`, or when the oldest line has waited FLUSH_INTERVAL_MS;
 * with `holdBytes` 0, at the end of each event-loop turn (as the adapters cork their answers).
 * sonic-boom measures its pending buffer on every `write`: called per line, its main-thread cost
 * was 2.5-4 µs a line in a micro-benchmark; gathered to 48 KiB, its write is paid once per about
 * 200 lines. Each line goes into the buffer as it is logged, while its text is fresh in the
 * cache: under serve's load, joining 200 gathered lines into one text took about 95 µs and
 * making a Buffer of it 29 µs more, about 0.6 µs a line, against 0.4 to write each line.
 * A batch at least half full is handed over as it is and never written again (sonic-boom holds
 * it until the disk has it), and the next lines go into a new buffer; a smaller one is copied out.
 * @internal exported for its tests
 */
export function createLineBatch(destination: { writeBytes(bytes: Buffer): unknown }, holdBytes: number) {
  let buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  function handOver(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (used === 0) return;
    let filled: Buffer;
    if (used >= BATCH_BYTES / 2) {
      // Handed over as it is, and never written again: the next lines go into a new buffer.
      filled = buffer.subarray(0, used);
      buffer = Buffer.allocUnsafeSlow(BATCH_BYTES);
    } else {
      // Mostly empty (a quiet second, the end of a turn, close): copied out at its size and the
      // buffer kept, so a destination holding what it was given (a stalled reader) holds only
      // the lines, not 64 KiB for each.
      filled = Buffer.allocUnsafeSlow(used);
      buffer.copy(filled, 0, 0, used);
    }
    used = 0;
    destination.writeBytes(filled);
  }
  return {
    write(line: string): boolean {
      // After `end` the destination is closing: a late line (an error during exit) is dropped.
      if (ended) return true;
      // A UTF-16 unit is at most 3 bytes of UTF-8: room is checked before writing, so no line is cut.
      if (used + line.length * 3 > BATCH_BYTES) {
        handOver();
        // A line larger than the buffer (a long stack trace) leaves on its own, in order.
        if (line.length * 3 > BATCH_BYTES) {
          destination.writeBytes(Buffer.from(line, 'utf8'));
          return true;
        }
      }
      const first = used === 0;
      used += buffer.write(line, used);
      if (holdBytes === 0) {
        if (first) setImmediate(handOver);
      } else if (used >= holdBytes) handOver();
      // Unref'd: a line waiting for company must not hold the process open (close hands it over).
      else if (first) timer = setTimeout(handOver, FLUSH_INTERVAL_MS).unref();
      return true;
    },
    /** Hand over what has been gathered, and take no more. */
    end(): void {
      handOver();
      ended = true;
    },
  };
}

/**
 * On an uncaught exception (Node 20 turns an unhandled rejection into one), log it as fatal,
 * write out the buffered lines and exit 1. Without this the crash would drop the buffer.
 * `note` tells the operator on stderr, as Node itself would have.
 */
export function flushOnFatal(log: ServeLog, note: (text: string) => void): void {
  let crashing = false;
  process.on('uncaughtException', (error, origin) => {
    log.fatal(error, origin);
    if (crashing) return;
    crashing = true;
    note(`seclookup: fatal error, exiting: ${describeError(error)}`);
    void log.close().finally(() => process.exit(1));
  });
}

export { describeError } from '../lib/describe-error.js';
