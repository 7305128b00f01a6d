/**
 * `seclookup data update riskscore [--source GROUP,...]`: refresh the local datasets from their
 * official URLs (data/riskscore/SOURCES.md). Each group is fetched, read with the loader's own
 * parser (a download that does not read, or lists nothing, is refused and the old file kept),
 * and written atomically; `snapshots.json` gets the group's new date. Spamhaus DROP is not
 * bundled: `--source spamhaus-drop` installs it (its terms are the operator's to accept), and a
 * plain update refreshes it once installed.
 */
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { invalidOption, SeclookupError } from '../../errors.js';
import { resolveTimeouts } from '../../lib/deadline.js';
import { httpGetFollowing } from '../../lib/http-get.js';
import { formatIp, parseIp } from '../../lib/ip.js';
import { viaMirror, withoutBom, writeBeside } from '../../lib/source-update.js';
import { readSnapshots, riskscoreDir } from './local.js';
import { APPLE_RELAY_URL, LOCAL_SOURCES, SOURCE_GROUPS, TOR_URL, parseSource, type LocalSource, type SourceGroup } from './sources.js';

export interface RiskScoreUpdateOptions {
  dataDir: string;
  mirror?: string;
  /** Per request. @default 60000 */
  timeoutMs?: number;
  /** Groups to refresh. @default every bundled group, plus spamhaus-drop when installed */
  sources?: readonly SourceGroup[];
  onProgress?: (line: string) => void;
  now?: () => Date;
}

export interface RiskScoreUpdateReport {
  updated: string[];
  /** `kept`: every file of the group is as it was (false only when a rename failed between two others). */
  failed: { group: string; reason: string; kept: boolean }[];
  dir: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** Apple's full CSV is the largest download (hundreds of thousands of rows). */
const MAX_BYTES = 64 * 1024 * 1024;

/** `tor,ipsum` -> groups; a TypeError (invalid_option) naming an unknown one. */
export function parseSourceGroups(text: string): SourceGroup[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw invalidOption(`--source needs one or more of ${SOURCE_GROUPS.join(', ')}`);
  for (const name of names)
    if (!SOURCE_GROUPS.includes(name as SourceGroup))
      throw invalidOption(`unknown riskscore source ${JSON.stringify(name)}; sources: ${SOURCE_GROUPS.join(', ')}`);
  return names as SourceGroup[];
}

export async function updateRiskScoreData(options: RiskScoreUpdateOptions): Promise<RiskScoreUpdateReport> {
  const dir = riskscoreDir(options.dataDir);
  // A mistyped --data-dir must not grow a new data folder that nothing reads.
  if (!existsSync(dir)) throw new SeclookupError('dataset_missing', `${dir} does not exist: check --data-dir (seclookup data init makes a data folder)`);
  const progress = options.onProgress ?? (() => {});
  const timeouts = resolveTimeouts({ totalMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }, { connectMs: 10_000, totalMs: DEFAULT_TIMEOUT_MS });
  const dropInstalled = LOCAL_SOURCES.some((s) => s.group === 'spamhaus-drop' && existsSync(join(dir, s.file)));
  const groups = options.sources ?? SOURCE_GROUPS.filter((g) => g !== 'spamhaus-drop' || dropInstalled);
  const report: RiskScoreUpdateReport = { updated: [], failed: [], dir };
  const fetched = new Map<string, Promise<string>>();

  const fetchText = (url: string): Promise<string> => {
    let body = fetched.get(url);
    if (!body) {
      body = (async () => {
        const response = await httpGetFollowing(options.mirror ? viaMirror(url, options.mirror) : url, {
          timeouts,
          maxBytes: MAX_BYTES,
          headers: { 'user-agent': 'seclookup-riskscore-updater' },
        });
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
        return withoutBom(response.body.toString('utf8'));
      })();
      fetched.set(url, body);
    }
    return body;
  };

  // A broken snapshots.json refuses the update before any file is written; it is read again at the end.
  readSnapshots(options.dataDir);
  const dated: Record<string, string> = {};
  for (const group of groups) {
    const sources = LOCAL_SOURCES.filter((s) => s.group === group);
    try {
      // Everything of a group is fetched and checked before any of its files is written.
      const files: { source: LocalSource; text: string; count: number }[] = [];
      for (const source of sources) {
        const text = await contentFor(source, fetchText);
        const count = distinctEntries(source, text);
        if (count === 0) throw new Error(`${source.file}: the download lists nothing`);
        const onFile = entriesOnFile(source, join(dir, source.file));
        if (count < onFile / 2)
          throw new Error(`${source.file}: refusing the download: ${count} entries, fewer than half of the ${onFile} on file (a truncated or broken source?)`);
        files.push({ source, text, count });
      }
      await writeGroup(files.map(({ source, text }) => ({ path: join(dir, source.file), text })));
      dated[group] = (options.now ?? (() => new Date()))()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
      report.updated.push(group);
      progress(`${group}: ${files.map((f) => `${f.source.file} ${f.count}`).join(', ')}`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const kept = !(error instanceof PartlyWritten);
      report.failed.push({ group, reason, kept });
      progress(`${group}: failed (${reason}), ${kept ? 'previous data kept' : 'its files are part new, part old: run the update again'}`);
    }
  }
  if (report.updated.length > 0) writeDates(options.dataDir, dated, progress);
  return report;
}

/**
 * Record the updated groups' dates in `snapshots.json`: read again and written (atomically) in
 * one synchronous step, so that an update of other groups running meanwhile keeps its dates. The
 * groups' files are written by then: a failure here is only reported (the files are new, their
 * dates old), never thrown as if nothing had changed.
 */
function writeDates(dataDir: string, dated: Record<string, string>, progress: (line: string) => void): void {
  const path = join(riskscoreDir(dataDir), 'snapshots.json');
  let temporary: string | undefined;
  try {
    const snapshots = { ...readSnapshots(dataDir), ...dated };
    temporary = writeBeside(path, `${JSON.stringify(snapshots, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    if (temporary !== undefined) rmSync(temporary, { force: true });
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^seclookup: /, '');
    progress(`${path}: not written (${reason}): the files of ${Object.keys(dated).join(', ')} were updated, but it still gives their previous dates`);
  }
}

/** The file's new text: most are written as downloaded; Tor and Apple are converted. */
async function contentFor(source: LocalSource, fetchText: (url: string) => Promise<string>): Promise<string> {
  if (source.url === TOR_URL) return torCsv(await fetchText(source.url));
  if (source.url === APPLE_RELAY_URL) return applePrefixes(await fetchText(source.url), source.id.endsWith('ipv6'));
  return fetchText(source.url);
}

/**
 * Onionoo details as the mirror's CSV: per relay with the Exit flag (`flags`; the query asks for
 * `flag=Exit` already, so a relay without a `flags` field is taken as the query's), a row per
 * `or_addresses` entry ("ip:port" / "[ip6]:port"), then a row per `exit_addresses` entry (a bare
 * address, where the relay's exit traffic comes from) that is not one of the relay's OR
 * addresses, with an empty port.
 */
function torCsv(body: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new Error('Onionoo answer is not valid JSON');
  }
  const relays = (doc as { relays?: unknown }).relays;
  if (!Array.isArray(relays)) throw new Error('Onionoo answer has no "relays" array');
  const lines = ['fingerprint, ipaddr, port'];
  for (const relay of relays) {
    if (Array.isArray(relay?.flags) && !relay.flags.includes('Exit')) continue;
    const fingerprint = typeof relay?.fingerprint === 'string' ? relay.fingerprint : '';
    const seen = new Set<string>();
    for (const address of Array.isArray(relay?.or_addresses) ? relay.or_addresses : []) {
      const match = typeof address === 'string' ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(address) : null;
      const ip = match ? parseIp(match[1]) : null;
      if (!match || !ip) throw new Error(`Onionoo or_address ${JSON.stringify(address)} does not read`);
      seen.add(formatIp(ip));
      lines.push(`${fingerprint}, ${match[1]}, ${match[2]}`);
    }
    for (const address of Array.isArray(relay?.exit_addresses) ? relay.exit_addresses : []) {
      const ip = typeof address === 'string' ? parseIp(address) : null;
      if (!ip) throw new Error(`Onionoo exit_address ${JSON.stringify(address)} does not read`);
      const text = formatIp(ip);
      if (seen.has(text)) continue;
      seen.add(text);
      lines.push(`${fingerprint}, ${text},`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Apple's `prefix,country,region,city,` CSV: the prefixes of one family, each once. */
function applePrefixes(body: string, v6: boolean): string {
  const out = new Set<string>();
  for (const line of body.split('\n')) {
    const prefix = line.split(',')[0].trim();
    if (prefix === '' || prefix.startsWith('#')) continue;
    if (prefix.includes(':') === v6) out.add(prefix);
  }
  return [...out].map((p) => `${p}\n`).join('');
}

/** Distinct ranges and ASNs the loader reads from `text`: a download padded with copies of one entry counts one. */
function distinctEntries(source: LocalSource, text: string): number {
  const parsed = parseSource(source, text);
  return new Set(parsed.ranges.map((range) => range.cidr)).size + new Set(parsed.asns).size;
}

/** The file on disk's distinct entries; 0 when it is absent or no longer reads (no baseline then). */
function entriesOnFile(source: LocalSource, path: string): number {
  try {
    return distinctEntries(source, readFileSync(path, 'utf8'));
  } catch {
    return 0;
  }
}

/** A group whose files were replaced in part. */
class PartlyWritten extends Error {}

/**
 * A group's files: each written beside its place first, then all renamed into place, so a write
 * that fails (a full disk, a folder this user cannot write) leaves every file of the group as it
 * was. Only a rename failing between two others (which needs the folder changed under it) would
 * leave the group part new; the error then says which files were replaced.
 */
async function writeGroup(files: { path: string; text: string }[]): Promise<void> {
  const staged: { path: string; temporary: string }[] = [];
  try {
    for (const { path, text } of files) {
      await mkdir(dirname(path), { recursive: true }); // a source installed for the first time (spamhaus-drop)
      // With the permissions of the file it replaces (a list the service's group reads stays so).
      staged.push({ path, temporary: writeBeside(path, text) });
    }
  } catch (error) {
    await Promise.all(staged.map(({ temporary }) => unlink(temporary).catch(() => {})));
    throw error;
  }
  const replaced: string[] = [];
  for (const [i, { path, temporary }] of staged.entries()) {
    try {
      await rename(temporary, path);
      replaced.push(path);
    } catch (error) {
      await Promise.all(staged.slice(i).map((file) => unlink(file.temporary).catch(() => {})));
      const why = error instanceof Error ? error.message : String(error);
      if (replaced.length === 0) throw error;
      throw new PartlyWritten(`${why}; already replaced: ${replaced.join(', ')}`);
    }
  }
}
