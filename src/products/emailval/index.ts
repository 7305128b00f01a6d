import { datasetDateMs } from '../../lib/datasets.js';
import { defineProduct, type DatasetUpdateReport, type EngineContext } from '../module.js';
import { getLookupRoutes } from '../route.js';
import { createEmailValEngine, emailCacheSize, loadEmailLists, type CachedEmailResult } from './engine.js';
import type { EmailValEngineOptions } from './types.js';
import { DISPOSABLE_DEFAULT_TIMEOUT_MS, updateDisposableDomains, type DisposableUpdateReport } from './update.js';
import { EMAILVAL_DOC } from './doc.js';
import type { EmailValEngine } from './engine.js';

// This product's engine type, for the modules that `need` it (EngineContext.engine).
declare module '../module.js' {
  interface ProductEngines {
    emailval: EmailValEngine;
  }
}

/** emailval: format, disposable-domain and MX checks of an e-mail address, with SPEC's risk rules. */
export default defineProduct({
  id: 'emailval',
  optionNames: { cacheSize: true },
  checkOptions: (options) => void emailCacheSize(options),
  createEngine: ({ dataDir, options, cache, dns, now }: EngineContext<EmailValEngineOptions>) => {
    const cacheSize = emailCacheSize(options);
    return createEmailValEngine({ lists: loadEmailLists(dataDir), dns, cache: cache<CachedEmailResult>({ maxEntries: cacheSize }), now });
  },
  // SPEC: GET ?email= and GET /lookup/{email}, URL-encoded.
  routes: getLookupRoutes('email', 'invalid_email', (email): [string] => [email]),
  batch: { input: 'email', args: (value): [string] => [value] },
  // database_records: the domains on the disposable list (the product's only database).
  statusExtras: (engine) => ({ database_records: engine.disposableCount }),
  datasetAges: (engine) => [
    { dataset: 'disposable-domains.txt', builtAtMs: datasetDateMs(engine.disposableDate) },
    // A fixed list of role names from a pinned commit: its file records no date.
    { dataset: 'role-based-local-parts.tsv', builtAtMs: null },
  ],
  doc: EMAILVAL_DOC,
  doctor: { dns: true, freshness: { maxAgeDays: { 'disposable-domains.txt': 90 }, refresh: 'seclookup data update emailval' } },
  cli: {
    input: 'an e-mail address',
    example: 'postmaster@example.com',
    args: (input): [string] => [input],
  },
  dataset: {
    help: `emailval fetches the disposable-domain list (index.json and wildcard.json of
github.com/ivolo/disposable-email-domains, the source of the npm package
disposable-email-domains) and rewrites data/emailval/disposable-domains.txt when the list
changed (index.json entries match exactly, wildcard.json ones their subdomains too). A
failed or malformed download, or one with fewer than half of the domains on file, changes
nothing. Default per-request timeout: ${DISPOSABLE_DEFAULT_TIMEOUT_MS} ms.`,
    async update({ dataDir, mirror, timeoutMs, onProgress }) {
      return describeUpdate(await updateDisposableDomains({ dataDir, mirror, timeoutMs, onProgress }));
    },
  },
});

function describeUpdate(report: DisposableUpdateReport): DatasetUpdateReport {
  const summary = report.changed
    ? `emailval: ${report.after} disposable domains (+${report.added} -${report.removed} entries); wrote ${report.path}`
    : `emailval: ${report.after} disposable domains, unchanged; ${report.path} not changed`;
  return { summary, ok: true, notes: report.changed ? ['Restart `seclookup serve` to load the new list.'] : [] };
}
