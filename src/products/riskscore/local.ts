/**
 * The local provider's data, compiled: every range list (Tor exits, VPN, datacenter, cloud,
 * crawler, monitor and platform ranges, Apple Private Relay, IPsum, Spamhaus DROP) in ONE
 * CidrTable whose values are list ids, answered in one binary search; the ASN lists as Sets.
 *
 * Compiling the 200,000-odd entries takes seconds, so the result is cached on disk
 * (lib/compiled-file.ts): `seclookup-riskscore-v<format>.idx` beside the lists (else in the
 * private temp folder), stamped with each list file's size and mtime and the source
 * definitions; `seclookup data update riskscore` changes the files, so the next start rebuilds.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SeclookupError } from '../../errors.js';
import { realPathOrResolved } from '../../lib/file-access.js';
import { cidrTableFrom, compileCidrTable, type CidrTable, type CompiledCidrTable } from '../../lib/cidr-table.js';
import { float64Section, loadOrCompile, uint32Section, type CompiledFileContents, type CompiledFileInfo } from '../../lib/compiled-file.js';
import type { IpInput } from '../../lib/ip-input.js';
import { LOCAL_SOURCES, SourceFormatError, parseSource, type LocalSource, type SourceGroup } from './sources.js';
import { NO_EVIDENCE, type Evidence } from './score.js';

export interface LocalData {
  table: CidrTable<string>;
  datacenterAsns: ReadonlySet<number>;
  vpnAsns: ReadonlySet<number>;
  dropAsns: ReadonlySet<number>;
  /** Entries loaded (ranges, addresses and ASNs of every list): SPEC's database_records. */
  records: number;
  /** Entries left out at load (special-purpose space, too broad). */
  filtered: number;
  /** The newest snapshot date of the groups loaded: `fetched_at`. */
  snapshot: Date;
  /** Per group: its snapshot date and entries. */
  groups: { group: SourceGroup; snapshot: string | null; records: number }[];
  /** Where the compiled form came from (read from its cache file, or compiled now). */
  index: CompiledFileInfo;
}

/** Bumped whenever parsing or the compiled layout changes, so older cache files are rebuilt. */
export const LOCAL_INDEX_FORMAT = 1;
const KIND = { magic: 'SLRSKIDX', format: LOCAL_INDEX_FORMAT };

/** The compiled form, before the table is wrapped for lookups: what the cache file holds. */
interface CompiledLocal {
  table: CompiledCidrTable<string>;
  asns: Record<'asn-datacenter' | 'asn-vpn' | 'asn-drop', number[]>;
  records: number;
  filtered: number;
  snapshot: number;
  groups: LocalData['groups'];
}

/** Every data file loadLocalData reads: snapshots.json and each list. */
export function localDataFiles(dataDir: string): string[] {
  const dir = riskscoreDir(dataDir);
  return ['snapshots.json', ...LOCAL_SOURCES.map((s) => s.file)].map((file) => join(dir, file));
}

/** Size and mtime of each data file present (snapshots.json and every list): what a compiled table was built from. */
function listFileStamps(dir: string): { file: string; size: number; mtimeMs: number }[] {
  const stamps: { file: string; size: number; mtimeMs: number }[] = [];
  for (const file of ['snapshots.json', ...LOCAL_SOURCES.map((s) => s.file)]) {
    try {
      const st = statSync(join(dir, file));
      stamps.push({ file, size: st.size, mtimeMs: st.mtimeMs });
    } catch {
      // absent: an optional list not installed (a required one is reported by loadLocalData)
    }
  }
  return stamps;
}

export function riskscoreDir(dataDir: string): string {
  return join(dataDir, 'riskscore');
}

/** `<dataDir>/riskscore/snapshots.json`: group -> ISO date of its data. */
export function readSnapshots(dataDir: string): Record<string, string> {
  const path = join(riskscoreDir(dataDir), 'snapshots.json');
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new SeclookupError('dataset_invalid', `seclookup: ${path} is not valid JSON`, { cause: error });
  }
  // Group -> date text: anything else (an array, a number for a date) is not this file.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new SeclookupError('dataset_invalid', `seclookup: ${path} must be a JSON object of group -> date strings`);
  }
  return parsed as Record<string, string>;
}

/**
 * The local data, from its cache file when that matches the lists, else read, compiled and
 * cached. Throws SeclookupError `dataset_missing` when a bundled file is absent or cannot be read,
 * `dataset_invalid` for a file that does not parse, each naming the file: the engine's build fails
 * with it (the local provider cannot answer without its lists).
 * @param fallbackDir where the cache file goes when the data folder cannot be written (tests).
 */
export function loadLocalData(dataDir: string, fallbackDir?: string): LocalData {
  const dir = riskscoreDir(dataDir);
  for (const source of LOCAL_SOURCES) {
    const path = join(dir, source.file);
    if (!source.optional && !existsSync(path)) throw missingList(path);
  }
  const files = listFileStamps(dir);
  const definitions = createHash('sha256').update(JSON.stringify(LOCAL_SOURCES)).digest('hex').slice(0, 16);
  const { data, info } = loadOrCompile<CompiledLocal>({
    kind: KIND,
    // Named after the folder (the fallback folder holds the files of every data folder), by its real
    // path: a folder reached through a symlink (a test's, a deploy's `current`) is one file, not one per path.
    name: `seclookup-riskscore-v${LOCAL_INDEX_FORMAT}-${createHash('sha256').update(realPathOrResolved(dir)).digest('hex').slice(0, 12)}.idx`,
    dir,
    fallbackDir,
    stamp: { definitions, files },
    staleReason: 'a list file changed (size or mtime)',
    compile: () => compileLocalData(dataDir),
    encode: encodeLocal,
    decode: decodeLocal,
  });
  return {
    table: cidrTableFrom(data.table),
    datacenterAsns: new Set(data.asns['asn-datacenter']),
    vpnAsns: new Set(data.asns['asn-vpn']),
    dropAsns: new Set(data.asns['asn-drop']),
    records: data.records,
    filtered: data.filtered,
    snapshot: new Date(data.snapshot),
    groups: data.groups,
    index: info,
  };
}

/** Read every list file and compile them. */
function compileLocalData(dataDir: string): CompiledLocal {
  const dir = riskscoreDir(dataDir);
  const snapshots = readSnapshots(dataDir);
  const ranges: { cidr: string; value: string }[] = [];
  const asnSets = { 'asn-datacenter': new Set<number>(), 'asn-vpn': new Set<number>(), 'asn-drop': new Set<number>() };
  let records = 0;
  let filtered = 0;
  const perGroup = new Map<SourceGroup, number>();
  for (const source of LOCAL_SOURCES) {
    const path = join(dir, source.file);
    if (!existsSync(path)) {
      if (source.optional) continue;
      throw missingList(path);
    }
    const parsed = readSource(source, path);
    // An installed list with no entry at all is a truncated or emptied file: its flag would never be set.
    if (parsed.ranges.length + parsed.asns.length + parsed.filtered === 0)
      throw new SeclookupError('dataset_invalid', `seclookup: riskscore dataset ${path} lists no entries`);
    for (const range of parsed.ranges) ranges.push(range);
    if (source.kind === 'asn-datacenter' || source.kind === 'asn-vpn' || source.kind === 'asn-drop')
      for (const asn of parsed.asns) asnSets[source.kind].add(asn);
    const count = parsed.ranges.length + parsed.asns.length;
    records += count;
    filtered += parsed.filtered;
    perGroup.set(source.group, (perGroup.get(source.group) ?? 0) + count);
  }
  const groups = [...perGroup].map(([group, count]) => ({ group, snapshot: typeof snapshots[group] === 'string' ? snapshots[group] : null, records: count }));
  const times = groups.map((g) => (g.snapshot ? Date.parse(g.snapshot) : NaN)).filter((t) => Number.isFinite(t));
  return {
    table: compileCidrTable(ranges),
    asns: { 'asn-datacenter': [...asnSets['asn-datacenter']], 'asn-vpn': [...asnSets['asn-vpn']], 'asn-drop': [...asnSets['asn-drop']] },
    records,
    filtered,
    snapshot: times.length > 0 ? Math.max(...times) : 0,
    groups,
  };
}

const ASN_KINDS = ['asn-datacenter', 'asn-vpn', 'asn-drop'] as const;

function encodeLocal(data: CompiledLocal) {
  const { table } = data;
  return {
    meta: { size: table.size, records: data.records, filtered: data.filtered, snapshot: data.snapshot, groups: data.groups },
    sections: [
      Buffer.from(JSON.stringify(table.answers), 'utf8'),
      table.starts4,
      table.answers4,
      table.starts6,
      table.answers6,
      ...ASN_KINDS.map((kind) => Uint32Array.from(data.asns[kind])),
    ],
  };
}

function decodeLocal({ meta, sections }: CompiledFileContents): CompiledLocal | string {
  const m = meta as Partial<Omit<CompiledLocal, 'table' | 'asns'> & { size: number }> | null;
  if (
    !m ||
    !Number.isSafeInteger(m.size) ||
    !Number.isSafeInteger(m.records) ||
    !Number.isSafeInteger(m.filtered) ||
    typeof m.snapshot !== 'number' ||
    !Array.isArray(m.groups) ||
    sections.length !== 8
  )
    return 'corrupt header (meta)';
  let answers: string[][];
  try {
    answers = JSON.parse(sections[0].toString('utf8')) as string[][];
  } catch {
    return 'corrupt answers';
  }
  if (!Array.isArray(answers) || !answers.every((a) => Array.isArray(a) && a.every((v) => typeof v === 'string'))) return 'corrupt answers';
  const table: CompiledCidrTable<string> = {
    size: m.size!,
    answers: answers.map((a) => Object.freeze(a)),
    starts4: float64Section(sections[1]),
    answers4: uint32Section(sections[2]),
    starts6: float64Section(sections[3]),
    answers6: uint32Section(sections[4]),
  };
  try {
    cidrTableFrom(table); // checks the arrays agree
  } catch (error) {
    return `corrupt table: ${(error as Error).message}`;
  }
  const asns = Object.fromEntries(ASN_KINDS.map((kind, i) => [kind, [...uint32Section(sections[5 + i])]])) as CompiledLocal['asns'];
  return { table, asns, records: m.records!, filtered: m.filtered!, snapshot: m.snapshot!, groups: m.groups! };
}

/** A required list that is not there: what to do about it, for the operator (never shown to clients). */
function missingList(path: string): SeclookupError {
  return new SeclookupError(
    'dataset_missing',
    `seclookup: riskscore dataset ${path} is missing (the local provider needs it: restore it, or run \`seclookup data update riskscore\`; ` +
      'with an upstream provider configured the local data is not read)',
  );
}

function readSource(source: LocalSource, path: string) {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read riskscore dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseSource(source, text);
  } catch (error) {
    // The parser names the file as the list knows it (`tor/tor-exits.csv line 3: ...`): said here with its full path.
    if (error instanceof SourceFormatError) {
      const detail = error.message.startsWith(source.file) ? error.message.slice(source.file.length) : `: ${error.message}`;
      throw new SeclookupError('dataset_invalid', `seclookup: riskscore dataset ${path}${detail}`, { cause: error });
    }
    throw error;
  }
}

/** The range part of the evidence for one table answer (memoised per answer array: the table shares them). */
export type RangeEvidence = Pick<
  Evidence,
  'tor' | 'vpnRange' | 'vpnServer' | 'relay' | 'datacenterRange' | 'cloud' | 'crawler' | 'monitor' | 'platform' | 'ipsumLists' | 'drop'
>;

const memo = new WeakMap<readonly string[], RangeEvidence>();

export function rangeEvidence(values: readonly string[]): RangeEvidence {
  let found = memo.get(values);
  if (found) return found;
  const e = {
    tor: false,
    vpnRange: false,
    vpnServer: false,
    relay: false,
    datacenterRange: false,
    drop: false,
    ipsumLists: 0,
    cloud: [] as string[],
    crawler: [] as string[],
    monitor: [] as string[],
    platform: [] as string[],
  };
  for (const value of values) {
    const colon = value.indexOf(':');
    const kind = colon < 0 ? value : value.slice(0, colon);
    const name = colon < 0 ? '' : value.slice(colon + 1);
    switch (kind) {
      case 'tor':
        e.tor = true;
        break;
      case 'vpn':
        e.vpnRange = true;
        break;
      case 'vpnserver':
        e.vpnServer = true;
        break;
      case 'relay':
        e.relay = true;
        break;
      case 'datacenter':
        e.datacenterRange = true;
        break;
      case 'drop':
        e.drop = true;
        break;
      case 'ipsum':
        e.ipsumLists = Math.max(e.ipsumLists, Number(name));
        break;
      case 'cloud':
      case 'crawler':
      case 'monitor':
      case 'platform':
        e[kind].push(name);
        break;
    }
  }
  // X4BNet's VPN list includes Apple's relay egress ranges: there, the address is a relay (ours).
  if (e.relay) e.vpnRange = false;
  found = Object.freeze(e);
  memo.set(values, found);
  return found;
}

/** The table's answer for a prepared address. */
export function matchInput(table: CidrTable<string>, input: IpInput): readonly string[] {
  return input.version === 4 ? table.matchIPv4(input.value) : table.match(input.address);
}

export { NO_EVIDENCE };
