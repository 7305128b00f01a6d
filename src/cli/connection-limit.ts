/**
 * How many client connections serve holds at once, from the process's limit on open files.
 * Past that limit every accept fails with EMFILE: Node then closes the connection unanswered
 * and says nothing, and the lookups already in flight can no longer open a DNS socket, an
 * upstream connection or SQLite's journal. So the limit is split: a share for DNS exchanges, a
 * share for outbound sockets (each capped to it), a margin, and client connections get the
 * rest; each connection refused at that limit is counted and said on stderr.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import type { DnsResolverOptions } from '../lib/dns/index.js';
import type { LookupOptions } from '../lookup.js';

/** The soft limit on open files (Linux: `Max open files` in /proc/self/limits); null when unknown or unlimited. */
export function openFilesLimit(readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | null {
  let text: string;
  try {
    text = readLimits();
  } catch {
    return null; // not Linux, or no /proc: Node's own behaviour stays
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : null;
}

/** Files this process has open now (Linux: /proc/self/fd); 0 when it cannot tell. */
export function openFilesInUse(list: () => string[] = () => readdirSync('/proc/self/fd')): number {
  try {
    return list().length;
  } catch {
    return 0;
  }
}

/**
 * The files kept under the open-files limit for what lookups open, set before the engines are
 * built: DNS exchanges in flight (the resolver's `maxInFlight`), outbound sockets (tls, whois,
 * RDAP, the pwbreach and riskscore upstream APIs: the outbound guard's `maxSockets`), and a
 * margin for the rest (the database's journal, a dataset reread, the listening and metrics sockets).
 */
export interface LookupFiles {
  dns: number;
  outbound: number;
  margin: number;
}

/**
 * The split of `openFiles`: a margin of 1/32 (16 to 64), DNS an eighth (1 to 256, the
 * resolver's default), outbound an eighth of what those leave (at least 1). Client connections
 * get the rest, less the files open at start (connectionLimit). 1024 keeps 32 + 128 + 108;
 * 65536 keeps 64 + 256 + 8152.
 */
export function lookupFiles(openFiles: number): LookupFiles {
  const margin = clamp(Math.floor(openFiles / 32), 16, 64);
  const dns = clamp(Math.floor(openFiles / 8), 1, 256);
  const outbound = Math.max(1, Math.floor((openFiles - margin - dns) / 8));
  return { dns, outbound, margin };
}

/**
 * The connections to hold at once under `openFiles`, with `inUse` files open already (the
 * database, the log, Node's own) and `kept` for the lookups' own sockets (lookupFiles).
 */
export function connectionLimit(openFiles: number, inUse: number, kept: LookupFiles = lookupFiles(openFiles)): number {
  return Math.max(1, openFiles - inUse - kept.dns - kept.outbound - kept.margin);
}

/**
 * `options` with the lookups' sockets held to `kept`: the DNS resolver's exchanges in flight
 * and the outbound guard's sockets (a resolver passed ready-made keeps its own).
 */
export function withLookupFiles(options: LookupOptions, kept: LookupFiles): LookupOptions {
  const dns = options.dns;
  const ownResolver = typeof (dns as { resolve?: unknown } | undefined)?.resolve === 'function';
  return {
    ...options,
    dns: ownResolver ? dns : { ...(dns as DnsResolverOptions | undefined), maxInFlight: kept.dns },
    outbound: { ...options.outbound, maxSockets: kept.outbound },
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * Connections the metrics port (`--metrics-port`) holds at once: a scraper or two need few, and
 * without a cap a flood on it would use the files the API's connections and lookups are kept
 * (they come out of the margin).
 */
export const METRICS_PORT_CONNECTIONS = 8;

/**
 * The metrics port's server: a scraper sends its request at once, so a connection whose request
 * has not arrived within 5 s is closed (408), checked every second. With Node's defaults (60 s,
 * checked every 30 s) 8 clients sending a header byte now and then held the port, and every
 * scrape was refused, for as long as they kept at it.
 */
export const METRICS_SERVER_OPTIONS = { headersTimeout: 5_000, requestTimeout: 10_000, connectionsCheckingInterval: 1_000 } as const;

/** Hold the metrics port to METRICS_PORT_CONNECTIONS, its refusals counted and said as the API's are. */
export function limitMetricsConnections(server: Server, openFiles: number, say: (line: string) => void): DropReport {
  const limit = METRICS_PORT_CONNECTIONS;
  return limitConnections(server, limit, openFiles, say, Date.now, 60_000, `the metrics port holds ${limit} at once (its scrapers need no more)`);
}

export interface DropReport {
  /** Connections refused at the limit so far. */
  readonly dropped: number;
  /** Say the refusals not said yet (at shutdown), and stop the timer that would. */
  flush(): void;
}

/**
 * Hold `server` to `limit` connections, counting those refused. The first refusal is said at
 * once, later ones at most every `everyMs` with their count since, so a flood writes a line a
 * minute, not a line a connection.
 */
export function limitConnections(
  server: Server,
  limit: number,
  openFiles: number,
  say: (line: string) => void,
  now: () => number = Date.now,
  everyMs = 60_000,
  why = `serve holds ${limit} at once, its open-files limit (${openFiles}) less a reserve for lookups; raise it (ulimit -n, systemd LimitNOFILE=)`,
): DropReport {
  server.maxConnections = limit;
  let dropped = 0;
  let unsaid = 0;
  let saidAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (unsaid === 0) return;
    saidAt = now();
    say(`seclookup: warning: ${unsaid} connection(s) closed unanswered: ${why}`);
    unsaid = 0;
  };
  server.on('drop', () => {
    dropped++;
    unsaid++;
    if (now() - saidAt >= everyMs) flush();
    else timer ??= setTimeout(flush, saidAt + everyMs - now()).unref();
  });
  return {
    get dropped() {
      return dropped;
    },
    flush,
  };
}
