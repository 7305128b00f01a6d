/**
 * `seclookup serve`: the HTTP service on one SQLite file. Streams: stdout is the JSON log, one
 * object per line (requests, errors), so it can go straight to a log collector; stderr is for
 * the operator (listening, the one-time starter key table, shutdown).
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { createListener, handleClientErrors } from '../../adapters/node.js';
import { BATCH_LIMIT_RANGE } from '../api/batch.js';
import { createApi } from '../api/create-api.js';
import { bundledDataDir } from '../lib/datasets.js';
import { databaseFileProblem } from '../lib/sqlite-file.js';
import { createSqliteSingleUseStore } from '../metering/sqlite/single-use.js';
import { issueKeys, type IssuedKeys } from '../metering/keys.js';
import type { KeyInfo, Meter, MeterAdmin, SettingsStore } from '../metering/types.js';
import { PRODUCT_IDS } from '../products/catalog.js';
import type { AnyProductModule } from '../products/module.js';
import { PRODUCT_MODULES, SERVICE_MODULES } from '../products/registry.js';
import {
  emptyValueMessage,
  envName,
  isBlank,
  METER_OPTIONS,
  expectPositionals,
  parseCidrList,
  parseCommand,
  parseInteger,
  resolveDbPath,
  resolveRedisUrl,
} from './args.js';
import { describeMeter, loadRedis, onSameStore, openMeter } from './db.js';
import { explainMeterError } from './db-errors.js';
import { readServeConfig, settingsFromEnv } from './config.js';
import { MAX_TIMER_MS } from '../lib/deadline.js';
import { ALLOW_PRIVATE_TARGETS_HELP, checkProductOptions, engineOptions, loadEngines, lookupOptionsFrom } from './engines.js';
import { checkFileSettingsAgree, engineOptionsFrom, settingsHelp } from './settings.js';
import { resolveOperatorSecret, SECRET_HELP, SECRET_OPTIONS } from './secret.js';
import { CommandError, EXIT_FAILURE, EXIT_OK, UsageError } from './errors.js';
import { createServeLog, flushOnFatal, isLogLevel, LOG_LEVELS, type LogLevel, type ServeLog } from './log.js';
import { formatTable, note, out } from './output.js';
import { trackInFlight } from '../api/in-flight.js';
import { catchStopSignals, DEFAULT_SHUTDOWN_DEADLINE_MS, type StopSignals } from './shutdown.js';
import { cliEnv, cliIo } from './io.js';
import { holdTickEntryShape } from './tick-shape.js';
import {
  connectionLimit,
  type DropReport,
  limitConnections,
  limitMetricsConnections,
  METRICS_SERVER_OPTIONS,
  lookupFiles,
  openFilesInUse,
  openFilesLimit,
  withLookupFiles,
} from './connection-limit.js';

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 8080;
/**
 * Meter setting for the first start: claimed ("issuing since <time> <id>") before the starter keys
 * are made, so that of several instances started together on one store only one makes them, and
 * then the time they were done, so they are made only once.
 */
const BOOTSTRAP_SETTING = 'bootstrap';
const BOOTSTRAP_CLAIM = 'issuing since ';
/** A claim this old that left no keys was made by a start that stopped first: the next start makes them. */
export const BOOTSTRAP_CLAIM_GRACE_MS = 60_000;

const MODULES = PRODUCT_MODULES as readonly AnyProductModule[];
/** What products keep in the --db file beside the meter (scamrisk's reports), for the help. */
const DB_FILE_DATA = MODULES.flatMap((module) => (module.dbFileOption ? [`${module.id}'s ${module.dbFileOption}`] : [])).join(', ');

export const SERVE_HELP = `Usage:
  seclookup serve [--config FILE] [--host HOST] [--port N] [--db FILE] [--redis URL]
                  [--on-store-error deny|allow] [--body-limit BYTES] [--batch-limit N]
                  [--data-dir DIR] [--trust-proxy CIDR,...] [--dns HOST:PORT,...]
                  [--log-level LEVEL] [--metrics] [--metrics-port N] [product settings]

Run the HTTP API (/healthz, /v1/openapi.json, /v1/<product>/status, /v1/<product>/lookup, ...).

  --config FILE          settings from a JSON file: the flags below without "--" as keys
                         ("port": 8080, "trust-proxy": ["10.0.0.0/8"]), plus "products":
                         each product's options (cache sizes and TTLs, upstream URLs and
                         keys). A flag wins over the file, the file over the environment.
                         Unknown settings and bad values stop serve with their name.
  --host HOST            address to listen on (default: 127.0.0.1, this machine only;
                         use 0.0.0.0 in a container or to accept outside connections)
  --port N               port (default: $SECLOOKUP_PORT, else $PORT, else 8080; 0 picks a
                         free port)
  --db FILE              metering database with keys, plans and usage; created if absent
                         (default: $SECLOOKUP_DB, else ./seclookup.db)
  --redis URL            share keys, plans, limits, quotas, usage, the result cache and
                         ${SERVICE_MODULES.map((module) => module.id).join(', ')} tokens with every instance on this Redis
                         (redis://host:port/db, or a Redis Cluster's seed nodes as
                         redis+cluster://h1:p1,h2:p2; default: $SECLOOKUP_REDIS; --db
                         then holds only ${DB_FILE_DATA})
  --on-store-error deny|allow
                         when the meter store fails or times out: deny answers 500
                         (default); allow serves lookups unmetered until it is back
  --body-limit BYTES     largest request body (default: 65536); larger ones get 413
  --batch-limit N        most inputs of one POST /v1/<product>/batch (default: 100;
                         at most 10000); more is 400 invalid_request
  --data-dir DIR         dataset folder (default: $SECLOOKUP_DATA_DIR, else the data
                         bundled with seclookup)
  --trust-proxy CIDR,..  reverse proxies whose forwarded headers are believed: X-Forwarded-For
                         for the caller IP, X-Forwarded-Host for the API's own origin
                         (default: none; the socket address and Host are the truth)
${SECRET_HELP}  --dns HOST:PORT,...    DNS servers of every product that resolves names (repeatable or
                         comma-separated; default: the system's, from /etc/resolv.conf)
  --allow-private-targets CIDR,...
                         ${ALLOW_PRIVATE_TARGETS_HELP.replace(/\n/g, '\n                         ')}
  --log-level LEVEL      least severe log line written (default: info; request lines
                         are info, errors error): ${LOG_LEVELS.join('|')}
  --metrics              serve Prometheus metrics at GET /metrics on the API's port, with
                         no key (default: off; in a file "metrics": true, in the
                         environment SECLOOKUP_METRICS=1). Requests, latency, meter
                         store, caches, upstream calls, dataset ages; never a key or input
  --metrics-port N       serve them on this port of the same host instead (implies
                         --metrics; /metrics on the API's port is then 404; 0 picks one)
${settingsHelp(MODULES, 25)}  -h, --help             show this help

First start on a new database: a "starter" key pair is created for each of the ${PRODUCT_IDS.length}
products and printed once, as a table on stderr. Secret keys are never shown again (only
their hashes are stored); create more with \`seclookup keys create\`.

Output: stdout is the JSON log, one object per line. A request line holds level, time,
request_id, method, route, product, status, error_code, latency_ms and client_ip (never a
key or a looked-up value); an error line holds level, time, context and error. Lines are
buffered and written in the background (within a second), and flushed on exit. stderr gets
the messages for the operator: the "listening on" line, the starter keys, shutdown.

SIGTERM, SIGINT, or SIGHUP on a terminal (it closed; elsewhere SIGHUP is ignored): stop
accepting connections. Requests still arriving on open connections are answered, the last on
each with "Connection: close"; connections idle for a second are closed. In-flight requests
get ${DEFAULT_SHUTDOWN_DEADLINE_MS / 1000} s ($SECLOOKUP_SHUTDOWN_DEADLINE_MS to change it, in ms), then their connections are
cut, their lookups abandoned and their quota given back (only answers sent are billed). Then
the database is closed, the log flushed, and serve exits 0. A second signal cuts open
connections at once. A signal while serve is still starting stops it before it listens, exit 0.
$SECLOOKUP_LEASE_MS (default 60000): after a crash, quota held by unanswered lookups goes back
this long after it was reserved.

Exit codes: 0 clean shutdown, 1 failed to start (database, datasets, port in use) or
            crashed, 2 usage error.`;

/** serve's flags: also the keys of its config file and of its environment variables. */
export const SERVE_OPTIONS = {
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'trust-proxy': { type: 'string', multiple: true },
  'log-level': { type: 'string' },
  'on-store-error': { type: 'string' },
  'body-limit': { type: 'string' },
  'batch-limit': { type: 'string' },
  metrics: { type: 'boolean' },
  'metrics-port': { type: 'string' },
  ...METER_OPTIONS,
  ...SECRET_OPTIONS,
  ...engineOptions(MODULES),
} as const;

export async function runServe(argv: string[]): Promise<number> {
  const origins = new Map<string, string>();
  try {
    return await serve(argv, origins);
  } catch (error) {
    throw error instanceof UsageError ? nameTheOrigin(error, origins) : error;
  }
}

/**
 * A setting from the config file or the environment is named as the operator wrote it
 * (`"port" in serve.json`, `$SECLOOKUP_PORT`), not as the flag the parsers speak of.
 */
function nameTheOrigin(error: UsageError, origins: ReadonlyMap<string, string>): UsageError {
  const flag = /^--([\w-]+)/.exec(error.message)?.[1];
  const origin = flag === undefined ? undefined : origins.get(flag);
  return origin === undefined ? error : new UsageError(origin + error.message.slice(flag!.length + 2), error.helpFor);
}

async function serve(argv: string[], origins: Map<string, string>): Promise<number> {
  // Caught before anything slow (main catches them before this module even loads): a stop
  // signal while serve starts makes it give up at its next step, exit 0.
  const stopSignals = catchStopSignals();
  let handedOver = false;
  try {
    const started = await start(argv, origins, stopSignals);
    if (typeof started === 'number') return started;
    handedOver = true;
    return await run(started, stopSignals);
  } finally {
    if (!handedOver) stopSignals.release();
  }
}

/** Thrown at serve's next start step once a stop signal has come. */
class StoppedWhileStarting extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} received while starting`);
  }
}

/** What `start` opened, for `run` (or for closing, when start gives up). */
interface Started {
  server: Server;
  metricsServer: Server | null;
  api: ReturnType<typeof trackInFlight>;
  meter: Meter;
  stores: { close(): Promise<void> }[];
  lookup: ReturnType<typeof loadEngines>;
  log: ServeLog;
  deadlineMs: number;
  /** The SQLite meter's file, watched while serve runs; null on Redis. */
  meterFile: string | null;
  /** Connections refused at the limits the open-files limit sets (the API's, the metrics port's); none where that limit is unknown. */
  drops: DropReport[];
}

/** Parse, check, build the engines, open the stores and listen: the started serve, or an exit code (help, or stopped by a signal). */
async function start(argv: string[], origins: Map<string, string>, stopSignals: StopSignals): Promise<Started | number> {
  const command = 'serve';
  const parsed = parseCommand(argv, SERVE_OPTIONS, command);
  if (parsed.values.help) {
    out(SERVE_HELP);
    return EXIT_OK;
  }
  expectPositionals(parsed.positionals, [], command);
  // A flag wins over the config file, which wins over the environment ($SECLOOKUP_<FLAG>), then the defaults.
  const config = parsed.values.config ? readServeConfig(parsed.values.config, SERVE_OPTIONS, command) : { values: {}, products: {} };
  const fromEnv = settingsFromEnv(SERVE_OPTIONS);
  const values = { ...fromEnv, ...config.values, ...definedOnly(parsed.values) } as typeof parsed.values;
  for (const name of Object.keys(fromEnv)) origins.set(name, `$${envName(name)}`);
  for (const name of Object.keys(config.values)) origins.set(name, `"${name}" in ${parsed.values.config}`);
  for (const name of Object.keys(definedOnly(parsed.values))) origins.delete(name);
  const host = values.host ?? DEFAULT_HOST;
  // An empty host is every interface to Node: never what an empty setting meant.
  if (isBlank(host)) throw new UsageError(emptyValueMessage('--host'), command);
  const port = resolvePort(values.port, command);
  const trustProxy = parseCidrList(values['trust-proxy'], '--trust-proxy', command);
  const logLevel = parseLogLevel(values['log-level'], command);
  const deadlineMs = resolveShutdownDeadline(command);
  const dbPath = resolveDbPath(values.db);
  const redisUrl = resolveRedisUrl(values.redis);
  // Said before any engine opens the file (scamrisk keeps its reports there) and blames it
  // instead, or a store finds it read-only only at its first write.
  const dbProblem = redisUrl ? null : databaseFileProblem(dbPath, { write: true });
  if (dbProblem) throw new CommandError(`cannot use the database ${dbPath}: ${dbProblem}`);
  const onMeterError = parseStoreErrorPolicy(values['on-store-error'], command);
  // A secret the operator gave is checked now; the default key file beside the database is
  // made only once the database is known to be ours.
  const givenSecret = await resolveOperatorSecret(values['secret-file'], null, command);

  const metricsAt = parseMetrics(values.metrics, values['metrics-port'], port, command);
  const bodyLimit = values['body-limit'] === undefined ? undefined : parseInteger(values['body-limit'], '--body-limit', command, { min: 1 });
  const batchLimit = values['batch-limit'] === undefined ? undefined : parseInteger(values['batch-limit'], '--batch-limit', command, BATCH_LIMIT_RANGE);

  // Every engine is built at start, so a broken dataset stops serve before the port opens.
  const lookupOptions = lookupOptionsFrom(MODULES, values, command);
  // Per-product options by precedence, as for every setting: the flags, then the file (its flat
  // settings and its "products" section), then the environment.
  const fromEnvironment = engineOptionsFrom(MODULES, {}, command);
  if (parsed.values.config) checkFileSettingsAgree(MODULES, config.values, config.products, parsed.values.config, command);
  const fromFlagsAndFile = engineOptionsFrom(MODULES, { ...config.values, ...definedOnly(parsed.values) }, command, {});
  const products = new Set([...Object.keys(fromEnvironment), ...Object.keys(config.products), ...Object.keys(fromFlagsAndFile)]);
  for (const product of products) {
    (lookupOptions as Record<string, object>)[product] = { ...fromEnvironment[product], ...config.products[product], ...fromFlagsAndFile[product] };
  }
  checkProductOptions(MODULES, lookupOptions, command);
  // Data products keep beside the meter (scamrisk's reports) live in the --db file unless a flag names another.
  for (const { id, dbFileOption } of PRODUCT_MODULES) {
    const options = lookupOptions as Record<string, object | undefined>;
    if (dbFileOption) options[id] = { [dbFileOption]: dbPath, ...options[id] };
  }

  // What is open so far, closed again (in this order) when start gives up.
  const opened: Partial<Started> & { stores: { close(): Promise<void> }[] } = { stores: [] };
  const giveUp = async () => {
    opened.server?.close();
    opened.metricsServer?.close();
    await opened.lookup?.close();
    for (const store of opened.stores) await store.close();
    await opened.meter?.close();
    await opened.log?.close();
  };
  const stopIfSignalled = () => {
    if (stopSignals.received) throw new StoppedWhileStarting(stopSignals.received);
  };
  try {
    stopIfSignalled();
    // Loaded only when asked for: prom-client costs tens of ms to import.
    const metrics =
      metricsAt !== null
        ? (await import('../metrics/index.js')).createMetrics({ dataDir: lookupOptions.dataDir ?? bundledDataDir(), processMetrics: true })
        : null;
    if (metrics) lookupOptions.observer = metrics.observer;
    // With Redis, every instance shares the meter, the captcha single-use ids and the result
    // cache; else the meter and the single-use ids share the --db file (every process on it).
    const redis = redisUrl ? await loadRedis() : null;
    const sharedCache = redis ? redis.createRedisCache(redisUrl!) : null;
    if (sharedCache) {
      lookupOptions.cache = sharedCache;
      opened.stores.push(sharedCache); // an open Redis connection would keep the process alive
    }
    stopIfSignalled();
    const where = describeMeter(values);
    // The meter store before the engines: one that cannot be reached (Redis down, a locked file)
    // stops serve at once, not after seconds of loading datasets.
    const openedMeter = await openMeter(values, { create: true, verify: true });
    const meter = metrics ? metrics.instrumentMeter(openedMeter) : openedMeter;
    opened.meter = meter;
    // The SQLite file named too: a broken one (a page overwritten) is said in one line, not as a stack trace.
    const meterFile = redis ? null : dbPath;
    await meter.getSetting(BOOTSTRAP_SETTING).catch((error: unknown) => Promise.reject(explainMeterError(where, meterFile, error)));
    stopIfSignalled();
    // The open-files limit split (connection-limit.ts): DNS and outbound sockets capped before the engines are built.
    const openFiles = openFilesLimit();
    const kept = openFiles === null ? null : lookupFiles(openFiles);
    const lookup = loadEngines(MODULES, kept ? withLookupFiles(lookupOptions, kept) : lookupOptions);
    opened.lookup = lookup;
    stopIfSignalled();
    // The key file beside the database, made for a store whose signing keys it does not lock out.
    const { secret } = givenSecret.secret || redis ? givenSecret : await resolveOperatorSecret(undefined, dbPath, command, { store: meter });
    if (!secret)
      note(
        'seclookup: captcha is off: no operator secret to wrap its signing keys; give every instance on this Redis the same --secret-file FILE or SECLOOKUP_SECRET',
      );
    metrics?.watchDatasets(lookup);
    const singleUse = redis ? redis.createRedisSingleUseStore(redisUrl!) : createSqliteSingleUseStore(dbPath);
    opened.stores.unshift(singleUse);
    const stores = opened.stores;
    // Run in a process it does not own (the tests), serve logs to its io's stdout and leaves the process's handlers alone.
    const { host: owner, stdout } = cliIo();
    const log = createServeLog({
      level: logLevel,
      dest: owner ? stdout : 1,
      onWriteError: (error) => note(`seclookup: cannot write the log: ${error.message}`),
      onReaderGone: () => note("seclookup: the log's reader went away (a closed pipe): serve answers on, its request lines are dropped and counted"),
      onBacklogFull: (bytes) =>
        note(`seclookup: the log is ${bytes / 1024 / 1024} MiB behind (a stalled reader or a full disk): dropping lines until it catches up`),
    });
    opened.log = log;
    if (metrics) await countDroppedLogLines(metrics.registry, log);
    if (!owner) flushOnFatal(log, note);
    const api = trackInFlight(
      createApi({
        lookup,
        meter,
        singleUse,
        secret: secret ?? undefined,
        trustProxy,
        onMeterError,
        bodyLimit,
        batchLimit,
        // Left out when the level drops request lines: the API then does not build them.
        onResponse: requestObserver(log.logsRequests ? log.request : undefined, metrics?.onResponse),
        onError: log.error,
      }),
    );
    const listener = createListener(api);
    // Else V8's memory reducer can leave process.nextTick slow after an idle gap (tick-shape.ts).
    holdTickEntryShape();
    // A request without Host reaches the API's listener, which refuses it in the envelope
    // (adapters/host-header.ts) where Node would answer a bare 400 (`/metrics` here answers it).
    const server = createServer({ requireHostHeader: false }, metrics && metricsAt === 'api' ? withMetricsRoute(metrics.handler, listener) : listener);
    const metricsServer = metrics && typeof metricsAt === 'number' ? createServer(METRICS_SERVER_OPTIONS, withMetricsRoute(metrics.handler, notFound)) : null;
    opened.server = server;
    opened.metricsServer = metricsServer;
    // Requests Node's parser refuses are answered in the envelope and logged, not left bare.
    handleClientErrors(server, api);
    const drops = openFiles === null || kept === null ? null : limitConnections(server, connectionLimit(openFiles, openFilesInUse(), kept), openFiles, note);
    const metricsDrops = openFiles === null || !metricsServer ? null : limitMetricsConnections(metricsServer, openFiles, note);
    if (metrics && drops) await countDroppedConnections(metrics.registry, { api: drops, metrics: metricsDrops });
    try {
      // Port first: if it is taken, fail before creating (and printing) any starter keys.
      await listen(server, port, host, log);
      if (metricsServer) await listen(metricsServer, metricsAt as number, host, log);
      stopIfSignalled();
      await announceKeys(meter, where, Date.now, onSameStore('keys list', values));
      for (const service of SERVICE_MODULES) for (const warning of (await service.startWarnings?.(meter, secret)) ?? []) note(`seclookup: warning: ${warning}`);
    } catch (error) {
      // The meter store unreachable at start (Redis down, a locked file): the operator's to fix.
      throw error instanceof StoppedWhileStarting ? error : explainMeterError(where, meterFile, error);
    }
    // An evicting Redis can drop a live rate window or a used captcha token: said before "listening".
    const evictionRisk = redis ? await redis.redisEvictionRisk(redisUrl!) : null;
    if (evictionRisk) note(`seclookup: warning: ${evictionRisk}`);
    note(`seclookup listening on ${urlOf(server)} (${redis ? 'redis' : 'database'} ${where})`);
    if (metrics) note(`metrics at ${urlOf(metricsServer ?? server)}/metrics`);
    return { server, metricsServer, api, meter, stores, lookup, log, deadlineMs, meterFile, drops: [drops, metricsDrops].filter((d) => d !== null) };
  } catch (error) {
    await giveUp();
    if (!(error instanceof StoppedWhileStarting)) throw error;
    note(`seclookup: ${error.message}: stopped before listening`);
    exitSoon(EXIT_OK);
    return EXIT_OK;
  }
}

/** Serve until a stop signal, then stop gracefully: the exit code. */
async function run(started: Started, stopSignals: StopSignals): Promise<number> {
  const { server, metricsServer, api, meter, stores, lookup, log, deadlineMs, meterFile, drops } = started;
  const stopWatching = meterFile
    ? watchFileIdentity([meterFile, `${meterFile}-wal`, `${meterFile}-shm`], (changed) =>
        stopSignals.stopFor(
          changed === meterFile
            ? `seclookup: the database ${meterFile} was deleted or replaced while serve ran: what it answers would be billed to a file nobody reads, and keys created or revoked in the new one go unseen; stopping (exit 1) so it starts again on the file now there`
            : `seclookup: ${changed}, the database's ${changed.slice(meterFile.length + 1)} file, was deleted or replaced while serve ran: its commits go where no other process reads them, and keys created or revoked by others go unseen; stopping (exit 1) so it starts again on the files now there`,
          EXIT_FAILURE,
        ),
      )
    : () => {};
  const code = await stopSignals.untilSignal({ server, api, meter, stores, lookup, log, deadlineMs });
  stopWatching();
  for (const report of drops) report.flush();
  // Scrapes are answered until the very end; then its port closes too.
  if (metricsServer) {
    metricsServer.closeAllConnections();
    await new Promise((resolve) => metricsServer.close(resolve));
  }
  // Lookups abandoned at the drain deadline may still wait on their upstream (whois: up to
  // 15 s). What they held is given back and the stores are closed: they must not hold the exit.
  exitSoon(code);
  return code;
}

/** How often serve checks that its database file is still the one it opened. */
export const FILE_WATCH_INTERVAL_MS = 5_000;

/**
 * Call `onChanged` once with the first of `paths` that stops being the file it is now (deleted,
 * or replaced: a backup restored with `mv`, a clean-up by mistake), as PostgreSQL stops when its
 * lock file goes: SQLite keeps writing to the unlinked file, with no error. The database's -wal
 * and -shm files are watched too: while serve has the database open they are never deleted by
 * SQLite, and one deleted under it splits the database in two (its commits in a WAL nobody else
 * reads, a `keys revoke` in a new one it never sees). A path absent at the start is not watched.
 * Checked every FILE_WATCH_INTERVAL_MS (`$SECLOOKUP_FILE_WATCH_MS` in the tests); returns what
 * stops the watch.
 */
function watchFileIdentity(paths: readonly string[], onChanged: (path: string) => void): () => void {
  // The device and inode: the file itself, whatever is written to it.
  const identityOf = (path: string) => {
    try {
      const stats = statSync(path);
      return `${stats.dev}:${stats.ino}`;
    } catch {
      return null;
    }
  };
  const watched = paths.map((path) => ({ path, identity: identityOf(path) })).filter((file) => file.identity !== null);
  if (watched.length === 0) return () => {};
  const intervalMs = Math.max(10, Number(cliEnv().SECLOOKUP_FILE_WATCH_MS) || FILE_WATCH_INTERVAL_MS);
  const timer = setInterval(() => {
    const changed = watched.find((file) => identityOf(file.path) !== file.identity);
    if (!changed) return;
    clearInterval(timer);
    onChanged(changed.path);
  }, intervalMs).unref();
  return () => clearInterval(timer);
}

/** End the process (the binary) with `code` once this turn is done, whatever is still pending; in a process serve does not own, tell its host. */
function exitSoon(code: number): void {
  const { host: owner } = cliIo();
  const exit = owner ? owner.exit : (exitCode: number) => process.exit(exitCode);
  setTimeout(() => exit(code), 0).unref();
}

/** `seclookup_log_lines_dropped_total`, read from the log at each scrape. @internal exported for its test */
export function countDroppedLogLines(registry: Registry, log: Pick<ServeLog, 'droppedLines'>): Promise<void> {
  return scrapedCounter(
    registry,
    'seclookup_log_lines_dropped_total',
    'Log lines dropped because the log destination held 16 MiB it had not taken (a stalled reader, a full disk) or its reader went away.',
    () => log.droppedLines,
  );
}

/**
 * `seclookup_connections_dropped_total{server="api"|"metrics"}`, read from the connection limits
 * at each scrape (the metrics port's series only when it has a port of its own). @internal exported for its test
 */
export function countDroppedConnections(
  registry: Registry,
  drops: { api: Pick<DropReport, 'dropped'>; metrics?: Pick<DropReport, 'dropped'> | null },
): Promise<void> {
  return scrapedCounter(
    registry,
    'seclookup_connections_dropped_total',
    "Client connections closed unanswered at a server's connection limit: the API's (its open-files limit less a reserve for lookups) or the metrics port's.",
    { api: () => drops.api.dropped, ...(drops.metrics ? { metrics: () => drops.metrics!.dropped } : {}) },
  );
}

/** A counter whose value is read at each scrape (a count kept elsewhere): one reader, or one per `server` label. */
async function scrapedCounter(registry: Registry, name: string, help: string, read: (() => number) | Record<string, () => number>): Promise<void> {
  const { Counter } = await import('prom-client');
  new Counter({
    name,
    help,
    labelNames: typeof read === 'function' ? [] : ['server'],
    registers: [registry],
    collect() {
      this.reset();
      if (typeof read === 'function') this.inc(read());
      else for (const [server, count] of Object.entries(read)) this.inc({ server }, count());
    },
  });
}

/**
 * `--metrics` (a switch: the flag, `true` in the file, `1`/`true`/`on` in the environment) and
 * `--metrics-port N`: where /metrics is served, `'api'` for the API's port, a port of its own,
 * or null (off, the default).
 */
function parseMetrics(flag: boolean | string | undefined, portFlag: string | undefined, apiPort: number, command: string): 'api' | number | null {
  const on = parseSwitch(flag, '--metrics', command);
  if (portFlag === undefined) return on ? 'api' : null;
  const port = parseInteger(portFlag, '--metrics-port', command, { max: 65_535 });
  if (port !== 0 && port === apiPort)
    throw new UsageError(`--metrics-port must differ from --port (both ${port}); leave --metrics-port out to serve /metrics on the API's port`, command);
  return port;
}

function parseSwitch(value: boolean | string | undefined, name: string, command: string): boolean {
  if (value === undefined || value === false) return false;
  if (value === true) return true;
  const text = value.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(text)) return true;
  if (['0', 'false', 'off', 'no', ''].includes(text)) return false;
  throw new UsageError(`${name} must be on or off (true/false, yes/no, 1/0; got ${JSON.stringify(value)})`, command);
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/** GET (or HEAD) /metrics answered by `metrics`, every other request by `next`. */
function withMetricsRoute(metrics: Listener, next: Listener): Listener {
  return (request, response) => {
    const url = request.url ?? '';
    if ((url === '/metrics' || url.startsWith('/metrics?')) && (request.method === 'GET' || request.method === 'HEAD')) return metrics(request, response);
    next(request, response);
  };
}

function notFound(_request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  response.end('not found; metrics are at /metrics\n');
}

/** The request log and the metrics both see each response; neither when both are off. */
function requestObserver<E>(log: ((event: E) => void) | undefined, metrics: ((event: E) => void) | undefined): ((event: E) => void) | undefined {
  if (!log || !metrics) return log ?? metrics;
  return (event) => {
    metrics(event);
    log(event);
  };
}

/** The flags given on the command line (parseArgs leaves the others undefined), to lay over the file and the environment. */
function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** `--on-store-error deny|allow` (default deny): what the API does when the meter store fails. */
function parseStoreErrorPolicy(flag: string | undefined, command: string): 'deny' | 'allow' {
  if (flag === undefined || flag === 'deny') return 'deny';
  if (flag === 'allow') return 'allow';
  throw new UsageError(`--on-store-error must be deny or allow (got ${JSON.stringify(flag)})`, command);
}

function parseLogLevel(flag: string | undefined, command: string): LogLevel {
  if (flag === undefined) return 'info';
  if (isLogLevel(flag)) return flag;
  throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(flag)})`, command);
}

/** `$SECLOOKUP_SHUTDOWN_DEADLINE_MS` (the tests shorten it), else 10 s. */
function resolveShutdownDeadline(command: string): number {
  const value = cliEnv().SECLOOKUP_SHUTDOWN_DEADLINE_MS;
  // Node's timers hold at most 2^31 - 1 ms: a longer deadline would fire at once and cut every request.
  return value ? parseInteger(value, 'SECLOOKUP_SHUTDOWN_DEADLINE_MS', command, { min: 1, max: MAX_TIMER_MS }) : DEFAULT_SHUTDOWN_DEADLINE_MS;
}

/** `--port`, else `$PORT`, else 8080; 0 lets the OS pick a free port (printed once listening). */
function resolvePort(flag: string | undefined, command: string): number {
  if (flag !== undefined) return parseInteger(flag, '--port', command, { max: 65_535 });
  const port = cliEnv().PORT;
  if (port) return parseInteger(port, 'PORT', command, { max: 65_535 });
  return DEFAULT_PORT;
}

/**
 * First start (no bootstrap setting and no keys yet): create and print a starter key pair per
 * product. Later starts, or a database whose keys were made with `keys create`: only a count.
 * Instances started together on one store: the one whose claim is stored first creates them.
 * @internal exported for its tests, which also give `now`
 */
export async function announceKeys(
  meter: MeterAdmin & SettingsStore,
  where: string,
  now: () => number = Date.now,
  // The command that lists this store's keys: a bare `seclookup keys list` would read ./seclookup.db,
  // not a --db file elsewhere or the Redis serve uses.
  listCommand = 'seclookup keys list',
): Promise<void> {
  const firstStart = await claimFirstStart(meter, now());
  const keys = await meter.listKeys();
  if (firstStart === 'mine' && keys.length === 0) {
    // Printed before the claim is marked done: keys made and never shown would be lost.
    printStarterKeys(await issueStarterKeys(meter));
    await meter.setSetting(BOOTSTRAP_SETTING, new Date(now()).toISOString());
    return;
  }
  if (firstStart === 'mine') await meter.setSetting(BOOTSTRAP_SETTING, new Date(now()).toISOString());
  if (firstStart === 'theirs') note('Another instance is creating the starter keys now: they are printed once, on its stderr.');
  noteKeyCount(keys, where, listCommand);
}

/**
 * Whether this start makes the starter keys ('mine'), another one started with it is making
 * them ('theirs'), or the first start is long done ('done'). The claim is set-if-absent, atomic
 * on every store; a claim left by a start that stopped before making any key is taken over once
 * it is older than the grace, by one start only (a second set-if-absent, named after that claim).
 */
async function claimFirstStart(meter: MeterAdmin & SettingsStore, at: number): Promise<'mine' | 'theirs' | 'done'> {
  const claim = `${BOOTSTRAP_CLAIM}${new Date(at).toISOString()} ${randomUUID()}`;
  const stored = await meter.setSettingIfAbsent(BOOTSTRAP_SETTING, claim);
  if (stored === claim) return 'mine';
  if (!stored.startsWith(BOOTSTRAP_CLAIM)) return 'done';
  if (!isAbandoned(stored, at)) return 'theirs';
  // Keys there: the claimant got as far as making some, or an operator made them since.
  if ((await meter.listKeys()).length > 0) return 'done';
  if ((await meter.setSettingIfAbsent(`${BOOTSTRAP_SETTING}:takeover:${stored}`, claim)) !== claim) return 'theirs';
  await meter.setSetting(BOOTSTRAP_SETTING, claim);
  return 'mine';
}

/**
 * A claim older than the grace, or one whose time does not read: serve writes an ISO time, so
 * another text was put there by hand or by another tool, and waiting on it would wait forever.
 */
function isAbandoned(claim: string, at: number): boolean {
  const claimedAt = Date.parse(claim.slice(BOOTSTRAP_CLAIM.length).split(' ')[0]);
  return Number.isNaN(claimedAt) || at - claimedAt >= BOOTSTRAP_CLAIM_GRACE_MS;
}

/** A starter key pair for every product (captcha's is a site key). */
async function issueStarterKeys(meter: MeterAdmin & SettingsStore): Promise<IssuedKeys[]> {
  const issued: IssuedKeys[] = [];
  for (const product of PRODUCT_IDS) {
    const starterKeys = SERVICE_MODULES.find((module) => module.id === product)?.starterKeys;
    issued.push(starterKeys ? await starterKeys(meter) : await issueKeys(meter, { product }));
  }
  return issued;
}

function noteKeyCount(keys: readonly KeyInfo[], where: string, listCommand: string): void {
  const active = keys.filter((k) => k.status === 'active').length;
  note(`${keys.length} keys in ${where} (${active} active); use \`${listCommand}\` to see them`);
}

/**
 * On stderr, with the other operator messages: stdout is the JSON log, which often goes to a
 * collector, and secret keys have no place there.
 */
function printStarterKeys(issued: readonly IssuedKeys[]): void {
  note(`First start: created a "starter" key pair for each of the ${issued.length} products.`);
  note('The secret keys are shown only this once (the database keeps only their hashes). Copy them now.');
  note('Send a key as "Authorization: Bearer <key>". Manage keys with `seclookup keys`.');
  note('The captcha pair is a site key with no domains: add them with `seclookup sitekeys update <tf_pub_ key> --domain example.com`.');
  note('');
  note(
    formatTable(
      ['PRODUCT', 'SECRET KEY', 'PUBLIC KEY'],
      issued.map((k) => [k.product, k.secretKey, k.publicKey]),
    ),
  );
  note('');
}

function listen(server: Server, port: number, host: string, log: ServeLog): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === 'EADDRINUSE' ? 'the port is already in use' : error.code === 'EADDRNOTAVAIL' ? 'no such address on this machine' : error.message;
      reject(new CommandError(`cannot listen on ${host}:${port}: ${reason}`, { cause: error }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      server.on('error', (error) => log.error(error, 'server'));
      resolve();
    });
  });
}

function urlOf(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
