/**
 * `seclookup serve`: the HTTP service on one SQLite file. Streams: stdout carries the
 * one-time starter key table and then one JSON line per request; stderr carries operator
 * messages (listening, shutdown) and JSON error lines.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createListener } from '../../adapters/node.js';
import { createApi } from '../api/create-api.js';
import type { RequestLogEvent } from '../api/types.js';
import { issueKeys, type IssuedKeys } from '../metering/keys.js';
import type { Meter } from '../metering/types.js';
import { PRODUCT_IDS } from '../products/catalog.js';
import { DATA_DIR_OPTION, DB_OPTION, expectPositionals, parseCidrList, parseCommand, parseInteger, resolveDataDir, resolveDbPath } from './args.js';
import { openMeter } from './db.js';
import { loadEngines } from './engines.js';
import { CommandError, EXIT_FAILURE, EXIT_OK } from './errors.js';
import { formatTable, note, out } from './output.js';

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 8080;
/** In-flight requests get this long after SIGTERM/SIGINT before their sockets are cut. */
const SHUTDOWN_DEADLINE_MS = 10_000;
/** Meter setting written once the starter keys exist, so they are created only on the first start. */
const BOOTSTRAP_SETTING = 'bootstrap';

export const SERVE_HELP = `Usage:
  seclookup serve [--host HOST] [--port N] [--db FILE] [--data-dir DIR] [--trust-proxy CIDR,...]

Run the HTTP API (/healthz, /v1/<product>/status, /v1/<product>/lookup).

  --host HOST            address to listen on (default: 127.0.0.1, this machine only;
                         use 0.0.0.0 in a container or to accept outside connections)
  --port N               port (default: $PORT, else 8080; 0 picks a free port)
  --db FILE              metering database with keys, plans and usage; created if absent
                         (default: $SECLOOKUP_DB, else ./seclookup.db)
  --data-dir DIR         dataset folder (default: $SECLOOKUP_DATA_DIR, else the data
                         bundled with seclookup)
  --trust-proxy CIDR,..  reverse proxies whose X-Forwarded-For is believed for the caller
                         IP (default: none; the socket address is the caller)
  -h, --help             show this help

First start on a new database: a "starter" key pair is created for each of the 15
products and printed once on stdout. Secret keys are never shown again (only their
hashes are stored); create more with \`seclookup keys create\`.

Output: stdout gets one JSON line per request (time, request_id, method, route, product,
status, error_code, latency_ms, client_ip; never a key or a looked-up value). stderr gets
the "listening on" line, shutdown messages and JSON error lines ({"level":"error",...}).

SIGTERM or SIGINT: stop accepting connections, let in-flight requests finish (at most
${SHUTDOWN_DEADLINE_MS / 1000} s), close the database, exit 0. A second signal cuts open connections at once.

Exit codes: 0 clean shutdown, 1 failed to start (database, datasets, port in use),
            2 usage error.`;

export async function runServe(argv: string[]): Promise<number> {
  const command = 'serve';
  const { values, positionals } = parseCommand(
    argv,
    { host: { type: 'string' }, port: { type: 'string' }, 'trust-proxy': { type: 'string', multiple: true }, ...DB_OPTION, ...DATA_DIR_OPTION },
    command,
  );
  if (values.help) {
    out(SERVE_HELP);
    return EXIT_OK;
  }
  expectPositionals(positionals, [], command);
  const host = values.host ?? DEFAULT_HOST;
  const port = resolvePort(values.port, command);
  const trustProxy = parseCidrList(values['trust-proxy'], '--trust-proxy', command);
  const dbPath = resolveDbPath(values.db);

  const lookup = loadEngines(resolveDataDir(values['data-dir']));
  const meter = openMeter(dbPath, { create: true });
  const api = createApi({ lookup, meter, trustProxy, onResponse: logRequest, onError: logError });
  const listener = createListener(api);
  const server = createServer();
  const shutdown = createShutdown(server, meter);
  server.on('request', (req, res) => {
    shutdown.track(res);
    listener(req, res);
  });
  try {
    // Port first: if it is taken, fail before creating (and printing) any starter keys.
    await listen(server, port, host);
    await announceKeys(meter, dbPath);
  } catch (error) {
    server.close();
    await meter.close();
    throw error;
  }
  note(`seclookup listening on ${urlOf(server)} (database ${dbPath})`);
  return shutdown.untilSignal();
}

/** `--port`, else `$PORT`, else 8080; 0 lets the OS pick a free port (printed once listening). */
function resolvePort(flag: string | undefined, command: string): number {
  if (flag !== undefined) return parseInteger(flag, '--port', command, { max: 65_535 });
  if (process.env.PORT) return parseInteger(process.env.PORT, 'PORT', command, { max: 65_535 });
  return DEFAULT_PORT;
}


/**
 * First start (no bootstrap setting and no keys yet): create and print a starter key pair per
 * product. Later starts, or a database whose keys were made with `keys create`: only a count.
 */
async function announceKeys(meter: Meter, dbPath: string): Promise<void> {
  const bootstrapped = (await meter.getSetting(BOOTSTRAP_SETTING)) !== null;
  const keys = await meter.listKeys();
  if (!bootstrapped && keys.length === 0) {
    const issued: IssuedKeys[] = [];
    for (const product of PRODUCT_IDS) issued.push(await issueKeys(meter, { product }));
    await meter.setSetting(BOOTSTRAP_SETTING, new Date().toISOString());
    printStarterKeys(issued);
    return;
  }
  if (!bootstrapped) await meter.setSetting(BOOTSTRAP_SETTING, new Date().toISOString());
  const active = keys.filter((k) => k.status === 'active').length;
  note(`${keys.length} keys in ${dbPath} (${active} active); use \`seclookup keys list\` to see them`);
}

function printStarterKeys(issued: readonly IssuedKeys[]): void {
  out(`First start: created a "starter" key pair for each of the ${issued.length} products.`);
  out('The secret keys are shown only this once (the database keeps only their hashes). Copy them now.');
  out('Send a key as "Authorization: Bearer <key>". Manage keys with `seclookup keys`.');
  out();
  out(formatTable(['PRODUCT', 'SECRET KEY', 'PUBLIC KEY'], issued.map((k) => [k.product, k.secretKey, k.publicKey])));
  out();
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'the port is already in use' : error.code === 'EADDRNOTAVAIL' ? 'no such address on this machine' : error.message;
      reject(new CommandError(`cannot listen on ${host}:${port}: ${reason}`, { cause: error }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      server.on('error', (error) => logError(error, 'server'));
      resolve();
    });
  });
}

function urlOf(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** One JSON line per request. The event holds no key and no input value by construction. */
function logRequest(event: RequestLogEvent): void {
  process.stdout.write(JSON.stringify({ level: 'info', ...event }) + '\n');
}

function logError(error: unknown, context: string): void {
  process.stderr.write(JSON.stringify({ level: 'error', time: new Date().toISOString(), context, error: describeError(error) }) + '\n');
}

/** Message, stack and the chain of causes (a meter failure wraps the store's own error). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const stack = error.stack ?? '';
  let text = stack.includes(error.message) ? stack : `${error.name}: ${error.message}\n${stack}`;
  if (error.cause !== undefined) text += `\ncaused by: ${describeError(error.cause)}`;
  return text;
}

/**
 * Graceful stop on SIGTERM/SIGINT. `track` is called for every response so that, once
 * stopping, each still-unsent response closes its connection after it is written (a
 * keep-alive socket would otherwise keep `server.close()` waiting). `untilSignal` installs the
 * signal handlers and resolves with the exit code once the server and the database are closed.
 */
function createShutdown(server: Server, meter: Meter) {
  const unsent = new Set<ServerResponse>();
  let stopping = false;

  function track(res: ServerResponse): void {
    if (stopping) res.setHeader('connection', 'close');
    unsent.add(res);
    res.on('finish', () => {
      unsent.delete(res);
      if (stopping) server.closeIdleConnections();
    });
    res.on('close', () => unsent.delete(res));
  }

  function untilSignal(): Promise<number> {
    return new Promise((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) {
          note(`${signal} again: closing open connections now`);
          server.closeAllConnections();
          return;
        }
        stopping = true;
        note(`${signal} received: finishing ${unsent.size} in-flight request(s), then exiting`);
        closeGracefully().then(resolve);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
  }

  async function closeGracefully(): Promise<number> {
    for (const res of unsent) if (!res.headersSent) res.setHeader('connection', 'close');
    const deadline = setTimeout(() => {
      note(`requests still open after ${SHUTDOWN_DEADLINE_MS / 1000} s: closing their connections`);
      server.closeAllConnections();
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    clearTimeout(deadline);
    try {
      await meter.close();
    } catch (error) {
      logError(error, 'closing the database');
      return EXIT_FAILURE;
    }
    note('seclookup stopped: database closed');
    return EXIT_OK;
  }

  return { track, untilSignal };
}
