/**
 * The disposable-domain list: the file format of `data/emailval/disposable-domains.txt`, its
 * loader, and the matcher. A subdomain of a listed domain counts as listed: the matcher checks
 * the domain and each parent down to the registrable domain (ICANN public suffix rules,
 * tldts), never a public suffix itself, with one Set lookup per step.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDomain } from 'tldts';
import { SeclookupError } from '../../errors.js';
import { normalizeDomain } from './normalize.js';

export interface DisposableList {
  /** Is `domain` (lower-case ASCII, as normalizeEmail makes it) or a parent up to its registrable domain listed? */
  matches(domain: string): boolean;
  /** Entries in the list. */
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

/** A matcher over a set of lower-case ASCII domains. */
export function createDisposableList(domains: ReadonlySet<string>, date: string | null = null): DisposableList {
  function matches(domain: string): boolean {
    if (domains.has(domain)) return true;
    const registrable = getDomain(domain, REGISTRABLE);
    // null: the domain is itself a public suffix (or has none); only the exact match counts.
    if (!registrable || registrable.length >= domain.length) return false;
    let parent = domain;
    while (parent.length > registrable.length) {
      parent = parent.slice(parent.indexOf('.') + 1);
      if (domains.has(parent)) return true;
    }
    return false;
  }
  return { matches, size: domains.size, date };
}

/**
 * Read the list file: `#` comment lines and blank lines are skipped, every other line must be
 * one lower-case ASCII domain. Throws SeclookupError `dataset_missing` (unreadable) or
 * `dataset_invalid` (naming the first bad line).
 */
export function loadDisposableDomains(path: string): Set<string> {
  return loadDisposableFile(path).domains;
}

/** The list file's domains and its header's `# Date:` (null when absent), read once; throws as {@link loadDisposableDomains}. */
export function loadDisposableFile(path: string): { domains: Set<string>; date: string | null } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SeclookupError('dataset_missing', `seclookup: cannot read dataset ${path}: ${(error as Error).message}`, { cause: error });
  }
  return { domains: parseDisposableDomains(text, path), date: disposableListDate(text) };
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

/** The domains of a list file's text; `source` names it in errors. */
export function parseDisposableDomains(text: string, source: string): Set<string> {
  const domains = new Set<string>();
  let start = 0;
  for (let lineNumber = 1; start < text.length; lineNumber++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '' || line.startsWith('#')) continue;
    if (!LISTED_DOMAIN.test(line)) {
      throw new SeclookupError(
        'dataset_invalid',
        `seclookup: dataset ${source} line ${lineNumber}: ${JSON.stringify(line.slice(0, 80))} is not a lower-case ASCII domain`,
      );
    }
    domains.add(line);
  }
  if (domains.size === 0) throw new SeclookupError('dataset_invalid', `seclookup: dataset ${source} lists no domains`);
  return domains;
}

/**
 * A source entry as the list stores it: trimmed, lower-cased, IDN to punycode; null when it
 * is not a host name of two or more labels (such entries are dropped, and counted).
 */
export function normalizeListEntry(entry: string): string | null {
  const domain = normalizeDomain(entry.trim().replace(/\.$/, ''));
  return typeof domain === 'string' ? domain : null;
}

/** The list file's text: the header, then the domains sorted, one per line. */
export function formatDisposableFile(domains: Iterable<string>, header: DisposableListHeader): string {
  const sorted = [...new Set(domains)].sort();
  const lines = [
    '# Disposable e-mail domains for seclookup emailval: one per line, lower-case ASCII (IDN as punycode).',
    '# A subdomain of a listed domain counts as listed, down to the registrable domain.',
    `# Source: ${header.source}`,
    `# Version: ${header.version}`,
    `# Date: ${header.date}`,
    `# Licence: ${header.licence}`,
    `# Entries: ${sorted.length}`,
    ...sorted,
  ];
  return `${lines.join('\n')}\n`;
}
