/**
 * `seclookup data update whois`: refresh data/whois/rdap-bootstrap.json from IANA's RDAP
 * bootstrap registry (https://data.iana.org/rdap/dns.json), through the shared source-update
 * helpers (timeout, size cap, `--mirror`, atomic rewrite).
 *
 * Safety rules: the answer must be a bootstrap document (RFC 9224 shape, http(s) URLs), list at
 * least half as many distinct TLDs as the file on disk (a truncated, emptied or padded answer is
 * refused), and be published neither before it nor in the future (`publication`, a day of clock
 * skew allowed); the file is rewritten only when the services changed.
 * The overrides and port-43 tables are maintained by hand (data/whois/SOURCES.md).
 */
import { createSourceFetcher, writeAtomically, type SourceRequestOptions } from '../../lib/source-update.js';
import { BOOTSTRAP_FILE, bootstrapProblem, loadBootstrap, whoisDataPath } from './servers.js';
import type { RdapBootstrap } from './types.js';

export const IANA_BOOTSTRAP_URL = 'https://data.iana.org/rdap/dns.json';
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_BYTES = 5 * 1024 * 1024;
const DAY_MS = 86_400_000;

export interface BootstrapUpdateOptions extends SourceRequestOptions {
  dataDir: string;
  onProgress?: (line: string) => void;
  /** Clock for the publication check. @default Date.now */
  now?: () => number;
}

export interface BootstrapUpdateReport {
  path: string;
  changed: boolean;
  /** TLDs in the file before and after. */
  before: number;
  after: number;
  publication: string | null;
}

/** Thrown when IANA's answer cannot be used; the file is left as it was. */
export class BootstrapUpdateError extends Error {}

export async function updateRdapBootstrap(options: BootstrapUpdateOptions): Promise<BootstrapUpdateReport> {
  const path = whoisDataPath(options.dataDir, BOOTSTRAP_FILE);
  const current = loadBootstrap(options.dataDir);
  const fetcher = createSourceFetcher(
    options,
    { timeoutMs: DEFAULT_TIMEOUT_MS, maxBytes: MAX_BYTES, userAgent: 'seclookup-rdap-bootstrap-updater' },
    (reason, url) => new BootstrapUpdateError(`${url}: ${reason}`),
  );
  const progress = options.onProgress ?? (() => {});
  progress(`fetching ${IANA_BOOTSTRAP_URL}${options.mirror ? ` (via ${options.mirror})` : ''}`);
  const fresh = (await fetcher.json(IANA_BOOTSTRAP_URL)) as RdapBootstrap;

  const problem = bootstrapProblem(fresh);
  if (problem) throw new BootstrapUpdateError(`${IANA_BOOTSTRAP_URL}: not an RDAP bootstrap file: ${problem}`);
  const before = tldCount(current);
  const after = tldCount(fresh);
  if (after < before / 2)
    throw new BootstrapUpdateError(`${IANA_BOOTSTRAP_URL} lists ${after} TLDs, fewer than half of the ${before} on file: refused as implausible`);
  const [oldDate, newDate] = [Date.parse(current.publication ?? ''), Date.parse(fresh.publication ?? '')];
  // A date ahead of this clock (beyond a day of skew) would make every genuine answer after it look older.
  if (Number.isFinite(newDate) && newDate > (options.now ?? Date.now)() + DAY_MS) {
    throw new BootstrapUpdateError(`${IANA_BOOTSTRAP_URL} says it was published ${fresh.publication}, in the future: refused`);
  }
  if (Number.isFinite(oldDate) && Number.isFinite(newDate) && newDate < oldDate) {
    throw new BootstrapUpdateError(`${IANA_BOOTSTRAP_URL} was published ${fresh.publication}, before the file on disk (${current.publication}): refused`);
  }
  const publication = typeof fresh.publication === 'string' ? fresh.publication : null;
  progress(`${after} TLDs in ${fresh.services.length} services, published ${publication ?? 'at an unstated time'}`);
  if (JSON.stringify(fresh.services) === JSON.stringify(current.services)) return { path, changed: false, before, after, publication };
  await writeAtomically(path, `${JSON.stringify(fresh, null, 2)}\n`);
  return { path, changed: true, before, after, publication };
}

/** Distinct TLDs (lower case): an answer padded with copies of one TLD counts one. */
function tldCount(bootstrap: RdapBootstrap): number {
  return new Set(bootstrap.services.flatMap(([tlds]) => tlds.map((tld) => tld.toLowerCase()))).size;
}
