/**
 * The Redis connection the stores share: how it is opened (fail fast, bounded commands,
 * reconnection forever), how it waits for its first connection, how Lua scripts run (EVALSHA,
 * EVAL on NOSCRIPT), and how every Redis failure becomes a SeclookupError('store_failed') whose
 * message names neither a key nor a secret. This folder is the only place that loads ioredis.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { SeclookupError, invalidOption } from '../../errors.js';
import { isClusterUrl, parseClusterUrl, parseServerUrl, redisUrlProblem } from './url.js';

/** A standalone connection or a Cluster; the stores use only what both offer. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /**
   * Longest wait for one Redis command (ioredis `commandTimeout`); a command that takes longer
   * fails with store_failed. Keep it below the API's `meterTimeoutMs` (2 s). Applies to
   * connections seclookup opens from a URL; a client you pass keeps its own setting.
   * @default 1000
   */
  commandTimeoutMs?: number;
  /** Longest wait for one TCP connection attempt (ioredis `connectTimeout`). @default 2000 */
  connectTimeoutMs?: number;
  /** Longest pause between reconnection attempts; attempts never stop. @default 2000 */
  maxReconnectDelayMs?: number;
  /**
   * Told about connection errors (refused, reset, timed out) of a connection seclookup opened,
   * as store_failed errors; calls report their own failures anyway. @default none
   */
  onError?: (error: SeclookupError) => void;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * The ioredis options seclookup opens connections with, for building your own client (Sentinel,
 * TLS, Cluster's `redisOptions`) with the same failure behaviour:
 * - `enableOfflineQueue: false`: while disconnected a command fails at once instead of waiting
 *   in a queue (an outage is a quick store_failed, never a hung request);
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a command in flight
 *   when the connection drops fails and is never sent again (Redis may already have run it:
 *   a resend could count one request twice);
 * - `commandTimeout`: every command is bounded;
 * - `retryStrategy`: reconnect forever, backing off 50 ms, 100 ms, ... up to
 *   `maxReconnectDelayMs`, so the stores work again as soon as Redis is back.
 */
export function redisClientOptions(options: RedisConnectionOptions = {}): RedisOptions {
  const commandTimeout = checkMs(options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs');
  const connectTimeout = checkMs(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs');
  const maxDelay = checkMs(options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS, 'maxReconnectDelayMs');
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout,
    connectTimeout,
    retryStrategy: (attempt: number) => Math.min(maxDelay, 50 * 2 ** Math.min(attempt - 1, 16)),
  };
}

/**
 * The ioredis Cluster options seclookup opens a Redis Cluster with: every node connection gets
 * {@link redisClientOptions}, and the Cluster itself keeps their promises:
 * - `enableOfflineQueue: true` (unlike a single connection): a node connection is opened
 *   lazily, on the first command for its slots, and without this every such first command
 *   would fail. The stores wait for the Cluster to be ready before they send (at most the
 *   command timeout), and each command is still bounded by `commandTimeout` on its node;
 * - `retryDelayOnFailover: 0`: a command whose node connection dropped is never sent again
 *   (the script may have run before the node died: a resend could count twice). MOVED, ASK,
 *   TRYAGAIN and CLUSTERDOWN replies mean the command did not run, so those are followed;
 * - `clusterRetryStrategy`: reconnect forever, backing off as a single connection does.
 */
export function redisClusterOptions(options: RedisConnectionOptions = {}): ClusterOptions {
  const redisOptions = redisClientOptions(options);
  return {
    redisOptions,
    enableOfflineQueue: true,
    retryDelayOnFailover: 0,
    clusterRetryStrategy: redisOptions.retryStrategy as (attempt: number) => number,
    slotsRefreshTimeout: redisOptions.connectTimeout,
  };
}

/**
 * A Redis connection with seclookup's settings (see {@link redisClientOptions}) from a
 * `redis://[user:password@]host:port/db` (or `rediss://`) URL, or a Redis Cluster (see
 * {@link redisClusterOptions}) from `redis+cluster://[user:password@]host:port,host:port`
 * (or `rediss+cluster://`) naming one or more of its nodes; an ioredis client you pass is
 * returned as it is (its settings are yours: build it with `redisClientOptions()`).
 *
 * @example
 * const redis = createRedisClient('redis://127.0.0.1:6379/0');
 * // or: createRedisClient('redis+cluster://10.0.0.1:7000,10.0.0.2:7000')
 * const meter = createRedisMeter(redis);
 * const cache = createRedisCache(redis);
 */
export function createRedisClient(urlOrClient: string | RedisClient, options: RedisConnectionOptions = {}): RedisClient {
  return openConnection(urlOrClient, options).client;
}

/** A store's connection: the client, whether the store opened it (and so closes it), its timeout. */
export interface Connection {
  client: RedisClient;
  owned: boolean;
  /** The wait for a first connection and the bound used in error messages. */
  commandTimeoutMs: number;
  /** The wait for the connection in progress, shared by every call that needs it. */
  pendingReady?: Promise<void> | null;
  /**
   * Why the last connection attempt failed, until one succeeds: Redis refused it (NOAUTH,
   * WRONGPASS, ...) or the socket did (ECONNREFUSED, ENOTFOUND, ...). A
   * connection seclookup opened that never comes up says why instead of only "unreachable".
   */
  refusal?: string;
}

export function openConnection(urlOrClient: string | RedisClient, options: RedisConnectionOptions = {}): Connection {
  if (typeof urlOrClient !== 'string') {
    // Duck-typed rather than instanceof, so a client from another copy of ioredis 5 works too.
    const candidate = urlOrClient as Partial<Redis> | null;
    if (typeof candidate !== 'object' || candidate === null || typeof candidate.evalsha !== 'function' || typeof candidate.status !== 'string') {
      throw invalidOption('a Redis store takes a redis:// URL or an ioredis client (Redis or Cluster)');
    }
    const own = (urlOrClient as Redis).options?.commandTimeout ?? (urlOrClient as Cluster).options?.redisOptions?.commandTimeout;
    return { client: urlOrClient, owned: false, commandTimeoutMs: options.commandTimeoutMs ?? own ?? DEFAULT_COMMAND_TIMEOUT_MS };
  }
  // The URL may hold a password: no message here ever repeats it.
  const problem = redisUrlProblem(urlOrClient);
  if (problem) throw invalidOption(problem);
  const settings = redisClientOptions(options);
  const client = isClusterUrl(urlOrClient) ? openCluster(urlOrClient, options) : openServer(urlOrClient, settings);
  const connection: Connection = { client, owned: true, commandTimeoutMs: settings.commandTimeout! };
  // Without a listener ioredis prints every failed reconnection attempt.
  client.on('error', (error: unknown) => {
    const reply = replyErrorOf(error);
    if (reply && commandNameOf(reply) === 'select') onSelectFailed(connection, reply);
    else if (reply) connection.refusal = replyReason(reply.message);
    else connection.refusal = socketFailure(error) ?? connection.refusal;
    options.onError?.(toStoreError(error, 'connection'));
  });
  client.on('ready', () => {
    connection.refusal = undefined;
  });
  return connection;
}

/**
 * ioredis goes on in database 0 when SELECT of the URL's database fails: another deployment's
 * keys. A database Redis does not have closes the connection for good, and every call says why.
 * Any other refusal (NOAUTH, LOADING) may pass: the connection is made again, and selects again.
 */
function onSelectFailed(connection: Connection, reply: Error): void {
  const client = connection.client as Redis;
  if (isNoSuchDatabase(reply)) {
    connection.refusal = `redis has no database ${String(client.options.db)}: use one below its "databases" setting`;
    client.disconnect();
    return;
  }
  // With a password in the URL, a SELECT refused for want of AUTH follows the AUTH's own refusal
  // (WRONGPASS), which came just before and says more.
  if (!(replyCode(reply.message) === 'NOAUTH' && client.options.password)) connection.refusal = replyReason(reply.message);
  client.disconnect(true);
}

/** Redis's answer to SELECT of an index at or above its "databases" setting. */
function isNoSuchDatabase(reply: Error): boolean {
  return /^ERR DB index is out of range/i.test(reply.message);
}

/**
 * ioredis (a CommonJS package), required when a connection is opened rather than imported with
 * the module: importing the Redis stores then needs no ioredis (an optional peer), a bundler
 * leaves it out of an app that never opens one (an import would pull it into every bundle of
 * `seclookup`, through the CLI's commands), and a missing one is said in words.
 */
function ioredis(): typeof import('ioredis') {
  try {
    return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND')
      throw new SeclookupError('invalid_option', 'the Redis stores need the ioredis package: npm install ioredis', { cause: error });
    throw error;
  }
}

function openServer(url: string, settings: RedisOptions): Redis {
  const { host, port, username, password, db, tls } = parseServerUrl(url);
  return new (ioredis().Redis)({ ...settings, host, port, username, password, db, ...(tls ? { tls: {} } : {}) });
}

function openCluster(url: string, options: RedisConnectionOptions): Cluster {
  const { nodes, username, password, tls } = parseClusterUrl(url);
  const clusterOptions = redisClusterOptions(options);
  clusterOptions.redisOptions = { ...clusterOptions.redisOptions, username, password, ...(tls ? { tls: {} } : {}) };
  return new (ioredis().Cluster)(nodes, clusterOptions);
}

/**
 * Resolves once the client can take commands. With the offline queue off, a command sent
 * before the first connection is up would fail, so each store waits here before its first
 * command (and while its connection is being made again), at most the command timeout. A
 * connection that is down fails at once: that is an outage, not a start. Rejects with an error
 * for toStoreError.
 */
export function whenReady(connection: Connection): Promise<void> {
  const { client, commandTimeoutMs } = connection;
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'end' || client.status === 'close' || client.status === 'reconnecting') {
    return Promise.reject(new NotConnected('down', connection.refusal));
  }
  connection.pendingReady ??= new Promise<void>((resolve, reject) => {
    const done = (error?: NotConnected) => {
      connection.pendingReady = null;
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('close', onClose);
      client.off('end', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onClose = () => done(new NotConnected('down', connection.refusal));
    const timer = setTimeout(() => done(new NotConnected('timeout')), commandTimeoutMs);
    client.once('ready', onReady);
    client.once('close', onClose);
    client.once('end', onClose);
    if (client.status === 'wait') (client as Redis).connect().catch(() => undefined);
  });
  return connection.pendingReady;
}

/**
 * A socket error's code (`ECONNREFUSED`: nothing listens there; `ENOTFOUND`: no such host;
 * `ETIMEDOUT`) as the reason a connection is down; undefined for any other error. Its address
 * stays out, as the URL does: the caller knows which store it opened (the CLI names it, redacted).
 */
function socketFailure(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? `redis is unreachable (${code}; reconnecting)` : undefined;
}

/** whenReady's failure: the connection is down (refused by Redis, when it said why), or did not come up in time. */
class NotConnected extends Error {
  constructor(
    readonly reason: 'down' | 'timeout',
    readonly refusal?: string,
  ) {
    super(reason === 'down' ? 'the connection is down' : 'no connection in time');
  }
}

/** Close a store's connection if the store opened it: QUIT, or a hard disconnect if that fails. */
export async function closeConnection(connection: Connection): Promise<void> {
  if (!connection.owned) return;
  const { client } = connection;
  if (client.status === 'end') return;
  try {
    if (client.status === 'ready') await client.quit();
    else client.disconnect();
  } catch {
    client.disconnect();
  }
}

/** A Lua script: its source and SHA-1, the name Redis keeps it under once loaded. */
export class LuaScript {
  readonly sha: string;
  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

/** `SCRIPT LOAD` every script (on one node of a Cluster; the others learn them from EVAL). */
export async function loadScripts(client: RedisClient, scripts: readonly LuaScript[]): Promise<void> {
  await Promise.all(scripts.map((script) => (client as Redis).script('LOAD', script.source)));
}

/**
 * Run a script in one round trip: EVALSHA, and on NOSCRIPT (Redis restarted or its script cache
 * was flushed; a Cluster node that never saw it) EVAL with the source, which also caches it
 * again. A NOSCRIPT reply means the script did not run, so nothing runs twice.
 */
export function runScript(client: RedisClient, script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  const argv = [...keys, ...args];
  return client.evalsha(script.sha, keys.length, ...argv).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(script.source, keys.length, ...argv);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * A Redis failure as store_failed. The message says what failed and how (timed out,
 * unreachable, an error reply's code such as OOM or READONLY), never the command's arguments,
 * keys or the URL; the ioredis error (which can carry them) is not attached.
 */
export function toStoreError(error: unknown, what: string, timeoutMs?: number): SeclookupError {
  if (error instanceof SeclookupError) return error;
  if (error instanceof NotConnected) {
    const reason =
      error.reason === 'timeout'
        ? `redis did not accept a connection within ${timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS} ms`
        : (error.refusal ?? 'redis is unreachable (the connection is down; reconnecting)');
    return new SeclookupError('store_failed', `redis ${what}: ${reason}`);
  }
  const message = error instanceof Error ? error.message : '';
  const reply = replyErrorOf(error);
  let reason: string;
  if (/Command timed out/i.test(message)) reason = timeoutMs === undefined ? 'timed out' : `timed out after ${timeoutMs} ms`;
  else if (/enableOfflineQueue|Stream isn't writeable|Connection is closed|MaxRetriesPerRequest|max retries per request/i.test(message))
    reason = 'redis is unreachable (the connection is down; reconnecting)';
  else if (reply) reason = replyReason(reply.message);
  else {
    const code = (error as { code?: unknown } | null)?.code;
    reason = typeof code === 'string' && /^E[A-Z]+$/.test(code) ? `redis is unreachable (${code})` : 'redis failed';
  }
  return new SeclookupError('store_failed', `redis ${what}: ${reason}`);
}

function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ReplyError';
}

/** The command a reply error answered, as ioredis records it on the error. */
function commandNameOf(reply: Error): string | undefined {
  const name = (reply as { command?: { name?: unknown } }).command?.name;
  return typeof name === 'string' ? name.toLowerCase() : undefined;
}

/**
 * The error reply behind a failure: the error itself, or for a Cluster that could not load its
 * slot map (ClusterAllFailedError, "Failed to refresh slots cache"), the last node's reply, which
 * says why (NOAUTH, WRONGPASS) where the wrapper does not.
 */
function replyErrorOf(error: unknown): Error | undefined {
  if (isReplyError(error)) return error;
  const last = (error as { lastNodeError?: unknown } | null)?.lastNodeError;
  return isReplyError(last) ? last : undefined;
}

/**
 * An error reply in words, by its code only (the rest of a reply can quote a command's
 * arguments). The two a new deployment meets first say what to change.
 */
function replyReason(message: string): string {
  const code = replyCode(message);
  if (code === 'NOAUTH') return 'redis wants a password (NOAUTH): give it in the URL, redis://:PASSWORD@host:port';
  if (code === 'WRONGPASS') return "redis refused the URL's user or password (WRONGPASS)";
  return `redis answered ${code ?? 'an error'}`;
}

/** An error reply's code: its first word (NOAUTH, WRONGPASS, ERR). */
function replyCode(message: string): string | undefined {
  return /^[A-Z]{2,}\b/.exec(message)?.[0];
}

function checkMs(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw invalidOption(`${name} must be a positive whole number of milliseconds (got ${String(value)})`);
  return value;
}
