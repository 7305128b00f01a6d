import { existsSync, statSync } from 'node:fs';
import { databaseFileProblem } from '../lib/sqlite-file.js';
import { createSqliteMeter } from '../metering/sqlite/meter.js';
import type { Meter } from '../metering/types.js';
import { redactRedisUrl } from '../metering/redis/url.js';
import { parseInteger, resolveDbPath, resolveRedisUrl } from './args.js';
import { explainDatabaseError, explainMeterError } from './db-errors.js';
import { CommandError, UsageError } from './errors.js';
import { cliEnv } from './io.js';
import { shellWord } from './shell-word.js';

/**
 * Where keys, plans and usage live: `--redis URL` (or `$SECLOOKUP_REDIS`) wins over `--db FILE`,
 * as serve takes them (its --db then holds scamrisk's reports). Admin commands pick one store
 * with chooseAdminStore first.
 */
export interface MeterFlags {
  db?: string;
  /** `null`: the SQLite file even when `$SECLOOKUP_REDIS` is set (an admin command given `--db`). */
  redis?: string | null;
}

/**
 * The one store a keys, plans or sitekeys command works on. `--db FILE` and `--redis URL` name
 * two stores, so both is a usage error; an explicit `--db` wins over `$SECLOOKUP_REDIS`, as every
 * flag wins over the environment: a shell or container with the variable exported must not turn
 * `keys create --db F` into a key in its Redis.
 */
export function chooseAdminStore(flags: MeterFlags, command: string): MeterFlags {
  if (flags.db !== undefined && typeof flags.redis === 'string')
    throw new UsageError('give --db FILE or --redis URL, not both: they name two different stores', command);
  return flags.db !== undefined ? { db: flags.db, redis: null } : { redis: flags.redis };
}

/**
 * When running servers see a key revoked or a plan changed in this store, for messages. On
 * SQLite a server sees another process's commit on its next request; on Redis each server answers
 * a key (and its plan) from memory for the meter's key cache time, which serve leaves at its default.
 */
export async function whenServersSeeChanges(flags: MeterFlags): Promise<string> {
  if (!resolveRedisUrl(flags.redis)) return 'at once';
  const { DEFAULT_KEY_CACHE_MS } = await loadRedis();
  return `within ${DEFAULT_KEY_CACHE_MS / 1000} s (each server on this Redis keeps a key and its plan in memory that long)`;
}

/** The meter's location, for messages: the Redis URL without its password, or the database file. */
export function describeMeter(flags: MeterFlags): string {
  const redis = resolveRedisUrl(flags.redis);
  if (!redis) return resolveDbPath(flags.db);
  return redactRedisUrl(redis);
}

/**
 * `seclookup <command>` on the store this command used, for a message's hint: a bare command
 * reads ./seclookup.db (or $SECLOOKUP_DB), not a --db file elsewhere or a Redis. A Redis URL's
 * password shows as `***`, for the operator to put back.
 */
export function onSameStore(command: string, flags: MeterFlags): string {
  return `seclookup ${command} ${resolveRedisUrl(flags.redis) ? '--redis' : '--db'} ${shellWord(describeMeter(flags))}`;
}

/**
 * Open the meter: Redis when a URL is given (several instances share it), else the SQLite file.
 * Commands that only read or change existing state pass `create: false`, so a mistyped `--db`
 * path fails clearly instead of creating an empty file. `verify` (serve): a SQLite file is
 * checked whole first, so a damaged one stops serve at start rather than failing its lookups.
 */
export async function openMeter(flags: MeterFlags, { create, verify = false }: { create: boolean; verify?: boolean }): Promise<Meter> {
  const leaseMs = resolveLeaseMs();
  const redis = resolveRedisUrl(flags.redis);
  if (redis) {
    const { createRedisMeter } = await loadRedis();
    return createRedisMeter(redis, { leaseMs });
  }
  const path = resolveDbPath(flags.db);
  if (!create && !existsSync(path)) {
    throw new CommandError(`no database at ${path}; pass --db FILE (or set SECLOOKUP_DB), or create one with \`seclookup serve\` or \`seclookup keys create\``);
  }
  // An empty file (`touch`, a truncated copy) is no database yet: SQLite would write one into it.
  if (!create && fileSize(path) === 0 && !fileSize(`${path}-wal`)) {
    throw new CommandError(
      `${path} is an empty file, not a seclookup database; pass --db FILE (or set SECLOOKUP_DB), or create one with \`seclookup serve\` or \`seclookup keys create\``,
    );
  }
  // A database to create must be creatable: said in words, naming the folder, not as SQLite's "unable to open database file".
  const problem = create && !existsSync(path) ? databaseFileProblem(path, { write: true }) : null;
  if (problem) throw new CommandError(`cannot create the database ${path}: ${problem}`);
  try {
    return createSqliteMeter(path, { leaseMs, verify });
  } catch (error) {
    // A damaged file is said as when a command meets the damage later: "cannot use the database".
    const corrupt = sqliteCodeIn(error, /^SQLITE_CORRUPT/);
    if (corrupt) throw explainDatabaseError(path, corrupt, { write: false });
    throw new CommandError(openFailure(path, 'metering database', error), { cause: error });
  }
}

/** The size of the regular file at `path`; null when there is none (absent, or a folder). */
function fileSize(path: string): number | null {
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats?.isFile() ? stats.size : null;
}

/** The error in `error` or its causes whose SQLite code matches `code`. */
function sqliteCodeIn(error: unknown, code: RegExp): Error | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const found = (current as { code?: unknown }).code;
    if (typeof found === 'string' && code.test(found)) return current;
  }
  return undefined;
}

/**
 * Why a seclookup SQLite file did not open, in one line naming the file: the cause the file
 * system shows (a read-only file, a folder where SQLite cannot make its -wal and -shm files)
 * rather than SQLite's "attempt to write a readonly database", which names neither.
 */
export function openFailure(path: string, what: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const sqlite = /attempt to write a readonly database|unable to open database file|readonly database|disk I\/O error/i.test(message);
  const problem = sqlite ? databaseFileProblem(path, { write: true }) : null;
  return problem ? `cannot open ${what} "${path}": ${problem}` : message;
}

/**
 * `$SECLOOKUP_LEASE_MS`: how long a reservation is held before it goes back unless its answer
 * committed it (what a crashed instance leaves billed, for that long). Else the stores' 60 s.
 */
function resolveLeaseMs(): number | undefined {
  const value = cliEnv().SECLOOKUP_LEASE_MS;
  // Named as the variable, its help the running command's (keys, plans, serve).
  return value ? parseInteger(value, '$SECLOOKUP_LEASE_MS', '', { min: 1 }) : undefined;
}

/** The Redis stores, loaded only when asked for: ioredis is an optional peer dependency. */
export async function loadRedis(): Promise<typeof import('../metering/redis/index.js')> {
  try {
    return await import('../metering/redis/index.js');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes('ioredis')) {
      throw new CommandError('--redis needs the ioredis package: npm install ioredis', { cause: error });
    }
    throw error;
  }
}

/**
 * Run `work` with an open meter and always close it (the WAL checkpointed, the Redis connection
 * quit). `write: false` (default true) for work that only reads, so a failure is not said to be
 * one of writing.
 */
export async function withMeter<T>(flags: MeterFlags, options: { create: boolean; write?: boolean }, work: (meter: Meter) => Promise<T>): Promise<T> {
  const meter = await openMeter(flags, options);
  try {
    return await work(meter);
  } catch (error) {
    throw explainMeterError(describeMeter(flags), resolveRedisUrl(flags.redis) ? null : resolveDbPath(flags.db), error, { write: options.write ?? true });
  } finally {
    await meter.close();
  }
}
