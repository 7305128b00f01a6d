/**
 * Refresh data/emailval/disposable-domains.txt from its official machine-readable source: the
 * `index.json` and `wildcard.json` arrays of github.com/ivolo/disposable-email-domains (branch
 * master), the repository the npm package `disposable-email-domains` is published from. The
 * two are kept apart as upstream means them: an index.json entry is one exact domain; a
 * wildcard.json entry is written as the domain itself plus a `*.` line for its subdomains.
 *
 * Safety rules: each request has a timeout and a size cap; both documents must arrive and
 * parse, or nothing changes; an answer that would leave fewer than half of the domains on file
 * is refused as implausible (a truncated or hijacked source); the file is rewritten atomically,
 * and only when the set of domains changed.
 */
import { createSourceFetcher, writeAtomically, type SourceFetcher, type SourceRequestOptions } from '../../lib/source-update.js';
import {
  createDisposableList,
  disposableListPath,
  formatDisposableFile,
  loadDisposableDomains,
  normalizeListEntry,
  parseDisposableDomains,
  WILDCARD_PREFIX,
} from './disposable.js';

export const DISPOSABLE_SOURCE_URLS = {
  index: 'https://raw.githubusercontent.com/ivolo/disposable-email-domains/master/index.json',
  wildcard: 'https://raw.githubusercontent.com/ivolo/disposable-email-domains/master/wildcard.json',
} as const;

/** The licence line written into the file header. */
export const DISPOSABLE_LICENCE = 'MIT (disposable-email-domains, github.com/ivolo/disposable-email-domains; see SOURCES.md)';

/** Request limits default to 30 s per request and 20 MB per document (index.json is about 2.5 MB). */
export interface DisposableUpdateOptions extends SourceRequestOptions {
  /** Data folder holding `emailval/disposable-domains.txt`; read and rewritten in place. */
  dataDir: string;
  /** Progress lines, for stderr. */
  onProgress?: (line: string) => void;
  /** Clock for the header's date (UTC). @default () => new Date() */
  now?: () => Date;
}

export interface DisposableUpdateReport {
  path: string;
  /** Domains on file before (distinct: a domain listed exactly and with its subdomains counts once). */
  before: number;
  /** Domains on file after (equal to `before` when nothing changed). */
  after: number;
  /** Lines of the list added: a domain, or a `*.` entry (a domain now covering its subdomains). */
  added: number;
  /** Lines of the list removed, counted as `added`. */
  removed: number;
  /** Source entries that are not host names, left out. */
  dropped: number;
  /** True when the file was rewritten. */
  changed: boolean;
}

/** A source problem: the update is abandoned and the file left as it was. */
export class DisposableUpdateError extends Error {}

export const DISPOSABLE_DEFAULT_TIMEOUT_MS = 30_000;
export const DISPOSABLE_DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

/**
 * Fetch both documents (in parallel), merge, check and write. Throws DisposableUpdateError
 * for a failed, malformed or implausible source, SeclookupError when the current file cannot
 * be read; the file is unchanged whenever it throws.
 */
export async function updateDisposableDomains(options: DisposableUpdateOptions): Promise<DisposableUpdateReport> {
  const path = disposableListPath(options.dataDir);
  const current = loadDisposableDomains(path);
  const progress = options.onProgress ?? (() => {});
  const fetcher = createSourceFetcher(
    options,
    { timeoutMs: DISPOSABLE_DEFAULT_TIMEOUT_MS, maxBytes: DISPOSABLE_DEFAULT_MAX_BYTES, userAgent: 'seclookup-disposable-domains-updater' },
    (reason, url, cause) =>
      new DisposableUpdateError(`${documentName(url)}: ${reason.replace('response is not valid JSON', 'the response is not valid JSON')}`, { cause }),
  );
  const fetchList = (url: string) => fetchStringArray(fetcher, url);

  const [index, wildcard] = await Promise.all([fetchList(DISPOSABLE_SOURCE_URLS.index), fetchList(DISPOSABLE_SOURCE_URLS.wildcard)]);
  progress(`index.json: ${index.length} entries; wildcard.json: ${wildcard.length} entries`);

  // index.json: exact domains. wildcard.json: the domain and (a `*.` entry) its subdomains.
  const fresh = new Set<string>();
  let dropped = 0;
  for (const [entries, isWildcard] of [
    [index, false],
    [wildcard, true],
  ] as const) {
    for (const entry of entries) {
      const domain = normalizeListEntry(entry);
      if (domain === null) {
        dropped++;
        continue;
      }
      fresh.add(domain);
      if (isWildcard) fresh.add(`${WILDCARD_PREFIX}${domain}`);
    }
  }
  if (dropped > 0) progress(`left out ${dropped} ${dropped === 1 ? 'entry that is' : 'entries that are'} not a domain name`);
  const before = createDisposableList(current).size;
  const after = createDisposableList(fresh).size;
  if (after < before / 2) {
    throw new DisposableUpdateError(
      `refusing the new list: ${after} ${after === 1 ? 'domain' : 'domains'}, fewer than half of the ${before} on file (a truncated or broken source?)`,
    );
  }

  // Compared line by line, so a domain that gains or loses its subdomains is a change too (and a
  // file written before the `*.` lines existed is rewritten).
  const added = [...fresh].filter((entry) => !current.has(entry)).length;
  const removed = current.size - (fresh.size - added);
  const report: DisposableUpdateReport = { path, before, after, added, removed, dropped, changed: false };
  progress(`${after} domains (+${added} -${removed} entries)`);
  if (added === 0 && removed === 0) return { ...report, after: before };

  const text = formatDisposableFile(fresh, {
    source: `${DISPOSABLE_SOURCE_URLS.index} (exact) + wildcard.json (with subdomains)`,
    version: 'master branch as fetched on the date below',
    date: (options.now ?? (() => new Date()))().toISOString().slice(0, 10),
    licence: DISPOSABLE_LICENCE,
  });
  parseDisposableDomains(text, path); // never write a file the loader would refuse
  await writeAtomically(path, text);
  return { ...report, changed: true };
}

// --- fetching -------------------------------------------------------------------------------

/** A JSON array of strings; every failure is a DisposableUpdateError naming the document. */
async function fetchStringArray(fetcher: SourceFetcher, url: string): Promise<string[]> {
  const body = await fetcher.json(url);
  if (!Array.isArray(body) || !body.every((entry) => typeof entry === 'string')) {
    throw new DisposableUpdateError(`${documentName(url)}: expected a JSON array of domain names`);
  }
  return body as string[];
}

function documentName(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
