/**
 * The disposable-domain list: the file format of `data/emailval/disposable-domains.txt`, its
 * loader, and the matcher. The file keeps the source's two kinds of entry apart, as upstream
 * means them: a plain line (`index.json`) matches that domain exactly; a `*.` line
 * (`wildcard.json`, `*.33mail.com`) matches the subdomains of the domain after the `*.`. A
 * wildcard.json entry is written as both lines, so the domain itself counts too. For a wildcard
 * entry the matcher checks each parent of the domain down to the registrable domain (ICANN
 * public suffix rules, tldts), never a public suffix itself, with one Set lookup per step.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDomain } from 'tldts';
import { SeclookupError } from '../../errors.js';
import { normalizeDomain } from './normalize.js';

export interface DisposableList {
  /**
   * Is `domain` (lower-case ASCII, as normalizeEmail makes it) listed exactly, or is a parent of
   * it, down to its registrable domain, listed with its subdomains (a `*.` entry)?
   */
  matches(domain: string): boolean;
  /** Distinct domains in the list (a domain listed both exactly and with its subdomains counts once). */
  readonly size: number;
  /** The `# Date:` of the file's header (YYYY-MM-DD), or null when it has none. */
  readonly date: string | null;
}

/** What the header of the list file records. */
export interface DisposableListHeader {
  source: string;
  version: string;
  /** YYYY-MM-DD. */
  date: string;
  licence: string;
}

/** The list file inside a data folder. */
export function disposableListPath(dataDir: string): string {
  return join(dataDir, 'emailval', 'disposable-domains.txt');
}

/**
 * ICANN rules only: a domain under a private-section suffix (a dynamic-DNS provider such as
 * ddns.net) has that provider's domain as its registrable domain, so a listed provider covers
 * the subdomains handed out under it, as the source's wildcard list intends.
 */
const REGISTRABLE = { allowPrivateDomains: false, extractHostname: false, detectIp: false, validateHostname: false } as const;

/** The prefix of a list entry that covers the subdomains of the domain after it (upstream's wildcard.json). */
export const WILDCARD_PREFIX = '*.';

/**
 * A matcher over a set of list entries: lower-case ASCII domains, matched exactly, and
 * `*.`-prefixed ones, whose subdomains match.
 */
export function createDisposableList(entries: ReadonlySet<string>, date: string | null = null): DisposableList {
  const exact = new Set<string>();
  const wildcard = new Set<string>();
  for (const entry of entries) {
    if (entry.startsWith(WILDCARD_PREFIX)) wildcard.add(entry.slice(WILDCARD_PREFIX.length));
    else exact.add(entry);
  }
  return matcherOf(exact, wildcard, date);
}

/** The matcher over domains listed exactly and domains whose subdomains are listed (without their `*.`). */
function matcherOf(exact: ReadonlySet<string>, wildcard: ReadonlySet<string>, date: string | null): DisposableList {
  function matches(domain: string): boolean {
    if (exact.has(domain)) return true;
    if (wildcard.size === 0) return false;
    const registrable = getDomain(domain, REGISTRABLE);
    // null: the domain is itself a public suffix (or has none); only the exact match counts.
    if (!registrable || registrable.length >= domain.length) return false;
    let parent = domain;
    while (parent.length > registrable.length) {
      parent = parent.slice(parent.indexOf('.') + 1);
      if (wildcard.has(parent)) return true;
    }
    return false;
  }
  let size = exact.size;
  for (const domain of wildcard) if (!exact.has(domain)) size++;
  return { matches, size, date };
}

/**
 * Read the list file: `#` comment lines and blank lines are skipped, every other line must be
 * one lower-case ASCII domain, or `*.` and one (its subdomains). Returns the entries as written.
 * Throws SeclookupError `dataset_missing` (unreadable) or
 * `dataset_invalid` (naming the first bad line).
 */
export function loadDisposableDomains(path: string): Set<string> {
  return loadDisposableFile(path).domains;
}

/** The list file's domains and its header's `# Date:` (null when absent), read once; throws as {@link loadDisposableDomains}. */
export function loadDisposableFile(path: string): { domains: Set<string>; date: string | null } {
  const text = readListFile(path);
  return { domains: parseDisposableDomains(text, path), date: disposableListDate(text) };
}

/**
 * The matcher of the list file at `path` (the engine's): each line goes straight into the set it
 * is matched from, without the entries' set {@link loadDisposableFile} builds first (about a quarter of
 * a start's list loading). Throws as {@link loadDisposableDomains}.
 */
export function loadDisposableList(path: string): DisposableList {
  const text = readListFile(path);
  const exact = new Set<string>();
  const wildcard = new Set<string>();
  readEntries(text, path, (domain, subdomains) => (subdomains ? wildcard : exact).add(domain));
  return matcherOf(exact, wildcard, disposableListDate(text));
}

function readListFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** The `# Date: YYYY-MM-DD` line of the header (the `#` lines the file starts with), or null. */
export function disposableListDate(text: string): string | null {
  for (const line of text.split('\n', 32)) {
    if (!line.startsWith('#')) break;
    const match = /^#\s*Date:\s*(\d{4}-\d{2}-\d{2})\s*$/.exec(line);
    if (match) return match[1];
  }
  return null;
}

/** Lower-case LDH labels joined by dots: the cheap shape check run on every line at load. */
const LISTED_DOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/**
 * The header line of a list written before `*.` lines existed (a folder `data init` filled then):
 * each of its domains covered its subdomains, and still does until `data update emailval`
 * rewrites it, so an upgrade does not quietly stop flagging them.
 */
const LEGACY_HEADER = '# A subdomain of a listed domain counts as listed, down to the registrable domain.';

/** The entries of a list file's text (`*.` ones with their prefix); `source` names it in errors. */
export function parseDisposableDomains(text: string, source: string): Set<string> {
  const domains = new Set<string>();
  readEntries(text, source, (domain, subdomains) => domains.add(subdomains ? `${WILDCARD_PREFIX}${domain}` : domain));
  return domains;
}

/**
 * Hand each entry of a list file's text to `take`: its domain, and whether it lists the
 * subdomains (a `*.` line; every line of a legacy file counts as both). Throws
 * `dataset_invalid` naming the first bad line, or when no line lists a domain.
 */
function readEntries(text: string, source: string, take: (domain: string, subdomains: boolean) => void): void {
  // In the header, whatever its line ends (CRLF from a checkout) or a byte-order mark before it.
  const legacy = text.slice(0, 1024).includes(LEGACY_HEADER);
  let entries = 0;
  let start = 0;
  for (let lineNumber = 1; start < text.length; lineNumber++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '' || line.startsWith('#')) continue;
    const subdomains = line.startsWith(WILDCARD_PREFIX);
    const domain = subdomains ? line.slice(WILDCARD_PREFIX.length) : line;
    if (!LISTED_DOMAIN.test(domain)) {
      throw new SeclookupError(
        'dataset_invalid',
        `seclookup: dataset ${source} line ${lineNumber}: ${JSON.stringify(line.slice(0, 80))} is not a lower-case ASCII domain (or one after "*.")`,
      );
    }
    take(domain, subdomains);
    if (legacy && !subdomains) take(domain, true);
    entries++;
  }
  if (entries === 0) throw new SeclookupError('dataset_invalid', `seclookup: dataset ${source} lists no domains`);
}

/**
 * A source entry as the list stores it: trimmed, lower-cased, IDN to punycode; null when it
 * is not a host name of two or more labels (such entries are dropped, and counted).
 */
export function normalizeListEntry(entry: string): string | null {
  const domain = normalizeDomain(entry.trim().replace(/\.$/, ''));
  return typeof domain === 'string' ? domain : null;
}

/**
 * The list file's text: the header, then the entries sorted (by domain, a `*.` entry right after
 * the plain one), one per line. `entries` are plain domains and `*.` ones, as
 * {@link parseDisposableDomains} returns them.
 */
export function formatDisposableFile(entries: Iterable<string>, header: DisposableListHeader): string {
  const bare = (entry: string) => (entry.startsWith(WILDCARD_PREFIX) ? entry.slice(WILDCARD_PREFIX.length) : entry);
  const unique = [...new Set(entries)];
  const sorted = unique
    .map((entry) => ({ entry, domain: bare(entry) }))
    .sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : a.entry.length - b.entry.length))
    .map((e) => e.entry);
  const wildcards = sorted.filter((entry) => entry.startsWith(WILDCARD_PREFIX)).length;
  const domains = new Set(sorted.map(bare)).size;
  const lines = [
    '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).',
    '# A plain line matches that domain only (the source\'s index.json); a "*." line matches the',
    "# subdomains of the domain after it, down to the registrable domain (the source's wildcard.json).",
    `# Source: ${header.source}`,
    `# Version: ${header.version}`,
    `# Date: ${header.date}`,
    `# Licence: ${header.licence}`,
    `# Entries: ${domains} domains, ${wildcards} of them with their subdomains ("*." lines)`,
    ...sorted,
  ];
  return `${lines.join('\n')}\n`;
}
