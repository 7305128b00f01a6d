/**
 * `seclookup data update riskscore [--source GROUP,...]`: refresh the local datasets from their
 * official URLs (data/riskscore/SOURCES.md). Each group is fetched, read with the loader's own
 * parser (a download that does not read, or lists nothing, is refused and the old file kept),
 * and written atomically; `snapshots.json` gets the group's new date. Spamhaus DROP is not
 * bundled: `--source spamhaus-drop` installs it (its terms are the operator's to accept), and a
 * plain update refreshes it once installed.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { invalidOption } from '../../errors.js';
import { resolveTimeouts } from '../../lib/deadline.js';
import { httpGet } from '../../lib/http-get.js';
import { viaMirror } from '../../lib/source-update.js';
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
  failed: { group: string; reason: string }[];
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
        const response = await httpGet(options.mirror ? viaMirror(url, options.mirror) : url, {
          timeouts,
          maxBytes: MAX_BYTES,
          headers: { 'user-agent': 'seclookup-riskscore-updater' },
        });
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
        return response.body.toString('utf8');
      })();
      fetched.set(url, body);
    }
    return body;
  };

  const snapshots = readSnapshots(options.dataDir);
  for (const group of groups) {
    const sources = LOCAL_SOURCES.filter((s) => s.group === group);
    try {
      // Everything of a group is fetched and checked before any of its files is written.
      const files: { source: LocalSource; text: string; count: number }[] = [];
      for (const source of sources) {
        const text = await contentFor(source, fetchText);
        const parsed = parseSource(source, text);
        const count = parsed.ranges.length + parsed.asns.length;
        if (count === 0) throw new Error(`${source.file}: the download lists nothing`);
        files.push({ source, text, count });
      }
      for (const { source, text } of files) await writeFileAtomically(join(dir, source.file), text);
      snapshots[group] = (options.now ?? (() => new Date()))()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z');
      report.updated.push(group);
      progress(`${group}: ${files.map((f) => `${f.source.file} ${f.count}`).join(', ')}`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      report.failed.push({ group, reason });
      progress(`${group}: failed (${reason}), previous data kept`);
    }
  }
  if (report.updated.length > 0) await writeFileAtomically(join(dir, 'snapshots.json'), `${JSON.stringify(snapshots, null, 2)}\n`);
  return report;
}

/** The file's new text: most are written as downloaded; Tor and Apple are converted. */
async function contentFor(source: LocalSource, fetchText: (url: string) => Promise<string>): Promise<string> {
  if (source.url === TOR_URL) return torCsv(await fetchText(source.url));
  if (source.url === APPLE_RELAY_URL) return applePrefixes(await fetchText(source.url), source.id.endsWith('ipv6'));
  return fetchText(source.url);
}

/** Onionoo details (`relays[].fingerprint`, `or_addresses` "ip:port" / "[ip6]:port") as the mirror's CSV. */
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
    const fingerprint = typeof relay?.fingerprint === 'string' ? relay.fingerprint : '';
    for (const address of Array.isArray(relay?.or_addresses) ? relay.or_addresses : []) {
      const match = typeof address === 'string' ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(address) : null;
      if (!match) throw new Error(`Onionoo or_address ${JSON.stringify(address)} does not read`);
      lines.push(`${fingerprint}, ${match[1]}, ${match[2]}`);
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

async function writeFileAtomically(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
