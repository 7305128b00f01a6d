/**
 * Output helpers. Convention: results go to stdout (so they can be piped), messages about
 * what happened go to stderr. `--json` output is exactly one JSON document on stdout.
 */
import { cliIo } from './io.js';

/** Write a line (or several) to stdout. */
export function out(text = ''): void {
  cliIo().stdout.write(text + '\n');
}

/**
 * Write `text` and a newline to stdout and wait until it is written: rejects with the write's
 * error (a full disk, a reader gone: EPIPE too). For output that must be known to have arrived,
 * such as a secret shown only once. A writer whose `write` takes no callback counts as written
 * once `write` returns.
 */
export function outDelivered(text: string): Promise<void> {
  const { stdout } = cliIo();
  return new Promise((resolve, reject) => {
    try {
      if (stdout.write.length < 2) {
        stdout.write(`${text}\n`);
        resolve();
        return;
      }
      stdout.write(`${text}\n`, (error) => {
        if (!error) return resolve();
        // Its caller says the failure, with what it did about it: the binary need not say it again.
        reportedWriteErrors.add(error);
        reject(error);
      });
    } catch (error) {
      reject(error);
    }
  });
}

/** Write errors an `outDelivered` caller reports itself. */
const reportedWriteErrors = new WeakSet<Error>();

/**
 * Is this failed write of stdout one the command reports itself (output it waited for, such as
 * a secret shown once)? The binary then does not print its own "cannot write the output" too.
 * The write's callback runs before the stream's 'error' event, so this is known by then.
 */
export function writeErrorReported(error: Error): boolean {
  return reportedWriteErrors.has(error);
}

/** Write a line to stderr. */
export function note(text: string): void {
  cliIo().stderr.write(text + '\n');
}

/** The width every `--help` fits in. */
export const HELP_WIDTH = 100;

/**
 * `text` word-wrapped for a help: its first line goes after `start` (what precedes it on that
 * line; its last line if several), the others are indented to `indent` columns, and none is
 * wider than HELP_WIDTH (a word longer than a line stays whole).
 */
export function wrapHelp(start: string, text: string, indent: number): string {
  const lines: string[] = [];
  let line = start;
  let empty = true;
  for (const word of text.split(' ')) {
    // The last line's length, plus the space before the word.
    if (!empty && line.length - line.lastIndexOf('\n') + word.length > HELP_WIDTH) {
      lines.push(line);
      line = ' '.repeat(indent) + word;
    } else line = empty ? line + word : `${line} ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}

/** One JSON document, pretty-printed, on stdout. */
export function printJson(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/**
 * A plain-text table with left-aligned columns separated by two spaces, e.g.
 *
 *   ID  PRODUCT    KIND
 *   1   useragent  secret
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `null` quota means unlimited, as the meter stores it. */
export function formatQuota(quota: number | null): string {
  return quota === null ? 'unlimited' : String(quota);
}

/** A CIDR allowlist for a table cell; an empty list means any address. */
export function formatIpAllow(ipAllow: readonly string[]): string {
  return ipAllow.length === 0 ? 'any' : ipAllow.join(',');
}
