/**
 * The two ways a command fails, and the exit codes they map to (documented in `--help`):
 *   2  usage: the command line itself is wrong (unknown command or option, missing or
 *      malformed value, unknown product name). Nothing was changed.
 *   1  failure: the command line was fine but the work failed (unknown plan or key in the
 *      database, lookup error, unreadable database, every feed failed).
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A mistake on the command line. `helpFor` names the command whose `--help` to point at. */
export class UsageError extends Error {
  readonly helpFor: string;

  constructor(message: string, helpFor = '') {
    super(message);
    this.name = 'UsageError';
    this.helpFor = helpFor;
  }
}

/** A command that ran and failed; the message is shown as is, with exit code 1. */
export class CommandError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CommandError';
  }
}
