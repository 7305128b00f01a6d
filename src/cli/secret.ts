/**
 * Where the CLI finds the operator secret that wraps captcha's signing keys (one setting):
 * `--secret-file FILE` (config "secret-file", `$SECLOOKUP_SECRET_FILE`), else the secret itself
 * in `$SECLOOKUP_SECRET`. Without either, on SQLite, a key file beside the database
 * (`<db>.secret`, 0600) is used, and made on first use: a copy of the .db alone then signs
 * nothing. On Redis there is no such default: the instances must share one secret, which
 * only the operator can hand to all of them.
 *
 * A key file is made only for a store that holds no wrapped signing key yet: for one that
 * does, a new random secret could never unwrap them (a forgotten --secret-file, a lost
 * `<db>.secret`), so the command stops instead, naming the file. A key file is held as the
 * database files are (src/lib/sqlite-file.ts): one of this user's with a wider mode is made
 * 0600; another user's that others may read is used with a warning.
 */
import { chmodSync, linkSync, lstatSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isSeclookupError } from '../errors.js';
import { createOperatorSecret, newOperatorSecretText, type OperatorSecret } from '../lib/operator-secret.js';
import type { SettingsStore } from '../metering/types.js';
import { holdsWrappedSigningKeys } from '../products/captcha/key-ring.js';
import { CommandError, UsageError } from './errors.js';
import { cliEnv, cliPath } from './io.js';
import { note } from './output.js';

/** The flag (also a config key and `$SECLOOKUP_SECRET_FILE`). */
export const SECRET_OPTIONS = { 'secret-file': { type: 'string' } } as const;

export const SECRET_HELP = `  --secret-file FILE     the operator secret (at least 32 bytes; make one with
                         openssl rand -base64 32) that wraps the captcha signing keys kept
                         in the store (default: $SECLOOKUP_SECRET_FILE, else the secret
                         itself in $SECLOOKUP_SECRET, else with --db the file <db>.secret,
                         made 0600 on first start, never for a store that already holds
                         wrapped signing keys; with --redis there is no default)
`;

export interface ResolvedSecret {
  secret: OperatorSecret | null;
  /** Where it came from, for messages (never the secret). */
  source: string;
}

export interface SecretOptions {
  /**
   * The meter whose signing keys the secret wraps: a key file is made for it only while it holds
   * none. Without it (a secret given by the operator is only being checked), none is made.
   */
  store?: SettingsStore;
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The operator secret for a command. `dbPath` is the SQLite file when the meter is SQLite
 * (null on Redis, or to look only at what the operator gave); its key file `<db>.secret` is made
 * when absent and the store holds no wrapped signing key (said on stderr, naming it). Problems
 * with a key file (missing, unreadable, too short, not creatable) are CommandErrors naming the
 * file and the cause; a `$SECLOOKUP_SECRET` too short is a usage error.
 */
export async function resolveOperatorSecret(
  secretFile: string | undefined,
  dbPath: string | null,
  command: string,
  { store, env = cliEnv() }: SecretOptions = {},
): Promise<ResolvedSecret> {
  if (secretFile !== undefined) {
    const path = cliPath(secretFile);
    return { secret: fromFile(path, `--secret-file ${secretFile}`), source: secretFile };
  }
  const inline = env.SECLOOKUP_SECRET;
  if (inline !== undefined && inline !== '') return { secret: fromText(inline, 'SECLOOKUP_SECRET', command), source: 'SECLOOKUP_SECRET' };
  if (dbPath === null) return { secret: null, source: 'none' };
  const path = defaultSecretPath(dbPath);
  // Whoever may write the database's folder could plant a link there to a file whose text they
  // know (or to one the mode check below would change): the default key file is a file.
  if (isSymbolicLink(path))
    throw new CommandError(
      `the key file ${path} is a symbolic link: the default key file must be a regular file (name a linked secret, such as a mounted one, with --secret-file)`,
    );
  if (!exists(path)) {
    if (!store) return { secret: null, source: 'none' };
    if (await holdsWrappedSigningKeys(store)) throw new CommandError(missingKeyFile(dbPath, path));
    if (createIfAbsent(path)) note(`seclookup: created the operator secret file ${path} (0600): keep it, and back it up, with the database`);
  }
  return { secret: fromFile(path, `the key file ${path}`), source: path };
}

/** The default key file of a database: beside it, `<db>.secret`. */
export function defaultSecretPath(dbPath: string): string {
  return `${dbPath}.secret`;
}

function missingKeyFile(dbPath: string, path: string): string {
  return (
    `the database ${dbPath} holds captcha signing keys wrapped under an operator secret, but its key file ${path} does not exist: ` +
    'pass the secret the server uses (--secret-file FILE, or SECLOOKUP_SECRET); no new key file is made, as a new secret could not unwrap them ' +
    '(if that secret is lost: write a new one with `openssl rand -base64 32 > FILE`, then run `seclookup sitekeys rotate-signing-key --secret-file FILE --force`)'
  );
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false; // absent, or said when the file is read
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (error) {
    // Anything but "not there" (a folder this user may not search) is said when the file is read.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** The secret in the key file `path`, named `what` in messages; its mode checked first (see guardMode). */
function fromFile(path: string, what: string): OperatorSecret {
  guardMode(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${what}: ${errnoText(error)}`, { cause: error });
  }
  try {
    return createOperatorSecret(text);
  } catch (error) {
    // A truncated file (a full disk, a copy cut short) is the file's problem, not the command line's.
    if (isSeclookupError(error, 'invalid_option')) throw new CommandError(`${what}: ${error.message}`, { cause: error });
    throw error;
  }
}

function fromText(text: string, where: string, command: string): OperatorSecret {
  try {
    return createOperatorSecret(text);
  } catch (error) {
    if (isSeclookupError(error, 'invalid_option')) throw new UsageError(`${where}: ${error.message}`, command);
    throw error;
  }
}

/**
 * A key file others may read is held like a database file: one of this user's is made 0600
 * (its group and other permissions dropped); another user's (a file provisioned by root) that
 * every user may read, or others may write, is used with a warning naming it and its mode. A
 * file readable by its group only (0640, the service's group) is left alone. A file reached
 * through a symbolic link (a `--secret-file` on a mounted secret) is never changed: the link
 * may lead anywhere; it is only warned about.
 */
function guardMode(path: string): void {
  let mode: number;
  let uid: number;
  let linked: boolean;
  try {
    linked = lstatSync(path).isSymbolicLink();
    const stats = statSync(path);
    if (!stats.isFile()) return;
    ({ mode, uid } = stats);
  } catch {
    return; // said when the file is read
  }
  if ((mode & 0o077) === 0) return;
  const shown = (mode & 0o777).toString(8).padStart(4, '0');
  const me = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (linked) {
    if ((mode & 0o027) !== 0)
      note(`seclookup: warning: the operator secret file ${path} leads to a file of mode ${shown}: other users may read it; make that file 0600`);
    return;
  }
  if (me === undefined || me === uid) {
    try {
      chmodSync(path, mode & 0o600);
      return;
    } catch (error) {
      note(`seclookup: warning: the operator secret file ${path} has mode ${shown} and cannot be made 0600 (${errnoText(error)}): other users may read it`);
      return;
    }
  }
  if ((mode & 0o027) !== 0)
    note(
      `seclookup: warning: the operator secret file ${path} has mode ${shown} (owner uid ${uid}, not this user): other users may read it; make it 0600, or 0640 for the service's group`,
    );
}

/** An fs error as its code and cause (`EACCES: permission denied`), without the path Node repeats. */
function errnoText(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const cause = String(message)
    .replace(/^[A-Z0-9_]+: /, '')
    .replace(/, \w+ '.*'$/, '');
  return code ? `${code}: ${cause}` : cause;
}

/**
 * Write a new random secret 0600, whole or not at all: two processes starting at once keep the
 * first. True when this call made it; false when it was there already. A folder this user may
 * not write, a full disk: a CommandError naming the file and the cause.
 */
function createIfAbsent(path: string): boolean {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, newOperatorSecretText(), { mode: 0o600, flag: 'wx' });
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new CommandError(`cannot create the operator secret file ${path}: ${errnoText(error)}`, { cause: error });
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Never written.
    }
  }
}
