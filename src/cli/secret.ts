/**
 * Where the CLI finds the operator secret that wraps captcha's signing keys (one setting):
 * `--secret-file FILE` (config "secret-file", `$SECLOOKUP_SECRET_FILE`), else the secret itself
 * in `$SECLOOKUP_SECRET`. Without either, on SQLite, a key file beside the database
 * (`<db>.secret`, 0600) is used, and made on first use: a copy of the .db alone then signs
 * nothing. On Redis there is no such default: the instances must share one secret, which
 * only the operator can hand to all of them.
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isSeclookupError } from '../errors.js';
import { createOperatorSecret, newOperatorSecretText, type OperatorSecret } from '../lib/operator-secret.js';
import { UsageError } from './errors.js';
import { cliEnv, cliPath } from './io.js';

/** The flag (also a config key and `$SECLOOKUP_SECRET_FILE`). */
export const SECRET_OPTIONS = { 'secret-file': { type: 'string' } } as const;

export const SECRET_HELP = `  --secret-file FILE     the operator secret (at least 32 bytes; make one with
                         openssl rand -base64 32) that wraps the captcha signing keys kept
                         in the store (default: $SECLOOKUP_SECRET_FILE, else the secret
                         itself in $SECLOOKUP_SECRET, else with --db the file <db>.secret,
                         made 0600 on first start; with --redis there is no default)
`;

export interface ResolvedSecret {
  secret: OperatorSecret | null;
  /** Where it came from, for messages (never the secret). */
  source: string;
}

/**
 * The operator secret for a command. `dbPath` is the SQLite file when the meter is SQLite
 * (null on Redis, or to look only at what the operator gave); its key file is made when absent.
 */
export function resolveOperatorSecret(
  secretFile: string | undefined,
  dbPath: string | null,
  command: string,
  env: Readonly<Record<string, string | undefined>> = cliEnv(),
): ResolvedSecret {
  if (secretFile !== undefined)
    return { secret: fromText(readSecretFile(secretFile, '--secret-file', command), `--secret-file ${secretFile}`, command), source: secretFile };
  const inline = env.SECLOOKUP_SECRET;
  if (inline !== undefined && inline !== '') return { secret: fromText(inline, 'SECLOOKUP_SECRET', command), source: 'SECLOOKUP_SECRET' };
  if (dbPath === null) return { secret: null, source: 'none' };
  const path = defaultSecretPath(dbPath);
  createIfAbsent(path);
  return { secret: fromText(readSecretFile(path, 'the key file', command), path, command), source: path };
}

/** The default key file of a database: beside it, `<db>.secret`. */
export function defaultSecretPath(dbPath: string): string {
  return `${dbPath}.secret`;
}

function readSecretFile(path: string, what: string, command: string): string {
  try {
    return readFileSync(cliPath(path), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new UsageError(`${what} ${path}: ${reason}`, command);
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

/** Write a new random secret 0600, whole or not at all: two processes starting at once keep the first. */
function createIfAbsent(path: string): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, newOperatorSecretText(), { mode: 0o600, flag: 'wx' });
    linkSync(temporary, path);
  } catch (error) {
    // EEXIST: there already. Anything else (a read-only folder) shows when the file is read.
    void error;
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Never written.
    }
  }
}
