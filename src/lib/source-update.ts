/**
 * What every dataset updater (`seclookup data update <product>`) shares: the request limits,
 * fetching a JSON or text document from its official URL or an internal mirror (following up to
 * five redirects, never from https down to http), and rewriting
 * the dataset file atomically. Each product keeps only what is its own: its sources, how to read
 * them, and its plausibility checks.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { rename, unlink } from 'node:fs/promises';
import { DEFAULT_TIMEOUTS, resolveTimeouts, type TimeoutOptions } from './deadline.js';
import { httpGetFollowing, type HttpGetResponse } from './http-get.js';

/** The request options every updater takes. */
export interface SourceRequestOptions {
  /** Fetch `https://host/path` from `${mirror}/host/path` instead (an internal mirror, or a loopback server in tests). */
  mirror?: string;
  /** Per request, headers and body together (`timeouts.totalMs`). @default the updater's own */
  timeoutMs?: number;
  /** Connect and total limits per request; wins over `timeoutMs`. */
  timeouts?: TimeoutOptions;
  /** Largest response accepted per document. @default the updater's own */
  maxBytes?: number;
}

/** Resolved limits for one updater run. */
export interface SourceFetcher {
  /** GET a JSON document; every failure is thrown as `fail(reason)`, the reason naming what went wrong. */
  json(url: string): Promise<unknown>;
  /** GET a text document (UTF-8), e.g. a list kept byte for byte; failures as for `json`. */
  text(url: string): Promise<string>;
}

/**
 * A fetcher with the updater's defaults (`timeoutMs`, `maxBytes`) filled in from `options`.
 * `fail` turns a reason (`timeout after 15000 ms`, `HTTP 500`, `response is not valid JSON`,
 * `response larger than 5 MB`, `request failed: ECONNREFUSED`) into the updater's own error.
 */
export function createSourceFetcher(
  options: SourceRequestOptions,
  defaults: { timeoutMs: number; maxBytes: number; userAgent: string },
  fail: (reason: string, url: string, cause?: unknown) => Error,
): SourceFetcher {
  const timeouts = resolveTimeouts(options.timeouts ?? { totalMs: options.timeoutMs ?? defaults.timeoutMs }, DEFAULT_TIMEOUTS, 'timeouts');
  const maxBytes = options.maxBytes ?? defaults.maxBytes;
  const get = async (url: string, accept: string): Promise<string> => {
    const target = options.mirror ? viaMirror(url, options.mirror) : url;
    let response: HttpGetResponse;
    try {
      response = await httpGetFollowing(target, { timeouts, maxBytes, headers: { accept, 'user-agent': defaults.userAgent } });
    } catch (error) {
      throw fail(error instanceof Error ? error.message : String(error), url, error);
    }
    if (response.status < 200 || response.status > 299) throw fail(`HTTP ${response.status}`, url);
    return withoutBom(response.body.toString('utf8'));
  };
  return {
    async json(url) {
      const body = await get(url, 'application/json');
      try {
        return JSON.parse(body);
      } catch {
        throw fail('response is not valid JSON', url);
      }
    },
    text: (url) => get(url, 'text/plain, */*'),
  };
}

/**
 * `text` without a leading byte order mark, which some servers (a Windows-built file, a CDN
 * transform) put before JSON or a list: JSON.parse refuses it, and a list would keep it in
 * its first entry. RFC 8259 lets a parser ignore it.
 */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** `https://host/path` as `${mirror}/host/path`. */
export function viaMirror(url: string, mirror: string): string {
  const { host, pathname, search } = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${host}${pathname}${search}`;
}

/**
 * Write to a temporary file beside `path` (same file system, same permissions; 0o644 less the
 * umask for a file that does not exist yet), then rename it over `path`: readers see the old file
 * or the new one, never half of one. The folder must exist.
 */
export async function writeAtomically(path: string, content: string): Promise<void> {
  const temporary = writeBeside(path, content);
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/**
 * `content` written to a new temporary file beside `path`, with the permissions of the file at
 * `path` (set explicitly: the umask would otherwise narrow them, and a dataset the service's
 * group could read would become readable by its owner only), or 0o644 less the umask when there
 * is none. Synchronous: a read-modify-write of snapshots.json must not yield. Returns the
 * temporary file's path, for the caller to rename over `path`; removes it and throws when it
 * cannot be written.
 */
export function writeBeside(path: string, content: string): string {
  removeStaleTemporaries(path);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    writeFileSync(temporary, content, { flag: 'wx', mode: mode ?? 0o644 });
    if (mode !== undefined) chmodSync(temporary, mode);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return temporary;
}

/** A temporary file of `writeBeside`: the target's name, the writer's pid, 8 hex digits. */
const TEMPORARY = /^\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Remove the temporary files beside `path` that an update killed between writing and renaming
 * left (kill -9, a machine that stopped): those whose writer's pid no longer runs here. Nothing
 * reads them, but each is a whole copy of a dataset. A live writer's file (this process's, or
 * a concurrent update's) is left alone; so is anything that cannot be listed or removed.
 */
function removeStaleTemporaries(path: string): void {
  const name = basename(path);
  let entries: string[];
  try {
    entries = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(name)) continue;
    const pid = TEMPORARY.exec(entry.slice(name.length))?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    try {
      rmSync(join(dirname(path), entry), { force: true });
    } catch {
      // Not ours to remove (another user's folder): the update goes on beside it.
    }
  }
}

/** Does a process with this pid run on this machine? (EPERM: it does, as another user.) */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
