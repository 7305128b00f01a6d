/**
 * How many client connections serve holds at once, from the process's limit on open files.
 * Past that limit every accept fails with EMFILE: Node then closes the connection unanswered
 * and says nothing, and the lookups already in flight can no longer open a DNS socket, an
 * upstream connection or SQLite's journal. A connection limit below the file limit keeps a
 * reserve for those, and each connection refused at it is counted and said on stderr.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';

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
 * The connections to hold at once under `openFiles`, with `inUse` files open already (the
 * database, the log, Node's own): an eighth of the limit (16 to 256) is kept back beyond those,
 * for DNS sockets and upstream calls made while the connections are open.
 */
export function connectionLimit(openFiles: number, inUse: number): number {
  const reserve = Math.min(256, Math.max(16, Math.floor(openFiles / 8)));
  return Math.max(1, openFiles - inUse - reserve);
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
    say(
      `seclookup: warning: ${unsaid} connection(s) closed unanswered: serve holds ${limit} at once, ` +
        `its open-files limit (${openFiles}) less a reserve for lookups; raise it (ulimit -n, systemd LimitNOFILE=)`,
    );
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
